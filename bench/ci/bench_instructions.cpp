// Fixed work for instruction counts (scripts/bench.sh runs it under valgrind's callgrind, which
// counts instructions, not seconds: the same count on every run of the same binary and input,
// whatever else the machine does). The inputs are made first; only `measured` is counted
// (callgrind --toggle-collect), and it prints how many operations it did.
//
//   bench_instructions engine N   N txs of the seeded mixed stream through Engine::execute
//   bench_instructions apply N    the state updates of those txs through the read model (books and
//                                 views), published every 64 txs
//   bench_instructions codec N    each of those txs encoded and decoded
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "app/random_stream.hpp"
#include "tachyon/codec/codec.hpp"
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
};

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
    std::fprintf(stderr, "usage: bench_instructions engine|apply|codec N\n");
    return 2;
  }
  const std::string what = argv[1];
  if (what != "engine" && what != "apply" && what != "codec") {
    std::fprintf(stderr, "bench_instructions: unknown workload '%s'\n", what.c_str());
    return 2;
  }
  const Input in = make_input(std::strtoull(argv[2], nullptr, 10));
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
