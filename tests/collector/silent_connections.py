#!/usr/bin/env python3
"""Silent connections from one source address, held for as long as the test
likes (issue 26, attack 7): COUNT connections from SOURCE (any 127.x address
on Linux) to 127.0.0.1:PORT that never send a byte. One the server closes
unanswered (its header deadline) is opened again at once, as an attacker
would; one answered (a refusal) is opened again two seconds later.

    silent_connections.py PORT SOURCE COUNT STATUS_FILE STOP_FILE

Writes STATUS_FILE (JSON, replaced every half second): "ready" once every
connection has been opened and has had a second to be answered; "held"
(open, nothing received for a second or more), "answered" (connections that
received bytes: each an HTTP answer), the statuses and first body of those
answers, "missing_retry_after", "connect_failures". When STOP_FILE exists
it opens no more connections, waits two seconds and counts, from the
kernel's table (/proc/net/tcp), the server's established connections from
SOURCE ("server_held": those it serves, unanswered; a refused one is shut
down at once), then closes everything and prints the status.
"""
import asyncio
import json
import os
import sys
import time


class Tally:
    def __init__(self):
        self.opened = 0
        self.open_since = {}  # task -> when its connection opened (if open, unanswered)
        self.answered = 0
        self.statuses = {}
        self.first_body = {}
        self.missing_retry_after = 0
        self.connect_failures = 0
        self.closed_unanswered = 0
        self.peak_held = 0

    def held(self):
        now = time.monotonic()
        return sum(1 for since in self.open_since.values() if now - since >= 1.0)


def server_established(port, source):
    """The server side's established TCP connections on PORT from SOURCE."""
    def hex_address(address, port):
        return "".join(f"{int(b):02X}" for b in reversed(address.split("."))) + f":{port:04X}"
    local_suffix = f":{port:04X}"
    remote_prefix = hex_address(source, 0).split(":")[0] + ":"
    count = 0
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            local, remote, state = fields[1], fields[2], fields[3]
            if state == "01" and local.endswith(local_suffix) and remote.startswith(remote_prefix):
                count += 1
    return count


async def one_client(index, port, source, tally, stopping, frozen):
    while not stopping.is_set() and not frozen.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                           local_addr=(source, 0))
        except OSError:
            tally.connect_failures += 1
            await asyncio.sleep(0.5)
            continue
        tally.opened += 1
        tally.open_since[index] = time.monotonic()
        data = b""
        read = asyncio.ensure_future(reader.read())  # until the server closes
        while not read.done() and not stopping.is_set():
            await asyncio.wait({read}, timeout=0.5)
        tally.open_since.pop(index, None)
        if read.done() and not read.cancelled() and read.exception() is None:
            data = read.result()
        else:
            read.cancel()
        writer.close()
        if stopping.is_set():
            return
        if not data:
            tally.closed_unanswered += 1
            continue
        tally.answered += 1
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = lines[0].split(" ")[1] if " " in lines[0] else "?"
        tally.statuses[status] = tally.statuses.get(status, 0) + 1
        tally.first_body.setdefault(status, body.decode("utf-8", "replace"))
        if not any(line.lower().startswith("retry-after:") for line in lines[1:]):
            tally.missing_retry_after += 1
        await asyncio.sleep(2.0)


async def main():
    port, source, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    status_file, stop_file = sys.argv[4], sys.argv[5]
    tally, stopping, frozen = Tally(), asyncio.Event(), asyncio.Event()
    started = time.monotonic()
    tasks = []
    for i in range(count):
        tasks.append(asyncio.ensure_future(one_client(i, port, source, tally, stopping, frozen)))
        if i % 100 == 99:
            await asyncio.sleep(0)  # let the first ones connect
    all_opened_at = None

    def status(ready):
        held = tally.held()
        tally.peak_held = max(tally.peak_held, held)
        return {"ready": ready, "count": count, "opened": tally.opened, "held": held,
                "peak_held": tally.peak_held, "answered": tally.answered,
                "statuses": tally.statuses, "first_body": tally.first_body,
                "missing_retry_after": tally.missing_retry_after,
                "closed_unanswered": tally.closed_unanswered,
                "connect_failures": tally.connect_failures,
                "seconds": round(time.monotonic() - started, 1)}

    while not os.path.exists(stop_file):
        await asyncio.sleep(0.5)
        if all_opened_at is None and tally.opened >= count:
            all_opened_at = time.monotonic()
        ready = all_opened_at is not None and time.monotonic() - all_opened_at >= 1.5
        with open(status_file + ".tmp", "w") as out:
            json.dump(status(ready), out)
        os.replace(status_file + ".tmp", status_file)
    frozen.set()  # no new connections: what the server holds settles
    await asyncio.sleep(2.0)
    final = status(True)
    final["server_held"] = server_established(port, source)
    stopping.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(final))


asyncio.run(main())
