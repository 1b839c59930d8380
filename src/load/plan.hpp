#pragma once
// What tachyon-load sends, decided before the run (open loop): a schedule of signed txs, each
// with the time it is due. Signing happens here, ahead of the run, so the generator's CPU during
// the run goes to sending and measuring. Every tx uses Lighter's skip-nonce attribute (nonce
// above the last, not +1), so a tx the exchange refuses (a cancel of an order a taker already
// filled) never blocks the trader's later txs.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "tachyon/api/crypto.hpp"
#include "tachyon/engine/tx.hpp"

namespace tachyon::load {

struct MarketInfo {
  MarketId id = 0;
  int price_decimals = 2;
  int size_decimals = 4;
  Ticks mid = 0;  // the price the generator starts around (the market's mark)
  Lots min_lots = 1;
  Usdc min_quote = 0;
};

struct LiveQuote {
  uint64_t coi;  // client order index
  bool ask;
};

struct Trader {
  AccountIndex account = 0;
  api::PublicKey pk{};
  api::SecretKey sk{};
  int64_t nonce = 0;
  uint64_t next_coi = 1;
  std::deque<LiveQuote> live;  // its resting quotes, oldest first
  bool maker = true;
};

enum class Kind : uint8_t { kQuote, kCancel, kModify, kTake };

struct Planned {
  int64_t at_ns = 0;    // due, from the start of the run
  uint32_t trader = 0;  // index into the traders
  Kind kind = Kind::kQuote;
  bool expects_fill = false;  // a taker: measure submit -> fill push
  Ticks mid = 0;              // the generator's mid when it planned this tx
  Tx tx;
  std::string frame;  // the signed WebSocket message (jsonapi/sendtx, id = plan index)
};

struct MixConfig {
  double rate = 1000;  // offered txs per second (Poisson arrivals)
  double seconds = 10;
  uint64_t seed = 1;
  double take_share = 0.10;    // IOC takers crossing the spread
  double cancel_share = 0.30;  // maker cancels (oldest quote)
  double modify_share = 0.10;  // maker modifies (oldest quote re-priced)
  size_t max_live = 16;        // quotes a maker keeps at most
};

// Market makers quoting around a random-walking mid, takers crossing, cancels and modifies.
std::vector<Planned> plan_mixed(std::vector<Trader>& traders, const MarketInfo& m,
                                const MixConfig& c);

struct LobsterConfig {
  std::string messages;   // LOBSTER message file (.csv or .csv.gz)
  double speed = 1.0;     // 2.0 = twice as fast as the recorded day
  size_t max_events = 0;  // 0: all
  Lots lots_per_share = 1;
};
// Real order flow: adds rest as limit orders of maker accounts (by LOBSTER order id), deletes
// cancel them, partial deletes modify them, executions become IOC takers; prices map to the
// market around its mid (one LOBSTER cent per tick). Empty with `error` set when unreadable.
std::vector<Planned> plan_lobster(std::vector<Trader>& traders, const MarketInfo& m,
                                  const LobsterConfig& c, std::string& error);

// Signs every planned tx and writes its frame, on `threads` threads.
void sign_all(std::vector<Planned>& plan, const std::vector<Trader>& traders, uint32_t chain_id,
              unsigned threads);

}  // namespace tachyon::load
