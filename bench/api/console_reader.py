#!/usr/bin/python3
"""One open operator's console, as a browser keeps it: reads /console/ws state frames (and pings
like the page) until SIGTERM; then prints how many frames and bytes it got.
Usage: console_reader.py ws://127.0.0.1:ADMIN/console/ws"""
import asyncio
import json
import signal
import sys

import websockets  # Debian python3-websockets


async def main(url):
    frames = size = 0
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with websockets.connect(url, max_size=64 << 20) as ws:
        async def pinger():
            while True:
                await asyncio.sleep(1)
                await ws.send('{"type":"ping"}')
        ping = asyncio.create_task(pinger())
        while not stop.is_set():
            try:
                raw = await asyncio.wait_for(ws.recv(), 0.5)
            except asyncio.TimeoutError:
                continue
            if json.loads(raw).get("type") == "console":
                frames += 1
                size += len(raw)
        ping.cancel()
    print(f"console reader: {frames} frames, {size} bytes", flush=True)


asyncio.run(main(sys.argv[1]))
