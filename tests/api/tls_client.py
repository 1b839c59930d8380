#!/usr/bin/python3
"""TLS acceptance: tachyon's public listener over HTTPS and WSS, as a Python client reaches a venue.
Usage: tls_client.py --port P --plain-port Q --pid PID --cert C --key K --ca CA --next-cert C2 --next-key K2
  --port        the TLS listener; --plain-port the plain loopback listener (same API)
  --cert/--key  the files the server loaded (this script overwrites them with --next-*, then SIGHUPs)
  --ca          the CA that signed both certificates
Checks, printing "ok ..." per check and "FAIL ..." (exit 1) on the first failure:
  1. REST over HTTPS (orderBookDetails, exchangeStats) with the CA verified, hostname 127.0.0.1;
  2. WSS: `connected`, a subscribed order_book/0 snapshot, a JSON ping answered by a pong;
  3. plain HTTP sent to the TLS port gets HTTP 400 naming https://, and the server stays up;
  4. the plain listener answers the same REST;
  5. SIGHUP with new certificate files: new connections get the new certificate, while the WSS
     connection opened before keeps working (ping / pong after the reload).
"""
import argparse
import asyncio
import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import sys
import time
import urllib.request

import websockets


def fail(what, got, want):
    print(f"FAIL {what}: got {got!r} want {want!r}", flush=True)
    sys.exit(1)


def ok(what):
    print(f"ok {what}", flush=True)


def https_get(port, path, ctx):
    with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", context=ctx, timeout=10) as r:
        return r.status, json.loads(r.read())


def peer_fingerprint(port, ctx):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
            return hashlib.sha256(t.getpeercert(binary_form=True)).hexdigest()


def file_fingerprint(pem_path):
    der = ssl.PEM_cert_to_DER_cert(open(pem_path).read())
    return hashlib.sha256(der).hexdigest()


def plain_to_tls_port(port):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /api/v1/orderBookDetails HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return data.decode("latin-1")


async def recv_type(ws, want, what):
    end = time.monotonic() + 10
    while time.monotonic() < end:
        msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=end - time.monotonic()))
        if msg.get("type") == want:
            return msg
    fail(what, "no frame", want)


async def main(a):
    ctx = ssl.create_default_context(cafile=a.ca)  # verifies the chain and the host (an IP SAN)
    status, body = https_get(a.port, "/api/v1/orderBookDetails", ctx)
    if status != 200 or not body.get("order_book_details"):
        fail("GET orderBookDetails over HTTPS", (status, body), "200 with markets")
    status, body = https_get(a.port, "/api/v1/exchangeStats", ctx)
    if status != 200 or "total" not in body:
        fail("GET exchangeStats over HTTPS", (status, body), "200 with total")
    ok("REST over HTTPS, certificate verified against the CA")

    async with websockets.connect(f"wss://127.0.0.1:{a.port}/stream", ssl=ctx) as ws:
        await recv_type(ws, "connected", "WSS connected frame")
        await ws.send(json.dumps({"type": "subscribe", "channel": "order_book/0"}))
        snap = await recv_type(ws, "subscribed/order_book", "WSS order_book snapshot")
        if "order_book" not in snap:
            fail("WSS order_book snapshot", snap, "an order_book member")
        await ws.send(json.dumps({"type": "ping"}))
        await recv_type(ws, "pong", "WSS pong")
        ok("WSS: connected, order_book/0 snapshot, ping / pong")

        reply = plain_to_tls_port(a.port)
        if not reply.startswith("HTTP/1.1 400") or "https://" not in reply:
            fail("plain HTTP to the TLS port", reply[:200], "HTTP/1.1 400 naming https://")
        status, _ = https_get(a.port, "/health/live", ctx)
        if status != 200:
            fail("the server after a plain request on its TLS port", status, 200)
        ok("plain HTTP to the TLS port: a clear 400, and the server stays up")

        with urllib.request.urlopen(f"http://127.0.0.1:{a.plain_port}/api/v1/orderBookDetails",
                                    timeout=10) as r:
            if r.status != 200 or not json.loads(r.read()).get("order_book_details"):
                fail("plain listener", r.status, 200)
        ok("the plain loopback listener serves the same API")

        before = peer_fingerprint(a.port, ctx)
        if before != file_fingerprint(a.cert):
            fail("the served certificate", before, file_fingerprint(a.cert))
        shutil.copyfile(a.next_cert, a.cert + ".new")
        shutil.copyfile(a.next_key, a.key + ".new")
        os.replace(a.key + ".new", a.key)
        os.replace(a.cert + ".new", a.cert)
        os.kill(a.pid, signal.SIGHUP)
        want = file_fingerprint(a.next_cert)
        end = time.monotonic() + 10
        now = before
        while now != want and time.monotonic() < end:
            await asyncio.sleep(0.05)
            now = peer_fingerprint(a.port, ctx)
        if now != want:
            fail("the certificate after SIGHUP", now, want)
        await ws.send(json.dumps({"type": "ping"}))
        await recv_type(ws, "pong", "WSS pong on the connection opened before the reload")
        status, _ = https_get(a.port, "/health/live", ctx)
        if status != 200:
            fail("HTTPS after the reload", status, 200)
        ok("SIGHUP: new connections get the new certificate; the open WSS connection keeps working")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    for name in ("--cert", "--key", "--ca", "--next-cert", "--next-key"):
        p.add_argument(name, required=True)
    for name in ("--port", "--plain-port", "--pid"):
        p.add_argument(name, type=int, required=True)
    asyncio.run(main(p.parse_args()))
    print("done", flush=True)
