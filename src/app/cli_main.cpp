// tachyon-cli: operator tools. Journal and snapshot inspection and verification (issue 3);
// keys, signing and auth tokens come with the API (issue 5).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>

#include "tachyon/store/journal.hpp"
#include "tachyon/store/snapshot.hpp"

using namespace tachyon;

namespace {

int journal_cmd(const std::string& dir, bool verify_only) {
  std::map<int, uint64_t> by_type;
  store::JournalScan scan;
  const Status s = store::replay_journal(
      dir, 0, [&](const Tx& tx) { ++by_type[static_cast<int>(tx.h.type)]; }, scan,
      /*repair=*/false);
  if (!s.ok()) {
    std::printf("journal %s: INVALID: %s\n", dir.c_str(), s.message().c_str());
    return 1;
  }
  std::printf("journal %s: %llu records in %llu segments, seq %llu..%llu\n", dir.c_str(),
              static_cast<unsigned long long>(scan.records),
              static_cast<unsigned long long>(scan.segments),
              static_cast<unsigned long long>(scan.first_seq),
              static_cast<unsigned long long>(scan.last_seq));
  if (scan.truncated_tail)
    std::printf("  torn tail (recovery will truncate it): %s\n", scan.note.c_str());
  if (!verify_only) {
    for (const auto& [type, n] : by_type)
      std::printf("  tx type %3d: %llu\n", type, static_cast<unsigned long long>(n));
  }
  std::printf("%s\n", scan.truncated_tail ? "OK (with a torn tail)" : "OK");
  return 0;
}

int snapshot_cmd(const std::string& path, bool verify) {
  Engine e;
  store::SnapshotInfo info;
  const Status s = store::load_snapshot(path, e, info);
  if (!s.ok()) {
    std::printf("INVALID: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("snapshot %s: seq %llu, %llu bytes, state hash %016llx\n", path.c_str(),
              static_cast<unsigned long long>(info.seq),
              static_cast<unsigned long long>(info.bytes),
              static_cast<unsigned long long>(info.state_hash));
  if (!verify) {
    uint32_t markets = 0;
    for (int m = 0; m < kMaxMarkets; ++m) markets += e.market(static_cast<MarketId>(m)) != nullptr;
    std::printf("  markets %u, accounts %zu, resting orders %u, deposits %lld, withdrawals %lld\n",
                markets, e.accounts().size(), e.orders().live_count(),
                static_cast<long long>(e.total_deposits()),
                static_cast<long long>(e.total_withdrawals()));
  }
  std::printf("OK (checksums, invariants and state hash verified)\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tachyon-cli: operator tools"};
  app.require_subcommand(1);
  std::string dir, file;
  auto* journal = app.add_subcommand("journal", "inspect or verify a journal directory");
  journal->require_subcommand(1);
  auto* j_inspect = journal->add_subcommand("inspect", "segments, seq range, tx types");
  j_inspect->add_option("dir", dir, "data directory")->required();
  auto* j_verify = journal->add_subcommand("verify", "checksums and seq continuity (no repair)");
  j_verify->add_option("dir", dir, "data directory")->required();
  auto* snapshot = app.add_subcommand("snapshot", "inspect or verify a snapshot file");
  snapshot->require_subcommand(1);
  auto* s_inspect = snapshot->add_subcommand("inspect", "header and contents");
  s_inspect->add_option("file", file, "snapshot file")->required();
  auto* s_verify = snapshot->add_subcommand("verify", "checksums, invariants and state hash");
  s_verify->add_option("file", file, "snapshot file")->required();
  CLI11_PARSE(app, argc, argv);
  if (j_inspect->parsed()) return journal_cmd(dir, false);
  if (j_verify->parsed()) return journal_cmd(dir, true);
  if (s_inspect->parsed()) return snapshot_cmd(file, false);
  if (s_verify->parsed()) return snapshot_cmd(file, true);
  return 2;
}
