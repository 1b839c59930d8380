#!/usr/bin/python3
"""Schema check: tachyon's REST and WebSocket replies against the Lighter Python SDK's models.

Usage: schema_check.py --http http://127.0.0.1:P --ws ws://127.0.0.1:P/stream --schemas PATH
         --account A --token TOKEN --account2 B --token2 TOKEN2 --l1 0x<A's L1 address>
         [--cafile CA]

Where the schemas come from (tests/api/schemas/lighter_models.json: one "definitions" entry per
model, one "endpoints" entry per kind of response this script checks):
  - REST models: the pydantic models of the Lighter Python SDK, elliottech/lighter-python, at
    commit 8098f4 (8098f426621ddb36c415b210ceeb4df12ad4f293). That version's from_dict calls
    model_validate, so it really enforces required fields, Strict types and enums; later commits
    only model_construct. Fields added after 8098f4 are optional (type-checked when present).
    Block, Tx and CurrentHeight are not in the upstream repository; they come from its forks
    (yeule0/ and lanqsh/lighter-python), and only fields required in every version are required.
  - ws_* frames: the SDK's asyncapi.json@b0f62b0 (only `type` required there) plus tachyon-side
    rules (order_book levels {price, size} as lighter/ws_client.py reads them, REST Trade / Order
    objects in trade and account frames, ...). ws_error is the error frame {error: {code,
    message}, id?}, which has no type.
The validator is our own subset of JSON Schema (draft-07 keywords type, required, properties,
additionalProperties, items, enum, pattern, minimum, maximum, anyOf, oneOf, $ref to
#/definitions/X); no jsonschema package. Any other keyword in the schema file is an error, so
nothing is skipped silently. "integer" is a JSON number without fraction that is not a boolean;
"number" is an integer or a float, never a boolean. NaN / Infinity are not JSON.

Checks, against a running server whose scene the harness prepared (orders resting on market 0,
trades, an inactive order, a deposit, a withdrawal and a transfer of account A):
  REST: every request of rest_checks() must answer HTTP 200 with a body matching its schema; lists
    the scene fills must not be empty (an empty list would make the per-item check vacuous);
    /api/v1/tx is read with the tx_hash of recentTrades' first trade; two requests must answer
    HTTP 400 with a ResultCode body (orderBookOrders without market_id; sendTx whose tx_info is
    not JSON). Account B (--account2/--token2) is read too, schema only.
  WebSocket: `connected` first; subscribe to ws_channels() (the auth token on private ones), ping,
    one bad jsonapi/sendtx; collect frames for 3 s after the last subscribe and validate each by
    its type ("subscribed/order_book" -> ws_subscribed_order_book, ...); a type without a schema
    fails. Every channel's subscribed/* frame, the pong and the sendtx reply must arrive.
Output: one line per response (per WS type and channel), "ok <name> <path-or-channel>" or
"FAIL <name> <path-or-channel>: <first 5 problems>". All checks run; then exit 1 if any failed,
else print "done" and exit 0.
"""
import argparse
import asyncio
import collections
import json
import re
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request

MAX_PROBLEMS = 5
WS_COLLECT_S = 3.0
WS_FIRST_FRAME_S = 5.0
HTTP_TIMEOUT_S = 10

# ---- the validator: our own subset of JSON Schema ----

ANNOTATIONS = {"description", "title", "$schema", "$id", "$comment"}
KEYWORDS = {"type", "required", "properties", "additionalProperties", "items", "enum", "pattern",
            "minimum", "maximum", "anyOf", "oneOf", "$ref"} | ANNOTATIONS
REF_PREFIX = "#/definitions/"


class SchemaError(Exception):
    """The schema file uses something this validator does not implement."""


def json_type(v):
    """The JSON type name of a parsed value: integer and number apart; a bool is neither."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def type_matches(want, v):
    got = json_type(v)
    return got == want or (want == "number" and got == "integer")


def same_value(a, b):
    """JSON equality: 1 == True in Python, but not in JSON."""
    return json_type(a) == json_type(b) and a == b


def key_path(path, key):
    return f"{path}.{key}" if path else str(key)


def shown(path):
    return path or "(root)"


class Validator:
    def __init__(self, doc, gaps=None):
        if not isinstance(doc, dict):
            raise SchemaError("the schema document is not an object")
        # Required fields tachyon does not serve yet ("Model.field" -> why): their absence is
        # counted, not failed; serving one while it is still listed fails (the list stays exact).
        self.gaps = dict(gaps or {})
        self.gap_missing = collections.Counter()
        self.gap_served = collections.Counter()
        self.defs = doc.get("definitions", {})
        self.endpoints = doc.get("endpoints", {})
        for name, schema in list(self.defs.items()) + list(self.endpoints.items()):
            self._check_schema(schema, name)

    def _check_schema(self, schema, where):
        """Rejects keywords and $refs this validator would otherwise ignore."""
        if not isinstance(schema, dict):
            raise SchemaError(f"{where}: a schema must be an object")
        unknown = set(schema) - KEYWORDS
        if unknown:
            raise SchemaError(f"{where}: unsupported keyword(s) {sorted(unknown)}")
        ref = schema.get("$ref")
        target = ref[len(REF_PREFIX):] if ref and ref.startswith(REF_PREFIX) else None
        if ref is not None and target not in self.defs:
            raise SchemaError(f"{where}: unresolvable $ref {ref}")
        for name, sub in schema.get("properties", {}).items():
            self._check_schema(sub, f"{where}.properties.{name}")
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                self._check_schema(schema[key], f"{where}.{key}")
        for key in ("anyOf", "oneOf"):
            for i, sub in enumerate(schema.get(key, [])):
                self._check_schema(sub, f"{where}.{key}[{i}]")

    def validate(self, name, value):
        """The problems of `value` against endpoint `name`, as 'path: what' strings."""
        if name not in self.endpoints:
            return [f"no schema named {name}"]
        errs = []
        self._check(self.endpoints[name], value, "", name, errs)
        return errs

    def _check(self, schema, v, path, model, errs):
        if "$ref" in schema:
            target = schema["$ref"][len(REF_PREFIX):]
            self._check(self.defs[target], v, path, target, errs)
            return
        if "anyOf" in schema or "oneOf" in schema:
            self._alternatives(schema, v, path, model, errs)
            return
        if "type" in schema:
            wanted = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(type_matches(w, v) for w in wanted):
                errs.append(f"{shown(path)}: expected {' or '.join(wanted)}, got {json_type(v)}")
                return
        if "enum" in schema and not any(same_value(e, v) for e in schema["enum"]):
            allowed = json.dumps(schema["enum"])
            errs.append(f"{shown(path)}: {json.dumps(v)} is not one of {allowed}")
        self._scalar_rules(schema, v, path, errs)
        if isinstance(v, dict):
            self._object(schema, v, path, model, errs)
        elif isinstance(v, list) and "items" in schema:
            for i, item in enumerate(v):
                self._check(schema["items"], item, f"{path}[{i}]", model, errs)

    def _alternatives(self, schema, v, path, model, errs):
        """anyOf: a branch must match; oneOf: exactly one. Reports the closest branch's problems."""
        branches = schema.get("anyOf") or schema.get("oneOf")
        results = []
        for sub in branches:
            sub_errs = []
            self._check(sub, v, path, model, sub_errs)
            results.append(sub_errs)
        matching = sum(1 for r in results if not r)
        if "oneOf" in schema and matching > 1:
            errs.append(f"{shown(path)}: matches {matching} oneOf branches, want exactly 1")
        elif matching == 0:
            errs.extend(min(results, key=len))

    @staticmethod
    def _scalar_rules(schema, v, path, errs):
        if isinstance(v, str) and "pattern" in schema and not re.search(schema["pattern"], v):
            errs.append(f"{shown(path)}: {json.dumps(v)} does not match /{schema['pattern']}/")
        if json_type(v) in ("integer", "number"):
            if "minimum" in schema and v < schema["minimum"]:
                errs.append(f"{shown(path)}: {v} is below the minimum {schema['minimum']}")
            if "maximum" in schema and v > schema["maximum"]:
                errs.append(f"{shown(path)}: {v} is above the maximum {schema['maximum']}")

    def _object(self, schema, v, path, model, errs):
        for name in schema.get("required", []):
            gap = f"{model}.{name}"
            if gap in self.gaps:
                (self.gap_missing if name not in v else self.gap_served)[gap] += 1
            elif name not in v:
                errs.append(f"{key_path(path, name)}: missing (required by {model})")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in v.items():
            if key in props:
                self._check(props[key], value, key_path(path, key), model, errs)
            elif extra is False:
                errs.append(f"{key_path(path, key)}: unexpected key (not in {model})")
            elif isinstance(extra, dict):
                self._check(extra, value, key_path(path, key), model, errs)


def parse_json(raw):
    """json.loads, refusing NaN / Infinity (Python accepts them; JSON does not)."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(raw, parse_constant=refuse)


def snippet(raw, n=300):
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return text if len(text) <= n else text[:n] + "..."


# ---- reporting ----

class Report:
    def __init__(self):
        self.failed = 0

    def result(self, name, where, problems):
        if problems:
            self.fail(name, where, problems)
        else:
            print(f"ok {name} {where}", flush=True)

    def fail(self, name, where, problems):
        self.failed += 1
        first = list(dict.fromkeys(problems))[:MAX_PROBLEMS]  # distinct problems, in order
        more = len(problems) - len(first)
        tail = f" (+{more} more)" if more > 0 else ""
        print(f"FAIL {name} {where}: {'; '.join(first)}{tail}", flush=True)


# ---- REST ----

def tls_context(args):
    return ssl.create_default_context(cafile=args.cafile) if args.cafile else None


def http(args, path, token=None, form=None):
    """(status, body bytes); status None when the request did not get an HTTP answer."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    headers = {"Authorization": token} if token else {}
    req = urllib.request.Request(args.http.rstrip("/") + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S, context=tls_context(args)) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, OSError) as e:
        return None, str(e).encode()


def non_empty(key, what):
    """A scene check: d[key] must be a non-empty list."""
    def check(d):
        if isinstance(d, dict) and isinstance(d.get(key), list) and d[key]:
            return []
        return [f"{key}: empty or absent, but the scene has {what} "
                "(the per-item check would be vacuous)"]
    return check


def book_not_empty(d):
    if isinstance(d, dict) and any(isinstance(d.get(k), list) and d[k] for k in ("asks", "bids")):
        return []
    return ["asks and bids are both empty, but the scene rests orders on market 0"]


def check_rest(args, val, rep, name, path, token=None, form=None, status=200, scene=None):
    """One request: HTTP status, JSON body, schema, scene content. Returns the body or None."""
    where = f"POST {path}" if form is not None else path
    code, body = http(args, path, token, form)
    if code != status:
        got = "no HTTP answer" if code is None else f"HTTP {code}"
        rep.fail(name, where, [f"{got} (want {status}): {snippet(body)}"])
        return None
    try:
        doc = parse_json(body)
    except ValueError as e:
        rep.fail(name, where, [f"body is not JSON ({e}): {snippet(body)}"])
        return None
    problems = val.validate(name, doc)
    if scene is not None:
        problems += scene(doc)
    rep.result(name, where, problems)
    return doc


def rest_checks(args):
    """(name, path, token, scene check) per 200 request; names are endpoints in the schema file."""
    a, b, l1, tok, tok2 = args.account, args.account2, args.l1, args.token, args.token2
    trades = non_empty("trades", "trades")
    return [
        ("status", "/", None, None),
        ("order_book_details", "/api/v1/orderBookDetails", None, None),
        ("order_book_details", "/api/v1/orderBookDetails?market_id=0", None, None),
        ("order_books", "/api/v1/orderBooks", None, None),
        ("order_book_orders", "/api/v1/orderBookOrders?market_id=0&limit=100", None,
         book_not_empty),
        ("recent_trades", "/api/v1/recentTrades?market_id=0&limit=100", None, trades),
        ("trades", "/api/v1/trades?market_id=0&limit=100&sort_by=timestamp", None, trades),
        ("trades", f"/api/v1/trades?account_index={a}&limit=100&sort_by=timestamp", tok, trades),
        ("trades", f"/api/v1/trades?account_index={b}&limit=100&sort_by=timestamp", tok2, None),
        ("exchange_stats", "/api/v1/exchangeStats", None, None),
        ("asset_details", "/api/v1/assetDetails", None, None),
        ("account_active_orders", f"/api/v1/accountActiveOrders?account_index={a}&market_id=0",
         tok, None),
        ("account_active_orders", f"/api/v1/accountActiveOrders?account_index={b}&market_id=0",
         tok2, None),
        ("account_inactive_orders",
         f"/api/v1/accountInactiveOrders?account_index={a}&market_id=0&limit=100", tok,
         non_empty("orders", "an inactive order of account A")),
        ("candles", "/api/v1/candles?market_id=0&resolution=1m&count_back=100", None, None),
        ("fundings", "/api/v1/fundings?market_id=0", None, None),
        ("funding_rates", "/api/v1/funding-rates", None, None),
        ("account", f"/api/v1/account?by=index&value={a}", None, None),
        ("account", f"/api/v1/account?by=l1_address&value={l1}", None, None),
        ("account", f"/api/v1/account?by=index&value={b}", None, None),
        ("accounts_by_l1_address", f"/api/v1/accountsByL1Address?l1_address={l1}", None, None),
        ("apikeys", f"/api/v1/apikeys?account_index={a}&api_key_index=255", None, None),
        ("next_nonce", f"/api/v1/nextNonce?account_index={a}&api_key_index=254", None, None),
        ("block", "/api/v1/block?by=height&value=1", None, None),
        ("blocks", "/api/v1/blocks?limit=10", None, None),
        ("current_height", "/api/v1/currentHeight", None, None),
        ("deposit_history", f"/api/v1/deposit/history?account_index={a}&l1_address={l1}", tok,
         non_empty("deposits", "a deposit of account A")),
        ("withdraw_history", f"/api/v1/withdraw/history?account_index={a}", tok,
         non_empty("withdraws", "a withdrawal of account A")),
        ("transfer_history", f"/api/v1/transfer/history?account_index={a}", tok,
         non_empty("transfers", "a transfer of account A")),
    ]


def run_rest(args, val, rep):
    bodies = {}
    for name, path, token, scene in rest_checks(args):
        bodies[path] = check_rest(args, val, rep, name, path, token, scene=scene)
    recent = bodies.get("/api/v1/recentTrades?market_id=0&limit=100")
    trades = recent.get("trades") if isinstance(recent, dict) else None
    first = trades[0] if isinstance(trades, list) and trades else None
    tx_hash = first.get("tx_hash") if isinstance(first, dict) else None
    if isinstance(tx_hash, str) and tx_hash:
        check_rest(args, val, rep, "tx", "/api/v1/tx?by=hash&value=" + urllib.parse.quote(tx_hash))
    else:
        rep.fail("tx", "/api/v1/tx?by=hash", ["no tx_hash in recentTrades' first trade to look up"])
    # Rejections: HTTP 400 with a ResultCode body.
    check_rest(args, val, rep, "result_code", "/api/v1/orderBookOrders", status=400)
    check_rest(args, val, rep, "result_code", "/api/v1/sendTx",
               form={"tx_type": "14", "tx_info": "not-json"}, status=400)


# ---- WebSocket ----

def ws_channels(args):
    """(channel, needs auth) in subscription order."""
    a = args.account
    return [("order_book/0", False), ("trade/0", False), ("market_stats/0", False),
            ("market_stats/all", False), (f"account_all/{a}", False), (f"user_stats/{a}", False),
            (f"account_all_trades/{a}", True), (f"account_all_orders/{a}", True),
            (f"account_orders/0/{a}", True), (f"account_all_assets/{a}", True), ("height", False)]


# What a fill of --account's resting order on market 0 pushes on the channels subscribed.
UPDATED_BY_TRADE = ["update/order_book", "update/trade", "update/account_all",
                    "update/user_stats", "update/account_all_trades",
                    "update/account_all_orders", "update/account_orders"]

SENDTX = {"type": "jsonapi/sendtx", "data": {"id": "1", "tx_type": 14, "tx_info": {"bad": 1}}}


def is_server_ping(raw):
    try:
        frame = parse_json(raw)
    except (ValueError, TypeError):
        return False
    return isinstance(frame, dict) and frame.get("type") == "ping"


async def ws_session(args, ws):
    """Sends everything, collects raw frames. Returns (frames, error text or None)."""
    import websockets  # Debian python3-websockets (10.4)
    frames = []
    try:
        frames.append(await asyncio.wait_for(ws.recv(), WS_FIRST_FRAME_S))
        for channel, auth in ws_channels(args):
            msg = {"type": "subscribe", "channel": channel}
            if auth:
                msg["auth"] = args.token
            await ws.send(json.dumps(msg))
        await ws.send(json.dumps({"type": "ping"}))
        await ws.send(json.dumps(SENDTX))
        trade = None
        if args.trade_cmd:  # a fill while subscribed: the channels' update frames follow
            await asyncio.sleep(0.5)
            trade = await asyncio.create_subprocess_shell(
                args.trade_cmd, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WS_COLLECT_S
        while (left := deadline - loop.time()) > 0:
            try:
                raw = await asyncio.wait_for(ws.recv(), left)
            except asyncio.TimeoutError:
                break
            frames.append(raw)
            if is_server_ping(raw):
                await ws.send(json.dumps({"type": "pong"}))  # keep-alive, answered as the SDK does
        if trade is not None:
            _, err = await trade.communicate()
            if trade.returncode != 0:
                return frames, f"--trade-cmd failed ({trade.returncode}): {err.decode()[-300:]}"
    except asyncio.TimeoutError:
        return frames, f"no frame within {WS_FIRST_FRAME_S:.0f} s of connecting"
    except websockets.exceptions.ConnectionClosed as e:
        return frames, f"connection closed: {e}"
    return frames, None


def classify(val, frame):
    """(schema name, where, extra problems) for one parsed frame."""
    if not isinstance(frame, dict):
        return None, "?", [f"frame is not a JSON object: {snippet(json.dumps(frame))}"]
    ftype = frame.get("type")
    if ftype is None and "error" in frame:
        where = f"error id={frame.get('id')}"
        if frame.get("id") == SENDTX["data"]["id"]:
            return "ws_error", where, []  # the expected rejection of the bad jsonapi/sendtx
        return "ws_error", where, [f"unexpected error frame: {snippet(json.dumps(frame))}"]
    if not isinstance(ftype, str):
        return None, "?", [f"frame has no string type: {snippet(json.dumps(frame))}"]
    name = "ws_" + ftype.replace("/", "_")
    if name not in val.endpoints:
        return None, ftype, [f"no schema for frame type {ftype}"]
    channel = frame.get("channel")
    return name, channel if isinstance(channel, str) else ftype, []


def judge_frames(val, rep, frames):
    """Validates every frame; one report line per (schema, channel) group. Returns parsed frames."""
    groups = {}  # (name, where) -> [frame count, problems]
    parsed = []
    for i, raw in enumerate(frames):
        try:
            frame = parse_json(raw)
        except ValueError as e:
            groups.setdefault(("ws_frame", "?"), [0, []])[1].append(f"frame {i} is not JSON ({e})")
            continue
        parsed.append(frame)
        name, where, problems = classify(val, frame)
        if i == 0 and name != "ws_connected":
            problems = problems + [f"first frame is not 'connected': {snippet(raw)}"]
        if name is not None:
            problems = problems + val.validate(name, frame)
        group = groups.setdefault((name or "ws_frame", where), [0, []])
        group[0] += 1
        group[1].extend(problems)
    for (name, where), (count, problems) in groups.items():
        rep.result(name, f"{where} ({count} frame{'s' if count != 1 else ''})", problems)
    return parsed


def check_arrivals(args, rep, parsed):
    """Each subscribe's subscribed/* frame, the pong and the sendtx reply must have arrived."""
    types = collections.Counter(f.get("type") for f in parsed if isinstance(f, dict))
    wanted = collections.defaultdict(list)
    for channel, _ in ws_channels(args):
        wanted["subscribed/" + channel.split("/")[0]].append(channel)
    for ftype, channels in wanted.items():
        if types[ftype] < len(channels):
            rep.fail("ws_" + ftype.replace("/", "_"), ",".join(channels),
                     [f"{types[ftype]} {ftype} frame(s) for {len(channels)} subscription(s) "
                      f"within {WS_COLLECT_S:.0f} s"])
    if types["pong"] == 0:
        rep.fail("ws_pong", "ping", ["no pong after a ping"])
    if args.trade_cmd:  # the fill must have reached every channel it touches as an update
        for ftype in UPDATED_BY_TRADE:
            if types[ftype] == 0:
                rep.fail("ws_" + ftype.replace("/", "_"), "--trade-cmd",
                         [f"no {ftype} frame within {WS_COLLECT_S:.0f} s of the fill"])
    sendtx_id = SENDTX["data"]["id"]
    replied = types["jsonapi/sendtx"] > 0 or any(
        isinstance(f, dict) and "error" in f and f.get("id") == sendtx_id for f in parsed)
    if not replied:
        rep.fail("ws_jsonapi_sendtx", "jsonapi/sendtx",
                 [f"no jsonapi/sendtx frame nor error frame with id {sendtx_id}"])


async def ws_connect_and_collect(args):
    import websockets  # Debian python3-websockets (10.4)
    kwargs = {"max_size": 64 << 20}
    if args.ws.startswith("wss://") and args.cafile:
        kwargs["ssl"] = tls_context(args)  # wss without --cafile: the default verified context
    async with websockets.connect(args.ws, **kwargs) as ws:
        return await ws_session(args, ws)


def run_ws(args, val, rep):
    try:
        frames, error = asyncio.run(ws_connect_and_collect(args))
    except ImportError as e:
        rep.fail("ws", args.ws, [f"the websockets package is missing: {e}"])
        return
    except Exception as e:  # refused, TLS, handshake: any of them means no WS check ran
        rep.fail("ws", args.ws, [f"cannot connect: {e!r}"])
        return
    if error:
        rep.fail("ws", args.ws, [error])
    parsed = judge_frames(val, rep, frames)
    check_arrivals(args, rep, parsed)


# ---- main ----

def report_gaps(val, rep):
    """One line per listed gap: still missing (with why), or served now (a failure)."""
    for gap, why in sorted(val.gaps.items()):
        if val.gap_served[gap]:
            rep.fail("gap", gap, [f"served in {val.gap_served[gap]} objects: remove it from the "
                                  "gaps file"])
        elif val.gap_missing[gap]:
            print(f"gap {gap}: missing in {val.gap_missing[gap]} objects ({why})", flush=True)
        else:
            rep.fail("gap", gap, ["no object of the model was checked: the gap is not exercised"])


def parse_args():
    p = argparse.ArgumentParser(description="Lighter schema check of a running tachyon server")
    p.add_argument("--http", required=True, help="REST base, e.g. http://127.0.0.1:P")
    p.add_argument("--ws", required=True, help="WebSocket URL, e.g. ws://127.0.0.1:P/stream")
    p.add_argument("--schemas", required=True, help="tests/api/schemas/lighter_models.json")
    p.add_argument("--account", required=True, type=int)
    p.add_argument("--token", required=True, help="auth token of --account")
    p.add_argument("--account2", required=True, type=int)
    p.add_argument("--token2", required=True, help="auth token of --account2")
    p.add_argument("--l1", required=True, help="L1 address of --account (0x + 40 hex)")
    p.add_argument("--cafile", help="CA for https:// and wss:// URLs")
    p.add_argument("--trade-cmd", help="shell command, run once subscribed, that fills an order "
                   "of --account on market 0 (the update frames are then required and checked)")
    p.add_argument("--gaps", help="JSON object: required \"Model.field\" not served yet -> why")
    args = p.parse_args()
    if not re.fullmatch(r"0x[0-9a-fA-F]{40}", args.l1):
        p.error("--l1 must be 0x followed by 40 hex digits")
    return args


def main():
    args = parse_args()
    rep = Report()
    try:
        with open(args.schemas, encoding="utf-8") as f:
            doc = parse_json(f.read())
        gaps = {}
        if args.gaps:
            with open(args.gaps, encoding="utf-8") as f:
                gaps = parse_json(f.read())
        val = Validator(doc, gaps)
    except (OSError, ValueError, SchemaError) as e:
        rep.fail("schemas", args.schemas, [str(e)])
        sys.exit(1)
    run_rest(args, val, rep)
    run_ws(args, val, rep)
    report_gaps(val, rep)
    if rep.failed:
        sys.exit(1)
    print("done", flush=True)


if __name__ == "__main__":
    main()
