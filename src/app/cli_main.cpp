// tachyon-cli: keys, signing and auth tokens for traders and operators (API.md "Signatures"),
// journal and snapshot inspection and verification, and the LOBSTER export (export_lobster.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

#include "export_lobster.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/api/tx_info.hpp"
#include "watch.hpp"

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

bool read_key(const std::string& path, api::SecretKey& sk) {
  std::ifstream in(path);
  std::string hex;
  if (!(in >> hex) || !api::secret_from_hex(hex, sk)) {
    std::fprintf(stderr, "tachyon-cli: %s is not a key file (128 hex characters)\n", path.c_str());
    return false;
  }
  return true;
}

int keygen_cmd(const std::string& out) {
  api::PublicKey pk;
  api::SecretKey sk;
  api::keygen(pk, sk);
  const std::string text = api::secret_to_hex(sk) + "\n";
  if (Status s = store::posix_disk().write_file_new(out, text); !s.ok()) {
    std::fprintf(stderr, "tachyon-cli: cannot create %s\n", s.message().c_str());
    return 1;
  }
  std::printf("%s\n", api::to_hex(pk.data(), pk.size()).c_str());
  return 0;
}

int sign_cmd(const std::string& key_file, int tx_type, const std::string& tx_json,
             uint32_t chain_id, const std::string& url, bool quiet) {
  api::SecretKey sk;
  if (!read_key(key_file, sk)) return 1;
  api::SignedTx st;
  std::string err;
  if (Reject r = api::parse_tx_info(tx_type, tx_json, st, err); r != Reject::kOk) {
    std::fprintf(stderr, "tachyon-cli: %s (%d)\n", err.c_str(), static_cast<int>(r));
    return 1;
  }
  const api::Signature sig = api::sign_tx(st.tx, chain_id, sk);
  const std::string info = api::tx_info_json(st.tx, &sig);
  if (quiet) {
    std::printf("%s\n", info.c_str());
    return 0;
  }
  std::printf("tx_info: %s\ntx_hash: %s\n", info.c_str(),
              api::tx_hash_hex(st.tx, chain_id).c_str());
  if (!url.empty()) {
    std::printf("curl -s -X POST %s/api/v1/sendTx -F tx_type=%d -F 'tx_info=%s'\n", url.c_str(),
                tx_type, info.c_str());
    std::string ws = url;
    if (ws.rfind("http", 0) == 0) ws.replace(0, 4, "ws");
    std::printf(
        "echo "
        "'{\"type\":\"jsonapi/sendtx\",\"data\":{\"id\":\"1\",\"tx_type\":%d,\"tx_info\":%s}}' | "
        "wscat -c %s/stream\n",
        tx_type, info.c_str(), ws.c_str());
  }
  return 0;
}

int token_cmd(const std::string& key_file, uint64_t account, int key, int64_t ttl_s,
              uint32_t chain_id) {
  api::SecretKey sk;
  if (!read_key(key_file, sk)) return 1;
  if (ttl_s <= 0 || ttl_s > api::kMaxTokenLifetimeS) {
    std::fprintf(stderr, "tachyon-cli: --ttl must be 1..%lld seconds\n",
                 static_cast<long long>(api::kMaxTokenLifetimeS));
    return 1;
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::printf(
      "%s\n",
      api::make_auth_token(now + ttl_s, account, static_cast<uint8_t>(key), chain_id, sk).c_str());
  return 0;
}

int export_cmd(const tachyon::app::ExportOptions& o) {
  tachyon::app::ExportReport report;
  if (const Status s = tachyon::app::export_lobster(o, report, stderr); !s.ok()) {
    std::fprintf(stderr, "tachyon-cli export: %s\n", s.message().c_str());
    return 1;
  }
  for (const std::string& f : report.files) std::printf("%s\n", f.c_str());
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
  std::string key_file, tx_json, url;
  int tx_type = 0, api_key = 0;
  uint32_t chain_id = 304;
  uint64_t account = 0;
  int64_t ttl = 3600;
  bool quiet = false;
  auto* keygen = app.add_subcommand("keygen", "make an Ed25519 key pair; prints the public key");
  keygen->add_option("--out", key_file, "secret key file to create (0600)")->required();
  auto* sign = app.add_subcommand(
      "sign", "sign a tx_info; prints it with Sig, its tx_hash, curl/wscat lines");
  sign->add_option("--key-file", key_file, "secret key file (keygen, or <data_dir>/operator.key)")
      ->required();
  sign->add_option("--tx-type", tx_type,
                   "Lighter tx type: 8 9 12 13 14 15 16 17 20 28 29; operator 1 60 61 62")
      ->required();
  sign->add_option("--tx", tx_json, "tx_info JSON without Sig (PascalCase fields)")->required();
  sign->add_option("--chain-id", chain_id, "chain id (the server's server.chain_id)");
  sign->add_option("--url", url, "server URL for the printed commands, e.g. http://127.0.0.1:8080");
  sign->add_flag("--quiet", quiet, "print only the signed tx_info");
  auto* token = app.add_subcommand("token", "make an auth token for private channels and reads");
  token->add_option("--key-file", key_file, "secret key file")->required();
  token->add_option("--account", account, "account index")->required();
  token->add_option("--api-key", api_key, "API key index")->required();
  token->add_option("--ttl", ttl, "lifetime in seconds (at most 8 h)");
  token->add_option("--chain-id", chain_id, "chain id");
  tachyon::app::ExportOptions ex;
  auto* exp = app.add_subcommand(
      "export", "one market's order history as LOBSTER message + orderbook files (read only)");
  exp->add_option("--data-dir", ex.data_dir, "data directory (journal, snapshots; not modified)")
      ->required();
  exp->add_option("--market", ex.market, "market id")
      ->required()
      ->check(CLI::Range(0, kMaxMarkets - 1));
  exp->add_option("--out", ex.out_dir, "output directory (created if missing)")->required();
  exp->add_option("--levels", ex.levels, "book levels per orderbook row (default 10)")
      ->check(CLI::Range(1, 1000));
  exp->add_option("--max-orders", ex.engine.max_orders, "the server's engine.max_orders");
  exp->add_option("--fee-account", ex.engine.fee_account, "the server's engine.fee_account");
  exp->add_option("--insurance-account", ex.engine.insurance_account,
                  "the server's engine.insurance_account");
  tachyon::app::WatchOptions wo;
  auto* watch = app.add_subcommand(
      "watch", "many Lighter-compatible nodes at once: books, last trades, lag, consolidated BBO");
  watch->add_option("--nodes", wo.nodes, "host:port of each node's public listener")
      ->required()
      ->delimiter(',');
  watch->add_option("--market", wo.market, "market id")->check(CLI::Range(0, kMaxMarkets - 1));
  watch->add_option("--interval-ms", wo.interval_ms, "between rounds (default 1000)")
      ->check(CLI::Range(10, 3'600'000));
  watch->add_option("--rounds", wo.rounds, "rounds to print, then exit (default: until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  watch
      ->add_option("--bench", wo.bench_rounds,
                   "measure sequential/concurrent, new/kept connections, simdjson/Boost.JSON "
                   "over this many rounds of every node's book")
      ->check(CLI::NonNegativeNumber);
  watch->add_option("--book-rows", wo.book_rows, "orders a side per book read in --bench")
      ->check(CLI::Range(1, 100));
  CLI11_PARSE(app, argc, argv);
  if (watch->parsed()) return tachyon::app::watch_cmd(wo);
  api::crypto_init();
  if (keygen->parsed()) return keygen_cmd(key_file);
  if (sign->parsed()) return sign_cmd(key_file, tx_type, tx_json, chain_id, url, quiet);
  if (token->parsed()) return token_cmd(key_file, account, api_key, ttl, chain_id);
  if (j_inspect->parsed()) return journal_cmd(dir, false);
  if (j_verify->parsed()) return journal_cmd(dir, true);
  if (s_inspect->parsed()) return snapshot_cmd(file, false);
  if (s_verify->parsed()) return snapshot_cmd(file, true);
  if (exp->parsed()) return export_cmd(ex);
  return 2;
}
