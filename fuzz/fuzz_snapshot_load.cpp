// libFuzzer: Engine::load on untrusted snapshot bodies. A load either fails with a message or
// yields a state that passes validate() (load checks it) and can keep trading.
#include "tachyon/engine/engine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tachyon;
  Engine e(EngineConfig{.max_orders = 256, .expected_accounts = 8, .levels_per_side = 16});
  ByteSource in(data, size);
  const Status s = e.load(in);
  if (s.ok() && !e.validate().empty()) __builtin_trap();
  return 0;
}
