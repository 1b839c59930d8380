#pragma once
// JSON shapes of Lighter's objects (docs/ARCHITECTURE.md "Wire API") from read-side views, with
// prices and sizes at exactly the market's decimals.
#include <functional>
#include <optional>
#include <string_view>

#include "tachyon/api/json_writer.hpp"
#include "tachyon/pipe/read_side.hpp"

namespace tachyon::api {

using MarketLookup = std::function<std::optional<pipe::MarketView>(MarketId)>;

struct HttpReply;  // worker.hpp
// An error body {"code", "message"} with an HTTP status; a Reject with its message and detail.
HttpReply error_reply(int http, int code, std::string_view message);
HttpReply reject_reply(Reject code, std::string_view detail);

std::string_view symbol_of(const MarketParams& p);
// The last trade price against the day's first, in percent (0 before a trade today).
double daily_price_change(const pipe::MarketView& m);
std::string_view order_status(RemoveReason r);
std::string_view order_type_name(OrderType t);
std::string_view tif_name(TimeInForce t);

// A push's times: "timestamp" (ms) and "sent_ts_us", now, and "engine_ts_us", when the engine
// made what it shows (the client's freshness). Returns the send time it wrote.
int64_t write_stamp(JsonWriter& w, int64_t engine_ts_ns);
void write_market_details(JsonWriter& w, const pipe::MarketView& m, bool full);
void write_market_stats(JsonWriter& w, const pipe::MarketView& m);
// `tx_hash`: the taker tx's hash ("" when unknown).
void write_trade(JsonWriter& w, const pipe::TradeRecord& t, const pipe::MarketView& m,
                 std::string_view tx_hash);
// `status` empty: "open".
void write_order(JsonWriter& w, const OrderUpdate& o, int64_t created_ns, int64_t updated_ns,
                 const pipe::MarketView& m, std::string_view status);
// The /account entry (also account_all's `account`).
void write_account(JsonWriter& w, const pipe::AccountView& a, const MarketLookup& markets);
// An account's spot USDC (REST `assets`, WS `account_all_assets`): always 0, perpetuals only (the
// USDC collateral is the account's `collateral`).
void write_spot_usdc(JsonWriter& w);
// The short form accountsByL1Address lists (Lighter's Account).
void write_sub_account(JsonWriter& w, const pipe::AccountView& a, const MarketLookup& markets);
// user_stats' `stats`.
void write_user_stats(JsonWriter& w, const pipe::AccountView& a, const MarketLookup& markets);
void write_candle(JsonWriter& w, const pipe::Candle& c, const pipe::MarketView& m);

struct AccountFigures {
  __int128 tav = 0, imr = 0, mmr = 0, position_value = 0;  // tav, imr, mmr: the cross bucket
  __int128 available = 0;
  __int128 isolated_tav = 0, isolated_imr = 0;  // Σ over isolated positions
};
AccountFigures account_figures(const pipe::AccountView& a, const MarketLookup& markets);
// One position; `f` are the account's figures (account_figures), computed once per account.
void write_position(JsonWriter& w, const pipe::PositionView& p, const AccountFigures& f,
                    const MarketLookup& markets);

}  // namespace tachyon::api
