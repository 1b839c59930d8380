// Fixed work for instruction counts (scripts/bench.sh runs it under valgrind's callgrind, which
// counts instructions, not seconds: the same count on every run of the same binary and input,
// whatever else the machine does). The inputs are made first; only `measured` is counted
// (callgrind --toggle-collect), and it prints how many operations it did.
//
//   bench_instructions engine N   N txs of the seeded mixed stream through Engine::execute
//   bench_instructions apply N    the state updates of those txs through the read model (books and
//                                 views), published every 64 txs
//   bench_instructions codec N    each of those txs encoded and decoded
//   bench_instructions verify_libsodium N   N Ed25519 checks of one signed tx by libsodium
//   bench_instructions verify_tables N      the same by ed25519::verify, the key's tables built
#include <sodium.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "app/random_stream.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/api/ed25519.hpp"
#include "tachyon/codec/codec.hpp"
#include "tachyon/codec/tx_hash.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/pipe/read_model.hpp"

namespace {

using namespace tachyon;

class Collect final : public UpdateSink {
 public:
  void on_update(const StateUpdate& u) override { updates.push_back(u); }
  std::vector<StateUpdate> updates;
};

struct Input {
  std::vector<Tx> genesis, txs;
  std::vector<uint8_t> message;  // a tx's canonical bytes, its signature and key (verify_*)
  api::Signature sig{};
  api::PublicKey pk{};
};

// A fixed key (seeded) signing the first tx: the same scalars, so the same count, every run.
void make_signed(Input& in) {
  api::crypto_init();
  uint8_t seed[32] = {7};
  api::SecretKey sk;
  crypto_sign_seed_keypair(in.pk.data(), sk.data(), seed);
  in.sig = api::sign_tx(in.txs.at(0), 1, sk);
  in.message = codec::canonical_tx_bytes(in.txs.at(0), 1);
}

// The stream's genesis and its next n txs, as a client would send them.
Input make_input(size_t n) {
  app::StreamConfig cfg;
  cfg.accounts = 64;
  cfg.markets = 2;
  app::RandomStream stream(7, cfg);
  Engine e;
  NullSink sink;
  stream.set_oracle(&e);
  Input in;
  in.genesis = stream.genesis();
  for (const Tx& tx : in.genesis) stream.on_result(tx, e.execute(tx, sink));
  for (size_t i = 0; i < n; ++i) {
    const Tx tx = stream.next();
    stream.on_result(tx, e.execute(tx, sink));
    in.txs.push_back(tx);
  }
  return in;
}

std::unique_ptr<Engine> after_genesis(const Input& in) {
  auto e = std::make_unique<Engine>();
  NullSink sink;
  for (const Tx& tx : in.genesis) e->execute(tx, sink);
  return e;
}

// What callgrind counts. noinline and extern "C": one stable symbol to toggle on.
extern "C" __attribute__((noinline)) size_t measured(const std::string& what, const Input& in,
                                                     Engine& e, pipe::ReadModel* model,
                                                     const std::vector<StateUpdate>& updates) {
  size_t ops = 0;
  if (what == "engine") {
    NullSink sink;
    for (const Tx& tx : in.txs) e.execute(tx, sink);
    ops = in.txs.size();
  } else if (what == "apply") {
    size_t txs = 0;
    for (const StateUpdate& u : updates) {
      model->apply(u);
      if (u.type == UpdateType::kTxResult && ++txs % 64 == 0) model->publish(0, u.result.seq);
    }
    ops = updates.size();
  } else if (what == "verify_libsodium" || what == "verify_tables") {
    const std::string_view m(reinterpret_cast<const char*>(in.message.data()), in.message.size());
    const bool tables = what == "verify_tables";
    for (size_t i = 0; i < in.txs.size(); ++i) {
      const bool ok = tables ? api::ed25519::verify(m, in.sig, in.pk)
                             : api::ed25519::verify_reference(m, in.sig, in.pk);
      if (!ok) std::abort();
    }
    ops = in.txs.size();
  } else if (what == "codec") {
    uint8_t buf[codec::kMaxRecordSize];
    for (const Tx& tx : in.txs) {
      const size_t n = codec::encode(tx, buf);
      Tx back;
      if (!codec::decode(std::span<const uint8_t>(buf, n), back).ok()) std::abort();
    }
    ops = in.txs.size();
  }
  return ops;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: bench_instructions engine|apply|codec|verify_libsodium|verify_tables N\n");
    return 2;
  }
  const std::string what = argv[1];
  if (what != "engine" && what != "apply" && what != "codec" && what != "verify_libsodium" &&
      what != "verify_tables") {
    std::fprintf(stderr, "bench_instructions: unknown workload '%s'\n", what.c_str());
    return 2;
  }
  Input in = make_input(std::strtoull(argv[2], nullptr, 10));
  if (what.starts_with("verify")) {
    make_signed(in);
    // The key's tables are built by its first accepted check, outside the counted part.
    const std::string_view m(reinterpret_cast<const char*>(in.message.data()), in.message.size());
    if (!api::ed25519::verify(m, in.sig, in.pk)) std::abort();
  }
  auto e = after_genesis(in);
  std::unique_ptr<pipe::ReadModel> model;
  Collect collected;
  if (what == "apply") {
    model = std::make_unique<pipe::ReadModel>(pipe::ReadModelConfig{}, *e, pipe::AccountBase{}, 0);
    for (const Tx& tx : in.txs) e->execute(tx, collected);
  }
  const size_t ops = measured(what, in, *e, model.get(), collected.updates);
  std::printf("ops %zu\n", ops);
  return 0;
}
