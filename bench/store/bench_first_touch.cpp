// What fresh memory costs at its first touch, which is most of a start at scale (a start at 1M
// accounts touches ~1.2 GB: docs/PERFORMANCE.md, "Start-up on memory the host reclaimed").
//
// For each round and each kind, maps 1 GiB (2 MiB-aligned) and writes one byte per 4 KiB page,
// from 1 or 2 threads, and prints GB/s. Kinds: 4 KiB pages (MADV_NOHUGEPAGE), huge pages
// (MADV_HUGEPAGE: 2 MiB, or what the system allows), and no advice (the system's setting, e.g.
// multi-size THP folios). Each round first sleeps `idle` seconds: a VM whose guest reports freed
// memory to its host gets that memory back slowly (cold); back to back, it is memory the guest
// used moments ago (warm). The kinds alternate in each round.
//
// Usage: bench_first_touch [rounds] [idle seconds]   (defaults 3, 10)
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

enum class Kind { kSmall, kHuge, kSystem };

double touch_gbps(Kind kind, int threads) {
  constexpr size_t kBytes = size_t{1} << 30, kAlign = size_t{2} << 20;
  void* raw =
      ::mmap(nullptr, kBytes + kAlign, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  auto* p =
      reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kAlign - 1) & ~(kAlign - 1));
  if (kind == Kind::kSmall) (void)::madvise(p, kBytes, MADV_NOHUGEPAGE);
  if (kind == Kind::kHuge) (void)::madvise(p, kBytes, MADV_HUGEPAGE);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  const size_t part = kBytes / static_cast<size_t>(threads);
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([p, part, t] {
      volatile char* b = p + part * static_cast<size_t>(t);
      for (size_t i = 0; i < part; i += 4096) b[i] = 1;
    });
  }
  for (auto& t : ts) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::munmap(raw, kBytes + kAlign);
  return 1.073741824 / s;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  const int idle = argc > 2 ? std::atoi(argv[2]) : 10;
  std::printf("## First touch of 1 GiB (GB/s; each row: after %d s idle, then at once)\n\n", idle);
  std::printf("| round | pages | threads | after idle | at once |\n|---|---|---|---|---|\n");
  const struct {
    Kind kind;
    const char* name;
  } kinds[] = {
      {Kind::kSmall, "4 KiB"}, {Kind::kHuge, "huge (advised)"}, {Kind::kSystem, "no advice"}};
  for (int r = 1; r <= rounds; ++r) {
    for (const auto& k : kinds) {
      for (int threads : {1, 2}) {
        ::sleep(static_cast<unsigned>(idle));
        const double cold = touch_gbps(k.kind, threads);
        const double warm = touch_gbps(k.kind, threads);
        std::printf("| %d | %s | %d | %.2f | %.2f |\n", r, k.name, threads, cold, warm);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
