// tachyon's signer for ccxt's `lighter` class (ccxt loads it where it would load Lighter's Go
// signer): set the exchange's options `wasmExecPath` to this file and `libraryPath` to
// tachyon-signer.wasm beside it. ccxt imports this file, which defines globalThis.Go; `new Go()`
// then runs the (empty) wasm module, and run() installs the functions ccxt calls on globalThis:
// CreateClient, GenerateAPIKey, CreateAuthToken and the Sign* family, with the argument lists of
// ccxt 4.5.84. They sign as tachyon does (docs/ARCHITECTURE.md "Wire API"): Ed25519 over the
// canonical tx bytes, the domain tag and chain id followed by the tx's binary record with its
// sequencer fields zeroed; the tx hash is BLAKE2b-320 of the same bytes.
//
// Private keys are tachyon's: `tachyon-cli keygen` writes the 64-byte secret key (seed || public
// key) as 128 hex characters; a 64-character seed is accepted too.
//
// A failure is {error: "..."} (ccxt turns it into an Error), a success has no `error` key. What
// tachyon does not have (spot routes, integrator fees) throws ccxt's own NotSupported, found in
// the ccxt package the running script imports (a plain Error named NotSupported without one).
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign as edSign } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const DOMAIN = Buffer.from('tachyon-tx-v1', 'ascii');
const TX_BASE = 0x0100;
const CODEC_VERSION = 2;
const FLAG_SKIP_NONCE = 1;
const TX_EXPIRY_MS = 10 * 60 * 1000;                 // ExpiredAt: now + 10 minutes
const DEFAULT_ORDER_EXPIRY_MS = 28 * 24 * 3600 * 1000;  // OrderExpiry -1: now + 28 days
const MAX_TOKEN_LIFETIME_S = 8 * 3600;
const TOKEN_SLACK_S = 30;  // clock skew an auth token survives
const ALL_MARKETS = 255;
const TYPE = {
    changePubKey: 8, createSubAccount: 9, transfer: 12, withdraw: 13, createOrder: 14,
    cancelOrder: 15, cancelAllOrders: 16, modifyOrder: 17, updateLeverage: 20,
    createGroupedOrders: 28, updateMargin: 29,
};

// ---------------------------------------------------------------- keys
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

function strip0x(s) { return typeof s === 'string' && s.startsWith('0x') ? s.slice(2) : s; }

// A KeyObject from tachyon's 128-hex secret key or a 64-hex seed; throws on anything else.
function keyFromHex(hex) {
    hex = strip0x(hex);
    if (typeof hex !== 'string' || !/^([0-9a-fA-F]{64}|[0-9a-fA-F]{128})$/.test(hex)) {
        throw new Error('private key must be 128 hex characters (tachyon-cli keygen) or a 64-character seed');
    }
    const seed = Buffer.from(hex.slice(0, 64), 'hex');
    const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
    if (hex.length === 128 && publicHex(key) !== hex.slice(64).toLowerCase()) {
        throw new Error('private key: its public half does not match its seed');
    }
    return key;
}

function publicHex(privateKey) {
    const der = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
    return der.subarray(der.length - 32).toString('hex');
}

// ---------------------------------------------------------------- BLAKE2b (RFC 7693), any length
const MASK = (1n << 64n) - 1n;
const IV = [
    0x6a09e667f3bcc908n, 0xbb67ae8584caa73bn, 0x3c6ef372fe94f82bn, 0xa54ff53a5f1d36f1n,
    0x510e527fade682d1n, 0x9b05688c2b3e6c1fn, 0x1f83d9abfb41bd6bn, 0x5be0cd19137e2179n,
];
const SIGMA = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4], [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13], [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11], [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5], [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];
const rotr = (x, n) => ((x >> n) | (x << (64n - n))) & MASK;

function compress(h, block, t, last) {
    const m = [];
    for (let i = 0; i < 16; ++i) m.push(block.readBigUInt64LE(8 * i));
    const v = [...h, ...IV];
    v[12] ^= t & MASK;
    v[13] ^= t >> 64n;
    if (last) v[14] ^= MASK;
    const g = (a, b, c, d, x, y) => {
        v[a] = (v[a] + v[b] + x) & MASK; v[d] = rotr(v[d] ^ v[a], 32n);
        v[c] = (v[c] + v[d]) & MASK; v[b] = rotr(v[b] ^ v[c], 24n);
        v[a] = (v[a] + v[b] + y) & MASK; v[d] = rotr(v[d] ^ v[a], 16n);
        v[c] = (v[c] + v[d]) & MASK; v[b] = rotr(v[b] ^ v[c], 63n);
    };
    for (let r = 0; r < 12; ++r) {
        const s = SIGMA[r % 10];
        g(0, 4, 8, 12, m[s[0]], m[s[1]]); g(1, 5, 9, 13, m[s[2]], m[s[3]]);
        g(2, 6, 10, 14, m[s[4]], m[s[5]]); g(3, 7, 11, 15, m[s[6]], m[s[7]]);
        g(0, 5, 10, 15, m[s[8]], m[s[9]]); g(1, 6, 11, 12, m[s[10]], m[s[11]]);
        g(2, 7, 8, 13, m[s[12]], m[s[13]]); g(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (let i = 0; i < 8; ++i) h[i] ^= v[i] ^ v[i + 8];
}

export function blake2b(data, outLen) {
    const h = [...IV];
    h[0] ^= 0x01010000n ^ BigInt(outLen);
    const n = data.length;
    let off = 0;
    while (n - off > 128) {
        compress(h, data.subarray(off, off + 128), BigInt(off + 128), false);
        off += 128;
    }
    const last = Buffer.alloc(128);
    data.copy(last, 0, off);
    compress(h, last, BigInt(n), true);
    const out = Buffer.alloc(64);
    h.forEach((x, i) => out.writeBigUInt64LE(x, 8 * i));
    return out.subarray(0, outLen);
}

// ---------------------------------------------------------------- the tx record
// Little-endian writer of one record; sizes and layouts are tachyon's codec (src/codec/codec.cpp).
class Record {
    constructor() { this.parts = []; }
    u8(x) { const b = Buffer.alloc(1); b.writeUInt8(Number(x)); this.parts.push(b); return this; }
    u16(x) { const b = Buffer.alloc(2); b.writeUInt16LE(Number(x)); this.parts.push(b); return this; }
    u32(x) { const b = Buffer.alloc(4); b.writeUInt32LE(Number(x)); this.parts.push(b); return this; }
    i32(x) { const b = Buffer.alloc(4); b.writeInt32LE(Number(x)); this.parts.push(b); return this; }
    i64(x) { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(x)); this.parts.push(b); return this; }
    u64(x) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(x)); this.parts.push(b); return this; }
    bytes(buf) { this.parts.push(Buffer.from(buf)); return this; }
    pad(n) { this.parts.push(Buffer.alloc(n)); return this; }
    body() { return Buffer.concat(this.parts); }
}

function orderFields(r, o) {
    r.u64(o.ClientOrderIndex).i64(o.BaseAmount).i64(o.Price).i64(o.TriggerPrice).i64(o.OrderExpiry);
    r.u8(o.MarketIndex).u8(o.IsAsk).u8(o.Type).u8(o.TimeInForce).u8(o.ReduceOnly).u8(o.stp ?? 0).pad(2);
}

const EMPTY_ORDER = {
    ClientOrderIndex: 0, BaseAmount: 0, Price: 0, TriggerPrice: 0, OrderExpiry: 0,
    MarketIndex: 0, IsAsk: 0, Type: 0, TimeInForce: 0, ReduceOnly: 0,
};

// The payload of each user tx type, as the codec lays it out.
function payload(type, t) {
    const r = new Record();
    switch (type) {
        case TYPE.createOrder: orderFields(r, t); break;
        case TYPE.createGroupedOrders:
            r.u8(t.GroupingType).u8(t.Orders.length).pad(6);
            for (let i = 0; i < 3; ++i) orderFields(r, t.Orders[i] ?? EMPTY_ORDER);
            break;
        case TYPE.cancelOrder: r.u64(t.Index).u8(t.MarketIndex).pad(7); break;
        case TYPE.cancelAllOrders: r.i64(t.Time).u8(t.TimeInForce).u8(t.market).pad(6); break;
        case TYPE.modifyOrder:
            r.u64(t.Index).i64(t.BaseAmount).i64(t.Price).i64(t.TriggerPrice).u8(t.MarketIndex).pad(7);
            break;
        case TYPE.changePubKey: r.u8(t.TargetApiKeyIndex).pad(7).bytes(Buffer.from(t.PubKey, 'hex')); break;
        case TYPE.createSubAccount: break;
        case TYPE.transfer:
            r.u64(t.ToAccountIndex).i64(t.Amount).i64(t.USDCFee).u8(t.AssetIndex).pad(7);
            r.bytes(Buffer.from(t.Memo, 'hex'));
            break;
        case TYPE.withdraw: r.i64(t.Amount).u8(t.AssetIndex).pad(7); break;
        case TYPE.updateLeverage: r.i32(t.InitialMarginFraction).u8(t.MarketIndex).u8(t.MarginMode).pad(2); break;
        case TYPE.updateMargin: r.i64(t.USDCAmount).u8(t.MarketIndex).u8(t.Direction).pad(6); break;
        default: throw new Error(`no codec for tx type ${type}`);
    }
    return r.body();
}

// Domain tag, chain id, then the record: its header, the tx header with seq, block, time and
// key version zeroed, the payload.
function canonicalBytes(type, h, body) {
    const head = new Record()
        .u64(0).u64(0).i64(0).i64(h.ExpiredAt).u64(h.account).i64(h.Nonce).u32(0)
        .u8(h.ApiKeyIndex).u8(h.skipNonce ? FLAG_SKIP_NONCE : 0).pad(2).body();
    const record = new Record().u32(8 + head.length + body.length).u16(TX_BASE | type)
        .u8(CODEC_VERSION).u8(0).body();
    return Buffer.concat([DOMAIN, new Record().u32(h.chainId).body(), record, head, body]);
}

// ---------------------------------------------------------------- clients and signing
const clients = new Map();  // "<account>:<api key>" -> {key, chainId, lastNonce}
const clientOf = (apiKeyIndex, accountIndex) => clients.get(`${accountIndex}:${apiKeyIndex}`);

function int(name, v, lo, hi) {
    const x = typeof v === 'bigint' ? v : Number(v);
    if (v === undefined || v === null || v === '' || !Number.isInteger(Number(x)) || x < lo || x > hi) {
        throw new Error(`${name}: ${v} is not an integer in [${lo}, ${hi}]`);
    }
    return Number(x);
}
const U48 = 2 ** 48 - 1;

// Signs tx type `type` with the client's key: `fields` are the type's own tx_info fields in
// Lighter's order, `codec` the payload's values that are not in tx_info (attributes).
function signTx(type, fields, codec, skipNonce, nonce, apiKeyIndex, accountIndex) {
    const c = clientOf(apiKeyIndex, accountIndex);
    if (!c) throw new Error(`client is not created for account ${accountIndex} api key ${apiKeyIndex}`);
    let n = int('nonce', nonce, 0, Number.MAX_SAFE_INTEGER);
    if (skipNonce) {  // a skip-nonce tx needs only a nonce above the key's last: keep them rising
        if (n <= c.lastNonce) n = c.lastNonce + 1;
        c.lastNonce = n;
    }
    const accountKey = type === TYPE.transfer || type === TYPE.withdraw ? 'FromAccountIndex' : 'AccountIndex';
    const head = {
        [accountKey]: int('account_index', accountIndex, 0, U48),
        ApiKeyIndex: int('api_key_index', apiKeyIndex, 0, 254),
    };
    const h = {
        account: head[accountKey], ApiKeyIndex: head.ApiKeyIndex, ExpiredAt: Date.now() + TX_EXPIRY_MS,
        Nonce: n, skipNonce: !!skipNonce, chainId: c.chainId,
    };
    const bytes = canonicalBytes(type, h, payload(type, { ...fields, ...codec }));
    const sig = edSign(null, bytes, c.key);
    const attrs = {};
    if (skipNonce) attrs['4'] = 1;
    if (type === TYPE.cancelAllOrders && codec.market !== ALL_MARKETS) attrs['5'] = codec.market;
    if (type === TYPE.createOrder && codec.stp) attrs['6'] = codec.stp;
    const info = {
        ...head, ...fields, ExpiredAt: h.ExpiredAt, Nonce: n, Sig: sig.toString('base64'),
        L2TxAttributes: Object.keys(attrs).length ? attrs : null,
    };
    return { txType: type, txInfo: JSON.stringify(info), txHash: blake2b(bytes, 40).toString('hex') };
}

// What tachyon does not have: guarded() rethrows it as ccxt's NotSupported.
class Unsupported extends Error {}

// ccxt's ESM entry as the running script resolves it (node_modules upward from its directory):
// importing the same file gives the same module, so the error is an instance of the class the
// bot catches.
async function ccxtNotSupported() {
    try {
        for (let dir = dirname(resolve(process.argv[1] ?? '.')); ; dir = dirname(dir)) {
            const pkg = join(dir, 'node_modules', 'ccxt', 'package.json');
            if (existsSync(pkg)) {
                const entry = JSON.parse(readFileSync(pkg, 'utf8')).exports?.['.']?.import?.default;
                if (!entry) return undefined;
                const mod = await import(pathToFileURL(join(dirname(pkg), entry)).href);
                return mod.NotSupported ?? mod.default?.NotSupported;
            }
            if (dirname(dir) === dir) return undefined;
        }
    } catch {
        return undefined;
    }
}
const NotSupported = (await ccxtNotSupported()) ?? class NotSupported extends Error {
    constructor(m) { super(m); this.name = 'NotSupported'; }
};

// Runs one signer function: its result, or {error} for any failure (ccxt checks `'error' in`);
// what tachyon does not have throws NotSupported.
function guarded(fn) {
    return (...args) => {
        try {
            return fn(...args);
        } catch (e) {
            if (e instanceof Unsupported) throw new NotSupported(`lighter (tachyon) ${e.message}`);
            return { error: String(e?.message ?? e) };
        }
    };
}

// Integrator (builder) fees: tachyon has none, so a non-zero one is refused rather than dropped.
function noIntegrator(account, takerFee, makerFee) {
    if (Number(account ?? 0) !== 0 || Number(takerFee ?? 0) !== 0 || Number(makerFee ?? 0) !== 0)
        throw new Unsupported('has no integrator fees: set the option builderFee to false');
}

function orderExpiry(v, type, tif) {
    const x = int('order_expiry', v, -1, Number.MAX_SAFE_INTEGER);
    // -1: the default expiry, as Lighter's signer gives it. A trigger order waits for its trigger
    // until its expiry, so one sent without (ccxt's stop-loss / take-profit market orders) gets it too.
    const trigger = type >= 2 && type <= 5;
    if (x === -1 || (x === 0 && trigger)) return Date.now() + DEFAULT_ORDER_EXPIRY_MS;
    return tif === 0 && !trigger ? 0 : x;
}

function orderInfo(o) {
    const type = int('order_type', o.Type, 0, 6), tif = int('time_in_force', o.TimeInForce, 0, 2);
    return {
        MarketIndex: int('market_index', o.MarketIndex, 0, 254),
        ClientOrderIndex: int('client_order_index', o.ClientOrderIndex ?? 0, 0, U48),
        BaseAmount: int('base_amount', o.BaseAmount, 0, U48),
        Price: int('price', o.Price, 0, 0xffffffff),
        IsAsk: int('is_ask', Number(o.IsAsk), 0, 1),
        Type: type, TimeInForce: tif,
        ReduceOnly: int('reduce_only', Number(o.ReduceOnly ?? 0), 0, 1),
        TriggerPrice: int('trigger_price', o.TriggerPrice ?? 0, 0, 0xffffffff),
        OrderExpiry: orderExpiry(o.OrderExpiry ?? 0, type, tif),
    };
}

// Memo: 32 bytes as 64 hex characters, from hex ("0x..." or plain) or text, zero-padded.
function memoHex(memo) {
    if (memo === undefined || memo === null || memo === '') return '00'.repeat(32);
    const s = String(memo);
    const h = strip0x(s);
    const buf = /^[0-9a-fA-F]*$/.test(h) && h.length % 2 === 0 ? Buffer.from(h, 'hex') : Buffer.from(s, 'utf8');
    if (buf.length > 32) throw new Error('memo: at most 32 bytes');
    return Buffer.concat([buf, Buffer.alloc(32 - buf.length)]).toString('hex');
}

const perpOnly = (name, route) => {
    if (Number(route ?? 0) !== 0) throw new Unsupported(`has perpetuals only: ${name} must be 0 (perp), got ${route}`);
};

const api = {
    CreateClient(url, privateKey, chainId, apiKeyIndex, accountIndex) {
        const key = keyFromHex(privateKey);
        clients.set(`${int('account_index', accountIndex, 0, U48)}:${int('api_key_index', apiKeyIndex, 0, 254)}`,
            { key, url, chainId: int('chain_id', chainId, 0, 0xffffffff), lastNonce: -1 });
        return {};
    },
    GenerateAPIKey() {
        const { privateKey } = generateKeyPairSync('ed25519');
        const der = privateKey.export({ format: 'der', type: 'pkcs8' });
        const pub = publicHex(privateKey);
        return { privateKey: der.subarray(der.length - 32).toString('hex') + pub, publicKey: pub };
    },
    // "<deadline_s>:<account>:<api_key>:<sig_hex>" over "tachyon-auth-v1:<chain>:<deadline_s>:<account>:<api_key>".
    CreateAuthToken(deadline, apiKeyIndex, accountIndex) {
        const c = clientOf(apiKeyIndex, accountIndex);
        if (!c) throw new Error(`client is not created for account ${accountIndex} api key ${apiKeyIndex}`);
        const nowS = Math.floor(Date.now() / 1000);
        let d = int('deadline', deadline, 0, Number.MAX_SAFE_INTEGER);
        d = Math.min(d, nowS + MAX_TOKEN_LIFETIME_S - TOKEN_SLACK_S);  // the server takes at most 8 h
        const msg = `tachyon-auth-v1:${c.chainId}:${d}:${accountIndex}:${apiKeyIndex}`;
        const sig = edSign(null, Buffer.from(msg, 'utf8'), c.key).toString('hex');
        return { authToken: `${d}:${accountIndex}:${apiKeyIndex}:${sig}` };
    },
    SignCreateOrder(market, cidx, base, price, isAsk, type, tif, reduceOnly, trigger, expiry,
        integrator, takerFee, makerFee, stpMode, _steMode, skipNonce, nonce, apiKeyIndex, accountIndex) {
        noIntegrator(integrator, takerFee, makerFee);
        const fields = orderInfo({
            MarketIndex: market, ClientOrderIndex: cidx, BaseAmount: base, Price: price, IsAsk: isAsk,
            Type: type, TimeInForce: tif, ReduceOnly: reduceOnly, TriggerPrice: trigger, OrderExpiry: expiry,
        });
        const stp = int('self_trade_behavior_mode', stpMode ?? 0, 0, 3);
        return signTx(TYPE.createOrder, fields, { stp }, skipNonce, nonce, apiKeyIndex, accountIndex);
    },
    SignCreateGroupedOrders(grouping, orders, integrator, takerFee, makerFee, _stpMode, _steMode,
        skipNonce, nonce, apiKeyIndex, accountIndex) {
        noIntegrator(integrator, takerFee, makerFee);
        if (!Array.isArray(orders) || orders.length < 2 || orders.length > 3) throw new Error('orders: 2 or 3 orders');
        const fields = { GroupingType: int('grouping_type', grouping, 1, 3), Orders: orders.map(orderInfo) };
        return signTx(TYPE.createGroupedOrders, fields, {}, skipNonce, nonce, apiKeyIndex, accountIndex);
    },
    SignCancelOrder(market, index, skipNonce, nonce, apiKeyIndex, accountIndex) {
        const fields = { MarketIndex: int('market_index', market, 0, 254), Index: int('order_index', index, 0, Number.MAX_SAFE_INTEGER) };
        return signTx(TYPE.cancelOrder, fields, {}, skipNonce, nonce, apiKeyIndex, accountIndex);
    },
    SignCancelAllOrders(tif, time, market, skipNonce, nonce, apiKeyIndex, accountIndex) {
        const fields = { TimeInForce: int('time_in_force', tif, 0, 2), Time: int('time', time ?? 0, 0, Number.MAX_SAFE_INTEGER) };
        const codec = { market: int('market_index', market ?? ALL_MARKETS, 0, 255) };
        return signTx(TYPE.cancelAllOrders, fields, codec, skipNonce, nonce, apiKeyIndex, accountIndex);
    },
    SignModifyOrder(market, index, base, price, trigger, integrator, takerFee, makerFee, _stpMode,
        _steMode, skipNonce, nonce, _orderVersion, apiKeyIndex, accountIndex) {
        noIntegrator(integrator, takerFee, makerFee);
        const fields = {
            MarketIndex: int('market_index', market, 0, 254), Index: int('index', index, 0, Number.MAX_SAFE_INTEGER),
            BaseAmount: int('base_amount', base, 0, U48), Price: int('price', price, 0, 0xffffffff),
            TriggerPrice: int('trigger_price', trigger ?? 0, 0, 0xffffffff),
        };
        return signTx(TYPE.modifyOrder, fields, {}, skipNonce, nonce, apiKeyIndex, accountIndex);
    },
    SignTransfer(to, asset, fromRoute, toRoute, amount, fee, memo, skipNonce, nonce, apiKeyIndex, accountIndex) {
        perpOnly('from_route_type', fromRoute);
        perpOnly('to_route_type', toRoute);
        const fields = {
            ToAccountIndex: int('to_account_index', to, 0, U48), AssetIndex: int('asset_index', asset, 0, 255),
            FromRouteType: 0, ToRouteType: 0, Amount: int('amount', amount, 0, Number.MAX_SAFE_INTEGER),
            USDCFee: int('usdc_fee', fee ?? 0, 0, Number.MAX_SAFE_INTEGER), Memo: memoHex(memo),
        };
        return signTx(TYPE.transfer, fields, {}, skipNonce, nonce, apiKeyIndex, accountIndex);
    },
    SignWithdraw(asset, route, amount, skipNonce, nonce, apiKeyIndex, accountIndex) {
        perpOnly('route_type', route);
        const fields = { AssetIndex: int('asset_index', asset, 0, 255), RouteType: 0, Amount: int('amount', amount, 0, Number.MAX_SAFE_INTEGER) };
        return signTx(TYPE.withdraw, fields, {}, skipNonce, nonce, apiKeyIndex, accountIndex);
    },
    SignUpdateLeverage(market, imf, marginMode, skipNonce, nonce, apiKeyIndex, accountIndex) {
        const fields = {
            MarketIndex: int('market_index', market, 0, 254), InitialMarginFraction: int('initial_margin_fraction', imf, 0, 10000),
            MarginMode: int('margin_mode', marginMode, 0, 1),
        };
        return signTx(TYPE.updateLeverage, fields, {}, skipNonce, nonce, apiKeyIndex, accountIndex);
    },
    SignUpdateMargin(market, amount, direction, skipNonce, nonce, apiKeyIndex, accountIndex) {
        const fields = {
            MarketIndex: int('market_index', market, 0, 254), USDCAmount: int('usdc_amount', amount, 0, Number.MAX_SAFE_INTEGER),
            Direction: int('direction', direction, 0, 1),
        };
        return signTx(TYPE.updateMargin, fields, {}, skipNonce, nonce, apiKeyIndex, accountIndex);
    },
    SignCreateSubAccount(skipNonce, nonce, apiKeyIndex, accountIndex) {
        return signTx(TYPE.createSubAccount, {}, {}, skipNonce, nonce, apiKeyIndex, accountIndex);
    },
    // Registers `pubkey` at the client's key index, signed by the key there now (tachyon has no
    // L1 signatures: the key being replaced authorizes its successor).
    SignChangePubKey(pubkey, skipNonce, nonce, apiKeyIndex, accountIndex) {
        const pk = strip0x(String(pubkey));
        if (!/^[0-9a-fA-F]{64}$/.test(pk)) throw new Error('pubkey: 64 hex characters');
        const fields = { PubKey: pk.toLowerCase(), TargetApiKeyIndex: int('api_key_index', apiKeyIndex, 0, 254) };
        const r = signTx(TYPE.changePubKey, fields, {}, skipNonce, nonce, apiKeyIndex, accountIndex);
        return { ...r, messageToSign: '' };
    },
    SignApproveIntegrator() {
        throw new Unsupported('has no integrator fees: set the option builderFee to false');
    },
};

// What ccxt runs: `new Go()`, WebAssembly.instantiate(bytes, go.importObject), go.run(instance).
class Go {
    constructor() { this.importObject = {}; }
    run(_instance) {
        for (const [name, fn] of Object.entries(api)) globalThis[name] = guarded(fn);
        return Promise.resolve();
    }
}
globalThis.Go = Go;
export { Go, api as signer };
