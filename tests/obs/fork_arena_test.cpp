// Memory a snapshot's fork() child never needs stays out of the child: the read side's jemalloc
// arena (tachyon::dontfork_arena) and the committer's big blocks (t_big_blocks_outside_fork). The
// child checks with msync, which fails with ENOMEM on an address that is not mapped.
// Also: big blocks made while huge pages are deferred (a server's start) get the huge-page advice
// only when promoted, read back from the mapping's VmFlags in /proc/self/smaps.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tachyon/core/alloc.hpp"
#include "tachyon/core/huge_page_allocator.hpp"

namespace tachyon::obs {
namespace {

bool mapped(const void* p) {
  const uintptr_t page = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{4095};
  return ::msync(reinterpret_cast<void*>(page), 4096, MS_ASYNC) == 0 || errno != ENOMEM;
}

// Forks; the child exits with bit i set when probes[i] is mapped in it.
int mapped_in_child(const std::vector<const void*>& probes) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int bits = 0;
    for (size_t i = 0; i < probes.size(); ++i) bits |= mapped(probes[i]) ? 1 << i : 0;
    ::_exit(bits);
  }
  int ws = 0;
  ::waitpid(pid, &ws, 0);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

TEST(ForkArena, what_the_read_side_arena_holds_is_not_in_a_fork_child) {
#ifndef TACHYON_EXPECT_JEMALLOC
  GTEST_SKIP() << "built without jemalloc (sanitizer build): there is no such arena";
#else
  const unsigned arena = dontfork_arena();
  ASSERT_NE(arena, 0u);
  std::unique_ptr<std::vector<char> > big_out, big_in;
  std::unique_ptr<int[]> small_out, small_in;
  {
    const ArenaScope scope(arena);
    big_out = std::make_unique<std::vector<char> >(8 << 20, 1);  // a large extent of its own
    small_out = std::make_unique<int[]>(4);                      // a slab object
    small_out[0] = 7;
  }
  big_in = std::make_unique<std::vector<char> >(8 << 20, 2);  // back on the default arenas
  small_in = std::make_unique<int[]>(4);
  small_in[0] = 8;
  const int bits =
      mapped_in_child({big_out->data(), small_out.get(), big_in->data(), small_in.get()});
  EXPECT_EQ(bits, 0b1100) << "only the default arenas' memory is mapped in the child";
  EXPECT_EQ((*big_out)[123], 1);  // the parent keeps all of it
  EXPECT_EQ(small_out[0], 7);
  {  // freed into this thread's cache, which the scope flushes: no later fork child gets them
    const ArenaScope scope(arena);
    big_out.reset();
    small_out.reset();
  }
#endif
}

TEST(ForkArena, big_blocks_of_a_thread_marked_outside_fork_are_not_in_a_fork_child) {
  HugePageAllocator<uint64_t> alloc;
  const size_t n = (size_t{8} << 20) / sizeof(uint64_t);
  uint64_t* in = alloc.allocate(n);
  t_big_blocks_outside_fork = true;
  uint64_t* out = alloc.allocate(n);
  t_big_blocks_outside_fork = false;
  in[0] = 1;
  out[0] = 2;
  EXPECT_EQ(mapped_in_child({in, out}), 0b01);
  EXPECT_EQ(out[0], 2u);
  alloc.deallocate(in, n);
  alloc.deallocate(out, n);
}

// The VmFlags of the mapping that holds p ("hg": MADV_HUGEPAGE, "nh": MADV_NOHUGEPAGE).
std::string vm_flags(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = a >= lo && a < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8) + " ";
    }
  }
  return "";
}

bool has_flag(const std::string& flags, const char* f) {
  return flags.find(std::string(" ") + f + " ") != std::string::npos;
}

TEST(HugePages, blocks_made_while_deferred_are_advised_only_when_promoted) {
  HugePageAllocator<uint64_t> alloc;
  const size_t n = (size_t{8} << 20) / sizeof(uint64_t);
  uint64_t* now = alloc.allocate(n);
  if (!has_flag(vm_flags(now), "hg")) {
    alloc.deallocate(now, n);
    GTEST_SKIP() << "MADV_HUGEPAGE is not recorded on this kernel";
  }
  defer_huge_pages();
  uint64_t* kept = alloc.allocate(n);
  uint64_t* freed = alloc.allocate(2 * n);
  kept[0] = 1;
  EXPECT_FALSE(has_flag(vm_flags(kept), "hg")) << vm_flags(kept);
  EXPECT_FALSE(has_flag(vm_flags(kept), "nh")) << "no advice at all: the system's pages";
  alloc.deallocate(freed, 2 * n);  // gone before the promotion: not advised, not counted
  uint64_t* other = nullptr;       // another thread's deferral is that thread's to end
  std::thread([&] {
    defer_huge_pages();
    other = alloc.allocate(n);
  }).join();
  EXPECT_EQ(promote_deferred_huge_pages(), size_t{8} << 20);
  EXPECT_FALSE(has_flag(vm_flags(other), "hg")) << vm_flags(other);
  alloc.deallocate(other, n);
  EXPECT_TRUE(has_flag(vm_flags(kept), "hg")) << vm_flags(kept);
  EXPECT_EQ(kept[0], 1u);
  uint64_t* after = alloc.allocate(n);  // the deferral is over
  EXPECT_TRUE(has_flag(vm_flags(after), "hg")) << vm_flags(after);
  EXPECT_EQ(promote_deferred_huge_pages(), 0u);
  alloc.deallocate(after, n);
  alloc.deallocate(kept, n);
  alloc.deallocate(now, n);
}

}  // namespace
}  // namespace tachyon::obs
