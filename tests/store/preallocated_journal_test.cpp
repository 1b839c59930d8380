// Preallocated journal segments (version 2, JournalConfig::preallocate): groups replay across
// segments and restarts; a last group torn with holes (its pages reached the disk in any order)
// is a torn tail, while damage before a whole group is corruption; a version 1 journal goes on in
// version 2 segments.
#include <cstring>
#include <fstream>

#include "store/store_support.hpp"
#include "tachyon/store/disk.hpp"

namespace tachyon::testing {
namespace {

std::vector<std::string> segments(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("journal-", 0) == 0) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> data;
  EXPECT_TRUE(store::posix_disk().read(path, data).ok());
  return data;
}

void write_file(const std::string& path, const std::vector<uint8_t>& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

uint32_t segment_version(const std::string& path) {
  const std::vector<uint8_t> d = read_file(path);
  uint32_t v = 0;
  if (d.size() >= store::kSegmentHeaderSize) std::memcpy(&v, d.data() + 16, 4);
  return v;
}

// The offsets of a version 2 segment's groups, from their headers.
std::vector<size_t> group_offsets(const std::vector<uint8_t>& d) {
  std::vector<size_t> out;
  for (size_t off = store::kSegmentHeaderSize; off + store::kGroupHeaderSize <= d.size();) {
    uint32_t magic = 0, len = 0;
    std::memcpy(&magic, d.data() + off, 4);
    std::memcpy(&len, d.data() + off + 4, 4);
    if (magic != 0x50524754) break;
    out.push_back(off);
    off += store::kGroupHeaderSize + (len + 7) / 8 * 8;
  }
  return out;
}

store::JournalConfig preallocated(const std::string& dir, uint64_t segment_bytes,
                                  store::GroupCommit gc = store::GroupCommit::kWriterThread) {
  store::JournalConfig jc;
  jc.dir = dir;
  jc.segment_bytes = segment_bytes;
  jc.preallocate = true;
  jc.group_commit = gc;
  return jc;
}

// Appends the replayer's next `n` txs, durable every 50.
void append(store::Journal& j, StreamReplayer& r, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    const Tx tx = r.step();
    j.append(tx);
    if (tx.h.seq % 50 == 0) {
      EXPECT_TRUE(j.wait_durable(tx.h.seq));
    }
  }
  EXPECT_TRUE(j.wait_durable(r.engine().last_seq()));
}

void expect_recovers_to(const std::string& dir, StreamReplayer& r) {
  std::unique_ptr<Engine> e;
  store::RecoveryReport rep;
  const Status s = store::recover(dir, EngineConfig{}, e, rep);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(rep.journal.truncated_tail) << rep.journal.note;
  EXPECT_EQ(rep.last_seq, r.engine().last_seq());
  EXPECT_EQ(e->state_hash(), r.engine().state_hash());
}

TEST(PreallocatedJournal, replays_across_segments_and_restarts_into_the_same_state) {
  TempDir dir;
  constexpr uint64_t kSegment = 64 << 10;
  StreamReplayer r(21);
  std::unique_ptr<store::Journal> j;
  ASSERT_TRUE(store::Journal::open(preallocated(dir.path(), kSegment), 1, j).ok());
  append(*j, r, 3000);
  const uint64_t spares = j->stats().spares_used;
  j->close();
  EXPECT_GT(spares, 0u);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/journal-spare.tmp"));
  const auto segs = segments(dir.path());
  ASSERT_GT(segs.size(), 2u);
  size_t full_size = 0;
  for (const auto& s : segs) {
    EXPECT_EQ(segment_version(s), 2u) << s;
    full_size += std::filesystem::file_size(s) == kSegment;
  }
  EXPECT_GE(full_size, spares - 1) << "a spare is a whole segment of zeros, written over";
  ASSERT_NO_FATAL_FAILURE(expect_recovers_to(dir.path(), r));
  // A restart goes on in the last segment, after its last group.
  ASSERT_TRUE(store::Journal::open(preallocated(dir.path(), kSegment), 3001, j).ok());
  append(*j, r, 500);
  j->close();
  ASSERT_NO_FATAL_FAILURE(expect_recovers_to(dir.path(), r));
}

// Ten groups of 20 txs in one preallocated segment (the appender flushes each itself).
std::string ten_groups(const std::string& dir, StreamReplayer& r) {
  std::unique_ptr<store::Journal> j;
  EXPECT_TRUE(
      store::Journal::open(preallocated(dir, 1 << 20, store::GroupCommit::kAppender), 1, j).ok());
  for (int g = 0; g < 10; ++g) {
    for (int i = 0; i < 20; ++i) j->append(r.step());
    EXPECT_TRUE(j->flush().ok());
  }
  j->close();
  const auto segs = segments(dir);
  EXPECT_EQ(segs.size(), 1u);
  return segs.empty() ? "" : segs.back();
}

TEST(PreallocatedJournal, a_torn_last_group_is_a_torn_tail_and_damage_before_a_whole_group_is_not) {
  TempDir dir;
  StreamReplayer r(22);
  const std::string seg = ten_groups(dir.path(), r);
  const std::vector<uint8_t> data = read_file(seg);
  EXPECT_EQ(data.size(), 1u << 20);
  const std::vector<size_t> groups = group_offsets(data);
  ASSERT_EQ(groups.size(), 10u);
  ASSERT_GT(groups[9] - groups[8], 1024u);  // the last group spans sectors
  struct Damage {
    const char* what;
    size_t at, len;
    bool zero;  // zeroed, else bit-flipped
    bool torn;  // a torn tail, else corruption
  };
  const Damage cases[] = {
      {"the last group's first sector never written (its later ones were)", groups[9], 512, true,
       true},
      {"a bit flip in the last group's records", groups[9] + 600, 1, false, true},
      {"the last group's header lost", groups[9], 24, true, true},
      {"a bit flip in a middle group's records", groups[5] + 100, 1, false, false},
      {"a middle group's header zeroed", groups[5], 24, true, false},
      {"a sector of a middle group zeroed", groups[5], 512, true, false},
  };
  for (const Damage& c : cases) {
    SCOPED_TRACE(c.what);
    TempDir copy;
    std::vector<uint8_t> d = data;
    for (size_t i = c.at; i < c.at + c.len; ++i) d[i] = c.zero ? 0 : d[i] ^ 0x5a;
    const std::string path = copy.path() + "/" + std::filesystem::path(seg).filename().string();
    write_file(path, d);
    std::unique_ptr<Engine> e;
    store::RecoveryReport rep;
    const Status s = store::recover(copy.path(), EngineConfig{}, e, rep);
    if (!c.torn) {
      ASSERT_FALSE(s.ok()) << rep.journal.note;
      EXPECT_NE(s.message().find("corrupt"), std::string::npos) << s.message();
      EXPECT_NE(s.message().find("whole group after it"), std::string::npos) << s.message();
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(rep.journal.truncated_tail);
    EXPECT_EQ(rep.last_seq, 180u);
    StreamReplayer want(22);
    want.run_to(180);
    EXPECT_EQ(e->state_hash(), want.engine().state_hash());
    EXPECT_EQ(std::filesystem::file_size(path), groups[9]) << "cut where the torn group began";
  }
}

TEST(PreallocatedJournal, a_version_1_journal_goes_on_in_version_2_segments) {
  TempDir dir;
  StreamReplayer r(23);
  store::JournalConfig v1;
  v1.dir = dir.path();
  std::unique_ptr<store::Journal> j;
  ASSERT_TRUE(store::Journal::open(v1, 1, j).ok());
  append(*j, r, 700);
  j->close();
  ASSERT_EQ(segment_version(segments(dir.path()).back()), 1u);
  ASSERT_TRUE(store::Journal::open(preallocated(dir.path(), 1 << 20), 701, j).ok());
  append(*j, r, 300);
  j->close();
  const auto segs = segments(dir.path());
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segment_version(segs.front()), 1u);
  for (size_t i = 1; i < segs.size(); ++i) EXPECT_EQ(segment_version(segs[i]), 2u) << segs[i];
  ASSERT_NO_FATAL_FAILURE(expect_recovers_to(dir.path(), r));
  // and back: a journal without preallocation goes on in a version 1 segment
  ASSERT_TRUE(store::Journal::open(v1, 1001, j).ok());
  append(*j, r, 100);
  j->close();
  EXPECT_EQ(segment_version(segments(dir.path()).back()), 1u);
  ASSERT_NO_FATAL_FAILURE(expect_recovers_to(dir.path(), r));
}

}  // namespace
}  // namespace tachyon::testing
