// ccxt trades against tachyon with the shipped signer: `node trading.mjs <conf.json>`. conf.json
// (written by the C++ harness, which funded the accounts) holds http/ws URLs, the signer's paths
// (clients/ccxt), the traders A and B (account index, API key 254's 128-hex secret key) and the
// account C that receives a transfer. Every figure is checked against the server's own state read
// with plain REST (fetch), not through ccxt: orders against the public book (orderBookOrders),
// fills against recentTrades, positions and balances against account?by=index. Prints "ok ..."
// per check; "FAIL ..." and exit 1 on the first failure; exit 2 on usage error or timeout.
//
// What ccxt 4.5.84 needs set, beyond the URLs: libraryPath and wasmExecPath (the signer), the key
// under options.auths[account]['254'] (ccxt uses API keys 4..254 only, 254 by default), and
// builderFee false (tachyon has no integrator fees).
import ccxt from 'ccxt';
import { readFileSync } from 'node:fs';

if (process.argv.length < 3) {
    console.error('usage: node trading.mjs <conf.json>');
    process.exit(2);
}
const C = JSON.parse(readFileSync(process.argv[2], 'utf8'));
setTimeout(() => { console.log('FAIL timeout: the run did not finish within 120 s'); process.exit(2); }, 120000);
process.on('unhandledRejection', (e) => { console.log(`FAIL unhandled rejection: ${e?.stack || e}`); process.exit(1); });

const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
function fail(what, got, want) {
    console.log(`FAIL ${what}: got ${show(got)} want ${show(want)}`);
    process.exit(1);
}
const ok = (what) => console.log(`ok ${what}`);
const near = (a, b) => Number.isFinite(Number(a)) && Math.abs(Number(a) - Number(b)) <= 1e-9 * Math.max(1, Math.abs(Number(b)));
function eq(what, got, want) {
    const same = typeof want === 'number' ? near(got, want)
        : typeof want === 'object' ? JSON.stringify(got) === JSON.stringify(want) : got === want;
    if (!same) fail(what, got, want);
}
async function call(what, fn) {
    try {
        return await fn();
    } catch (e) {
        fail(what, `exception ${e?.constructor?.name}: ${e?.message}`, 'a result');
    }
}
// The call must fail with ccxt error class `cls` (e.g. InvalidOrder); returns the message.
async function refused(what, cls, fn) {
    try {
        await fn();
    } catch (e) {
        if (!(e instanceof ccxt[cls])) fail(what, `${e?.constructor?.name}: ${e?.message}`, cls);
        ok(`${what}: ${cls} (${e.message.slice(0, 90)})`);
        return e.message;
    }
    fail(what, 'success', cls);
}

// ---------------------------------------------------------------- the server's own state
async function rest(path) {
    const r = await fetch(C.http + path);
    const j = await r.json();
    if (r.status !== 200) fail(`GET ${path}`, j, 'HTTP 200');
    return j;
}
const account = async (a) => (await rest(`/api/v1/account?by=index&value=${a}`)).accounts[0];
const positionOf = (acct, m) => acct.positions.find((p) => p.market_id === m);
// The public book as {order_index -> row} of one owner.
async function bookOrders(m, owner) {
    const b = await rest(`/api/v1/orderBookOrders?market_id=${m}&limit=100`);
    const all = [...b.bids.map((o) => ({ ...o, side: 'buy' })), ...b.asks.map((o) => ({ ...o, side: 'sell' }))];
    if (b.bids.length && b.asks.length && Number(b.bids[0].price) >= Number(b.asks[0].price)) {
        fail(`book ${m} crossed`, [b.bids[0].price, b.asks[0].price], 'best bid < best ask');
    }
    return new Map(all.filter((o) => o.owner_account_index === owner).map((o) => [String(o.order_index), o]));
}
async function tradeCount(m) { return (await rest(`/api/v1/recentTrades?market_id=${m}&limit=100`)).trades.length; }
async function lastTrade(m) { return (await rest(`/api/v1/recentTrades?market_id=${m}&limit=1`)).trades[0]; }

// ---------------------------------------------------------------- the clients
function client(t) {
    return new ccxt.pro.lighter({
        urls: { api: { public: C.http, private: C.http, ws: C.ws } },
        options: {
            accountIndex: t.index, apiKeyIndex: 254, builderFee: false,
            libraryPath: C.signer_wasm, wasmExecPath: C.signer_js,
            auths: { [String(t.index)]: { 254: { lighterPrivateKey: t.key } } },
        },
        enableRateLimit: false,
    });
}
const [TA, TB] = C.traders;
const A = client(TA), B = client(TB);
await A.loadHttpProxyAgent();
await B.loadHttpProxyAgent();
await call('A loadMarkets', () => A.loadMarkets());
await call('B loadMarkets', () => B.loadMarkets());
const S = 'ETH/USDC:USDC', S2 = 'BTC/USDC:USDC';
const ETH = 0, BTC = 1;
let tradesEth = await tradeCount(ETH);

let closing = false;
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
// Waits up to 10 s until `until` holds for what the watch returns, or for the client's cache
// that the watch fills (`cache()`: a frame may arrive while no watch call is pending). Only WS
// frames fill the cache: the subscription's snapshot, then incremental updates.
async function watchUntil(what, fn, cache, until) {
    const end = Date.now() + 10000;
    let last;
    while (Date.now() < end) {
        // A watch still pending at the end is rejected by close(): not a failure then.
        const watched = fn().catch((e) => closing || fail(what, `exception ${e?.constructor?.name}: ${e?.message}`, 'a frame'));
        last = await Promise.race([watched, sleep(250).then(() => Array.from(cache() ?? []))]);
        if (last !== undefined && until(last)) return last;
    }
    fail(what, last?.map?.((x) => [x.id, x.status ?? x.price]) ?? last, 'a frame with the expected content within 10 s');
}

// ---------------------------------------------------------------- orders
const aOrders = A.watchOrders(S);  // subscribed before the first order: updates must follow
const bid = await call('A createOrder limit buy', () => A.createOrder(S, 'limit', 'buy', 0.5, 2990));
if (!bid.id) fail('createOrder id', bid, 'the order index');
const ask = await call('A createOrder post-only sell', () => A.createOrder(S, 'limit', 'sell', 0.5, 3010, { postOnly: true }));
let book = await bookOrders(ETH, TA.index);
eq('bid in the book: price', book.get(bid.id)?.price, '2990.00');
eq('bid in the book: size', book.get(bid.id)?.remaining_base_amount, '0.5000');
eq('ask in the book: price', book.get(ask.id)?.price, '3010.00');
ok(`createOrder limit and post-only rest in the server's book (ids ${bid.id}, ${ask.id})`);
await aOrders;
await watchUntil('A watchOrders sees both orders open', () => A.watchOrders(S), () => A.orders,
    (os) => [bid.id, ask.id].every((id) => os.some((o) => o.id === id && o.status === 'open')));
ok('watchOrders: both orders open, by incremental updates');
// A post-only order that would cross executes as a tx and is canceled, never taking (as Lighter's).
const po = await call('A post-only that would cross', () => A.createOrder(S, 'limit', 'buy', 0.1, 3020, { postOnly: true }));
if ((await bookOrders(ETH, TA.index)).has(po.id)) fail('crossing post-only', 'resting', 'canceled');
eq('trades after the crossing post-only', await tradeCount(ETH), tradesEth);
ok('a crossing post-only order is canceled without a trade');

// account_all_trades is private: ccxt subscribes to it without a token, so one goes in params
// (the signer is loaded by B's first private call).
await call('B fetchOpenOrders', () => B.fetchOpenOrders(S));
const bAuth = { auth: B.createAuth() };
const bTrades = B.watchMyTrades(S, undefined, undefined, bAuth);
const mkt = await call('B createOrder market buy', () => B.createOrder(S, 'market', 'buy', 0.2, 3100));
let t = await lastTrade(ETH);
eq('market buy fill price', t.price, '3010.00');
eq('market buy fill size', t.size, '0.2000');
eq('market buy fill buyer', t.bid_account_id, TB.index);
eq('market buy fill seller', t.ask_account_id, TA.index);
tradesEth += 1;
ok(`createOrder market (${mkt.id}) filled 0.2 at 3010 against A's ask`);
await bTrades;
await watchUntil('B watchMyTrades sees the fill', () => B.watchMyTrades(S, undefined, undefined, bAuth), () => B.myTrades,
    (ts) => ts.some((x) => String(x.id) === String(t.trade_id) && near(x.price, 3010) && near(x.amount, 0.2)));
ok('watchMyTrades: the fill, by an incremental update');

const open = await call('A fetchOpenOrders', () => A.fetchOpenOrders(S));
book = await bookOrders(ETH, TA.index);
eq('fetchOpenOrders count', open.length, book.size);
for (const o of open) {
    const row = book.get(o.id);
    if (!row) fail(`fetchOpenOrders ${o.id}`, 'absent from the book', 'in the book');
    eq(`fetchOpenOrders ${o.id} remaining`, o.remaining, Number(row.remaining_base_amount));
    eq(`fetchOpenOrders ${o.id} price`, o.price, Number(row.price));
    eq(`fetchOpenOrders ${o.id} side`, o.side, row.side);
}
eq('the ask after its fill', open.find((o) => o.id === ask.id)?.filled, 0.2);
ok(`fetchOpenOrders: ${open.length} orders equal the server's book`);

await call('A editOrder', () => A.editOrder(bid.id, S, 'limit', 'buy', 0.4, 2995));
book = await bookOrders(ETH, TA.index);
eq('edited bid: price', book.get(bid.id)?.price, '2995.00');
eq('edited bid: size', book.get(bid.id)?.remaining_base_amount, '0.4000');
ok('editOrder: the bid is now 0.4 at 2995, same order index');

await call('B createOrder IOC sell', () => B.createOrder(S, 'limit', 'sell', 0.1, 2995, { timeInForce: 'ioc' }));
t = await lastTrade(ETH);
eq('IOC fill', [t.price, t.size, t.ask_account_id], ['2995.00', '0.1000', TB.index]);
tradesEth += 1;
let pos = await call('B fetchPositions', () => B.fetchPositions([S]));
let raw = positionOf(await account(TB.index), ETH);
const p = pos.find((x) => x.symbol === S);
eq('B position contracts', p?.contracts, Number(raw.position));
eq('B position contracts value', p?.contracts, 0.1);
eq('B position side', p?.side, 'long');
eq('B position entry', p?.entryPrice, Number(raw.avg_entry_price));
ok('IOC sell filled 0.1; fetchPositions: long 0.1 from 3010, as the server holds it');

await call('B reduce-only market sell', () => B.createOrder(S, 'market', 'sell', 0.1, 2900, { reduceOnly: true }));
tradesEth += 1;
raw = positionOf(await account(TB.index), ETH);
if (raw && Number(raw.position) !== 0) fail('B flat after reduce-only', raw.position, '0');
await refused('reduce-only with no position', 'InvalidOrder', () => B.createOrder(S, 'market', 'sell', 0.1, 2900, { reduceOnly: true }));
ok('reduce-only closed the position; a second one is refused');

const sl = await call('A stop-loss limit', () => A.createOrder(S, 'limit', 'buy', 0.1, 3050, { stopLossPrice: 3040 }));
const slm = await call('A stop-loss market', () => A.createOrder(S, 'market', 'buy', 0.1, 3100, { stopLossPrice: 3060 }));
const tp = await call('A take-profit limit', () => A.createOrder(S, 'limit', 'sell', 0.1, 3090, { takeProfitPrice: 3100 }));
const openNow = await call('A fetchOpenOrders (triggers)', () => A.fetchOpenOrders(S));
for (const [o, trig, what] of [[sl, 3040, 'stop-loss limit'], [slm, 3060, 'stop-loss market'], [tp, 3100, 'take-profit limit']]) {
    const got = openNow.find((x) => x.id === o.id);
    if (!got) fail(`${what} open`, openNow.map((x) => x.id), o.id);
    eq(`${what} trigger price`, got.triggerPrice, trig);
    if ((await bookOrders(ETH, TA.index)).has(o.id)) fail(`${what} in the book`, 'resting', 'waiting for its trigger');
}
ok('stop-loss (limit, market) and take-profit wait for their triggers, outside the book');
await call('A cancelOrder', () => A.cancelOrder(sl.id, S));
if ((await call('A fetchOpenOrders', () => A.fetchOpenOrders(S))).some((o) => o.id === sl.id)) fail('cancelOrder', 'still open', 'gone');
ok('cancelOrder removed the stop-loss');

await call('A cancelAllOrders', () => A.cancelAllOrders(S));
eq('A open orders after cancelAllOrders', (await call('A fetchOpenOrders', () => A.fetchOpenOrders(S))).length, 0);
eq('A orders in the book after cancelAllOrders', (await bookOrders(ETH, TA.index)).size, 0);
ok('cancelAllOrders: nothing of A is left');

// The dead man's switch: scheduled, then aborted; a second abort finds nothing scheduled.
await call('A cancelAllOrdersAfter', () => A.cancelAllOrdersAfter(600000));
await call('A abort the schedule', () => A.cancelAllOrdersAfter(600000, { time_in_force: 2, time: 0 }));
await refused('a second abort', 'ExchangeError', () => A.cancelAllOrdersAfter(600000, { time_in_force: 2, time: 0 }));
ok('cancelAllOrdersAfter scheduled the dead man\'s switch; its abort found it');

const closed = await call('A fetchClosedOrders', () => A.fetchClosedOrders(S));
const statusOf = (id) => closed.find((o) => o.id === id)?.status;
eq('closed: the bid (filled 0.2 of 0.4, then canceled)', statusOf(bid.id), 'canceled');
eq('closed: the stop-loss', statusOf(sl.id), 'canceled');
eq('closed: the crossing post-only', statusOf(po.id), 'canceled');
eq('closed: the stop-loss market', statusOf(slm.id), 'canceled');
eq('closed: the ask (0.2 filled, rest canceled) filled amount', closed.find((o) => o.id === ask.id)?.filled, 0.2);
ok(`fetchClosedOrders: ${closed.length} orders with their final status`);

const myA = await call('A fetchMyTrades', () => A.fetchMyTrades(S));
const myB = await call('B fetchMyTrades', () => B.fetchMyTrades(S));
eq('A trades', myA.length, 3);
eq('B trades', myB.length, 3);
eq('trades on the market', await tradeCount(ETH), tradesEth);
eq('B trade sides', myB.map((x) => x.side).sort().join(','), 'buy,sell,sell');
ok('fetchMyTrades: exactly the 3 fills of each side, no other trade on the market');
// Each trade names B's position before it and the PnL it realized, checked against B's position
// and average-cost PnL worked out here from the fills alone: B bought 0.2 at 3010 and sold it
// lower in two fills, so it ends flat (the server then lists no position).
{
    let size = 0, cost = 0, pnl = 0;
    for (const x of [...myB].sort((p, q) => Number(p.id) - Number(q.id))) {
        const bid = Number(x.info.bid_account_id) === TB.index;
        const who = (bid === Boolean(x.info.is_maker_ask)) ? 'taker' : 'maker';
        const info = (k) => x.info[`${who}_${k}`];
        eq(`trade ${x.id}: B's position before`, Number(info('position_size_before')), size);
        eq(`trade ${x.id}: B's entry quote before`, Number(info('entry_quote_before')), Math.abs(cost));
        if (!(Number(x.info.block_height) > 0)) fail(`trade ${x.id} block_height`, x.info.block_height, '> 0');
        const q = bid ? x.amount : -x.amount;
        let realized = 0;
        if (size !== 0 && Math.sign(q) !== Math.sign(size)) {  // closes (this run never flips)
            const part = cost * (-q / size);
            realized = -q * x.price - part;
            cost -= part;
        } else {
            cost += q * x.price;
        }
        size = Math.round((size + q) * 1e4) / 1e4;
        const got = Number(bid ? x.info.bid_account_pnl : x.info.ask_account_pnl);
        if (Math.abs(got - realized) > 1e-6) fail(`trade ${x.id}: B's PnL`, got, realized);
        pnl += got;
    }
    eq("B's position after its trades", size, 0);
    if (positionOf(await account(TB.index), ETH)) fail("B's position", 'listed', 'flat, not listed');
    if (pnl === 0) fail("B's realized PnL", pnl, 'the loss of selling below 3010');
    ok(`trades carry each side's position before and the PnL realized: B flat, ${pnl.toFixed(6)} USDC`);
}

// ---------------------------------------------------------------- leverage, margin
await call('B setLeverage', () => B.setLeverage(5, S, { marginMode: 'cross' }));
await call('B resting bid', () => B.createOrder(S, 'limit', 'buy', 0.1, 2900));
raw = positionOf(await account(TB.index), ETH);
eq('B initial margin fraction after setLeverage 5', raw?.initial_margin_fraction, '20.00');
pos = await call('B fetchPositions', () => B.fetchPositions([S]));
eq('B leverage', pos.find((x) => x.symbol === S)?.leverage, 5);
await call('B cancelAllOrders', () => B.cancelAllOrders(S));
ok('setLeverage: 5x cross, seen in the server\'s position');

await call('B setMarginMode isolated', () => B.setMarginMode('isolated', S2, { leverage: 4 }));
await call('A BTC ask', () => A.createOrder(S2, 'limit', 'sell', 0.01, 60000));
await call('B BTC market buy', () => B.createOrder(S2, 'market', 'buy', 0.01, 61000));
raw = positionOf(await account(TB.index), BTC);
eq('B BTC isolated', raw?.margin_mode, 1);
const alloc0 = Number(raw.allocated_margin);
await call('B addMargin', () => B.addMargin(S2, 100));
eq('allocated margin after addMargin 100', Number(positionOf(await account(TB.index), BTC).allocated_margin), alloc0 + 100);
await call('B reduceMargin', () => B.reduceMargin(S2, 40));
eq('allocated margin after reduceMargin 40', Number(positionOf(await account(TB.index), BTC).allocated_margin), alloc0 + 60);
ok('setMarginMode isolated, addMargin, reduceMargin move the isolated margin exactly');

// ---------------------------------------------------------------- money
const a0 = await account(TA.index), c0 = await account(C.transfer_to);
await refused('a transfer to spot', 'NotSupported',
    () => A.transfer('USDC', 100, 'perp', 'spot', { toAccountIndex: C.transfer_to }));
await call('A transfer', () => A.transfer('USDC', 100, 'perp', 'perp', { toAccountIndex: C.transfer_to }));
const a1 = await account(TA.index), c1 = await account(C.transfer_to);
eq('A collateral after transfer', Number(a1.collateral), Number(a0.collateral) - 100);
eq('C collateral after transfer', Number(c1.collateral), Number(c0.collateral) + 100);
await call('A withdraw', () => A.withdraw('USDC', 50, '0x0000000000000000000000000000000000000000'));
const a2 = await account(TA.index);
eq('A collateral after withdraw', Number(a2.collateral), Number(a1.collateral) - 50);
ok('transfer moved 100 USDC from A to C, withdraw took 50 from A, to the micro-USDC');
const transfers = await call('A fetchTransfers', () => A.fetchTransfers('USDC'));
eq('fetchTransfers', transfers.map((x) => [x.amount, x.info.type, x.info.to_account_index, x.info.fee]),
    [[100, 'L2TransferOutflow', C.transfer_to, '0.000000']]);
const withdrawals = await call('A fetchWithdrawals', () => A.fetchWithdrawals('USDC'));
eq('fetchWithdrawals', withdrawals.map((x) => [x.amount, x.type]), [[50, 'withdrawal']]);
const deposits = await call('A fetchDeposits', () => A.fetchDeposits('USDC', undefined, undefined, { address: a0.l1_address }));
eq('fetchDeposits', deposits.map((x) => x.amount), [100000]);
ok('fetchTransfers, fetchWithdrawals and fetchDeposits: exactly the account\'s movements');
const bal = await call('A fetchBalance', () => A.fetchBalance());
eq('fetchBalance total', bal.USDC?.total, Number(a2.collateral));
eq('fetchBalance free', bal.USDC?.free, Number(a2.available_balance));
const accts = await call('A fetchAccounts', () => A.fetchAccounts());
eq('fetchAccounts', accts[0]?.id, String(TA.index));
ok('fetchBalance and fetchAccounts equal the server\'s account');

// ---------------------------------------------------------------- over WebSocket
const bal2 = await call('A watchBalance', () => A.watchBalance());
eq('watchBalance total', bal2.USDC?.total, Number(a2.collateral));
const mark = await call('watchMarkPrice', () => A.watchMarkPrice(S));
const det = (await rest('/api/v1/orderBookDetails?market_id=0')).order_book_details[0];
eq('watchMarkPrice', mark.markPrice, Number(det.mark_price));
ok('watchBalance and watchMarkPrice equal the server\'s figures');

const wsBid = await call('A createOrderWs', () => A.createOrderWs(S, 'limit', 'buy', 0.1, 2980));
if (!wsBid.id) fail('createOrderWs id', wsBid, 'the order index');
if (!(await bookOrders(ETH, TA.index)).has(wsBid.id)) fail('createOrderWs', 'absent from the book', 'resting');
await call('B createOrderWs market sell', () => B.createOrderWs(S, 'market', 'sell', 0.1, 2900));
tradesEth += 1;
await watchUntil('A watchOrders sees the WS order filled', () => A.watchOrders(S), () => A.orders,
    (os) => os.some((o) => o.id === wsBid.id && o.status === 'closed'));
t = await lastTrade(ETH);
eq('WS fill', [t.price, t.size, t.bid_account_id, t.ask_account_id], ['2980.00', '0.1000', TA.index, TB.index]);
await watchUntil('B watchMyTrades sees the WS fill', () => B.watchMyTrades(S, undefined, undefined, bAuth), () => B.myTrades,
    (ts) => ts.some((x) => String(x.id) === String(t.trade_id)));
eq('trades on the market at the end', await tradeCount(ETH), tradesEth);
ok('createOrderWs placed and filled; watchOrders and watchMyTrades followed it');

// The book keeps a resting order a side, and a stop-loss waits (the schema check reads them).
await call('A rests a bid', () => A.createOrder(S, 'limit', 'buy', 0.1, 2900));
await call('A rests an ask', () => A.createOrder(S, 'limit', 'sell', 0.1, 3100));
await call('A stop-loss waits', () => A.createOrder(S, 'limit', 'buy', 0.1, 3150, { stopLossPrice: 3140 }));
closing = true;
await A.close();
await B.close();
console.log('done');
process.exit(0);
