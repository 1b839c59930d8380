#!/usr/bin/env python3
"""Helpers of bench/api/stalled_readers.sh (Python 3 standard library only).

  stalled_readers.py readers --port P [--count 100] [--hold 20] [--channel order_book/0]
                             [--rcvbuf 4096] [--mss 1448]
      Opens `count` WebSocket connections to 127.0.0.1:P/stream with a small receive buffer and
      Ethernet-sized segments (as a reader across a network: loopback's own would let the server's
      kernel hold ~1.4 MB of each reader's stream before the server's queue sees any), subscribes each to `channel`, then never reads. After `hold` seconds (or SIGTERM) it reads
      whatever each socket still holds, without waiting, to learn which ones the server closed (end
      of stream or reset) and which are still open, closes them all ("they leave") and prints one
      JSON line: {"opened": N, "closed_by_server": K, "open_at_leave": M, "leave_unix": T}.

  stalled_readers.py rss --pid PID --out FILE
      Samples VmRSS of PID (/proc/PID/status) every 250 ms into FILE as "unix_time kib" lines
      until the process exits.

  stalled_readers.py summary --dir RUN_DIR
      Reads a run's files (rss.tsv, marks.json, report.json, metrics.txt, readers.json) and prints
      the run's row as one JSON line.

  stalled_readers.py table --rows ROWS_JSONL
      The rows as a Markdown table, then stalled / baseline per pair.
"""
import argparse
import base64
import errno
import json
import os
import select
import signal
import socket
import sys
import time


def ws_connect(port, channel, rcvbuf, mss):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connect: a small window
    if mss > 0:  # Ethernet-sized segments: loopback's 64 KiB ones let the server's kernel buffer
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)  # ~1.4 MB per reader
    s.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        ("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:  # one byte at a time: nothing past the response is taken
        b = s.recv(1)
        if not b:
            raise ConnectionError("closed during the handshake")
        head += b
    if b" 101 " not in head.split(b"\r\n", 1)[0]:
        raise ConnectionError(head.decode(errors="replace"))
    payload = json.dumps({"type": "subscribe", "channel": channel}).encode()
    mask = os.urandom(4)
    frame = bytes([0x81, 0x80 | len(payload)]) + mask
    frame += bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    s.sendall(frame)
    return s


def drain_state(s, deadline):
    """Reads what the socket holds without blocking: 'closed' (end of stream or reset) or 'open'."""
    s.setblocking(False)
    while time.time() < deadline:
        try:
            data = s.recv(1 << 20)
        except BlockingIOError:
            r, _, _ = select.select([s], [], [], 0.05)
            if not r:
                return "open"
            continue
        except OSError as e:
            if e.errno in (errno.ECONNRESET, errno.EPIPE):
                return "closed"
            raise
        if not data:
            return "closed"
    return "open"


def cmd_readers(a):
    socks = []
    for _ in range(a.count):
        socks.append(ws_connect(a.port, a.channel, a.rcvbuf, a.mss))
    print(json.dumps({"connected": len(socks), "unix": time.time()}), flush=True)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    end = time.time() + a.hold
    while time.time() < end and not stop["now"]:
        time.sleep(0.1)
    deadline = time.time() + 10
    states = [drain_state(s, deadline) for s in socks]
    leave = time.time()
    for s in socks:
        s.close()
    print(json.dumps({"opened": len(socks), "closed_by_server": states.count("closed"),
                      "open_at_leave": states.count("open"), "leave_unix": leave}), flush=True)


def cmd_rss(a):
    path = f"/proc/{a.pid}/status"
    with open(a.out, "w") as out:
        while True:
            try:
                with open(path) as f:
                    kib = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
            except (OSError, StopIteration):
                return
            out.write(f"{time.time():.3f} {kib}\n")
            out.flush()
            time.sleep(0.25)


def rss_at(samples, t):
    """The last sample at or before t (KiB)."""
    best = samples[0][1]
    for ts, kib in samples:
        if ts > t:
            break
        best = kib
    return best


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def cmd_summary(a):
    d = a.dir
    marks = json.load(open(os.path.join(d, "marks.json")))
    samples = [tuple(map(float, l.split())) for l in open(os.path.join(d, "rss.tsv")) if l.strip()]
    rep = json.load(open(os.path.join(d, "report.json")))
    metrics = open(os.path.join(d, "metrics.txt")).read()
    readers = {}
    if os.path.exists(os.path.join(d, "readers.json")):
        lines = [l for l in open(os.path.join(d, "readers.json")) if "opened" in l]
        readers = json.loads(lines[-1]) if lines else {}
    start, leave, end = marks["start"], marks["leave"], marks["leave"] + marks["after"]
    window = [kib for ts, kib in samples if start <= ts <= end]
    fresh = rep["freshness"]["order_book"]["engine_to_client"]
    row = {
        "run": marks["run"],
        "rss_start_mib": rss_at(samples, start) / 1024,
        "rss_peak_mib": max(window) / 1024 if window else 0,
        "rss_leave_mib": rss_at(samples, leave) / 1024,
        "rss_after_mib": rss_at(samples, end) / 1024,
        "stalled": readers.get("opened", 0),
        "closed_by_server_seen": readers.get("closed_by_server", 0),
        "stall_resyncs": metric(metrics, "tachyon_ws_stall_resyncs_total"),
        "stall_closes": metric(metrics, "tachyon_ws_stall_closes_total"),
        "overflow_resyncs": metric(metrics, "tachyon_ws_slow_consumer_resyncs_total"),
        "overflow_closes": metric(metrics, "tachyon_ws_slow_consumer_closes_total"),
        "budget_closes": metric(metrics, "tachyon_ws_budget_closes_total"),
        "queued_peak_mib": marks.get("queued_peak", 0) / 2**20,
        "fresh_p50_us": fresh["p50_us"], "fresh_p99_us": fresh["p99_us"],
        "fresh_count": fresh["count"],
        "ack_p50_us": rep["ack"]["p50_us"], "ack_p99_us": rep["ack"]["p99_us"],
        "achieved_tps": rep["achieved_tps"], "unanswered": rep["unanswered"],
        "minflt": marks.get("minflt", 0), "maps": marks.get("maps", 0),
    }
    print(json.dumps(row))


def cmd_table(a):
    rows = [json.loads(l) for l in open(a.rows) if l.strip()]
    print("| run | RSS start / peak / +after MiB | after / start | queued peak MiB | closed: stall"
          " / overflow / budget (seen) | fresh p50 / p99 µs | ack p50 / p99 µs |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        closed = (f"{r['stall_closes']:.0f} / {r['overflow_closes']:.0f} / {r['budget_closes']:.0f}"
                  f" ({r['closed_by_server_seen']} of {r['stalled']})")
        print(f"| {r['run']} | {r['rss_start_mib']:.0f} / {r['rss_peak_mib']:.0f} / "
              f"{r['rss_after_mib']:.0f} | {r['rss_after_mib'] / r['rss_start_mib']:.2f} | "
              f"{r['queued_peak_mib']:.0f} | {closed} | {r['fresh_p50_us']} / {r['fresh_p99_us']} |"
              f" {r['ack_p50_us']} / {r['ack_p99_us']} |")
    by = {r["run"]: r for r in rows}
    print("\n| pair | RSS +after, stalled / baseline | fresh p50 / p99, stalled / baseline |"
          " ack p50 / p99, stalled / baseline |")
    print("|---|---|---|---|")
    for i in sorted({r["run"].split("-")[0] for r in rows}, key=int):
        s, b = by.get(f"{i}-stalled"), by.get(f"{i}-baseline")
        if not s or not b:
            continue
        q = lambda k: s[k] / b[k] if b[k] else float("nan")
        print(f"| {i} | {q('rss_after_mib'):.2f} | {q('fresh_p50_us'):.2f} / {q('fresh_p99_us'):.2f} | "
              f"{q('ack_p50_us'):.2f} / {q('ack_p99_us'):.2f} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("readers")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--count", type=int, default=100)
    r.add_argument("--hold", type=float, default=20)
    r.add_argument("--channel", default="order_book/0")
    r.add_argument("--rcvbuf", type=int, default=4096)
    r.add_argument("--mss", type=int, default=1448, help="TCP_MAXSEG (0: the route's)")
    s = sub.add_parser("rss")
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--out", required=True)
    m = sub.add_parser("summary")
    m.add_argument("--dir", required=True)
    t = sub.add_parser("table")
    t.add_argument("--rows", required=True)
    a = p.parse_args()
    {"readers": cmd_readers, "rss": cmd_rss, "summary": cmd_summary, "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
