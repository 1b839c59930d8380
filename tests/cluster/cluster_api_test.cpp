// The cluster against the real server binary and a real nats-server: a primary under load
// (replicated durability), a replica and a standby following the journal stream. Their block
// commitments equal the primary's at every block, their state hash equals it, and their REST and
// WebSocket answers equal it; a replica restarted mid-stream resumes from its own journal, and
// one started empty from the cluster's snapshot; a replica forwards the txs it checked to the
// primary and refuses forged and malformed ones itself; a follower whose commitment differs from
// the primary's stops.
//
// TACHYON_CLUSTER_TXS (default 50000) sets how many txs the primary sequences.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "api/api_support.hpp"
#include "api/ws_client.hpp"
#include "support/nats_server.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/tx_info.hpp"
#include "tachyon/cluster/commitments.hpp"
#include "tachyon/cluster/nats.hpp"
#include "tachyon/store/commit.hpp"

namespace tachyon {
namespace {

using testing::http;
using testing::NatsServers;
using testing::Server;
using testing::TempDir;
using testing::WsClient;

uint64_t cluster_txs() {
  const char* e = std::getenv("TACHYON_CLUSTER_TXS");
  return e != nullptr ? std::strtoull(e, nullptr, 10) : 50000;
}

int64_t ready_field(Server& s, const char* cluster_key) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  if (p.parse(s.get("/health/ready").body).get(e)) return -1;
  int64_t v = -1;
  const auto field = cluster_key == nullptr ? e["applied_seq"] : e["cluster"][cluster_key];
  if (field.get_int64().get(v)) return -1;
  return v;
}

uint64_t applied(Server& s) { return static_cast<uint64_t>(ready_field(s, nullptr)); }

void wait_applied(Server& s, uint64_t seq) {
  while (applied(s) < seq) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// The nodes on `s`'s board (/health/ready): "<role> <applied seq>," each, sorted.
std::string board_of(Server& s) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  simdjson::dom::array nodes;
  if (p.parse(s.get("/health/ready").body).get(e) || e["cluster"]["nodes"].get_array().get(nodes))
    return "no board";
  std::vector<std::string> rows;
  for (simdjson::dom::element n : nodes) {
    std::string_view role;
    int64_t seq = -1;
    if (n["role"].get_string().get(role) || n["applied_seq"].get_int64().get(seq)) return "bad";
    rows.push_back(std::string(role) + " " + std::to_string(seq) + ",");
  }
  std::sort(rows.begin(), rows.end());
  std::string out;
  for (const auto& r : rows) out += r;
  return out;
}

// "stopped cleanly at seq N, state hash H" -> "N H".
std::string stopped_at(const std::string& log) {
  const size_t at = log.rfind("stopped cleanly at seq ");
  if (at == std::string::npos) return "<not stopped cleanly>";
  const size_t end = log.find('\n', at);
  return log.substr(at + 23, end - at - 23);
}

// A body without what differs between nodes by design: the book's nonce (each node's own count
// of its publications, ordering that node's updates)
// and the times of the txs that made or changed each object (a node that started from a snapshot
// does not know them for the objects no tx changed since: docs/WIRE_FIELDS.md).
std::string without_book_nonce(std::string body) {
  const size_t at = body.find(",\"nonce\":");
  if (at != std::string::npos) body.erase(at, body.find_first_of(",}", at + 1) - at);
  return testing::without_number_fields(std::move(body), {"transaction_time", "created_at"});
}

std::vector<std::string> cluster_args(const NatsServers& ns, const char* role) {
  return {"--role", role, "--nats", ns.urls_csv()};
}

// Every commitment the follower made equals the primary's at the same height; the follower has
// all but at most the primary's last (a follower's block ends when the next one starts).
void expect_same_commitments(const std::string& primary_dir, const std::string& follower_dir) {
  std::vector<store::BlockCommitment> p, f;
  ASSERT_TRUE(store::read_commitments(primary_dir, p).ok());
  ASSERT_TRUE(store::read_commitments(follower_dir, f).ok());
  ASSERT_FALSE(p.empty());
  EXPECT_GE(f.size() + 1, p.size());
  EXPECT_LE(f.size(), p.size());
  for (size_t i = 0; i < f.size() && i < p.size(); ++i) {
    ASSERT_EQ(f[i].block, p[i].block);
    ASSERT_EQ(f[i].commitment, p[i].commitment) << "block " << p[i].block;
  }
}

// A WebSocket channel's first frame, the state in it: a book's levels and checksum, or the
// trades (the rest of a frame is the node's own: its offsets, nonces and send times).
std::string ws_state(Server& s, const std::string& channel) {
  WsClient c(s.port());
  c.send(R"({"type":"subscribe","channel":")" + channel + "\"}");
  const std::string kind = channel.substr(0, channel.find('/'));
  const std::string f = c.recv_until("subscribed/" + kind);
  simdjson::dom::parser p;
  simdjson::dom::element e;
  if (p.parse(f).get(e)) return "";
  if (kind == "order_book") {
    simdjson::dom::element b = e["order_book"];
    return simdjson::minify(b["asks"]) + simdjson::minify(b["bids"]) +
           simdjson::minify(b["checksum"]);
  }
  return simdjson::minify(e["trades"]) + simdjson::minify(e["liquidation_trades"]);
}

TEST(Cluster, followers_show_what_the_primary_shows_block_by_block) {
  NatsServers ns(1);
  TempDir pdir, rdir, sdir;
  const uint64_t n = cluster_txs();
  std::string primary_end;
  {
    auto args = cluster_args(ns, "primary");
    args.insert(args.end(), {"--durability", "replicated", "--demo-load-tps", "3000"});
    Server primary(args, pdir.path());
    ASSERT_TRUE(primary.ready()) << primary.log();
    wait_applied(primary, n / 4);
    // The replica starts from an empty dir (the whole stream); it is restarted mid-stream and
    // resumes from its own journal.
    {
      Server replica(cluster_args(ns, "replica"), rdir.path());
      ASSERT_TRUE(replica.ready()) << replica.log();
      wait_applied(replica, n / 3);
      ASSERT_EQ(replica.stop(), 0) << replica.log();
    }
    Server standby(cluster_args(ns, "standby"), sdir.path());
    ASSERT_TRUE(standby.ready()) << standby.log();
    wait_applied(primary, n);
    ASSERT_EQ(primary.stop(), 0) << primary.log();
    primary_end = stopped_at(primary.log());
    const uint64_t last = std::strtoull(primary_end.c_str(), nullptr, 10);
    wait_applied(standby, last);
    ASSERT_EQ(standby.stop(), 0) << standby.log();
    EXPECT_EQ(stopped_at(standby.log()), primary_end);
  }
  Server replica(cluster_args(ns, "replica"), rdir.path());
  ASSERT_TRUE(replica.ready()) << replica.log();
  EXPECT_NE(replica.log().find("following stream TACHYON from seq "), std::string::npos);
  // The primary again, without load: the same REST answers from both.
  auto args = cluster_args(ns, "primary");
  args.insert(args.end(), {"--durability", "replicated"});
  Server primary(args, pdir.path());
  ASSERT_TRUE(primary.ready()) << primary.log();
  const uint64_t last = std::strtoull(primary_end.c_str(), nullptr, 10);
  wait_applied(replica, last);
  EXPECT_EQ(ready_field(replica, "lag_txs"), 0);
  for (const std::string q :
       {"/api/v1/orderBookOrders?market_id=0&limit=50",
        "/api/v1/orderBookOrders?market_id=1&limit=50", "/api/v1/orderBooks",
        "/api/v1/recentTrades?market_id=0&limit=50", "/api/v1/account?by=index&value=5",
        "/api/v1/account?by=index&value=9"}) {
    EXPECT_EQ(without_book_nonce(replica.get(q).body), without_book_nonce(primary.get(q).body))
        << q;
  }
  for (const std::string ch : {"order_book/0", "order_book/1", "trade/0", "trade/1"}) {
    EXPECT_EQ(ws_state(replica, ch), ws_state(primary, ch)) << ch;
    EXPECT_GT(ws_state(primary, ch).size(), 10u) << ch;  // levels, trades
  }
  // Each node shows every node's status as the board heard it: both roles, both at `last`.
  const std::string want =
      "primary " + std::to_string(last) + ",replica " + std::to_string(last) + ",";
  for (Server* s : {&replica, &primary}) {
    std::string seen;
    for (int i = 0; i < 200 && seen != want; ++i) {  // statuses go out at least once a second
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      seen = board_of(*s);
    }
    EXPECT_EQ(seen, want);
  }
  ASSERT_EQ(replica.stop(), 0) << replica.log();
  ASSERT_EQ(primary.stop(), 0) << primary.log();
  EXPECT_EQ(stopped_at(replica.log()), stopped_at(primary.log()));
  expect_same_commitments(pdir.path(), rdir.path());
  expect_same_commitments(pdir.path(), sdir.path());
}

// A replica with an empty data dir starts from the newest snapshot the primary published (the
// journal stream before it is purged, so it cannot have read the stream from seq 1), follows to
// the primary's end with the same state hash, and restarted goes on from its own state.
TEST(Cluster, a_replica_with_an_empty_data_dir_starts_from_the_clusters_snapshot) {
  NatsServers ns(1);
  TempDir pdir, rdir, cfgdir;
  const std::string cfg = cfgdir.path() + "/primary.toml";
  std::ofstream(cfg) << "[store]\nsnapshot_every_txs = 3000\n";
  auto args = cluster_args(ns, "primary");
  args.insert(args.end(),
              {"--durability", "replicated", "--demo-load-tps", "3000", "--config", cfg});
  Server primary(args, pdir.path());
  ASSERT_TRUE(primary.ready()) << primary.log();
  const std::string published = primary.wait_for_line("is published for followers");
  ASSERT_NE(published, "") << primary.log();
  const uint64_t snap =
      std::strtoull(published.c_str() + published.find("snapshot at seq ") + 16, nullptr, 10);
  ASSERT_GT(snap, 0u) << published;
  {  // the journal stream's messages holding txs up to the snapshot's seq: gone
    std::unique_ptr<cluster::NatsLink> link;
    cluster::NatsConfig nc;
    nc.servers = {ns.url(0)};
    ASSERT_TRUE(cluster::NatsLink::connect(nc, link).ok());
    uint64_t after = 0;
    ASSERT_TRUE(cluster::find_message_after(*link, snap, after).ok());
    jsOptions o;
    jsOptions_Init(&o);
    o.Stream.Purge.Sequence = after;
    ASSERT_EQ(js_PurgeStream(link->js(), "TACHYON", &o, nullptr), NATS_OK);
    uint64_t from_start = 0;  // the stream holds txs, but not seq 1 any more
    EXPECT_FALSE(cluster::find_message_after(*link, 0, from_start).ok());
    EXPECT_TRUE(cluster::find_message_after(*link, snap, from_start).ok());
  }
  {
    Server replica(cluster_args(ns, "replica"), rdir.path());
    ASSERT_TRUE(replica.ready()) << replica.log();
    EXPECT_NE(replica.log().find("starting from the cluster's snapshot at seq "), std::string::npos)
        << replica.log();
    wait_applied(replica, applied(primary));
    ASSERT_EQ(replica.stop(), 0) << replica.log();
  }
  Server replica(cluster_args(ns, "replica"), rdir.path());
  ASSERT_TRUE(replica.ready()) << replica.log();
  EXPECT_EQ(replica.log().find("starting from the cluster's snapshot"), std::string::npos);
  ASSERT_EQ(primary.stop(), 0) << primary.log();
  const std::string end = stopped_at(primary.log());
  wait_applied(replica, std::strtoull(end.c_str(), nullptr, 10));
  ASSERT_EQ(replica.stop(), 0) << replica.log();
  EXPECT_EQ(stopped_at(replica.log()), end);
}

int64_t height(Server& s) {
  simdjson::dom::parser p;
  int64_t h = -1;
  if (p.parse(s.get("/api/v1/currentHeight").body)["height"].get_int64().get(h)) return -1;
  return h;
}

// Waits (up to 30 s) until `s` committed the block holding tx `seq`.
bool committed_through(Server& s, uint64_t seq) {
  for (int i = 0; i < 1500; ++i) {
    simdjson::dom::parser p;
    simdjson::dom::element e;
    const int64_t h = height(s);
    int64_t last = 0;
    if (h > 0 &&
        !p.parse(s.get("/api/v1/block?by=height&value=" + std::to_string(h)).body).get(e) &&
        !e["blocks"].at(0)["last_seq"].get_int64().get(last) && uint64_t(last) >= seq)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Every follower checks its block commitments against those the primary publishes: one that
// differs (here a forged one, published after the primary's for the same block and seqs) stops
// the follower with the reason.
TEST(Cluster, a_follower_whose_commitment_differs_from_the_primarys_stops_and_says_why) {
  NatsServers ns(1);
  auto args = cluster_args(ns, "primary");
  args.insert(args.end(), {"--durability", "replicated"});
  Server primary(args);
  Server replica(cluster_args(ns, "replica"));
  ASSERT_TRUE(primary.ready()) << primary.log();
  ASSERT_TRUE(replica.ready()) << replica.log();
  testing::Trader t(7);
  ASSERT_EQ(primary.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  // The deposit's block committed: the next tx begins block h + 1.
  const uint64_t seq = applied(primary);
  ASSERT_TRUE(committed_through(primary, seq)) << primary.log();
  const int64_t h = height(primary);
  ASSERT_EQ(primary.send(t.order(0, false, 1000, 299000), t.sk).status, 200);  // block h + 1
  std::unique_ptr<cluster::NatsLink> link;
  cluster::NatsConfig nc;
  nc.servers = {ns.url(0)};
  ASSERT_TRUE(cluster::NatsLink::connect(nc, link).ok());
  cluster::PublishedBlock real;
  bool found = false;
  for (int i = 0; i < 500 && !found; ++i) {
    ASSERT_TRUE(cluster::published_commitment(*link, h + 1, real, found).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(found) << primary.log();
  EXPECT_EQ(real.first_seq, seq + 1);
  EXPECT_EQ(real.last_seq, seq + 1);
  cluster::PublishedBlock forged = real;
  forged.state_root = std::string(64, real.state_root[0] == '0' ? '1' : '0');
  ASSERT_TRUE(cluster::publish_commitment(*link, h + 1, forged).ok());
  // The next tx begins block h + 2: the replica commits h + 1 and checks it.
  ASSERT_EQ(primary.send(t.order(0, false, 1000, 299001), t.sk).status, 200);
  const std::string why = replica.wait_for_line("differs from the primary's", 30000);
  ASSERT_NE(why, "") << replica.log();
  EXPECT_NE(why.find("block " + std::to_string(h + 1) + " (seqs"), std::string::npos) << why;
  EXPECT_NE(why.find(forged.state_root), std::string::npos) << why;
  EXPECT_EQ(replica.wait_exit(), 3) << replica.log();
  EXPECT_EQ(primary.stop(), 0) << primary.log();
}

// A primary (replicated durability unless said otherwise) and a replica, each in a fresh data
// dir.
struct PrimaryAndReplica {
  explicit PrimaryAndReplica(const NatsServers& ns, const char* durability = "replicated")
      : primary(primary_args(ns, durability)), replica(cluster_args(ns, "replica")) {}
  static std::vector<std::string> primary_args(const NatsServers& ns, const char* durability) {
    auto a = cluster_args(ns, "primary");
    a.insert(a.end(), {"--durability", durability});
    return a;
  }
  bool ready() {
    EXPECT_TRUE(primary.ready()) << primary.log();
    EXPECT_TRUE(replica.ready()) << replica.log();
    return primary.ready() && replica.ready();
  }
  Server primary, replica;
};

int64_t seq_of(const std::string& body) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  int64_t seq = -1;
  if (p.parse(body).get(e) || e["seq"].get_int64().get(seq)) return -1;
  return seq;
}

double forwarded(Server& primary) {
  return testing::scrape(primary)["tachyon_cluster_forwarded_txs_total"];
}

// sendTx on a replica: checked there as the primary would check it, forwarded, and answered once
// the replica applied it (its reads show the tx at once); the next nonce follows on either node.
// A forged or malformed tx is refused on the replica and never reaches the primary. (The primary
// acknowledges on its own write here, before the stream has the tx: the replica's answer must
// wait for it.)
TEST(Cluster, a_replica_forwards_checked_txs_and_answers_once_it_applied_them) {
  NatsServers ns(1);
  PrimaryAndReplica nodes(ns, "write");
  ASSERT_TRUE(nodes.ready());
  Server& primary = nodes.primary;
  Server& replica = nodes.replica;
  testing::Trader t(5);
  ASSERT_EQ(primary.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  wait_applied(replica, applied(primary));
  for (int i = 0; i < 20; ++i) {
    const testing::HttpResult r = replica.send(
        t.order(0, false, 1000, 299000 - i, TimeInForce::kGoodTillTime, 100 + i), t.sk);
    ASSERT_EQ(r.status, 200) << r.body;
    const int64_t seq = seq_of(r.body);
    ASSERT_GT(seq, 0) << r.body;
    // Read-your-writes on the replica: its state shows the tx as soon as the answer came.
    EXPECT_GE(int64_t(applied(replica)), seq);
    const std::string next = replica.get("/api/v1/nextNonce?account_index=5&api_key_index=0").body;
    EXPECT_NE(next.find("\"nonce\":" + std::to_string(t.nonce)), std::string::npos) << next;
  }
  const std::string book = replica.get("/api/v1/orderBookOrders?market_id=0&limit=100").body;
  EXPECT_NE(book.find("\"owner_account_index\":5"), std::string::npos) << book;
  EXPECT_EQ(forwarded(primary), 20);
  // The primary takes the next nonce directly, then the replica again.
  ASSERT_EQ(primary.send(t.order(0, false, 1000, 298000), t.sk).status, 200);
  wait_applied(replica, applied(primary));
  ASSERT_EQ(replica.send(t.order(0, false, 1000, 297000), t.sk).status, 200);
  // A batch, forwarded whole.
  auto info = [&](const Tx& tx) {
    const api::Signature sig = api::sign_tx(tx, 304, t.sk);
    std::string out;
    api::JsonWriter(out).str(api::tx_info_json(tx, &sig));
    return out;
  };
  const Tx b1 = t.order(0, false, 1000, 297001), b2 = t.order(0, false, 1000, 297002);
  const testing::HttpResult batch =
      http(replica.port(), "POST", "/api/v1/sendTxBatch",
           "tx_types=" + testing::urlencode("[14,14]") +
               "&tx_infos=" + testing::urlencode("[" + info(b1) + "," + info(b2) + "]"));
  ASSERT_EQ(batch.status, 200) << batch.body;
  EXPECT_NE(batch.body.find("\"tx_hash\":["), std::string::npos) << batch.body;
  EXPECT_GE(int64_t(applied(replica)), seq_of(batch.body));
  EXPECT_EQ(forwarded(primary), 23);

  // Forged: signed by another key. Replayed: a nonce already used. Malformed.
  testing::Trader forger(5);
  forger.nonce = t.nonce;
  const testing::HttpResult forged = replica.send(forger.order(0, false, 1000, 296000), forger.sk);
  EXPECT_EQ(forged.status, 400) << forged.body;
  testing::Trader replay = t;
  replay.nonce = t.nonce - 1;
  const testing::HttpResult replayed = replica.send(replay.order(0, false, 1000, 296000), t.sk);
  EXPECT_EQ(replayed.status, 400) << replayed.body;
  const testing::HttpResult bad =
      http(replica.port(), "POST", "/api/v1/sendTx", "tx_type=14&tx_info=%7Bnot+json");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(forwarded(primary), 23);

  simdjson::dom::parser p;
  simdjson::dom::element e;
  ASSERT_FALSE(p.parse(replica.get("/health/ready").body).get(e));
  std::string_view role;
  ASSERT_FALSE(e["cluster"]["role"].get_string().get(role));
  EXPECT_EQ(role, "replica");
  EXPECT_EQ(testing::scrape(replica)["tachyon_cluster_primary"], 0);
  EXPECT_EQ(testing::scrape(replica)["tachyon_cluster_lag_txs"], 0);
  EXPECT_EQ(testing::scrape(replica)["tachyon_cluster_lag_seconds"], 0);
  EXPECT_EQ(testing::scrape(primary)["tachyon_cluster_primary"], 1);
  // (The stream's ack may reach the primary after the replica applied the tx.)
  for (int i = 0; i < 200 && testing::scrape(primary)["tachyon_cluster_replicated_seq"] !=
                                 double(applied(primary));
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(testing::scrape(primary)["tachyon_cluster_replicated_seq"], double(applied(primary)));

  // Cancel-on-disconnect armed on the replica: the cancel goes to the primary when the session
  // drops.
  {
    WsClient c(replica.port());
    c.send(testing::cancel_on_disconnect_message(t));
    EXPECT_NE(c.recv_until("cancel_on_disconnect").find("\"status\":\"armed\""), std::string::npos);
    c.close();
  }
  const std::string no_orders = "\"total_order_count\":0";
  for (int i = 0; i < 500 && primary.get("/api/v1/account?by=index&value=5").body.find(no_orders) ==
                                 std::string::npos;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_NE(primary.get("/api/v1/account?by=index&value=5").body.find(no_orders),
            std::string::npos);
  t.nonce = (int64_t{1} << 40) + 1;

  // No primary: the replica says so, and the tx was not taken (its nonce is free again).
  ASSERT_EQ(primary.stop(), 0) << primary.log();
  const testing::HttpResult none = replica.send(t.order(0, false, 1000, 295000), t.sk);
  EXPECT_EQ(none.status, 503) << none.body;
  EXPECT_NE(none.body.find("23004"), std::string::npos) << none.body;
  EXPECT_NE(none.body.find("no primary"), std::string::npos) << none.body;
  EXPECT_EQ(replica.stop(), 0) << replica.log();
}

TEST(Cluster, a_primary_refuses_to_start_behind_the_stream) {
  NatsServers ns(1);
  TempDir other;
  {
    auto args = cluster_args(ns, "primary");
    args.insert(args.end(), {"--durability", "replicated"});
    Server first(args);
    ASSERT_TRUE(first.ready()) << first.log();
    const api::SecretKey& sk = first.operator_key();  // the cluster's: the second one's too
    std::ofstream(other.path() + "/operator.key") << api::to_hex(sk.data(), sk.size()) << "\n";
  }
  // A second primary with an empty journal: the stream holds txs it does not.
  auto args = cluster_args(ns, "primary");
  args.insert(args.end(), {"--durability", "replicated"});
  Server second(args, other.path());
  EXPECT_FALSE(second.ready());
  EXPECT_EQ(second.stop(), 2) << second.log();
  EXPECT_NE(second.log().find("start this node as a standby"), std::string::npos) << second.log();
}

}  // namespace
}  // namespace tachyon

namespace tachyon {
namespace {

std::string ready_body(Server& s, int& status) {
  const testing::HttpResult r = s.get("/health/ready");
  status = r.status;
  return r.body;
}

// NATS away: a tx taken meanwhile waits (never acknowledged before the stream stored it); once the
// stream stored nothing for longer than the NATS timeout, the primary refuses new txs with 23003
// and says why in /health/ready; a replica keeps serving its last state, marked stale. NATS back:
// the waiting tx is answered, new ones are taken, the replica follows again.
TEST(Cluster, with_nats_away_the_primary_refuses_txs_and_a_replica_serves_stale_reads) {
  NatsServers ns(1);
  PrimaryAndReplica nodes(ns);
  ASSERT_TRUE(nodes.ready());
  Server& primary = nodes.primary;
  Server& replica = nodes.replica;
  testing::Trader t(6);
  ASSERT_EQ(primary.deposit(t.account, 1'000'000'000, t.pk).status, 200);
  wait_applied(replica, applied(primary));

  ns.kill(0);
  const Tx waiting = t.order(0, false, 10000, 299000);
  testing::HttpResult waited;
  std::thread sender([&] { waited = primary.send(waiting, t.sk); });
  int status = 0;
  std::string body;
  while ((body = ready_body(primary, status)).find("journal stream") == std::string::npos) {
    ASSERT_NE(status, 0) << "the primary is gone: " << primary.stop() << primary.log();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(status, 503) << body;
  const Tx refused = t.order(0, false, 10000, 299001);
  const testing::HttpResult r = primary.send(refused, t.sk);
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_NE(r.body.find("23003"), std::string::npos) << r.body;
  while (ready_body(replica, status).find("\"stale\":true") == std::string::npos) {
    ASSERT_NE(status, 0) << "the replica is gone: " << replica.stop() << replica.log();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(replica.get("/api/v1/orderBooks").status, 200);

  ns.start(0);
  sender.join();
  EXPECT_EQ(waited.status, 200) << waited.body;  // stored once NATS was back, then answered
  while (ready_body(primary, status), status != 200) {
    ASSERT_NE(status, 0) << "the primary is gone: " << primary.stop() << primary.log();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  t.nonce = refused.h.nonce;  // refused before admission: its nonce is free
  EXPECT_EQ(primary.send(t.order(0, false, 10000, 299002), t.sk).status, 200);
  wait_applied(replica, applied(primary));
  while (ready_body(replica, status).find("\"stale\":false") == std::string::npos) {
    ASSERT_NE(status, 0) << "the replica is gone: " << replica.stop() << replica.log();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(replica.stop(), 0) << replica.log();
  EXPECT_EQ(primary.stop(), 0) << primary.log();
  EXPECT_EQ(stopped_at(replica.log()), stopped_at(primary.log()));
}

}  // namespace
}  // namespace tachyon
