#pragma once
// Each market's recent trades, candles and funding payments (the read side's MarketHistory) and
// each account's recent trades across restarts: saved to <data_dir>/history.bin after every
// snapshot and when the server stops, loaded when it starts; the journal replay after the engine's
// snapshot adds what came later (ReadSide::restore_history skips what the file already has). A
// damaged or foreign file is reported and ignored: it never stops the server.
#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tachyon/core/status.hpp"
#include "tachyon/pipe/read_side.hpp"

namespace tachyon::app {

using TradeHash = std::array<uint8_t, 40>;
using TradeHashes = std::vector<std::pair<uint64_t, TradeHash>>;  // trade id, taker tx hash

// Reads the published histories and account views (any thread; takes a reader slot for a
// moment), with each trade's taker tx hash from `hash_hex` ("" when unknown). An account's list
// is cut after its market's newest saved trade: what is newer comes back from the journal replay
// with the market's, never twice.
Status save_history(const std::string& data_dir, pipe::ReadSide& rs,
                    const std::function<std::string(const pipe::TradeRecord&)>& hash_hex);
// Empty and ok when there is no file.
Status load_history(const std::string& data_dir, std::vector<pipe::MarketHistory>& out,
                    std::vector<pipe::AccountTrades>& accounts, TradeHashes& hashes);

}  // namespace tachyon::app
