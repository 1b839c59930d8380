// The slow-consumer policy of a WebSocket connection (docs/ARCHITECTURE.md "Bad input"): the first
// time its send queue is over the bound, what is queued is dropped and it gets one fresh snapshot
// of each book it follows; the second time it is cut at once, counted once. Driven through
// WorkerLogic on a real pipeline's read side, with a connection whose queue depth the test sets.
#include <gtest/gtest.h>

#include "support/tx_builder.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/pipe/pipeline.hpp"

namespace tachyon::testing {
namespace {

class Conn final : public api::WsConn {
 public:
  void send_text(std::string frame) override { frames.push_back(std::move(frame)); }
  void close_conn(std::string_view why) override { closed = std::string(why); }
  void cut_conn(std::string_view why) override { cut_reason = std::string(why); }
  size_t queued_bytes() const override { return queued; }
  void clear_queue() override {
    queued = 0;
    ++cleared;
  }
  std::vector<std::string> frames;
  std::string closed, cut_reason;
  size_t queued = 0;
  int cleared = 0;
};

std::unique_ptr<Engine> engine_with_a_market() {
  auto e = std::make_unique<Engine>(EngineConfig{.max_orders = 1024, .expected_accounts = 16});
  TxBuilder b;
  NullSink sink;
  EXPECT_EQ(e->execute(b.create_market(0, demo_market_params(), 300000), sink).reject, Reject::kOk);
  return e;
}

TEST(SlowConsumer, one_resync_snapshot_then_close) {
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pipe::Pipeline pipeline(pc, engine_with_a_market(), nullptr, nullptr);
  api::ApiConfig ac;
  ac.ws_queue_bytes = 4096;
  api::ApiShared shared(ac);
  api::WorkerLogic logic(shared, pipeline, 0);
  auto c = std::make_shared<Conn>();
  c->ip = "127.0.0.1";
  logic.ws_open(c);
  logic.ws_message(c, R"({"type":"subscribe","channel":"order_book/0"})");
  ASSERT_EQ(c->frames.size(), 2u);  // connected, subscribed/order_book
  EXPECT_NE(c->frames[1].find("subscribed/order_book"), std::string::npos);
  // within the bound: frames go out as usual
  c->queued = 1000;
  logic.ws_message(c, R"({"type":"ping"})");
  EXPECT_EQ(c->frames.back(), R"({"type":"pong"})");
  EXPECT_EQ(c->cleared, 0);
  // over it: the queue is dropped, one fresh snapshot instead of the frame
  c->queued = 1'000'000;
  logic.ws_message(c, R"({"type":"ping"})");
  EXPECT_EQ(c->cleared, 1);
  EXPECT_NE(c->frames.back().find("subscribed/order_book"), std::string::npos) << c->frames.back();
  EXPECT_TRUE(c->closed.empty());
  // over it again: cut at once (a graceful close could not be written), with the reason, counted
  const uint64_t closes = shared.metrics.slow_closes().value();
  c->queued = 1'000'000;
  logic.ws_message(c, R"({"type":"ping"})");
  EXPECT_NE(c->cut_reason.find("slow consumer"), std::string::npos) << c->cut_reason;
  EXPECT_TRUE(c->closed.empty());
  EXPECT_EQ(shared.metrics.slow_closes().value(), closes + 1);
  // until the close arrives, nothing more is sent and the cut is not counted again
  const size_t frames = c->frames.size();
  for (int i = 0; i < 3; ++i) logic.ws_message(c, R"({"type":"ping"})");
  EXPECT_EQ(c->frames.size(), frames);
  EXPECT_EQ(shared.metrics.slow_closes().value(), closes + 1);
  logic.ws_closed(c);
}

}  // namespace
}  // namespace tachyon::testing
