// The operator's console in a real browser: `node console_check.mjs <chromium> <admin url>
// <public url> <server pid> <screenshot.png> [<role>,...]`. Starts headless Chromium, opens <admin url>/console
// and drives it over the DevTools protocol (the `ws` package, installed with ccxt). Checks, once the
// page has had its frames: the status says connected; the book of market 0 shows exactly the
// levels the public REST book has (orders summed by price; the harness keeps the book still);
// the accepted tx rate is above 0 (the harness sends txs meanwhile); the latency table has
// last-minute percentiles for acks; with roles given (a cluster), the node table has a row of
// each, with an applied seq above 0 and heard within 5 s. Saves a screenshot. Then it stops the server (SIGTERM to
// <server pid>) and checks that the page says disconnected. Prints "ok ..." / "FAIL ..."; exit 1
// on a failure.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';

const [chromium, adminUrl, publicUrl, pidArg, shot, rolesArg] = process.argv.slice(2);
const roles = rolesArg ? rolesArg.split(',') : [];
if (!shot) {
    console.error('usage: node console_check.mjs <chromium> <admin url> <public url> <pid> <png>');
    process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), 'tachyon-chromium-'));
const browser = spawn(chromium, ['--headless=new', '--no-sandbox', '--disable-gpu',
    '--remote-debugging-port=0', `--user-data-dir=${profile}`, '--window-size=1400,1000', 'about:blank'],
    { stdio: ['ignore', 'ignore', 'pipe'] });
let failed = false;
function finish(code) {
    const done = () => {
        try {
            rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
        } catch {
            // a profile file still held open: left in the temp dir
        }
        process.exit(code);
    };
    if (browser.exitCode !== null || browser.signalCode !== null) done();
    browser.once('exit', done);
    browser.kill('SIGKILL');
}
setTimeout(() => { console.log('FAIL timeout: the check did not finish within 90 s'); finish(1); }, 90000);
const fail = (what, got, want) => {
    console.log(`FAIL ${what}: got ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
    failed = true;
};

// The browser's DevTools endpoint, from its stderr.
const endpoint = await new Promise((resolve, reject) => {
    let err = '';
    browser.stderr.on('data', (d) => {
        err += d;
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
        if (m) resolve(m[1]);
    });
    browser.on('exit', () => reject(new Error(`chromium exited: ${err.slice(-500)}`)));
});
const cdp = new WebSocket(endpoint);
await new Promise((r) => cdp.once('open', r));
let nextId = 1;
const waiting = new Map();
cdp.on('message', (raw) => {
    const m = JSON.parse(raw);
    if (m.id && waiting.has(m.id)) {
        waiting.get(m.id)(m);
        waiting.delete(m.id);
    }
});
function send(method, params = {}, sessionId) {
    const id = nextId++;
    cdp.send(JSON.stringify({ id, method, params, sessionId }));
    return new Promise((resolve, reject) => waiting.set(id, (m) => (m.error ? reject(new Error(m.error.message)) : resolve(m.result))));
}
const { targetId } = await send('Target.createTarget', { url: `${adminUrl}/console` });
const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
const page = (method, params) => send(method, params, sessionId);

// What the page shows, read from its DOM.
const READ = `(() => {
  const text = (id) => document.getElementById(id)?.textContent ?? null;
  const levels = (id) => [...document.querySelectorAll('#' + id + ' tr[data-price]')]
      .map((r) => [r.dataset.price, r.dataset.size]);
  const ack = document.querySelector('#latency tr[data-name="ack"]');
  return JSON.stringify({ status: text('status'), rate: text('txs-ok-rate'),
    bids: levels('book-0-bids'), asks: levels('book-0-asks'),
    ack: ack ? [...ack.cells].map((c) => c.textContent) : null,
    nodes: [...document.querySelectorAll('#nodes tr[data-name]')].map((r) => [...r.cells].map((c) => c.textContent)) });
})()`;
async function read() {
    const r = await page('Runtime.evaluate', { expression: READ, returnByValue: true });
    return JSON.parse(r.result.value);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, pred, ms) {
    const end = Date.now() + ms;
    let last;
    while (Date.now() < end) {
        last = await read();
        if (pred(last)) return last;
        await sleep(250);
    }
    fail(what, last, 'within ' + ms + ' ms');
    return last;
}

// The public REST book of market 0, orders summed by price, best first, as [price, size] text
// with the market's decimals (the console's own formatting).
async function restBook() {
    const b = await (await fetch(`${publicUrl}/api/v1/orderBookOrders?market_id=0&limit=100`)).json();
    const sum = (rows) => {
        const m = new Map();
        for (const o of rows) {
            const d = o.remaining_base_amount.split('.')[1]?.length ?? 0;
            const units = Math.round(Number(o.remaining_base_amount) * 10 ** d);
            m.set(o.price, { units: (m.get(o.price)?.units ?? 0) + units, d });
        }
        return [...m.entries()].map(([p, { units, d }]) => [p, (units / 10 ** d).toFixed(d)]);
    };
    return { bids: sum(b.bids), asks: sum(b.asks) };
}

const shown = await until('the console fills', (s) => s.status === 'connected' && s.bids.length > 0 &&
    Number(s.rate) > 0 && s.ack && s.ack[1] !== '-' && Number(s.ack[4]) > 0, 30000);
if (shown.status === 'connected') console.log('ok the console is connected');
const rest = await restBook();
if (JSON.stringify(shown.bids) !== JSON.stringify(rest.bids.slice(0, 15))) fail('bids equal the REST book', shown.bids, rest.bids);
else if (JSON.stringify(shown.asks) !== JSON.stringify(rest.asks.slice(0, 15))) fail('asks equal the REST book', shown.asks, rest.asks);
else console.log(`ok book levels equal the REST book (${shown.bids.length} bids, ${shown.asks.length} asks)`);
if (Number(shown.rate) > 0) console.log(`ok accepted tx/s ${shown.rate}`);
if (shown.ack && shown.ack[1] !== '-') console.log(`ok ack percentiles over the last minute: p50 ${shown.ack[1]} µs, p99 ${shown.ack[3]} µs, ${shown.ack[4]} acks`);
// A row of the cluster's node table: node, role, applied seq, lag ("txs / ms"), heard ("H ms").
const nodeRow = (cells, role) => cells.length === 5 && cells[1] === role && Number(cells[2]) > 0 &&
    /^\d+ \/ -?\d+$/.test(cells[3]) && parseInt(cells[4], 10) < 5000;
if (roles.length) {
    const s = await until(`the node table shows ${roles.join(', ')}`,
        (x) => roles.every((role) => x.nodes.some((row) => nodeRow(row, role))), 15000);
    if (roles.every((role) => s.nodes.some((row) => nodeRow(row, role))))
        console.log(`ok every node of the cluster: ${s.nodes.map((c) => c.join(' ')).join(' | ')}`);
}
const png = await page('Page.captureScreenshot', { format: 'png' });
writeFileSync(shot, Buffer.from(png.data, 'base64'));
console.log(`ok screenshot ${shot}`);

process.kill(Number(pidArg), 'SIGTERM');
const gone = await until('the console says disconnected once the server stopped',
    (s) => s.status === 'disconnected', 15000);
if (gone.status === 'disconnected') console.log('ok disconnected once the server stopped');
console.log(failed ? 'failed' : 'done');
finish(failed ? 1 : 0);
