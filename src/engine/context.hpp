#pragma once
// Per-tx execution context, private to the engine's translation units.
#include <cstdint>

#include "tachyon/engine/engine.hpp"

namespace tachyon {

struct Engine::Ctx {
  UpdateSink& sink;
  const Tx& tx;
  int64_t now_ns;
  int64_t now_ms;
  int64_t next_nonce = -1;             // set when the tx consumed its signer's nonce
  uint64_t touched[4] = {0, 0, 0, 0};  // markets whose book or index changed: mark to refresh

  void touch(MarketId m) { touched[m >> 6] |= uint64_t{1} << (m & 63); }
  StateUpdate make(UpdateType t) const { return StateUpdate(t, now_ns, StateUpdate::NoZero{}); }
};

}  // namespace tachyon
