#include "tachyon/api/render.hpp"

#include <cstring>

#include "tachyon/api/crypto.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/engine/margin.hpp"
#include "tachyon/engine/order.hpp"

namespace tachyon::api {

int64_t write_stamp(JsonWriter& w, int64_t engine_ts_ns) {
  const int64_t now = realtime_ns();
  w.kv_i("timestamp", now / 1'000'000).kv_i("engine_ts_us", engine_ts_ns / 1000);
  w.kv_i("sent_ts_us", now / 1000);
  return now;
}

HttpReply error_reply(int http, int code, std::string_view message) {
  HttpReply r;
  r.status = http;
  JsonWriter w(r.body);
  w.obj().kv_i("code", code).kv_s("message", message).end_obj();
  return r;
}

HttpReply reject_reply(Reject code, std::string_view detail) {
  std::string msg(reject_message(code));
  if (!detail.empty()) msg += ": " + std::string(detail);
  return error_reply(400, static_cast<int>(code), msg);
}

std::string_view symbol_of(const MarketParams& p) {
  return std::string_view(p.symbol.data(), strnlen(p.symbol.data(), p.symbol.size()));
}

std::string_view order_status(RemoveReason r) {
  switch (r) {
    case RemoveReason::kFilled: return "filled";
    case RemoveReason::kCanceled: return "canceled";
    case RemoveReason::kExpired: return "canceled-expired";
    case RemoveReason::kPostOnly: return "canceled-post-only";
    case RemoveReason::kIocRemainder: return "canceled-not-enough-liquidity";
    case RemoveReason::kSelfTrade: return "canceled-self-trade";
    case RemoveReason::kReduceOnly: return "canceled-reduce-only";
    case RemoveReason::kMarketProtection: return "canceled-too-much-slippage";
    case RemoveReason::kModified: return "open";
    case RemoveReason::kMarketHalted: return "canceled";  // Lighter's statuses have no halt
    case RemoveReason::kCancelAll: return "canceled";
    case RemoveReason::kLiquidation: return "canceled-liquidation";
    case RemoveReason::kScheduledCancelAll: return "canceled";
    case RemoveReason::kTriggered: return "in-progress";
    case RemoveReason::kMarginNotAllowed: return "canceled-margin-not-allowed";
    case RemoveReason::kChild: return "canceled-child";
    case RemoveReason::kOco: return "canceled-oco";
    case RemoveReason::kArmed: return "pending";
  }
  return "canceled";
}

std::string_view order_type_name(OrderType t) {
  switch (t) {
    case OrderType::kLimit: return "limit";
    case OrderType::kMarket: return "market";
    case OrderType::kStopLoss: return "stop-loss";
    case OrderType::kStopLossLimit: return "stop-loss-limit";
    case OrderType::kTakeProfit: return "take-profit";
    case OrderType::kTakeProfitLimit: return "take-profit-limit";
    case OrderType::kTwap: return "twap";
    case OrderType::kTwapSub: return "twap-sub";
    case OrderType::kLiquidation: return "liquidation";
  }
  return "limit";
}

std::string_view tif_name(TimeInForce t) {
  switch (t) {
    case TimeInForce::kIoc: return "immediate-or-cancel";
    case TimeInForce::kGoodTillTime: return "good-till-time";
    case TimeInForce::kPostOnly: return "post-only";
  }
  return "good-till-time";
}

namespace {
constexpr int kUsdc = 6;
double ratio(__int128 a, __int128 b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}
}  // namespace

double daily_price_change(const pipe::MarketView& m) {
  return m.daily_open == 0 ? 0.0 : 100.0 * ratio(m.last_trade_price - m.daily_open, m.daily_open);
}

void write_market_details(JsonWriter& w, const pipe::MarketView& m, bool full) {
  const MarketParams& p = m.params;
  const int pd = p.price_decimals, sd = p.size_decimals;
  w.obj();
  w.kv_s("symbol", symbol_of(p)).kv_i("market_id", m.id).kv_s("market_type", "perp");
  w.kv_i("base_asset_id", 0).kv_i("quote_asset_id", 3);
  w.kv_s("status", p.status == MarketStatus::kHalted ? "inactive" : "active");
  // Lighter publishes fees and the liquidation fee as percent strings.
  w.key("taker_fee").dec(p.taker_fee_ppm, 4).key("maker_fee").dec(p.maker_fee_ppm, 4);
  w.key("liquidation_fee").dec(0, 4);
  w.key("min_base_amount").dec(p.min_base_lots, sd);
  w.key("min_quote_amount").dec(p.min_quote_usdc, kUsdc);
  w.kv_s("order_quote_limit", "");
  w.kv_i("supported_size_decimals", sd).kv_i("supported_price_decimals", pd);
  w.kv_i("supported_quote_decimals", kUsdc).kv_i("size_decimals", sd).kv_i("price_decimals", pd);
  w.kv_i("quote_multiplier", m.quote_multiplier);
  if (full) {
    w.kv_i("default_initial_margin_fraction", p.default_imf);
    w.kv_i("min_initial_margin_fraction", p.min_imf);
    w.kv_i("maintenance_margin_fraction", p.mmf).kv_i("closeout_margin_fraction", p.cmf);
    w.key("last_trade_price").dec_num(m.last_trade_price, pd);
    w.kv_i("daily_trades_count", m.daily_trades);
    w.key("daily_base_token_volume").dec_num(m.daily_base, sd);
    w.key("daily_quote_token_volume").dec_num(m.daily_quote, kUsdc);
    w.key("daily_price_low").dec_num(m.daily_low, pd);
    w.key("daily_price_high").dec_num(m.daily_high, pd);
    w.key("daily_price_change").raw(std::to_string(daily_price_change(m)));
    w.key("open_interest").dec_num(m.open_interest, sd);
    w.key("daily_chart").obj().end_obj();
    w.key("market_config")
        .obj()
        .kv_i("market_margin_mode", 0)
        .kv_i("insurance_fund_account_index", 1);
    w.kv_i("liquidation_mode", 0).kv_b("force_reduce_only", p.status == MarketStatus::kReduceOnly);
    w.kv_s("trading_hours", "").kv_b("hidden", false).end_obj();
    w.key("funding_clamp_small").dec(p.funding_clamp_small, 4);
    w.key("funding_clamp_big").dec(p.funding_clamp_big, 4);
    w.key("base_interest_rate").dec(p.interest_rate, 4);
    w.key("mark_price").dec(m.mark_price, pd).key("index_price").dec(m.index_price, pd);
  }
  w.end_obj();
}

void write_market_stats(JsonWriter& w, const pipe::MarketView& m) {
  const int pd = m.params.price_decimals, sd = m.params.size_decimals;
  w.obj();
  w.kv_s("symbol", symbol_of(m.params)).kv_i("market_id", m.id);
  w.key("index_price").dec(m.index_price, pd).key("mark_price").dec(m.mark_price, pd);
  w.key("open_interest").dec(m.open_interest, sd).key("open_interest_limit").dec(0, sd);
  w.key("funding_clamp_small").dec(m.params.funding_clamp_small, 4);
  w.key("funding_clamp_big").dec(m.params.funding_clamp_big, 4);
  w.key("last_trade_price").dec(m.last_trade_price, pd);
  // Rates in percent per funding period (1e-9 fractions = 1e-7 percent).
  w.key("current_funding_rate")
      .dec(m.funding_estimate, 7)
      .key("funding_rate")
      .dec(m.funding_rate, 7);
  w.kv_i("funding_timestamp", m.funding_ms);
  w.kv_i("next_funding_timestamp", m.next_funding_ms);
  w.key("daily_base_token_volume").dec_num(m.daily_base, sd);
  w.key("daily_quote_token_volume").dec_num(m.daily_quote, kUsdc);
  w.key("daily_price_low")
      .dec_num(m.daily_low, pd)
      .key("daily_price_high")
      .dec_num(m.daily_high, pd);
  w.key("daily_price_change").raw(std::to_string(daily_price_change(m)));
  w.kv_i("daily_trades_count", m.daily_trades);
  w.end_obj();
}

namespace {
// One side's position before the fill (size signed, entry quote as a positive amount), and
// whether the fill took it across zero (long to short or short to long).
struct SideKeys {
  std::string_view size, entry, imf, flipped;
};
constexpr SideKeys kTakerKeys{"taker_position_size_before", "taker_entry_quote_before",
                              "taker_initial_margin_fraction_before",
                              "taker_position_sign_changed"};
constexpr SideKeys kMakerKeys{"maker_position_size_before", "maker_entry_quote_before",
                              "maker_initial_margin_fraction_before",
                              "maker_position_sign_changed"};

void write_side(JsonWriter& w, const SideKeys& k, const pipe::TradeSide& s, bool is_buy, Lots q,
                int size_decimals) {
  const Lots after = s.size_before + (is_buy ? q : -q);
  const bool flipped = s.size_before != 0 && after != 0 && (s.size_before > 0) != (after > 0);
  const Usdc entry = s.entry_before < 0 ? -s.entry_before : s.entry_before;
  w.key(k.size).dec(s.size_before, size_decimals);
  w.key(k.entry).dec(entry, kUsdc);
  w.kv_i(k.imf, s.imf_before).kv_b(k.flipped, flipped);
}
}  // namespace

void write_trade(JsonWriter& w, const pipe::TradeRecord& r, const pipe::MarketView& m,
                 std::string_view tx_hash) {
  const TradeUpdate& t = r.t;
  const int pd = m.params.price_decimals, sd = m.params.size_decimals;
  const __int128 usd = static_cast<__int128>(t.price) * t.size * m.quote_multiplier;
  const bool taker_ask = t.taker_is_ask != 0;
  w.obj();
  w.kv_i("trade_id", t.trade_id).kv_s("trade_id_str", std::to_string(t.trade_id));
  w.kv_s("tx_hash", tx_hash);
  w.kv_s("type", t.kind == TradeKind::kTrade        ? "trade"
                 : t.kind == TradeKind::kDeleverage ? "deleverage"
                                                    : "liquidation");
  w.kv_i("market_id", t.market).key("size").dec(t.size, sd).key("price").dec(t.price, pd);
  w.key("usd_amount").dec(usd, kUsdc);
  w.kv_i("ask_id", taker_ask ? t.taker_order : t.maker_order);
  w.kv_i("bid_id", taker_ask ? t.maker_order : t.taker_order);
  const uint64_t ask_coi = taker_ask ? t.taker_client_order_index : t.maker_client_order_index;
  const uint64_t bid_coi = taker_ask ? t.maker_client_order_index : t.taker_client_order_index;
  w.kv_i("ask_client_id", ask_coi).kv_s("ask_client_id_str", std::to_string(ask_coi));
  w.kv_i("bid_client_id", bid_coi).kv_s("bid_client_id_str", std::to_string(bid_coi));
  w.kv_i("ask_account_id", taker_ask ? t.taker : t.maker);
  w.kv_i("bid_account_id", taker_ask ? t.maker : t.taker);
  w.kv_b("is_maker_ask", !taker_ask);
  write_side(w, kTakerKeys, r.sides.taker, !taker_ask, t.size, sd);
  write_side(w, kMakerKeys, r.sides.maker, taker_ask, t.size, sd);
  // each side's PnL realized by the fill (fees not included)
  w.key("bid_account_pnl").dec(taker_ask ? r.sides.maker.pnl : r.sides.taker.pnl, kUsdc);
  w.key("ask_account_pnl").dec(taker_ask ? r.sides.taker.pnl : r.sides.maker.pnl, kUsdc);
  w.kv_i("block_height", t.block).kv_i("timestamp", r.time_ns / 1'000'000);
  w.kv_i("transaction_time", r.time_ns / 1000);  // µs, as Lighter's
  w.kv_i("integrator_maker_fee", 0).kv_i("integrator_maker_fee_collector_index", 0);
  w.kv_i("integrator_taker_fee", 0).kv_i("integrator_taker_fee_collector_index", 0);
  // fee rates in 1e-6 of the notional (ccxt multiplies them by usd_amount)
  w.kv_i("taker_fee", usd == 0 ? 0 : static_cast<int64_t>(t.taker_fee * __int128{1000000} / usd));
  w.kv_i("maker_fee", usd == 0 ? 0 : static_cast<int64_t>(t.maker_fee * __int128{1000000} / usd));
  w.end_obj();
}

void write_order(JsonWriter& w, const OrderUpdate& o, int64_t created_ns, int64_t updated_ns,
                 const pipe::MarketView& m, std::string_view status) {
  const int pd = m.params.price_decimals, sd = m.params.size_decimals;
  const Lots filled = o.initial - o.remaining;
  w.obj();
  w.kv_i("order_index", o.order_index).kv_i("client_order_index", o.client_order_index);
  w.kv_s("order_id", std::to_string(o.order_index));
  w.kv_s("client_order_id", std::to_string(o.client_order_index));
  w.kv_i("market_index", o.market).kv_i("owner_account_index", o.account);
  w.key("initial_base_amount").dec(o.initial, sd).key("price").dec(o.price, pd);
  w.kv_i("nonce", 0).key("remaining_base_amount").dec(o.remaining, sd);
  w.kv_b("is_ask", o.is_ask != 0).kv_i("base_size", o.remaining).kv_i("base_price", o.price);
  w.key("filled_base_amount").dec(filled, sd);
  w.key("filled_quote_amount")
      .dec(static_cast<__int128>(filled) * o.price * m.quote_multiplier, kUsdc);
  w.kv_s("side", o.is_ask ? "ask" : "bid");
  w.kv_s("type", order_type_name(o.type)).kv_s("time_in_force", tif_name(o.tif));
  // A TWAP between its slices is open; its trigger is a time, the next slice's (ms).
  const bool twap = o.pending == kWaitingTwap;
  w.kv_b("reduce_only", o.reduce_only != 0)
      .key("trigger_price")
      .dec(twap ? 0 : o.trigger_price, pd);
  w.kv_i("order_expiry", o.expiry_ms)
      .kv_s("status", !status.empty()      ? status
                      : o.pending && !twap ? "pending"
                                           : "open");
  // waiting for the mark price, or already fired (a trigger order that now rests)
  w.kv_s("trigger_status", twap                          ? "na"
                           : o.pending == kWaitingParent ? "parent-order"
                           : o.pending                   ? "mark-price"
                           : o.trigger_price != 0        ? "ready"
                                                         : "na");
  w.kv_i("trigger_time", twap ? o.trigger_price : 0).kv_i("parent_order_index", o.parent);
  w.kv_s("parent_order_id", std::to_string(o.parent)).kv_i("block_height", o.block);
  // a primary's children (each fires once it fills), an OCO order's partner (canceled with it)
  w.kv_s("to_trigger_order_id_0", std::to_string(o.child));
  w.kv_s("to_trigger_order_id_1", std::to_string(o.child2));
  w.kv_s("to_cancel_order_id_0", std::to_string(o.sibling));
  // Lighter's order times are seconds; transaction_time (the tx that changed it last) is µs.
  w.kv_i("timestamp", updated_ns / 1'000'000'000).kv_i("created_at", created_ns / 1'000'000'000);
  w.kv_i("updated_at", updated_ns / 1'000'000'000).kv_i("transaction_time", updated_ns / 1000);
  // No integrator fees on tachyon.
  w.kv_s("integrator_fee_collector_index", "0").kv_s("integrator_maker_fee", "0");
  w.kv_s("integrator_taker_fee", "0");
  w.end_obj();
}

namespace {
MarginMarket margin_of(const std::optional<pipe::MarketView>& v) {
  if (!v) return MarginMarket{};
  return MarginMarket{v->mark_price,     v->quote_multiplier, v->params.default_imf,
                      v->params.min_imf, v->params.mmf,       v->params.cmf};
}
}  // namespace

AccountFigures account_figures(const pipe::AccountView& a, const MarketLookup& markets) {
  AccountFigures f;
  const MarginInfo mi = account_margin(
      a.collateral, a.positions, [&](MarketId m) { return margin_of(markets(m)); }, 0, 0, 0,
      nullptr);
  f.tav = mi.tav;
  f.imr = mi.imr;
  f.mmr = mi.mmr;
  for (const auto& p : a.positions) {
    const auto v = markets(p.market);
    if (!v) continue;
    f.position_value += abs128(static_cast<__int128>(p.size) * v->mark_price * v->quote_multiplier);
    if (p.isolated) {
      const MarginInfo own = isolated_margin(margin_of(v), p);
      f.isolated_tav += own.tav;
      f.isolated_imr += own.imr;
    }
  }
  const __int128 free = std::min<__int128>(a.collateral, f.tav - f.imr);
  f.available = free < 0 ? 0 : free;
  return f;
}

void write_position(JsonWriter& w, const pipe::PositionView& p, const AccountFigures& f,
                    const MarketLookup& markets) {
  const auto v = markets(p.market);
  if (!v) {
    w.null();
    return;
  }
  const int pd = v->params.price_decimals, sd = v->params.size_decimals;
  const __int128 qm = v->quote_multiplier;
  const __int128 size = p.size;
  const __int128 upnl = size * v->mark_price * qm - p.entry_notional;
  const Bps4 imf = effective_imf(margin_of(v), p.imf);
  __int128 avg = 0;
  if (size != 0) {  // entry ticks = entry / (size * qm), rounded to the nearest tick
    const __int128 den = abs128(size) * qm;
    avg = (abs128(p.entry_notional) * 2 + den) / (2 * den);
  }
  // Liquidation price with the other positions held at their marks: the price where TAV meets MMR
  // (an isolated position's own: its allocated margin against its own requirement).
  __int128 liq = 0;
  if (size != 0) {
    const __int128 this_mmr =
        ceil_div(abs128(size) * v->mark_price * qm * v->params.mmf, kFractionOne);
    const __int128 other_tav = p.isolated ? p.allocated : f.tav - upnl;
    const __int128 other_mmr = p.isolated ? 0 : f.mmr - this_mmr;
    // other_tav + size*p*qm - entry = |size|*p*qm*mmf/1e4 + other_mmr
    const __int128 den = qm * (size * kFractionOne - abs128(size) * v->params.mmf);
    const __int128 num = (p.entry_notional + other_mmr - other_tav) * kFractionOne;
    if (den != 0) {
      const __int128 q = num / den;
      liq = q > 0 ? q : 0;
    }
  }
  w.obj();
  w.kv_i("market_id", p.market).kv_s("symbol", symbol_of(v->params));
  w.key("initial_margin_fraction").dec(imf, 2);
  w.kv_i("open_order_count", p.open_orders).kv_i("pending_order_count", 0);
  w.kv_i("position_tied_order_count", 0).kv_i("sign", size < 0 ? -1 : 1);
  w.key("position").dec(abs128(size), sd).key("avg_entry_price").dec(avg, pd);
  w.key("position_value").dec(abs128(size * v->mark_price * qm), kUsdc);
  w.key("unrealized_pnl").dec(upnl, kUsdc).key("realized_pnl").dec(p.realized_pnl, kUsdc);
  w.key("liquidation_price").dec(liq, pd).kv_i("margin_mode", p.isolated);
  w.key("allocated_margin").dec(p.allocated, kUsdc);
  w.key("total_funding_paid_out").dec(p.funding_paid, kUsdc);
  w.key("total_discount").dec(0, kUsdc);  // no fee discounts on tachyon
  w.end_obj();
}

void write_spot_usdc(JsonWriter& w) {
  w.obj().kv_s("symbol", "USDC").kv_i("asset_id", 3);
  w.key("balance").dec(0, kUsdc).key("locked_balance").dec(0, kUsdc);
  w.key("margin_balance").dec(0, kUsdc).kv_s("margin_mode", "enabled").end_obj();
}

void write_account(JsonWriter& w, const pipe::AccountView& a, const MarketLookup& markets) {
  const AccountFigures f = account_figures(a, markets);
  w.obj();
  w.kv_i("code", 0).kv_i("account_type", a.master == a.index ? 0 : 1);
  w.kv_i("index", a.index).kv_i("account_index", a.index);
  std::string l1 = "0x";
  l1 += to_hex(a.l1_address.data(), a.l1_address.size());
  w.kv_s("l1_address", l1);
  w.kv_i("account_trading_mode", 0).kv_i("status", 1).kv_i("cancel_all_time", 0);
  uint32_t isolated_orders = 0, pending = 0;
  for (const auto& p : a.positions)
    if (p.isolated) isolated_orders += p.open_orders;
  for (const auto& o : a.order_list()) pending += o.o.pending != 0;
  w.kv_i("total_order_count", a.open_order_count).kv_i("pending_order_count", pending);
  w.kv_i("total_isolated_order_count", isolated_orders);
  w.kv_i("created_at", a.created_ns / 1'000'000).kv_i("transaction_time", a.engine_ts_ns / 1000);
  // No names, referrals or public pools on tachyon: Lighter's empty values.
  w.kv_s("name", "").kv_s("description", "").kv_b("can_invite", false);
  w.kv_s("referral_points_percentage", "0").kv_b("can_rfq", false);
  w.key("pool_info").obj().kv_i("status", 0).kv_s("operator_fee", "0");
  w.kv_s("min_operator_share_rate", "0").kv_i("total_shares", 0).kv_i("operator_shares", 0);
  w.kv_i("annual_percentage_yield", 0).key("daily_returns").arr().end_arr();
  w.key("share_prices").arr().end_arr().kv_i("sharpe_ratio", 0);
  w.key("strategies").arr().end_arr().end_obj();
  w.key("collateral").dec(a.collateral, kUsdc).key("available_balance").dec(f.available, kUsdc);
  w.key("total_asset_value").dec(f.tav + f.isolated_tav, kUsdc);
  w.key("cross_asset_value").dec(f.tav, kUsdc);
  w.key("cross_initial_margin_requirement").dec(f.imr, kUsdc);
  w.key("cross_maintenance_margin_requirement").dec(f.mmr, kUsdc);
  w.key("assets").arr();
  write_spot_usdc(w);
  w.end_arr();
  w.key("pending_unlocks").arr().end_arr();
  w.key("positions").arr();
  for (const auto& p : a.positions)
    if (p.size != 0 || p.open_orders != 0) write_position(w, p, f, markets);
  w.end_arr();
  w.key("shares").arr().end_arr();
  w.end_obj();
}

void write_sub_account(JsonWriter& w, const pipe::AccountView& a, const MarketLookup& markets) {
  const AccountFigures f = account_figures(a, markets);
  uint32_t isolated_orders = 0, pending = 0;
  for (const auto& p : a.positions)
    if (p.isolated) isolated_orders += p.open_orders;
  for (const auto& o : a.order_list()) pending += o.o.pending != 0;
  w.obj().kv_i("code", 0).kv_i("account_type", a.master == a.index ? 0 : 1);
  w.kv_i("account_trading_mode", 0).kv_i("index", a.index);
  w.kv_s("l1_address", "0x" + to_hex(a.l1_address.data(), a.l1_address.size()));
  w.kv_i("cancel_all_time", 0).kv_i("total_order_count", a.open_order_count);
  w.kv_i("total_isolated_order_count", isolated_orders).kv_i("pending_order_count", pending);
  w.key("available_balance").dec(f.available, kUsdc).kv_i("status", 1);
  w.key("collateral").dec(a.collateral, kUsdc);
  w.kv_i("transaction_time", a.engine_ts_ns / 1000).end_obj();
}

void write_user_stats(JsonWriter& w, const pipe::AccountView& a, const MarketLookup& markets) {
  const AccountFigures f = account_figures(a, markets);
  // The account's stats and its total stats count isolated positions; cross_stats do not.
  auto fields = [&](__int128 tav, __int128 imr) {
    w.key("collateral").dec(a.collateral, kUsdc).key("portfolio_value").dec(tav, kUsdc);
    w.key("leverage").raw(std::to_string(ratio(f.position_value, tav)));
    w.key("available_balance").dec(f.available, kUsdc);
    w.key("margin_usage").raw(std::to_string(100.0 * ratio(imr, tav)));
    w.key("buying_power").dec(f.available, kUsdc);
  };
  const __int128 total_tav = f.tav + f.isolated_tav, total_imr = f.imr + f.isolated_imr;
  w.obj();
  fields(total_tav, total_imr);
  w.key("cross_stats").obj();
  fields(f.tav, f.imr);
  w.end_obj().key("total_stats").obj();
  fields(total_tav, total_imr);
  w.end_obj().end_obj();
}

void write_candle(JsonWriter& w, const pipe::Candle& c, const pipe::MarketView& m) {
  const int pd = m.params.price_decimals, sd = m.params.size_decimals;
  w.obj().kv_i("t", c.start_ms);
  w.key("o").dec_num(c.open, pd).key("h").dec_num(c.high, pd).key("l").dec_num(c.low, pd);
  w.key("c").dec_num(c.close, pd).key("v").dec_num(c.volume_base, sd);
  w.key("V").dec_num(c.volume_quote, kUsdc).kv_i("i", c.last_trade_id);
  w.end_obj();
}

}  // namespace tachyon::api
