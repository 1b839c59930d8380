// TLS against plain HTTP on one server (bench/api/tls.sh runs it; see there). Alternates the two
// protocols in blocks, so both see the same machine state, and prints a markdown report:
// per-request time on new connections (the handshake's cost) with the server's CPU per
// connection, and sendTx ack latency on kept-alive connections.
import http from 'node:http';
import https from 'node:https';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : dflt;
};
const urls = { tls: arg('tls'), plain: arg('plain') };
const pid = Number(arg('pid')), account = Number(arg('account'));
const CONNECTS = Number(arg('connects', 400)), ROUNDS = Number(arg('rounds', 6));
const PER_ROUND = Number(arg('per-round', 200)), BLOCK = 50;

await import(fileURLToPath(new URL('../../clients/ccxt/tachyon-signer.mjs', import.meta.url)));
new globalThis.Go().run();
const made = globalThis.CreateClient(urls.tls, arg('key'), 304, 254, account);
if ('error' in made) throw new Error(made.error);

// The server's CPU time so far, ns: the sum over its threads of /proc schedstat's first field.
function serverCpuNs() {
    let ns = 0;
    for (const t of readdirSync(`/proc/${pid}/task`)) {
        ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns;
}

function request(proto, agent, method, path, body) {
    const mod = proto === 'tls' ? https : http;
    const headers = body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {};
    if (!agent) headers.connection = 'close';
    const t0 = process.hrtime.bigint();
    return new Promise((resolve, reject) => {
        const req = mod.request(urls[proto] + path, { method, agent: agent ?? false, headers }, (res) => {
            let data = '';
            res.on('data', (c) => { data += c; });
            res.on('end', () => resolve({ status: res.statusCode, body: data, us: Number(process.hrtime.bigint() - t0) / 1000 }));
        });
        req.on('error', reject);
        if (body) req.write(body);
        req.end();
    });
}

const pct = (xs, p) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(p / 100 * s.length))];
};
const fmt = (x) => x.toFixed(0);

// New connections: BLOCK requests per protocol in turn.
const conn = { tls: { us: [], cpu: 0, n: 0 }, plain: { us: [], cpu: 0, n: 0 } };
for (let done = 0; done < CONNECTS; done += BLOCK) {
    const order = (done / BLOCK) % 2 === 0 ? ['plain', 'tls'] : ['tls', 'plain'];
    for (const proto of order) {
        const c0 = serverCpuNs();
        for (let i = 0; i < BLOCK; ++i) {
            const r = await request(proto, null, 'GET', '/health/live');
            if (r.status !== 200) throw new Error(`${proto} /health/live: ${r.status} ${r.body}`);
            conn[proto].us.push(r.us);
        }
        conn[proto].cpu += serverCpuNs() - c0;
        conn[proto].n += BLOCK;
    }
}

// Acks: one kept-alive connection per protocol, one tx in flight.
const agents = {
    tls: new https.Agent({ keepAlive: true, maxSockets: 1 }),
    plain: new http.Agent({ keepAlive: true, maxSockets: 1 }),
};
const acks = { tls: [], plain: [] };
let coi = 1;
for (let round = 0; round < ROUNDS; ++round) {
    const order = round % 2 === 0 ? ['plain', 'tls'] : ['tls', 'plain'];
    for (const proto of order) {
        for (let i = 0; i < PER_ROUND; ++i) {
            // An IOC buy below the (empty) book: executed, journaled, canceled, nothing rests.
            const s = globalThis.SignCreateOrder(0, coi++, 1000, 290000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, Date.now(), 254, account);
            if (s.error) throw new Error(s.error);
            const r = await request(proto, agents[proto], 'POST', '/api/v1/sendTx',
                `tx_type=${s.txType}&tx_info=${encodeURIComponent(s.txInfo)}`);
            if (r.status !== 200) throw new Error(`${proto} sendTx: ${r.status} ${r.body}`);
            acks[proto].push(r.us);
        }
    }
}

const row = (name, t, p) => `| ${name} | ${fmt(pct(t, 50))} | ${fmt(pct(t, 90))} | ${fmt(pct(t, 99))} | ${fmt(pct(p, 50))} | ${fmt(pct(p, 90))} | ${fmt(pct(p, 99))} | ${(pct(t, 50) / pct(p, 50)).toFixed(2)} |`;
console.log(`# TLS against plain, one server, alternating blocks (${new Date().toISOString()})\n`);
console.log('| µs | TLS p50 | p90 | p99 | plain p50 | p90 | p99 | p50 TLS / plain |');
console.log('|---|---|---|---|---|---|---|---|');
console.log(row(`request on a new connection (${CONNECTS} each)`, conn.tls.us, conn.plain.us));
console.log(row(`sendTx ack, kept-alive (${ROUNDS * PER_ROUND} each)`, acks.tls, acks.plain));
const cpuTls = conn.tls.cpu / conn.tls.n / 1000, cpuPlain = conn.plain.cpu / conn.plain.n / 1000;
console.log(`\nServer CPU per new connection (all threads, /proc schedstat): TLS ${cpuTls.toFixed(0)} µs, plain ${cpuPlain.toFixed(0)} µs; the handshake costs the server ${(cpuTls - cpuPlain).toFixed(0)} µs and the client ${fmt(pct(conn.tls.us, 50) - pct(conn.plain.us, 50))} µs more at p50.`);
agents.tls.destroy();
agents.plain.destroy();
