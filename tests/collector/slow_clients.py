#!/usr/bin/env python3
"""Slowloris clients for tests: COUNT connections to 127.0.0.1:PORT, from
127.0.0.2 (an attacker's address, not the fleet's), each sending an HTTP
header that never ends, one byte a second. A connection the server closes is
opened again at once, as an attacker would.

    slow_clients.py PORT COUNT STATUS_FILE STOP_FILE

Writes STATUS_FILE (JSON, replaced every half second): "ready" once COUNT
connections have been open at the same time, how many the server closed and
how long they had lived, how many got any answer bytes. Stops when
STOP_FILE exists, writes the status a last time and prints it.
"""
import asyncio
import json
import os
import sys
import time

HEADER = b"POST /v1/reports HTTP/1.1\r\nHost: collector\r\nX-Pad: " + b"a" * 100000


class Tally:
    def __init__(self):
        self.open = 0
        self.peak_open = 0
        self.opened = 0
        self.connect_failures = 0
        self.closed_by_server = 0
        self.lifetimes = []  # seconds, of the connections the server closed
        self.answered = 0    # connections that received any bytes
        self.bytes_sent = 0


async def one_client(port, tally, stopping):
    while not stopping.is_set():
        # Before connecting: the server's header deadline starts later, so a
        # lifetime is never shorter than the deadline, however busy the loop.
        opened = time.monotonic()
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=("127.0.0.2", 0))  # an address of its own
        except OSError:
            tally.connect_failures += 1
            await asyncio.sleep(0.1)
            continue
        tally.opened += 1
        tally.open += 1
        tally.peak_open = max(tally.peak_open, tally.open)
        closed = False
        try:
            read = asyncio.ensure_future(reader.read(4096))
            for byte in range(len(HEADER)):
                writer.write(HEADER[byte:byte + 1])
                await writer.drain()
                tally.bytes_sent += 1
                done, _ = await asyncio.wait({read}, timeout=1.0)
                if done:
                    if read.result():
                        tally.answered += 1
                    closed = True
                    break
                if stopping.is_set():
                    break
            read.cancel()
        except (ConnectionError, OSError):
            closed = True
        tally.open -= 1
        if closed and not stopping.is_set():
            tally.closed_by_server += 1
            tally.lifetimes.append(time.monotonic() - opened)
        writer.close()


def status(tally, count, started):
    return {
        "ready": tally.peak_open >= count,
        "open": tally.open,
        "peak_open": tally.peak_open,
        "opened": tally.opened,
        "connect_failures": tally.connect_failures,
        "closed_by_server": tally.closed_by_server,
        "min_lifetime": min(tally.lifetimes, default=None),
        "max_lifetime": max(tally.lifetimes, default=None),
        "answered": tally.answered,
        "bytes_sent": tally.bytes_sent,
        "seconds": time.monotonic() - started,
    }


def write_status(path, data):
    with open(path + ".tmp", "w") as out:
        json.dump(data, out)
    os.replace(path + ".tmp", path)


async def main():
    port, count = int(sys.argv[1]), int(sys.argv[2])
    status_file, stop_file = sys.argv[3], sys.argv[4]
    tally = Tally()
    stopping = asyncio.Event()
    started = time.monotonic()
    clients = [asyncio.ensure_future(one_client(port, tally, stopping)) for _ in range(count)]
    while not os.path.exists(stop_file):
        write_status(status_file, status(tally, count, started))
        await asyncio.sleep(0.5)
    stopping.set()
    await asyncio.wait(clients, timeout=3)
    final = status(tally, count, started)
    write_status(status_file, final)
    print(json.dumps(final))


if __name__ == "__main__":
    asyncio.run(main())
