// ccxt acceptance test for tachyon: `node acceptance.mjs <expect.json>`. expect.json (written by the C++
// harness after it set up the server state) holds http/ws URLs, accountIndex, auth (its token), markets, market_id, book,
// last_trade_price, trades, my_trades, balance, positions and candle_1m. Prints "ok <what>" per check,
// "FAIL <what>: got X want Y" and exits 1 on the first failure; exit 2 on usage error or 60 s timeout.
//
// Verified against the pinned ccxt 4.5.84 source (js/src/lighter.js, js/src/pro/lighter.js,
// js/src/base/Exchange.js, js/src/base/ws/*). How ccxt reads Lighter's REST shapes:
//  - fetchOrderBook: /orderBookOrders rows are ORDERS; ccxt keeps one [price, remaining_base_amount]
//    row per order (sorted, never merged), so this test sums rows with equal price before comparing.
//    limit=100 is sent and counts orders, not levels.
//  - fetchPositions: contracts = `position` as sent (no abs); side = sign==1 ? long : short.
//    The server must send `position` as a magnitude. Zero-size rows are returned too (ignored here).
//  - watchTicker and watchTickers([s]) share messageHash "ticker::<s>": on one connection the second
//    call finds the subscription "already there", sends NO subscribe and waits for the next push.
//    So watchTickers runs on a second ccxt.pro instance (own connection) to see its snapshot.
//  - market_stats/<id> frames must carry market_stats.market_id (ccxt finds the symbol from it, not
//    from the channel); market_stats:all frames are keyed by market id.
//  - watchMyTrades: a frame whose `trades` is {} is dropped without resolving; the channel name's
//    ":<acct>" suffix is what ccxt compares with bid_account_id/ask_account_id.
//  - watchTrades: ccxt appends trades[] in REVERSE order (newest-first frame -> oldest-first cache);
//    side = is_maker_ask ? 'buy' : 'sell' (taker side). Matching below is by id, order-independent.
//  - Any WS frame with an `error` key and no matching `id` rejects EVERY pending watch on the socket.
//  - ccxt does not wait for {"type":"connected"}: subscribes go out right after the WS upgrade.
//  - WS text is parsed after /:(\d{15,}),/ -> string, so 15+ digit ints become strings.
//  - ws:// needs `await ex.loadHttpProxyAgent()` before the first watch (getHttpAgentIfNeeded, Node).
//  - rateLimit is 1000 ms: REST calls and WS subscribes are throttled to 1/s unless
//    enableRateLimit=false (done here: a local server, and it keeps the run short).
import ccxt from 'ccxt';
import { readFileSync } from 'node:fs';

const WATCH_TIMEOUT_MS = 10000;
if (process.argv.length < 3) {
    console.error('usage: node acceptance.mjs <expect.json>');
    process.exit(2);
}
const E = JSON.parse(readFileSync(process.argv[2], 'utf8'));
setTimeout(() => { console.log('FAIL timeout: test did not finish within 60 s'); process.exit(2); }, 60000);
process.on('unhandledRejection', (e) => { console.log(`FAIL unhandled rejection: ${e?.stack || e}`); process.exit(1); });

const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
function fail(what, got, want) {
    console.log(`FAIL ${what}: got ${show(got)} want ${show(want)}`);
    process.exit(1);
}
const ok = (what) => console.log(`ok ${what}`);
const near = (a, b) => typeof a === 'number' && Number.isFinite(a) &&
    Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
function eqNum(what, got, want) {
    if (!near(got, want)) fail(what, got, want);
}
// Runs one client call; an exception becomes a FAIL line naming the call.
async function call(what, fn) {
    try {
        return await fn();
    } catch (e) {
        fail(what, `exception ${e?.constructor?.name}: ${e?.message}`, 'a result');
    }
}
// A watch must resolve from the subscription snapshot, so a bounded wait gives a precise message.
async function watch(what, fn) {
    let t;
    const timeout = new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`no frame within ${WATCH_TIMEOUT_MS} ms (expected the subscription snapshot)`)), WATCH_TIMEOUT_MS); });
    try {
        return await call(what, () => Promise.race([fn(), timeout]));
    } finally {
        clearTimeout(t);
    }
}
function eqLevels(what, got, want) {
    if (!Array.isArray(got) || got.length !== want.length) {
        fail(`${what} depth`, got?.map((l) => l.slice(0, 2)), want);
    }
    want.forEach(([p, s], i) => {
        if (!near(got[i][0], p) || !near(got[i][1], s)) fail(`${what}[${i}]`, got[i].slice(0, 2), [p, s]);
    });
}
// REST rows are per order: sum sizes of equal prices (input is already sorted by ccxt).
function mergeLevels(rows) {
    const m = new Map();
    for (const [p, s] of rows) m.set(p, (m.get(p) ?? 0) + s);
    return [...m.entries()];
}
function checkBook(what, ob, merge) {
    eqLevels(`${what} bids`, merge ? mergeLevels(ob.bids) : ob.bids, E.book.bids);
    eqLevels(`${what} asks`, merge ? mergeLevels(ob.asks) : ob.asks, E.book.asks);
    ok(`${what} (${E.book.bids.length} bids, ${E.book.asks.length} asks)`);
}
function checkTrades(what, got, want, withSide) {
    const byId = new Map((got ?? []).map((t) => [String(t.id), t]));
    for (const w of want) {
        const t = byId.get(String(w.id));
        if (!t) fail(`${what} trade ${w.id}`, [...byId.keys()], `id ${w.id} present`);
        eqNum(`${what} trade ${w.id} price`, t.price, w.price);
        eqNum(`${what} trade ${w.id} amount`, t.amount, w.amount);
        if (withSide && t.side !== w.side) fail(`${what} trade ${w.id} side`, t.side, w.side);
    }
    ok(`${what} (${want.length} trades)`);
}

const symOf = (m) => `${m.symbol}/USDC:USDC`;
const market = E.markets.find((m) => m.market_id === E.market_id);
if (!market) { console.error(`market_id ${E.market_id} not in expect.markets`); process.exit(2); }
const S = symOf(market);
const urls = { api: { public: E.http, private: E.http } };
const cfg = { urls, options: { accountIndex: E.accountIndex }, enableRateLimit: false };
const proCfg = { ...cfg, urls: { api: { ...urls.api, ws: E.ws } } };
console.log(`ccxt ${ccxt.version}, symbol ${S}, account ${E.accountIndex}`);

// ---------------------------------------------------------------- REST
const rest = new ccxt.lighter(cfg);
const markets = await call('loadMarkets', () => rest.loadMarkets());
for (const m of E.markets) {
    const mk = markets[symOf(m)];
    if (!mk) fail(`loadMarkets ${symOf(m)}`, Object.keys(markets), `${symOf(m)} present`);
    if (mk.type !== 'swap' || mk.swap !== true) fail(`loadMarkets ${mk.symbol} type`, mk.type, 'swap');
    if (mk.id !== String(m.market_id)) fail(`loadMarkets ${mk.symbol} id`, mk.id, String(m.market_id));
    eqNum(`loadMarkets ${mk.symbol} precision.amount`, mk.precision.amount, 10 ** -m.size_decimals);
    eqNum(`loadMarkets ${mk.symbol} precision.price`, mk.precision.price, 10 ** -m.price_decimals);
}
ok(`loadMarkets (${E.markets.length} perps)`);

const ticker = await call('fetchTicker', () => rest.fetchTicker(S));
if (ticker.symbol !== S) fail('fetchTicker symbol', ticker.symbol, S);
eqNum('fetchTicker last', ticker.last, E.last_trade_price);
ok('fetchTicker');
const tickers = await call('fetchTickers', () => rest.fetchTickers());
if (!tickers[S]) fail('fetchTickers', Object.keys(tickers), `${S} present`);
eqNum('fetchTickers last', tickers[S].last, E.last_trade_price);
ok('fetchTickers');

checkBook('fetchOrderBook', await call('fetchOrderBook', () => rest.fetchOrderBook(S)), true);

const candles = await call('fetchOHLCV', () => rest.fetchOHLCV(S, '1m'));
if (!candles.length) fail('fetchOHLCV', candles, 'at least one 1m candle');
const last = candles[candles.length - 1]; // ccxt sorts by t ascending (parseOHLCVs)
if (last[0] % 60000 !== 0) fail('fetchOHLCV last candle t aligned to the minute', last[0], 'multiple of 60000');
['open', 'high', 'low', 'close', 'volume'].forEach((k, i) => eqNum(`fetchOHLCV last candle ${k}`, last[i + 1], E.candle_1m[k]));
ok('fetchOHLCV');

const rates = await call('fetchFundingRates', () => rest.fetchFundingRates());
if (!rates[S]) fail('fetchFundingRates', Object.keys(rates), `${S} present (exchange:"lighter")`);
if (typeof rates[S].fundingRate !== 'number' || !Number.isFinite(rates[S].fundingRate)) {
    fail('fetchFundingRates rate', rates[S].fundingRate, 'a finite number');
}
ok('fetchFundingRates');

const status = await call('fetchStatus', () => rest.fetchStatus());
if (status.status !== 'ok') fail('fetchStatus', status.status, 'ok');
ok('fetchStatus');
const time = await call('fetchTime', () => rest.fetchTime());
if (!Number.isFinite(time) || Math.abs(time - Date.now()) > 60000) fail('fetchTime', time, `within 60 s of ${Date.now()}`);
ok('fetchTime');

const bal = await call('fetchBalance', () => rest.fetchBalance());
eqNum('fetchBalance USDC total', bal.USDC?.total, E.balance.total);
eqNum('fetchBalance USDC free', bal.USDC?.free, E.balance.free);
ok('fetchBalance');

const positions = await call('fetchPositions', () => rest.fetchPositions());
for (const w of E.positions) {
    const p = positions.find((x) => x.symbol === w.symbol);
    if (!p) fail(`fetchPositions ${w.symbol}`, positions.map((x) => x.symbol), `${w.symbol} present`);
    if (p.side !== w.side) fail(`fetchPositions ${w.symbol} side`, p.side, w.side);
    eqNum(`fetchPositions ${w.symbol} contracts`, p.contracts, w.contracts);
    eqNum(`fetchPositions ${w.symbol} entryPrice`, p.entryPrice, w.entryPrice);
}
const extra = positions.filter((p) => p.contracts !== 0 && !E.positions.some((w) => w.symbol === p.symbol));
if (extra.length) fail('fetchPositions unexpected open positions', extra.map((p) => [p.symbol, p.contracts]), []);
ok(`fetchPositions (${E.positions.length} open)`);

// ---------------------------------------------------------------- WebSocket (ccxt.pro)
const pro = new ccxt.pro.lighter(proCfg);
const pro2 = new ccxt.pro.lighter(proCfg); // own connection for watchTickers, see header
await pro.loadHttpProxyAgent(); // required before the first ws:// watch under Node
await pro2.loadHttpProxyAgent();

checkBook('watchOrderBook', await watch('watchOrderBook', () => pro.watchOrderBook(S)), false);

checkTrades('watchTrades', await watch('watchTrades', () => pro.watchTrades(S)), E.trades, true);

const wt = await watch('watchTicker', () => pro.watchTicker(S));
if (wt.symbol !== S) fail('watchTicker symbol', wt.symbol, S);
eqNum('watchTicker last', wt.last, E.last_trade_price);
ok('watchTicker');

const wts = await watch('watchTickers', () => pro2.watchTickers([S]));
if (!wts[S]) fail('watchTickers', Object.keys(wts), `${S} present`);
eqNum('watchTickers last', wts[S].last, E.last_trade_price);
ok('watchTickers');

const wb = await watch('watchBalance', () => pro.watchBalance()); // swap: user_stats/<acct>
eqNum('watchBalance USDC total', wb.USDC?.total, E.balance.total);
eqNum('watchBalance USDC free', wb.USDC?.free, E.balance.free);
ok('watchBalance');

// account_all_trades is private: the token goes in params (ccxt subscribes to it without one).
checkTrades('watchMyTrades', await watch('watchMyTrades', () => pro.watchMyTrades(S, undefined, undefined, { auth: E.auth })), E.my_trades, false);

await call('close', () => Promise.all([pro.close(), pro2.close()]));
ok('close');
console.log('PASS ccxt acceptance');
process.exit(0);
