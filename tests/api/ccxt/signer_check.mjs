// The ccxt signer (clients/ccxt/tachyon-signer.mjs) against tachyon's own signer, for every user tx
// type and the auth token: `node signer_check.mjs <signer.mjs> <signer.wasm> <tachyon-cli>`.
// Loads the signer the way ccxt 4.5.84 does (import, new Go(), instantiate, run), signs each tx,
// then has `tachyon-cli sign` sign the same tx_info (without Sig) with the same key: the two
// signatures must be equal bytes (Ed25519 is deterministic) and so must the tx hashes. Checks too
// that bad arguments come back as {error} and never throw. Prints "ok ..." / "FAIL ..."; exit 1 on
// a failure.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [signerPath, wasmPath, cli] = process.argv.slice(2);
if (!cli) {
    console.error('usage: node signer_check.mjs <signer.mjs> <signer.wasm> <tachyon-cli>');
    process.exit(2);
}
let failed = false;
const fail = (what, got, want) => {
    console.log(`FAIL ${what}: got ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
    failed = true;
};

await import(signerPath);
const go = new globalThis.Go();
const { instance } = await WebAssembly.instantiate(new Uint8Array(readFileSync(wasmPath)), go.importObject);
go.run(instance);

const dir = mkdtempSync(join(tmpdir(), 'tachyon-signer-'));
const keyFile = join(dir, 'me.key');
execFileSync(cli, ['keygen', '--out', keyFile]);
const secret = readFileSync(keyFile, 'utf8').trim();
const ACCT = 7, KEY = 254, CHAIN = 304;
const made = globalThis.CreateClient('http://127.0.0.1:1', secret, CHAIN, KEY, ACCT);
if ('error' in made) fail('CreateClient', made, {});

// tachyon-cli's signature and hash of the same tx_info.
function reference(type, info) {
    const unsigned = { ...info };
    delete unsigned.Sig;
    const out = execFileSync(cli, ['sign', '--key-file', keyFile, '--tx-type', String(type),
        '--chain-id', String(CHAIN), '--tx', JSON.stringify(unsigned)], { encoding: 'utf8' });
    const signed = JSON.parse(out.split('\n').find((l) => l.startsWith('tx_info: ')).slice(9));
    const hash = /^tx_hash: ([0-9a-f]{80})$/m.exec(out);
    return { sig: signed.Sig, hash: hash ? hash[1] : undefined };
}

const now = Date.now();
const order = { MarketIndex: 1, ClientOrderIndex: 0, BaseAmount: 0, Price: 3100000, IsAsk: 1, Type: 3,
    TimeInForce: 1, ReduceOnly: 1, TriggerPrice: 3000000, OrderExpiry: -1 };
const cases = [
    ['SignCreateOrder', [0, 123456789, 1000, 299000, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, now, KEY, ACCT]],
    ['SignCreateOrder (stop-loss market, self-trade mode 2, no skip-nonce)',
        [1, 0, 500, 290000, 1, 2, 0, 1, 295000, 0, 0, 0, 0, 2, 0, 0, 5, KEY, ACCT]],
    ['SignCreateGroupedOrders', [3, [{ ...order, Type: 0, ReduceOnly: 0, TriggerPrice: 0, BaseAmount: 1000 },
        order, { ...order, Type: 5, IsAsk: 1, Price: 3300000, TriggerPrice: 3400000 }], 0, 0, 0, 0, 0, 1, now + 1, KEY, ACCT]],
    ['SignCancelOrder', [0, 2 ** 48 + 17, 1, now + 2, KEY, ACCT]],
    ['SignCancelAllOrders (every market)', [0, 0, 255, 1, now + 3, KEY, ACCT]],
    ['SignCancelAllOrders (market 1, scheduled)', [1, now + 600000, 1, 1, now + 4, KEY, ACCT]],
    ['SignModifyOrder', [0, 2 ** 48 + 17, 2000, 298000, 0, 0, 0, 0, 0, 0, 1, now + 5, 0, KEY, ACCT]],
    ['SignTransfer', [9, 3, 0, 0, 12345678, 0, '0x000000000000000000000000000000', 1, now + 6, KEY, ACCT]],
    ['SignTransfer (text memo)', [9, 3, 0, 0, 1, 0, 'rent', 1, now + 7, KEY, ACCT]],
    ['SignWithdraw', [3, 0, 5000000, 1, now + 8, KEY, ACCT]],
    ['SignUpdateLeverage', [0, 2000, 1, 1, now + 9, KEY, ACCT]],
    ['SignUpdateMargin', [0, 7000000, 1, 1, now + 10, KEY, ACCT]],
    ['SignCreateSubAccount', [1, now + 11, KEY, ACCT]],
    ['SignChangePubKey', ['ab'.repeat(32), 1, now + 12, KEY, ACCT]],
];
for (const [name, args] of cases) {
    const fn = name.split(' ')[0];
    const r = globalThis[fn](...args);
    if ('error' in r) {
        fail(name, r.error, 'a signed tx');
        continue;
    }
    const info = JSON.parse(r.txInfo);
    const ref = reference(r.txType, info);
    if (info.Sig !== ref.sig) fail(`${name} Sig`, info.Sig, ref.sig);
    else if (r.txHash !== ref.hash) fail(`${name} txHash`, r.txHash, ref.hash);
    else console.log(`ok ${name}: type ${r.txType}, signature and hash equal tachyon-cli's`);
}

// Skip-nonce nonces keep rising per key even when the caller repeats one.
const n1 = JSON.parse(globalThis.SignCancelOrder(0, 1, 1, 100, KEY, ACCT).txInfo).Nonce;
const n2 = JSON.parse(globalThis.SignCancelOrder(0, 1, 1, 100, KEY, ACCT).txInfo).Nonce;
if (!(n2 > n1)) fail('skip-nonce nonces rise', [n1, n2], 'n2 > n1');
else console.log('ok skip-nonce nonces rise per key');

// The auth token, against `tachyon-cli token`'s for the same deadline.
const refTok = execFileSync(cli, ['token', '--key-file', keyFile, '--account', String(ACCT), '--api-key',
    String(KEY), '--ttl', '3600', '--chain-id', String(CHAIN)], { encoding: 'utf8' }).trim();
const tok = globalThis.CreateAuthToken(Number(refTok.split(':')[0]), KEY, ACCT).authToken;
if (tok !== refTok) fail('CreateAuthToken', tok, refTok);
else console.log('ok CreateAuthToken equals tachyon-cli token');

// Other failures come back as {error}, never as exceptions.
const bad = [
    ['no client', () => globalThis.SignCancelOrder(0, 1, 1, 1, 200, 99)],
    ['bad key', () => globalThis.CreateClient('u', 'zz', CHAIN, 1, 1)],
    ['market out of range', () => globalThis.SignCreateOrder(300, 0, 1, 1, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 1, KEY, ACCT)],
];
for (const [name, f] of bad) {
    let r;
    try {
        r = f();
    } catch (e) {
        fail(`${name}: threw`, String(e), '{error}');
        continue;
    }
    if (!r || typeof r.error !== 'string' || r.error === '') fail(name, r, '{error: "..."}');
    else console.log(`ok ${name}: ${r.error}`);
}
// What tachyon does not have throws NotSupported (ccxt's own class where the script's ccxt is
// found, else an Error of that name).
const unsupported = [
    ['spot route', () => globalThis.SignWithdraw(3, 1, 5, 1, 1, KEY, ACCT)],
    ['spot transfer', () => globalThis.SignTransfer(9, 3, 0, 1, 1, 0, '', 1, 1, KEY, ACCT)],
    ['integrator approval', () => globalThis.SignApproveIntegrator(718718, 1000, 1000, 1000, 1000, 0, 1, 1, KEY, ACCT)],
    ['integrator fee on an order',
        () => globalThis.SignCreateOrder(0, 0, 1, 1, 0, 0, 1, 0, 0, -1, 718718, 1000, 1000, 0, 0, 1, 1, KEY, ACCT)],
];
for (const [name, f] of unsupported) {
    try {
        const r = f();
        fail(name, JSON.stringify(r), 'NotSupported thrown');
    } catch (e) {
        if (e?.name !== 'NotSupported') fail(name, String(e), 'NotSupported');
        else console.log(`ok ${name}: NotSupported (${e.message})`);
    }
}
rmSync(dir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
