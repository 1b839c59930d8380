// api::VerifyPool against libsodium's verdict on each job, and the server with verify helpers:
// the txs api worker 0 puts off to the end of a pass are checked together and answered as they
// would have been one by one.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "api/api_support.hpp"
#include "api/ws_client.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/verify_pool.hpp"
#include "tachyon/codec/tx_hash.hpp"

namespace tachyon::testing {
namespace {

// Signed messages, every third one spoiled: a flipped signature byte, a changed message, or the
// signature of another message; the pool's verdicts must be libsodium's, batch after batch.
TEST(VerifyPool, every_job_gets_its_own_verdict_in_batches_of_every_size) {
  api::crypto_init();
  api::PublicKey pk;
  api::SecretKey sk;
  api::keygen(pk, sk);
  for (unsigned helpers : {1u, 3u}) {
    Counter shared, helped;
    api::VerifyPool pool(helpers, 3, shared, helped);
    size_t expected_shared = 0;
    for (size_t n = 0; n <= 24; ++n) {
      std::vector<api::VerifyPool::Job> jobs(n);
      std::vector<bool> want(n);
      for (size_t i = 0; i < n; ++i) {
        Tx tx;
        tx.h.type = TxType::kCreateOrder;
        tx.h.account = 3;
        tx.h.nonce = static_cast<int64_t>(n * 100 + i);
        jobs[i].message = codec::canonical_tx_bytes(tx, 304);
        jobs[i].sig = api::sign_tx(tx, 304, sk);
        jobs[i].pubkey = pk;
        want[i] = i % 3 != 2;
        if (i % 3 == 2) {
          if (i % 9 == 2) jobs[i].sig[7] ^= 1;
          if (i % 9 == 5) jobs[i].message.back() ^= 1;
          if (i % 9 == 8) jobs[i].sig = jobs[i - 1].sig;
        }
        jobs[i].ok = !want[i];  // the pool must set every verdict
      }
      pool.verify(jobs);
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(jobs[i].ok, want[i]) << n << " jobs, job " << i;
      if (n >= pool.min_batch()) ++expected_shared;
    }
    EXPECT_EQ(pool.shared_batches(), expected_shared);
  }
}

// Big batches, back to back: the helpers take part (each batch is ~2 ms of checks, their wake-up
// tens of µs), and a helper woken late for one batch never touches the next one's jobs. Every
// other round reads each verdict as soon as wait() gives it, and starts the next batch without
// a finish() (start finishes the last one).
TEST(VerifyPool, helpers_take_jobs_and_batches_do_not_mix) {
  api::crypto_init();
  api::PublicKey pk;
  api::SecretKey sk;
  api::keygen(pk, sk);
  Counter shared, helped;
  api::VerifyPool pool(2, 3, shared, helped);
  Tx tx;
  tx.h.type = TxType::kCancelOrder;
  tx.h.account = 4;
  const std::vector<uint8_t> good = codec::canonical_tx_bytes(tx, 304);
  const api::Signature sig = api::sign_tx(tx, 304, sk);
  for (int round = 0; round < 60; ++round) {
    std::vector<api::VerifyPool::Job> jobs(round % 2 == 0 ? 40 : 3);
    for (size_t i = 0; i < jobs.size(); ++i) {
      jobs[i].message = good;
      jobs[i].sig = sig;
      jobs[i].pubkey = pk;
      if ((i + size_t(round)) % 4 == 0) jobs[i].message[0] ^= 0x80;  // fails
    }
    const bool one_by_one = round % 4 >= 2;
    if (one_by_one)
      pool.start(jobs);
    else
      pool.verify(jobs);
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (one_by_one) pool.wait(i);
      ASSERT_EQ(jobs[i].ok, (i + size_t(round)) % 4 != 0) << "round " << round << " job " << i;
    }
  }
  pool.finish();
  EXPECT_EQ(pool.shared_batches(), 60u);
  EXPECT_GT(pool.helper_jobs(), 0u);
}

uint64_t metric(Server& s, const std::string& name) {
  const HttpResult m = http(s.admin_port(), "GET", "/metrics");
  const size_t at = m.body.find("\n" + name + " ");
  return at == std::string::npos ? 0 : std::stoull(m.body.substr(at + name.size() + 2));
}

// Api worker 0 hosting the pipeline loop with one verify helper, alone (the defaults) or beside
// a second worker that checks its own txs. Three traders send bursts of orders on their own
// connections without waiting; one burst also carries a tx that borrows the signature of the order
// before it (refused: the check is of its own bytes, even when the order it copied passed in the
// same batch) and one signed with a key the account does not have.
class VerifyHelpers : public ::testing::TestWithParam<int> {};

TEST_P(VerifyHelpers, txs_put_off_to_the_end_of_a_pass_get_the_verdicts_of_one_by_one_checks) {
  ConfigFile::Edits edits;
  if (GetParam() == 2) edits.push_back({"workers = 1", "workers = 2"});
  ConfigFile cfg(edits);
  Server s(cfg.args());
  ASSERT_TRUE(s.ready()) << s.log();
  std::vector<Trader> traders;
  for (AccountIndex a : {3, 4, 5}) traders.emplace_back(a);
  for (Trader& t : traders) ASSERT_EQ(s.deposit(t.account, 1'000'000'000'000, t.pk).status, 200);
  constexpr int kOrders = 40;
  std::vector<std::unique_ptr<WsClient>> conns;
  for (size_t c = 0; c < traders.size(); ++c) {
    conns.push_back(std::make_unique<WsClient>(s.port()));
    conns.back()->recv();  // the greeting
  }
  auto frame = [](const Tx& tx, const api::Signature& sig, const std::string& id) {
    std::string info;
    api::JsonWriter(info).str(api::tx_info_json(tx, &sig));
    return R"({"type":"jsonapi/sendtx","id":")" + id + R"(","data":{"tx_type":14,"tx_info":)" +
           info + "}}";
  };
  for (int i = 0; i < kOrders; ++i) {
    for (size_t c = 0; c < traders.size(); ++c) {
      const bool ask = c % 2 == 0;  // resting, none crossing
      const Tx tx = traders[c].order(0, ask, 1000, ask ? 301000 + 10 * i : 299000 - 10 * i);
      conns[c]->send(frame(tx, api::sign_tx(tx, 304, traders[c].sk), std::to_string(i)));
    }
  }
  Trader& t0 = traders[0];
  const Tx victim = t0.order(0, true, 1000, 302000);
  const api::Signature victim_sig = api::sign_tx(victim, 304, t0.sk);
  const Tx forged = t0.order(0, true, 1000, 302100);  // its own nonce and price, the victim's sig
  Trader stranger(99);
  const Tx wrong_key = t0.order(0, true, 1000, 302200);
  conns[0]->send(frame(victim, victim_sig, "victim"));
  conns[0]->send(frame(forged, victim_sig, "forged"));
  conns[0]->send(frame(wrong_key, api::sign_tx(wrong_key, 304, stranger.sk), "wrong_key"));
  // Each request's answer, by its id (a refusal leaves at once, an acceptance once durable).
  auto answers = [](WsClient& c, size_t n) {
    std::map<std::string, std::string> by_id;
    while (by_id.size() < n) {
      const std::string r = c.recv_until("\"id\":\"");
      if (r.empty()) break;
      const size_t at = r.find("\"id\":\"") + 6;
      by_id[r.substr(at, r.find('"', at) - at)] = r;
    }
    return by_id;
  };
  for (size_t c = 0; c < conns.size(); ++c) {
    std::map<std::string, std::string> got = answers(*conns[c], kOrders + (c == 0 ? 3 : 0));
    for (int i = 0; i < kOrders; ++i)
      EXPECT_NE(got[std::to_string(i)].find("\"code\":200"), std::string::npos)
          << "connection " << c << " order " << i << ": " << got[std::to_string(i)];
    if (c != 0) continue;
    EXPECT_NE(got["victim"].find("\"code\":200"), std::string::npos) << got["victim"];
    for (const char* id : {"forged", "wrong_key"})
      EXPECT_NE(got[id].find("\"code\":21103"), std::string::npos) << id << ": " << got[id];
  }
  // REST txs go the same way.
  const Tx rest = traders[1].order(0, false, 1000, 298000);
  const HttpResult rr = s.send(rest, traders[1].sk);
  EXPECT_EQ(rr.status, 200) << rr.body;
  if (GetParam() == 1) {  // (with two workers the bursts are split, and may not make a batch)
    EXPECT_GT(metric(s, "tachyon_verify_shared_batches_total"), 0u) << "no batch was shared";
  }
  // Each trader's key got tables on the threads that checked it, and most checks used them (the
  // stranger's key never does: nothing it signed was accepted).
  EXPECT_GE(metric(s, "tachyon_signature_key_tables_built_total"), traders.size());
  EXPECT_GE(metric(s, "tachyon_signature_key_tables"), traders.size());
  EXPECT_GT(metric(s, "tachyon_signature_key_table_hits_total"),
            metric(s, "tachyon_signature_key_table_misses_total"));
  EXPECT_EQ(s.stop(), 0) << s.log();
}

INSTANTIATE_TEST_SUITE_P(Workers, VerifyHelpers, ::testing::Values(1, 2));

}  // namespace
}  // namespace tachyon::testing
