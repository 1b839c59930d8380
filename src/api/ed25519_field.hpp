#pragma once
// Arithmetic for ed25519.cpp: the field GF(2^255 - 19) in five 51-bit limbs and the points of
// the twisted Edwards curve -x^2 + y^2 = 1 + d x^2 y^2 in extended coordinates (x = X/Z,
// y = Y/Z, x*y = T/Z), with the formulas of Bernstein et al.'s ref10. Variable time: a check
// handles only public data (keys, signatures, messages).
//
// Limb bounds: a reduced element has limbs below 2^51 + 2^13 (what mul, sq and carry leave);
// add of two reduced elements stays below 2^53, and mul and sq accept inputs below 2^54.
#include <cstdint>
#include <cstring>

namespace tachyon::api::ed25519::detail {

using u128 = unsigned __int128;
inline constexpr uint64_t kMask51 = (uint64_t(1) << 51) - 1;

struct Fe {
  uint64_t v[5];
};

inline Fe fe_small(uint64_t x) { return Fe{{x, 0, 0, 0, 0}}; }

inline Fe fe_add(const Fe& a, const Fe& b) {
  return Fe{{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3], a.v[4] + b.v[4]}};
}

// Limbs below 2^51 (plus 19*carry in limb 0): one carry pass.
inline Fe fe_carry(Fe a) {
  a.v[1] += a.v[0] >> 51, a.v[0] &= kMask51;
  a.v[2] += a.v[1] >> 51, a.v[1] &= kMask51;
  a.v[3] += a.v[2] >> 51, a.v[2] &= kMask51;
  a.v[4] += a.v[3] >> 51, a.v[3] &= kMask51;
  a.v[0] += 19 * (a.v[4] >> 51), a.v[4] &= kMask51;
  return a;
}

// a - b as a + 2p - b, with b carried first so that every limb stays positive.
inline Fe fe_sub(const Fe& a, const Fe& b0) {
  const Fe b = fe_carry(b0);
  return Fe{{a.v[0] + 0xfffffffffffdaULL - b.v[0], a.v[1] + 0xffffffffffffeULL - b.v[1],
             a.v[2] + 0xffffffffffffeULL - b.v[2], a.v[3] + 0xffffffffffffeULL - b.v[3],
             a.v[4] + 0xffffffffffffeULL - b.v[4]}};
}

inline Fe fe_neg(const Fe& a) { return fe_sub(fe_small(0), a); }

// Five 128-bit column sums to a reduced element.
inline Fe fe_reduce_wide(u128 r0, u128 r1, u128 r2, u128 r3, u128 r4) {
  Fe h;
  r1 += uint64_t(r0 >> 51), h.v[0] = uint64_t(r0) & kMask51;
  r2 += uint64_t(r1 >> 51), h.v[1] = uint64_t(r1) & kMask51;
  r3 += uint64_t(r2 >> 51), h.v[2] = uint64_t(r2) & kMask51;
  r4 += uint64_t(r3 >> 51), h.v[3] = uint64_t(r3) & kMask51;
  h.v[4] = uint64_t(r4) & kMask51;
  h.v[0] += 19 * uint64_t(r4 >> 51);
  h.v[1] += h.v[0] >> 51, h.v[0] &= kMask51;
  return h;
}

inline Fe fe_mul(const Fe& a, const Fe& b) {
  const uint64_t b1 = 19 * b.v[1], b2 = 19 * b.v[2], b3 = 19 * b.v[3], b4 = 19 * b.v[4];
  const auto m = [](uint64_t x, uint64_t y) { return u128(x) * y; };
  const uint64_t* x = a.v;
  return fe_reduce_wide(
      m(x[0], b.v[0]) + m(x[1], b4) + m(x[2], b3) + m(x[3], b2) + m(x[4], b1),
      m(x[0], b.v[1]) + m(x[1], b.v[0]) + m(x[2], b4) + m(x[3], b3) + m(x[4], b2),
      m(x[0], b.v[2]) + m(x[1], b.v[1]) + m(x[2], b.v[0]) + m(x[3], b4) + m(x[4], b3),
      m(x[0], b.v[3]) + m(x[1], b.v[2]) + m(x[2], b.v[1]) + m(x[3], b.v[0]) + m(x[4], b4),
      m(x[0], b.v[4]) + m(x[1], b.v[3]) + m(x[2], b.v[2]) + m(x[3], b.v[1]) + m(x[4], b.v[0]));
}

inline Fe fe_sq(const Fe& a) {
  const uint64_t* x = a.v;
  const uint64_t d0 = 2 * x[0], d1 = 2 * x[1], x3_19 = 19 * x[3], x4_19 = 19 * x[4];
  const auto m = [](uint64_t p, uint64_t q) { return u128(p) * q; };
  return fe_reduce_wide(m(x[0], x[0]) + m(d1, x4_19) + m(2 * x[2], x3_19),
                        m(d0, x[1]) + m(2 * x[2], x4_19) + m(x[3], x3_19),
                        m(d0, x[2]) + m(x[1], x[1]) + m(2 * x[3], x4_19),
                        m(d0, x[3]) + m(d1, x[2]) + m(x[4], x4_19),
                        m(d0, x[4]) + m(d1, x[3]) + m(x[2], x[2]));
}

inline Fe fe_sqn(Fe a, int n) {
  while (n-- > 0) a = fe_sq(a);
  return a;
}

// z^(2^250 - 1), the common stem of inversion and the square root's power; z11 = z^11.
inline Fe fe_pow2_250_1(const Fe& z, Fe& z11) {
  const Fe z2 = fe_sq(z);
  const Fe z9 = fe_mul(fe_sqn(z2, 2), z);
  z11 = fe_mul(z9, z2);
  const Fe e5 = fe_mul(fe_sq(z11), z9);  // 2^5 - 1
  const Fe e10 = fe_mul(fe_sqn(e5, 5), e5);
  const Fe e20 = fe_mul(fe_sqn(e10, 10), e10);
  const Fe e40 = fe_mul(fe_sqn(e20, 20), e20);
  const Fe e50 = fe_mul(fe_sqn(e40, 10), e10);
  const Fe e100 = fe_mul(fe_sqn(e50, 50), e50);
  const Fe e200 = fe_mul(fe_sqn(e100, 100), e100);
  return fe_mul(fe_sqn(e200, 50), e50);  // 2^250 - 1
}

inline Fe fe_invert(const Fe& z) {  // z^(p - 2) = z^(2^255 - 21)
  Fe z11;
  return fe_mul(fe_sqn(fe_pow2_250_1(z, z11), 5), z11);
}

inline Fe fe_pow22523(const Fe& z) {  // z^((p - 5) / 8) = z^(2^252 - 3)
  Fe z11;
  return fe_mul(fe_sqn(fe_pow2_250_1(z, z11), 2), z);
}

// The canonical value (below p) in little-endian bytes.
inline void fe_tobytes(uint8_t out[32], const Fe& a) {
  Fe h = fe_carry(fe_carry(a));
  uint64_t q = (h.v[0] + 19) >> 51;  // 1 when h >= p
  q = (h.v[1] + q) >> 51, q = (h.v[2] + q) >> 51, q = (h.v[3] + q) >> 51, q = (h.v[4] + q) >> 51;
  h.v[0] += 19 * q;
  h.v[1] += h.v[0] >> 51, h.v[0] &= kMask51;
  h.v[2] += h.v[1] >> 51, h.v[1] &= kMask51;
  h.v[3] += h.v[2] >> 51, h.v[2] &= kMask51;
  h.v[4] += h.v[3] >> 51, h.v[3] &= kMask51;
  h.v[4] &= kMask51;  // drops 2^255, i.e. subtracts p with the 19 added above
  const uint64_t w[4] = {h.v[0] | (h.v[1] << 51), (h.v[1] >> 13) | (h.v[2] << 38),
                         (h.v[2] >> 26) | (h.v[3] << 25), (h.v[3] >> 39) | (h.v[4] << 12)};
  std::memcpy(out, w, 32);  // (x86-64 is little-endian)
}

// The low 255 bits of `s` (the top bit is the caller's).
inline Fe fe_frombytes(const uint8_t s[32]) {
  const auto load = [s](int at) {
    uint64_t w;
    std::memcpy(&w, s + at, 8);
    return w;
  };
  return Fe{{load(0) & kMask51, (load(6) >> 3) & kMask51, (load(12) >> 6) & kMask51,
             (load(19) >> 1) & kMask51, (load(24) >> 12) & kMask51}};
}

inline bool fe_iszero(const Fe& a) {
  uint8_t b[32];
  fe_tobytes(b, a);
  uint8_t acc = 0;
  for (uint8_t x : b) acc |= x;
  return acc == 0;
}

inline bool fe_isnegative(const Fe& a) {  // the canonical value is odd
  uint8_t b[32];
  fe_tobytes(b, a);
  return b[0] & 1;
}

// Points. P3: extended (X, Y, Z, T). P2: projective (X, Y, Z). P1P1: the completed result of
// an addition or doubling, ((X : Z), (Y : T)). Affine: a table entry (y + x, y - x, 2d x y).
struct P2 {
  Fe X, Y, Z;
};
struct P3 {
  Fe X, Y, Z, T;
};
struct P1P1 {
  Fe X, Y, Z, T;
};
struct Affine {
  Fe yplusx, yminusx, xy2d;
};
struct Cached {
  Fe YplusX, YminusX, Z, T2d;
};

inline P2 to_p2(const P1P1& p) { return P2{fe_mul(p.X, p.T), fe_mul(p.Y, p.Z), fe_mul(p.Z, p.T)}; }

inline P3 to_p3(const P1P1& p) {
  return P3{fe_mul(p.X, p.T), fe_mul(p.Y, p.Z), fe_mul(p.Z, p.T), fe_mul(p.X, p.Y)};
}

inline P1P1 dbl(const P2& p) {
  P1P1 r;
  r.X = fe_sq(p.X);
  r.Z = fe_sq(p.Y);
  const Fe zz = fe_sq(p.Z);
  r.T = fe_add(zz, zz);
  const Fe t0 = fe_sq(fe_add(p.X, p.Y));
  r.Y = fe_add(r.Z, r.X);
  r.Z = fe_sub(r.Z, r.X);
  r.X = fe_sub(t0, r.Y);
  r.T = fe_sub(r.T, r.Z);
  return r;
}

// p + q (subtract: p - q) for a table entry q.
inline P1P1 madd(const P3& p, const Affine& q, bool subtract) {
  P1P1 r;
  const Fe a = fe_mul(fe_add(p.Y, p.X), subtract ? q.yminusx : q.yplusx);
  const Fe b = fe_mul(fe_sub(p.Y, p.X), subtract ? q.yplusx : q.yminusx);
  const Fe c = fe_mul(q.xy2d, p.T);
  const Fe z2 = fe_add(p.Z, p.Z);
  r.X = fe_sub(a, b);
  r.Y = fe_add(a, b);
  r.Z = subtract ? fe_sub(z2, c) : fe_add(z2, c);
  r.T = subtract ? fe_add(z2, c) : fe_sub(z2, c);
  return r;
}

// p + q for any q in cached form (table building).
inline P1P1 add(const P3& p, const Cached& q) {
  P1P1 r;
  const Fe a = fe_mul(fe_add(p.Y, p.X), q.YplusX);
  const Fe b = fe_mul(fe_sub(p.Y, p.X), q.YminusX);
  const Fe c = fe_mul(q.T2d, p.T);
  const Fe zz = fe_mul(p.Z, q.Z);
  const Fe z2 = fe_add(zz, zz);
  r.X = fe_sub(a, b);
  r.Y = fe_add(a, b);
  r.Z = fe_add(z2, c);
  r.T = fe_sub(z2, c);
  return r;
}

inline Cached to_cached(const P3& p, const Fe& d2) {
  return Cached{fe_add(p.Y, p.X), fe_sub(p.Y, p.X), p.Z, fe_mul(p.T, d2)};
}

}  // namespace tachyon::api::ed25519::detail
