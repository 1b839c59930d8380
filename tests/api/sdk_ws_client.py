#!/usr/bin/python3
"""Acceptance test: tachyon's WebSocket as the Lighter Python SDK's WsClient (lighter/ws_client.py) sees it.
Usage: sdk_ws_client.py --http URL --admin URL --ws URL/stream --cli PATH/tachyon-cli --data-dir DIR
Funds accounts A=1, B=2 via operator deposits (DIR/operator.key), rests orders for A, then runs the SDK
WsClient logic (ws:// instead of its hard-coded wss://): wait for "connected", subscribe order_book/0
and account_all/A without auth, handle only the SDK's frame types; anything else ends run() with
"Unhandled message" (SDK version without ping loop: "pong" is unhandled too). Book kept as the SDK
does: snapshot as is; deltas by exact price string, size overwritten, float(size)==0 removes, new
levels appended unsorted. While connected A adds orders and B sends two crossing IOC orders; checks:
book == REST orderBookOrders, A's position in account_all, begin_nonce continuity, CRC32 `checksum`,
timestamp/engine_ts_us/sent_ts_us on every push, fixed-decimal strings.
Prints "ok <what>" per check, "FAIL <what>: ..." (exit 1), "PASS sdk ws client" (exit 0); 30 s: exit 2.
"""
import argparse, asyncio, json, os, re, shutil, subprocess, tempfile, threading, time, zlib
import urllib.error, urllib.parse, urllib.request
from decimal import Decimal
import websockets

MARKET, SIZE_DEC, PRICE_DEC = 0, 4, 2
KEYS = tempfile.mkdtemp(prefix="sdk-ws-keys-")
failures = []  # names of failed checks, one entry per failing frame

def finish(code):
    shutil.rmtree(KEYS, ignore_errors=True)
    os._exit(code)

def fail(what, detail, fatal=True):
    if what not in failures:  # per-frame checks print their first failing frame only
        print(f"FAIL {what}: {detail}", flush=True)
    failures.append(what)
    if fatal:
        finish(1)

def ok(what): print(f"ok {what}", flush=True)

def http_json(url, form=None):
    data = urllib.parse.urlencode(form).encode() if form is not None else None  # POST, form-urlencoded
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=5) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read() or b"{}")

def run_cli(cli, *argv):
    out = subprocess.run([cli, *argv], capture_output=True, text=True, timeout=10)
    if out.returncode != 0:
        fail(f"tachyon-cli {argv[0]}", out.stderr.strip())
    return out.stdout.strip()

class Api:
    def __init__(self, a):
        self.a, self.nonce = a, {}

    def send(self, base, key, tx_type, tx, what):
        tx_info = run_cli(self.a.cli, "sign", "--quiet", "--key-file", key, "--tx-type", str(tx_type),
                          "--tx", json.dumps(tx))
        r = http_json(base + "/api/v1/sendTx", {"tx_type": tx_type, "tx_info": tx_info})
        if r.get("code") != 200 or r.get("status", "executed") != "executed":
            fail(what, f"sendTx replied {r}")

    def open_account(self, acct):
        pub = run_cli(self.a.cli, "keygen", "--out", os.path.join(KEYS, f"{acct}.key"))
        n = http_json(self.a.admin + "/admin/nextNonce")["nonce"]
        self.send(self.a.admin, os.path.join(self.a.data_dir, "operator.key"), 1,
                  {"ToAccountIndex": acct, "Amount": 100000000000, "PubKey": pub, "KeyIndex": 0, "Nonce": n},
                  f"deposit to account {acct}")
        self.nonce[acct] = 0  # a newly registered key starts at nonce 0

    def order(self, acct, is_ask, price, lots, ioc=False):
        tx = {"AccountIndex": acct, "ApiKeyIndex": 0, "MarketIndex": MARKET, "ClientOrderIndex": 0,
              "BaseAmount": lots, "Price": int(Decimal(price).scaleb(PRICE_DEC)), "IsAsk": int(is_ask),
              "Type": 0, "TimeInForce": 0 if ioc else 1, "ReduceOnly": 0, "TriggerPrice": 0,
              "OrderExpiry": 0 if ioc else int(time.time() * 1000) + 3600000, "Nonce": self.nonce[acct]}
        self.nonce[acct] += 1
        self.send(self.a.http, os.path.join(KEYS, f"{acct}.key"), 14, tx,
                  f"order {acct} {'sell' if is_ask else 'buy'} {lots} lots @ {price}{' IOC' if ioc else ''}")

class SdkWsClient:
    """The SDK WsClient's on_message and handlers, plus this test's per-frame checks."""

    def __init__(self, url, order_book_ids, account_ids):
        self.url, self.subs = url, {"order_books": order_book_ids, "accounts": account_ids}
        self.order_book_states, self.account_states = {}, {}
        self.connected, self.counts, self.last_nonce = False, {}, None
        self.frame = asyncio.Event()  # set on every frame: waiters re-check their condition

    async def run(self):
        async with websockets.connect(self.url) as ws:
            async for message in ws:
                await self.on_message(ws, message)
                self.frame.set()

    async def on_message(self, ws, message):
        message = json.loads(message)
        t = message.get("type")
        self.counts[t] = self.counts.get(t, 0) + 1
        if isinstance(t, str) and t.startswith(("subscribed/", "update/")):
            self.check_stamps(message)
        if t == "connected":
            self.connected = True
            for m in self.subs["order_books"]:
                await ws.send(json.dumps({"type": "subscribe", "channel": f"order_book/{m}"}))
            for a in self.subs["accounts"]:
                await ws.send(json.dumps({"type": "subscribe", "channel": f"account_all/{a}"}))
        elif t == "subscribed/order_book":
            self.order_book_states[message["channel"].split(":")[1]] = message["order_book"]
            self.check_book_frame(message, snapshot=True)
        elif t == "update/order_book":
            state = self.order_book_states[message["channel"].split(":")[1]]  # KeyError if no snapshot yet
            self.update_orders(message["order_book"]["asks"], state["asks"])
            self.update_orders(message["order_book"]["bids"], state["bids"])
            self.check_book_frame(message, snapshot=False)
        elif t in ("subscribed/account_all", "update/account_all"):
            self.account_states[message["channel"].split(":")[1]] = message  # replaced whole
        elif t == "ping":
            await ws.send(json.dumps({"type": "pong"}))
        else:
            raise Exception(f"Unhandled message: {message}")

    @staticmethod
    def update_orders(new_orders, existing_orders):  # the SDK's algorithm
        for new_order in new_orders:
            is_new_order = True
            for existing_order in existing_orders[:]:
                if new_order["price"] == existing_order["price"]:
                    is_new_order = False
                    existing_order["size"] = new_order["size"]
                    if float(new_order["size"]) == 0:
                        existing_orders.remove(existing_order)
            if is_new_order:
                existing_orders.append(new_order)
        existing_orders[:] = [o for o in existing_orders if float(o["size"]) > 0]

    def check_stamps(self, msg):
        ts, eng, sent = (msg.get(k) for k in ("timestamp", "engine_ts_us", "sent_ts_us"))
        if not all(type(v) is int for v in (ts, eng, sent)):
            fail("frame stamps", f"timestamp/engine_ts_us/sent_ts_us not all ints in {msg}", fatal=False)
        elif not (0 < eng <= sent and abs(ts * 1000 - sent) < 1000000):
            fail("frame stamps", "want 0 < engine_ts_us <= sent_ts_us and timestamp ~ sent_ts_us/1000, got "
                 f"timestamp={ts} engine_ts_us={eng} sent_ts_us={sent} in {msg}", fatal=False)

    def check_book_frame(self, msg, snapshot):
        ob = msg["order_book"]
        for lv in ob["asks"] + ob["bids"]:
            if not (re.fullmatch(r"\d+\.\d{%d}" % PRICE_DEC, lv["price"])
                    and re.fullmatch(r"\d+\.\d{%d}" % SIZE_DEC, lv["size"])):
                fail("fixed-decimal strings", f"level {lv} in {msg}", fatal=False)
        if not snapshot and ob.get("begin_nonce") != self.last_nonce:
            fail("nonce continuity", f"begin_nonce {ob.get('begin_nonce')} != previous frame's nonce "
                 f"{self.last_nonce} in {msg}", fatal=False)
        self.last_nonce = ob.get("nonce")
        book = self.order_book_states[msg["channel"].split(":")[1]]
        if ob.get("checksum") != zlib.crc32(checksum_text(book).encode()):
            fail("checksum", f"frame has {ob.get('checksum')}, local book after the frame gives "
                 f"{zlib.crc32(checksum_text(book).encode())} = crc32({checksum_text(book)!r}); frame {msg}",
                 fatal=False)

def sorted_sides(book):  # (bids best first, asks best first), zero sizes left out
    live = lambda side: [lv for lv in book[side] if float(lv["size"]) != 0]
    return (sorted(live("bids"), key=lambda lv: -Decimal(lv["price"])),
            sorted(live("asks"), key=lambda lv: Decimal(lv["price"])))

def checksum_text(book):
    bids, asks = sorted_sides(book)
    return "|".join(f"{lv['price']}:{lv['size']}" for lv in bids[:25] + asks[:25])

def level_set(rows, size_key):
    return {(r["price"], r[size_key]) for r in rows if float(r[size_key]) != 0}

def signed_position(acct_frame):
    p = acct_frame.get("positions", {}).get(str(MARKET))
    return None if p is None else p.get("sign", 1) * Decimal(p["position"])

async def main(a):
    api, A, B = Api(a), 1, 2
    for acct in (A, B):
        await asyncio.to_thread(api.open_account, acct)
    resting = [(A, 0, "2990.00", 10000), (A, 0, "2980.00", 5000), (A, 1, "3010.00", 10000), (A, 1, "3020.00", 7500)]
    for o in resting:
        await asyncio.to_thread(api.order, *o)
    ok(f"setup: deposits to accounts {A},{B} and {len(resting)} resting orders via REST sendTx")

    client = SdkWsClient(a.ws, [MARKET], [A])
    task = asyncio.create_task(client.run())

    # Waits for the condition, re-checked after each frame (every change the server makes to
    # what it checks arrives as a frame), with a deadline.
    async def wait_until(pred, what, detail=lambda: "", timeout=10.0):
        end = time.monotonic() + timeout
        while True:
            client.frame.clear()  # before the check: a frame after it wakes the wait below
            if pred():
                return
            if task.done():  # the SDK's run() prints this and returns
                fail("sdk ws client run()", "Connection terminated unexpectedly: "
                     f"{task.exception() or 'closed by the server'}")
            left = end - time.monotonic()
            if left <= 0:
                fail(what, f"not reached within {timeout} s {detail()}")
            frame = asyncio.ensure_future(client.frame.wait())
            await asyncio.wait([frame, task], timeout=left, return_when=asyncio.FIRST_COMPLETED)
            frame.cancel()

    await wait_until(lambda: client.connected, "connected frame")
    ok(f'got {{"type":"connected"}}, then subscribed order_book/{MARKET} and account_all/{A} without auth')
    await wait_until(lambda: str(MARKET) in client.order_book_states and str(A) in client.account_states,
                     "subscribed/order_book and subscribed/account_all snapshots")
    snap, pos0 = client.order_book_states[str(MARKET)], signed_position(client.account_states[str(A)]) or 0
    ok(f"snapshots: book {len(snap['bids'])} bids / {len(snap['asks'])} asks, account {A} position {pos0}")

    live = [(A, 0, "2995.00", 4000), (A, 1, "3005.00", 3000), (A, 0, "2990.00", 2000),
            (B, 1, "2985.00", 6000, True),  # fills 0.4 @ 2995 (level gone) + 0.2 @ 2990: A +0.6
            (B, 0, "3010.00", 1000, True)]  # fills 0.1 @ 3005: A -0.1
    for o in live:
        await asyncio.to_thread(api.order, *o)
    want_pos = pos0 + Decimal("0.5000")
    ok(f"live: {len(live)} orders sent while connected (2 crossing IOC orders from account {B})")

    rest = {}

    def book_matches():
        r = http_json(f"{a.http}/api/v1/orderBookOrders?market_id={MARKET}&limit=100")
        for side in ("bids", "asks"):  # REST rows are orders: sum them per price level
            levels = {}
            for row in r[side]:
                levels[row["price"]] = levels.get(row["price"], Decimal(0)) + Decimal(row["remaining_base_amount"])
            rest[side] = {(px, f"{sz:.4f}") for px, sz in levels.items() if sz != 0}
        local = client.order_book_states[str(MARKET)]
        return client.counts.get("update/order_book") and all(
            rest[s] == level_set(local[s], "size") for s in ("bids", "asks"))

    await wait_until(book_matches, "local book == REST orderBookOrders",
                     lambda: f"local {sorted_sides(client.order_book_states[str(MARKET)])} REST {rest}")
    ok(f"local SDK book == REST book ({len(rest['bids'])} bids, {len(rest['asks'])} asks) "
       f"after {client.counts['update/order_book']} update/order_book frames")
    await wait_until(lambda: signed_position(client.account_states[str(A)]) == want_pos
                     and client.counts.get("update/account_all"), f"account_all/{A} position",
                     lambda: f"want {want_pos}, last frame {client.account_states[str(A)]}")
    ok(f"account_all/{A}: position {want_pos} after {client.counts['update/account_all']} update frames")
    task.cancel()
    nbook = client.counts.get("subscribed/order_book", 0) + client.counts.get("update/order_book", 0)
    npush = sum(n for t, n in client.counts.items() if "/" in str(t))
    for what, n in (("nonce continuity", nbook), ("checksum", nbook), ("fixed-decimal strings", nbook),
                    ("frame stamps", npush)):
        if what not in failures:
            ok(f"{what} ({n} frames)")
    print(f"frames seen: {client.counts}", flush=True)
    if failures:
        print("FAIL sdk ws client: " + ", ".join(f"{w} failed on {failures.count(w)} frame(s)"
                                                 for w in sorted(set(failures))), flush=True)
        finish(1)
    print("PASS sdk ws client", flush=True)
    finish(0)

if __name__ == "__main__":
    p = argparse.ArgumentParser()
    for opt in ("--http", "--admin", "--ws", "--cli", "--data-dir"):
        p.add_argument(opt, required=True)
    args = p.parse_args()
    args.http, args.admin = args.http.rstrip("/"), args.admin.rstrip("/")
    threading.Timer(30, lambda: (print("FAIL timeout: not finished within 30 s", flush=True), finish(2))).start()
    asyncio.run(main(args))
