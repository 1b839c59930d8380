// libFuzzer: the WebSocket message dispatcher (WorkerLogic::ws_message) on arbitrary text, against
// a real pipeline's read side (two markets, one funded account with a key). Every message gets at
// most a few frames back, each a JSON object, and never takes the worker down.
#include "support/tx_builder.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/pipe/pipeline.hpp"

namespace {
using namespace tachyon;

class Collect final : public api::WsConn {
 public:
  void send_text(std::string frame) override {
    if (frame.empty() || frame.front() != '{' || frame.back() != '}') __builtin_trap();
    bytes_ += frame.size();
    ++frames;
  }
  void close_conn(std::string_view) override { closed = true; }
  void cut_conn(std::string_view) override { closed = true; }
  size_t queued_bytes() const override { return 0; }
  void clear_queue() override {}
  size_t frames = 0;
  bool closed = false;

 private:
  size_t bytes_ = 0;
};

struct World {
  World() {
    api::crypto_init();
    auto engine =
        std::make_unique<Engine>(EngineConfig{.max_orders = 4096, .expected_accounts = 64});
    NullSink sink;
    testing::TxBuilder b;
    engine->execute(b.create_market(0, testing::demo_market_params("ETH"), 300000), sink);
    engine->execute(b.create_market(1, testing::demo_market_params("BTC", 5, 1), 600000), sink);
    Tx d = b.deposit(3, 1'000'000'000, false);
    api::SecretKey sk;
    api::keygen(d.deposit.pubkey, sk);  // a real key: signatures in the input fail verification
    engine->execute(d, sink);
    pipe::PipelineConfig pc;
    pc.workers = 1;
    pc.ingress_capacity = 64;
    pipeline = std::make_unique<pipe::Pipeline>(pc, std::move(engine), nullptr, nullptr);
    api::ApiConfig ac;
    ac.ip_rate_per_s = 1e12;
    ac.ip_burst = 1e12;
    shared = std::make_unique<api::ApiShared>(ac);
    logic = std::make_unique<api::WorkerLogic>(*shared, *pipeline, 0);
  }
  std::unique_ptr<pipe::Pipeline> pipeline;
  std::unique_ptr<api::ApiShared> shared;
  std::unique_ptr<api::WorkerLogic> logic;
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* w = new World();
  auto c = std::make_shared<Collect>();
  c->ip = "127.0.0.1";
  w->logic->ws_open(c);
  w->logic->ws_message(c, std::string_view(reinterpret_cast<const char*>(data), size));
  w->logic->ws_closed(c);
  if (c->frames > 8) __builtin_trap();  // one message never fans out unboundedly
  return 0;
}
