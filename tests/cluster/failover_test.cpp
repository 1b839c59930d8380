// Failover against the real binary and a real nats-server: a primary under load killed with -9,
// a standby that takes the lapsed lease and goes on from the stream's end; every tx acknowledged
// under "replicated" is on the new primary, no seq is used twice, and clients go on with their
// nonces. Fencing: a primary stopped (SIGSTOP) past its lease and resumed after a standby took
// over appends and acknowledges nothing, and steps down saying so.
//
// TACHYON_FAILOVER_RUNS (default 20) sets how many kill -9 runs; each prints its failover time
// (kill -> first tx acknowledged by the new primary), a figure, not a pass/fail.
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "api/api_support.hpp"
#include "support/nats_server.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon {
namespace {

using testing::http;
using testing::HttpResult;
using testing::NatsServers;
using testing::Server;
using testing::TempDir;
using testing::Trader;

int failover_runs() {
  const char* e = std::getenv("TACHYON_FAILOVER_RUNS");
  return e != nullptr ? std::atoi(e) : 20;
}

std::string role_of(Server& s) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  std::string_view role;
  if (p.parse(s.get("/health/ready").body).get(e) || e["cluster"]["role"].get_string().get(role))
    return "";
  return std::string(role);
}

// The test sends from one address as fast as it can: the per-address and per-account limits are
// lifted.
const testing::ConfigFile& unlimited() {
  static const testing::ConfigFile f({{"ip_rate_per_s = 200", "ip_rate_per_s = 1000000"},
                                      {"ip_burst = 400", "ip_burst = 1000000"},
                                      {"account_rate_per_s = 100", "account_rate_per_s = 1000000"},
                                      {"account_burst = 200", "account_burst = 1000000"}});
  return f;
}

// Waits until `s` says it is the primary; false when it is gone (it answers nothing).
bool becomes_primary(Server& s) {
  for (;;) {
    if (role_of(s) == "primary") return true;
    if (s.get("/health/ready").status == 0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<std::string> args(const NatsServers& ns, const char* role) {
  std::vector<std::string> a = {"--role",      role,           "--nats",
                                ns.urls_csv(), "--durability", "replicated"};
  for (const auto& c : unlimited().args()) a.push_back(c);
  return a;
}

// Every seq in a node's journal once, in order (replay_journal refuses gaps and repeats).
uint64_t journal_txs(const std::string& dir) {
  store::JournalScan scan;
  uint64_t n = 0, last = 0;
  const Status s = store::replay_journal(
      dir, 0,
      [&](const Tx& tx) {
        EXPECT_EQ(tx.h.seq, last + 1);
        last = tx.h.seq;
        ++n;
      },
      scan, /*repair=*/false);
  EXPECT_TRUE(s.ok()) << s.message();
  return n;
}

struct Client {
  std::vector<Trader> traders;
  std::vector<std::string> acked;  // tx hashes answered 200
  std::string last_error;          // the last refusal's body
  explicit Client(Server& primary) {
    for (AccountIndex a : {7, 8}) {
      traders.emplace_back(a);
      EXPECT_EQ(primary.deposit(a, 1'000'000'000'000, traders.back().pk).status, 200);
    }
  }
  // One order per trader; the acknowledged ones are recorded. False once a send failed.
  bool round(Server& s, int i) {
    bool all = true;
    for (Trader& t : traders) {
      const Tx tx =
          t.order(0, t.account == 7, 10000, 300000 + (t.account == 7 ? 1 : -1) * (i % 50));
      const HttpResult r = s.send(tx, t.sk);
      if (r.status == 200) {
        acked.push_back(api::tx_hash_hex(tx, 304));
      } else {
        all = false;
        last_error = std::to_string(r.status) + " " + r.body;
      }
    }
    return all;
  }
  // After a failover: the nonces the new primary expects.
  void resync(Server& s) {
    simdjson::dom::parser p;
    for (Trader& t : traders) {
      simdjson::dom::element e;
      const std::string q =
          "/api/v1/nextNonce?account_index=" + std::to_string(t.account) + "&api_key_index=0";
      ASSERT_FALSE(p.parse(s.get(q).body).get(e));
      int64_t n = 0;
      ASSERT_FALSE(e["nonce"].get_int64().get(n));
      t.nonce = n;
    }
  }
};

double failover_once(NatsServers& ns) {
  TempDir pdir, sdir;
  auto primary = std::make_unique<Server>(args(ns, "primary"), pdir.path());
  if (!primary->ready()) {
    ADD_FAILURE() << primary->log();
    return 0;
  }
  Server standby(args(ns, "standby"), sdir.path());
  EXPECT_TRUE(standby.ready()) << standby.log();
  Client client(*primary);
  for (int i = 0; i < 100; ++i) client.round(*primary, i);
  // Under load: a sender keeps going while the primary is killed.
  std::atomic<bool> killed{false};
  std::thread sender([&] {
    for (int i = 100; !killed.load(); ++i) client.round(*primary, i);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto t_kill = std::chrono::steady_clock::now();
  primary->kill();
  killed.store(true);
  sender.join();
  if (!becomes_primary(standby)) {
    ADD_FAILURE() << "the standby is gone: " << standby.stop() << standby.log();
    return 0;
  }
  client.resync(standby);
  while (!client.round(standby, 0)) {
    client.resync(standby);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_kill).count();
  for (const std::string& h : client.acked) {
    EXPECT_EQ(standby.get("/api/v1/tx?by=hash&value=" + h).status, 200)
        << "an acknowledged tx is missing on the new primary: " << h;
  }
  for (int i = 1; i < 20; ++i) EXPECT_TRUE(client.round(standby, i)) << client.last_error;
  EXPECT_EQ(standby.stop(), 0) << standby.log();
  EXPECT_GT(journal_txs(sdir.path()), client.acked.size());
  return secs;
}

TEST(Failover, a_standby_takes_over_from_a_killed_primary_and_nothing_acknowledged_is_lost) {
  std::vector<double> times;
  for (int run = 0; run < failover_runs(); ++run) {
    NatsServers ns(1);  // each run its own stream
    times.push_back(failover_once(ns));
    if (::testing::Test::HasFailure()) break;
  }
  std::sort(times.begin(), times.end());
  std::printf(
      "failover (kill -9 -> first tx acknowledged by the new primary), %zu runs, lease "
      "1000 ms: p50 %.3f s, max %.3f s\n",
      times.size(), times[times.size() / 2], times.back());
}

TEST(Failover, a_primary_stopped_past_its_lease_is_fenced_and_steps_down) {
  NatsServers ns(1);
  TempDir pdir, sdir;
  Server old_primary(args(ns, "primary"), pdir.path());
  ASSERT_TRUE(old_primary.ready()) << old_primary.log();
  Server standby(args(ns, "standby"), sdir.path());
  ASSERT_TRUE(standby.ready()) << standby.log();
  Client client(old_primary);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(client.round(old_primary, i));
  const int64_t old_nonce = client.traders[0].nonce;  // the next one the old primary takes
  ::kill(old_primary.pid(), SIGSTOP);
  ASSERT_TRUE(becomes_primary(standby)) << standby.stop() << standby.log();
  client.resync(standby);
  ASSERT_TRUE(client.round(standby, 1));
  // The old primary resumes: a tx it takes now (a valid nonce in its state) is never
  // acknowledged: its publish is refused, or its lease renewal fails first.
  ::kill(old_primary.pid(), SIGCONT);
  Trader late(client.traders[0]);
  late.nonce = old_nonce;
  const HttpResult r = old_primary.send(late.order(0, true, 10000, 301000), late.sk);
  EXPECT_NE(r.status, 200) << r.body;
  EXPECT_EQ(old_primary.wait_exit(), 3) << old_primary.log();  // it stops by itself
  EXPECT_NE(old_primary.log().find("not the primary"), std::string::npos) << old_primary.log();
  EXPECT_NE(old_primary.log().find("stepping down"), std::string::npos) << old_primary.log();
  client.resync(standby);
  ASSERT_TRUE(client.round(standby, 2));
  ASSERT_EQ(standby.stop(), 0) << standby.log();
  journal_txs(sdir.path());  // consecutive seqs: nothing of the old primary's after the takeover
}

// Every node checks admin txs against the cluster's operator key: a standby whose data dir made
// its own key pair takes the primary's, so after a takeover the operator's txs (signed with the
// primary's key) are taken there; a node configured with another key refuses to start.
TEST(Failover, every_node_checks_admin_txs_against_the_clusters_operator_key) {
  NatsServers ns(1);
  Server primary(args(ns, "primary"));
  ASSERT_TRUE(primary.ready()) << primary.log();
  Server standby(args(ns, "standby"));
  ASSERT_TRUE(standby.ready()) << standby.log();
  EXPECT_NE(standby.log().find("operator key: the cluster's"), std::string::npos) << standby.log();
  {
    api::PublicKey pk;
    api::SecretKey sk;
    api::keygen(pk, sk);
    const testing::ConfigFile other(
        {{"operator_pubkey = \"\"", "operator_pubkey = \"" + api::to_hex(pk.data(), 32) + "\""}});
    std::vector<std::string> a = {"--role", "replica", "--nats", ns.urls_csv()};
    for (const auto& c : other.args()) a.push_back(c);
    Server replica(a);
    EXPECT_FALSE(replica.ready());
    EXPECT_EQ(replica.stop(), 2) << replica.log();
    EXPECT_NE(replica.log().find("is not the cluster's"), std::string::npos) << replica.log();
  }
  ASSERT_EQ(primary.stop(), 0) << primary.log();
  ASSERT_TRUE(becomes_primary(standby)) << standby.stop() << standby.log();
  standby.use_operator_key(primary.operator_key());
  // The operator's next nonce counts the txs the standby followed (the primary made 2 markets).
  const HttpResult next = http(standby.admin_port(), "GET", "/admin/nextNonce");
  EXPECT_NE(next.body.find("\"nonce\":2"), std::string::npos) << next.body;
  Trader t(5);
  EXPECT_EQ(standby.deposit(t.account, 1'000'000, t.pk).status, 200);
  EXPECT_EQ(standby.stop(), 0) << standby.log();
}

}  // namespace
}  // namespace tachyon
