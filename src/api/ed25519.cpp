// Ed25519 checks with per-key tables (ed25519.hpp; the arithmetic: ed25519_field.hpp).
#include "tachyon/api/ed25519.hpp"

#include <sodium.h>

#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "ed25519_field.hpp"

namespace tachyon::api::ed25519 {

using namespace detail;

namespace {

constexpr int kPartBits = 32;
constexpr int kParts = 256 / kPartBits;  // a scalar as eight 32-bit parts
constexpr int kOdd = 8;  // odd multiples 1P, 3P, .., 15P of each part's point (width-5 NAF)
constexpr int kDigits = kPartBits + 1;  // a part's NAF has at most one digit more than its bits

// For one point P: the odd multiples of 2^(32 j) P for each part j, affine (~7.5 KB).
using Table = std::array<std::array<Affine, kOdd>, kParts>;

struct Constants {
  Fe d, d2, sqrtm1;
  Table base;                                            // B's table
  std::array<std::array<uint8_t, 32>, 5> small_order_y;  // R encodings (sign bit aside) refused
  Constants();
};

// x from y and the sign bit; false when no x exists (the encoding is not a point).
bool decode(P3& p, const uint8_t s[32], const Fe& d, const Fe& sqrtm1) {
  const Fe y = fe_frombytes(s);
  const Fe yy = fe_sq(y);
  const Fe u = fe_sub(yy, fe_small(1));
  const Fe v = fe_add(fe_mul(yy, d), fe_small(1));
  const Fe v3 = fe_mul(fe_sq(v), v);
  Fe x = fe_mul(fe_pow22523(fe_mul(fe_mul(fe_sq(v3), v), u)), fe_mul(v3, u));
  const Fe vxx = fe_mul(v, fe_sq(x));
  if (!fe_iszero(fe_sub(vxx, u))) {
    if (!fe_iszero(fe_add(vxx, u))) return false;
    x = fe_mul(x, sqrtm1);
  }
  if (fe_isnegative(x) != bool(s[31] >> 7)) x = fe_neg(x);
  p = P3{x, y, fe_small(1), fe_mul(x, y)};
  return true;
}

// Odd multiples of 2^(32 j) P for each part j, normalized with one inversion for all of them.
void build_table(Table& t, P3 p, const Fe& d2) {
  std::array<P3, kParts * kOdd> pts;
  for (int j = 0; j < kParts; ++j) {
    if (j > 0) {
      for (int i = 0; i < kPartBits; ++i) p = to_p3(dbl(P2{p.X, p.Y, p.Z}));
    }
    const Cached twice = to_cached(to_p3(dbl(P2{p.X, p.Y, p.Z})), d2);
    pts[j * kOdd] = p;
    for (int k = 1; k < kOdd; ++k) pts[j * kOdd + k] = to_p3(add(pts[j * kOdd + k - 1], twice));
  }
  std::array<Fe, kParts * kOdd> prefix;  // Montgomery's trick: prefix products of the Zs
  Fe acc = fe_small(1);
  for (size_t i = 0; i < pts.size(); ++i)
    prefix[i] = acc = i == 0 ? pts[0].Z : fe_mul(acc, pts[i].Z);
  Fe inv = fe_invert(acc);
  for (size_t i = pts.size(); i-- > 0;) {
    const Fe zinv = i == 0 ? inv : fe_mul(inv, prefix[i - 1]);
    if (i > 0) inv = fe_mul(inv, pts[i].Z);
    const Fe x = fe_mul(pts[i].X, zinv), y = fe_mul(pts[i].Y, zinv);
    t[i / kOdd][i % kOdd] = Affine{fe_add(y, x), fe_sub(y, x), fe_mul(fe_mul(x, y), d2)};
  }
}

Constants::Constants() {
  // d = -121665 / 121666; sqrt(-1) = 2^((p - 1) / 4) = 2^(2^253 - 5).
  d = fe_neg(fe_mul(fe_small(121665), fe_invert(fe_small(121666))));
  d2 = fe_add(d, d);
  Fe z11;  // 2^(2^250 - 1), squared three times: 2^(2^253 - 8); times 2^3
  sqrtm1 = fe_mul(fe_sqn(fe_pow2_250_1(fe_small(2), z11), 3), fe_small(8));
  // B: y = 4/5, x even.
  uint8_t b[32];
  fe_tobytes(b, fe_mul(fe_small(4), fe_invert(fe_small(5))));
  P3 bp;
  decode(bp, b, d, sqrtm1);
  build_table(base, bp, d2);
  // y of the points of order 1, 2, 4 and 8: 1, -1, 0, y8, -y8.
  uint8_t y8_bytes[32];  // little-endian
  from_hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", y8_bytes, 32);
  const Fe y8 = fe_frombytes(y8_bytes);
  const Fe ys[5] = {fe_small(1), fe_neg(fe_small(1)), fe_small(0), y8, fe_neg(y8)};
  for (int i = 0; i < 5; ++i) fe_tobytes(small_order_y[i].data(), ys[i]);
}

const Constants& constants() {
  static const Constants c;
  return c;
}

// Width-5 NAF of a part: digits odd in [-15, 15] or 0, least significant first.
void naf5(int8_t out[kDigits], uint64_t part) {  // part < 2^kPartBits
  u128 k = part;
  for (int i = 0; i < kDigits; ++i, k >>= 1) {
    out[i] = 0;
    if (k & 1) {
      int digit = int(k & 31);
      if (digit >= 16) digit -= 32;
      out[i] = int8_t(digit);
      k = digit >= 0 ? k - u128(digit) : k + u128(-digit);
    }
  }
}

void scalar_parts(int8_t nafs[kParts][kDigits], const uint8_t s[32]) {
  for (int j = 0; j < kParts; ++j) {
    uint32_t w;
    std::memcpy(&w, s + 4 * j, 4);
    naf5(nafs[j], w);
  }
}

// [s]B + [h](-A) from the two tables, one doubling per digit position.
P2 double_scalarmult(const Table& neg_a, const uint8_t h[32], const uint8_t s[32]) {
  int8_t nafs[2 * kParts][kDigits];
  scalar_parts(nafs, s);
  scalar_parts(nafs + kParts, h);
  const Table* tables[2] = {&constants().base, &neg_a};
  int top = kDigits - 1;
  auto any_at = [&](int i) {
    for (const auto& n : nafs) {
      if (n[i] != 0) return true;
    }
    return false;
  };
  while (top >= 0 && !any_at(top)) --top;
  P2 r{fe_small(0), fe_small(1), fe_small(1)};
  for (int i = top; i >= 0; --i) {
    P1P1 t = dbl(r);
    for (int j = 0; j < 2 * kParts; ++j) {
      const int digit = nafs[j][i];
      if (digit == 0) continue;
      const Affine& q = (*tables[j / kParts])[j % kParts][(digit < 0 ? -digit : digit) / 2];
      t = madd(to_p3(t), q, digit < 0);
    }
    r = to_p2(t);
  }
  return r;
}

void encode(uint8_t out[32], const P2& p) {
  const Fe zinv = fe_invert(p.Z);
  fe_tobytes(out, fe_mul(p.Y, zinv));
  out[31] ^= uint8_t(fe_isnegative(fe_mul(p.X, zinv)) << 7);
}

bool s_below_order(const uint8_t s[32]) {  // S < L = 2^252 + 27742317777372353535851937790883648493
  static constexpr uint8_t kL[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58,
                                     0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
                                     0,    0,    0,    0,    0,    0,    0,    0,
                                     0,    0,    0,    0,    0,    0,    0,    0x10};
  for (int i = 31; i >= 0; --i) {
    if (s[i] != kL[i]) return s[i] < kL[i];
  }
  return false;
}

bool r_of_small_order(const uint8_t r[32]) {
  for (const auto& y : constants().small_order_y) {
    if (std::memcmp(r, y.data(), 31) == 0 && (r[31] & 0x7f) == y[31]) return true;
  }
  return false;
}

// Every thread's counts (relaxed: each is a tally read by /metrics, ordering nothing).
struct Totals {
  std::atomic<uint64_t> keys{0}, hits{0}, misses{0}, builds{0};
  static void add(std::atomic<uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }
};
Totals g_totals;

// The thread's key tables: slot = the key's first 8 bytes modulo the slot count.
// Owner: the thread whose thread_local this is; never shared.
class KeyCache {
 public:
  KeyCache() = default;
  KeyCache(const KeyCache&) = delete;
  KeyCache& operator=(const KeyCache&) = delete;
  ~KeyCache() { g_totals.keys.fetch_sub(keys_, std::memory_order_relaxed); }
  const Table* find(const PublicKey& pk) {
    Slot& s = slot(pk);
    if (s.table && s.key == pk) {
      Totals::add(g_totals.hits);
      return s.table.get();
    }
    Totals::add(g_totals.misses);
    return nullptr;
  }
  // After libsodium accepted a signature under `pk`: a free slot takes the key; a held slot
  // yields to a key that missed there twice in a row (a hot pair of keys sharing a slot still
  // rebuilds, at most once per two of their checks).
  void admit(const PublicKey& pk) {
    Slot& s = slot(pk);
    if (s.table && s.last_miss != pk) {
      s.last_miss = pk;
      return;
    }
    const Constants& c = constants();
    P3 a;
    if (!decode(a, pk.data(), c.d, c.sqrtm1)) return;
    a.X = fe_neg(a.X), a.T = fe_neg(a.T);  // -A: the check adds [h](-A)
    if (!s.table) {
      s.table = std::make_unique<Table>();
      ++keys_;
      Totals::add(g_totals.keys);
    }
    build_table(*s.table, a, c.d2);
    s.key = pk;
    Totals::add(g_totals.builds);
  }

 private:
  struct Slot {
    PublicKey key{};
    PublicKey last_miss{};
    std::unique_ptr<Table> table;
  };
  Slot& slot(const PublicKey& pk) {
    uint64_t w;
    std::memcpy(&w, pk.data(), 8);
    if (slots_.empty()) slots_.resize(kCacheSlots);
    return slots_[w % kCacheSlots];
  }
  std::vector<Slot> slots_;
  size_t keys_ = 0;  // slots with a table (this thread's share of g_totals.keys)
};

KeyCache& thread_cache() {
  thread_local KeyCache cache;
  return cache;
}

bool check_with(const Table& neg_a, std::string_view message, const Signature& sig,
                const PublicKey& pk) {
  const uint8_t* r = sig.data();
  const uint8_t* s = sig.data() + 32;
  if (!s_below_order(s) || r_of_small_order(r)) return false;
  uint8_t digest[64], h[32];
  crypto_hash_sha512_state st;
  crypto_hash_sha512_init(&st);
  crypto_hash_sha512_update(&st, r, 32);
  crypto_hash_sha512_update(&st, pk.data(), 32);
  crypto_hash_sha512_update(&st, reinterpret_cast<const uint8_t*>(message.data()), message.size());
  crypto_hash_sha512_final(&st, digest);
  crypto_core_ed25519_scalar_reduce(h, digest);
  uint8_t rcheck[32];
  encode(rcheck, double_scalarmult(neg_a, h, s));
  return std::memcmp(rcheck, r, 32) == 0;
}

}  // namespace

bool verify_reference(std::string_view message, const Signature& sig, const PublicKey& pk) {
  return crypto_sign_verify_detached(sig.data(), reinterpret_cast<const uint8_t*>(message.data()),
                                     message.size(), pk.data()) == 0;
}

bool verify(std::string_view message, const Signature& sig, const PublicKey& pk) {
  KeyCache& cache = thread_cache();
  if (const Table* t = cache.find(pk)) return check_with(*t, message, sig, pk);
  if (!verify_reference(message, sig, pk)) return false;
  cache.admit(pk);
  return true;
}

CacheStats cache_totals() {
  const auto get = [](const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  return CacheStats{get(g_totals.keys), get(g_totals.hits), get(g_totals.misses),
                    get(g_totals.builds)};
}

}  // namespace tachyon::api::ed25519
