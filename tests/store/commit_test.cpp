// Blocks and commitments: a stalled committer never blocks the sequencer, and once it catches up
// its roots equal an independent computation; blocks.log chains every commitment to the last.
#include <sodium.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "store/store_support.hpp"
#include "tachyon/store/commit.hpp"
#include "tachyon/store/disk.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::testing {
namespace {

constexpr uint32_t kChain = 304;
constexpr uint64_t kTxs = 12'000, kBlockTxs = 500;

TEST(Commit, a_stalled_committer_never_blocks_the_sequencer_and_catches_up_exactly) {
  TempDir dir;
  StreamReplayer seqr(21);
  seqr.set_block_txs(kBlockTxs);
  auto committer =
      std::make_unique<store::Committer>(dir.path(), std::make_unique<Engine>(), kChain);
  ASSERT_TRUE(committer->start().ok());
  committer->set_paused(true);  // the committer stalls: nothing is committed from here on
  uint64_t block = 1;
  for (uint64_t i = 1; i <= kTxs; ++i) {
    committer->push(seqr.step());  // the sequencer side: execute, hand over, move on
    if (i % kBlockTxs == 0) committer->seal(block++, static_cast<int64_t>(i));
  }
  // The sequencer finished every tx while the committer committed nothing.
  EXPECT_EQ(seqr.engine().last_seq(), kTxs);
  EXPECT_EQ(committer->committed_block(), 0u);
  EXPECT_GE(committer->backlog(), kTxs);
  committer->set_paused(false);
  committer->stop();  // drains the backlog
  const store::BlockCommitment last = committer->last();
  EXPECT_EQ(last.block, kTxs / kBlockTxs);
  EXPECT_EQ(last.last_seq, kTxs);
  EXPECT_EQ(last.tx_count, kBlockTxs);

  // Independent: the state root of a fresh replay, every leaf hashed from scratch.
  StreamReplayer replay(21);
  replay.set_block_txs(kBlockTxs);
  replay.run_to(kTxs);
  store::StateRoot full;
  full.touch_all(replay.engine());
  EXPECT_EQ(full.compute(replay.engine()), last.state_root);

  // The tx root of the last block: the hash chain over its txs.
  StreamReplayer again(21);
  again.set_block_txs(kBlockTxs);
  store::Hash32 chain{};
  for (uint64_t i = 1; i <= kTxs; ++i) {
    const Tx tx = again.step();
    if (i <= kTxs - kBlockTxs) continue;
    const store::TxHash h = store::tx_hash(tx, kChain);
    crypto_generichash_state st;
    crypto_generichash_init(&st, nullptr, 0, 32);
    crypto_generichash_update(&st, chain.data(), 32);
    crypto_generichash_update(&st, h.data(), h.size());
    crypto_generichash_final(&st, chain.data(), 32);
  }
  EXPECT_EQ(chain, last.tx_root);
}

TEST(Commit, blocks_log_chains_every_commitment_and_survives_a_torn_tail) {
  TempDir dir;
  {
    StreamReplayer seqr(22);
    seqr.set_block_txs(300);
    store::Committer committer(dir.path(), std::make_unique<Engine>(), kChain);
    ASSERT_TRUE(committer.start().ok());
    for (uint64_t i = 1; i <= 3000; ++i) {
      committer.push(seqr.step());
      if (i % 300 == 0) committer.seal(i / 300, static_cast<int64_t>(i));
    }
  }
  std::vector<store::BlockCommitment> blocks;
  ASSERT_TRUE(store::read_commitments(dir.path(), blocks).ok());
  ASSERT_EQ(blocks.size(), 10u);
  store::Hash32 prev{};
  for (const auto& c : blocks) {
    crypto_generichash_state st;
    crypto_generichash_init(&st, nullptr, 0, 32);
    crypto_generichash_update(&st, prev.data(), 32);
    crypto_generichash_update(&st, reinterpret_cast<const unsigned char*>(&c.block), 8);
    crypto_generichash_update(&st, reinterpret_cast<const unsigned char*>(&c.first_seq), 8);
    crypto_generichash_update(&st, reinterpret_cast<const unsigned char*>(&c.last_seq), 8);
    crypto_generichash_update(&st, c.tx_root.data(), 32);
    crypto_generichash_update(&st, c.state_root.data(), 32);
    store::Hash32 expect;
    crypto_generichash_final(&st, expect.data(), 32);
    EXPECT_EQ(expect, c.commitment) << "block " << c.block;
    prev = c.commitment;
  }
  const std::string log = dir.path() + "/blocks.log";
  ASSERT_TRUE(store::posix_disk().truncate_file(log, std::filesystem::file_size(log) - 10).ok());
  ASSERT_TRUE(store::read_commitments(dir.path(), blocks).ok());
  EXPECT_EQ(blocks.size(), 9u);  // the torn record is dropped (and cut off the file)
}

// Snapshots written by the committer from its replica: the state the sequencer had at a block
// boundary, taken without the sequencer stopping, never covering a tx the journal could lose.
TEST(Commit, a_replica_snapshot_is_the_sequencers_state_at_the_next_block_boundary) {
  TempDir dir;
  store::JournalConfig jc;
  jc.dir = dir.path();
  jc.durability = store::Durability::kFsync;
  std::unique_ptr<store::Journal> journal;
  ASSERT_TRUE(store::Journal::open(jc, 1, journal).ok());
  StreamReplayer seqr(23);
  store::Committer committer(dir.path(), std::make_unique<Engine>(), kChain);
  ASSERT_TRUE(committer.start().ok());
  uint64_t block = 1;
  // The sequencer: execute, journal, hand over, seal every 2000. The committer takes a block's
  // txs at its seal, or kStageLimit (1024) at a time within it: 2001-3024 reach it mid-block.
  static_assert(store::Committer::kStageLimit == 1024);
  auto feed = [&](uint64_t to) {
    while (seqr.engine().last_seq() < to) {
      Tx tx = seqr.step();
      tx.h.block = block;
      journal->append(tx);
      committer.push(tx);
      if (tx.h.seq % 2000 == 0) committer.seal(block++, tx.h.time_ns);
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  // The committer executed txs through `applied` and committed blocks through `committed`.
  auto caught_up = [&](uint64_t applied, uint64_t committed) {
    while ((committer.applied_seq() < applied || committer.last().last_seq < committed) &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  };
  feed(3150);  // mid-block: the snapshot waits for the seal at 4000
  caught_up(3024, 2000);
  ASSERT_TRUE(committer.request_snapshot(journal.get()));
  EXPECT_FALSE(committer.request_snapshot(journal.get())) << "one at a time";
  EXPECT_TRUE(committer.snapshot_busy());
  feed(4000);
  const uint64_t at_boundary = seqr.engine().state_hash();
  feed(5000);  // the sequencer goes on while the committer writes
  Status result;
  store::SnapshotInfo info;
  double secs = -1;
  while (!committer.poll_snapshot(result, info, &secs) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(info.seq, 4000u);
  EXPECT_GE(journal->durable_seq(), info.seq) << "a snapshot may cover durable txs only";
  EXPECT_GE(secs, 0.0);
  EXPECT_FALSE(committer.snapshot_busy());
  Engine fresh;
  store::SnapshotInfo loaded;
  ASSERT_TRUE(store::load_snapshot(info.path, fresh, loaded).ok());
  EXPECT_EQ(fresh.state_hash(), at_boundary);
  EXPECT_EQ(loaded.state_hash, at_boundary);

  // At a boundary already (every pushed tx sealed): written at once, at the sequencer's seq.
  committer.seal(block++, 0);
  caught_up(5000, 5000);
  ASSERT_TRUE(committer.request_snapshot(journal.get()));
  while (!committer.poll_snapshot(result, info) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(info.seq, 5000u);
  Engine again;
  ASSERT_TRUE(store::load_snapshot(info.path, again, loaded).ok());
  EXPECT_EQ(again.state_hash(), seqr.engine().state_hash());

  // Never ahead of the journal: with its commits held back (the writer blocked in its durability
  // callback after making seq 5001 durable), a snapshot asked for at the boundary 6000 is not
  // written until the journal is durable through 6000.
  std::atomic<bool> hold{true};
  std::atomic<uint64_t> held_at{0};
  journal->set_on_durable([&](uint64_t seq) {
    held_at.store(seq);
    while (hold.load()) std::this_thread::yield();
  });
  feed(5001);
  while (held_at.load() < 5001 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  feed(6000);  // sealed at 6000
  caught_up(6000, 6000);
  ASSERT_TRUE(committer.request_snapshot(journal.get()));
  bool early = false;  // a writer that did not wait would be done in a few ms
  for (auto window = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
       std::chrono::steady_clock::now() < window;) {
    if ((early = committer.poll_snapshot(result, info))) break;
    std::this_thread::yield();
  }
  EXPECT_FALSE(early) << "snapshot at seq " << info.seq << " written while the journal was "
                      << "durable through " << journal->durable_seq() << " only";
  EXPECT_EQ(journal->durable_seq(), 5001u);
  hold.store(false);
  while (!early && !committer.poll_snapshot(result, info) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(info.seq, 6000u);
  EXPECT_GE(journal->durable_seq(), 6000u);
  committer.stop();
  journal->close();
}

TEST(Commit, tx_hash_is_80_hex_and_ignores_the_sequencers_fields) {
  TxBuilder b;
  Tx a = b.limit(7, 3, 0, false, 300000, 10);
  Tx c = a;
  c.h.seq = 999;
  c.h.time_ns = 1;
  c.h.block = 5;
  const auto ha = store::tx_hash(a, kChain);
  EXPECT_EQ(store::to_hex(ha.data(), ha.size()).size(), 80u);
  EXPECT_EQ(ha, store::tx_hash(c, kChain));
  c.order.price += 1;
  EXPECT_NE(ha, store::tx_hash(c, kChain));
  EXPECT_NE(ha, store::tx_hash(a, 300));  // another chain id
}

}  // namespace
}  // namespace tachyon::testing
