#!/usr/bin/env python3
"""One device's batch re-POSTed over many keep-alive connections at once, as
fast as the collector answers (the attacker of issue 26, attack 1).

    same_device_flood.py PORT BATCH_FILE TOKEN CONNECTIONS SECONDS READY_FILE STOP_FILE

Every connection sends the same batch (one device nonce, with its device
token), reads the answer and sends it again, until STOP_FILE exists or for
SECONDS at most; a connection the server closes is opened again. READY_FILE
is written once every connection has had its first answer. Prints one JSON
line: the requests answered by status, how many 429s lacked Retry-After,
the first body of each status, and the connections lost without an
answer.
"""
import json
import os
import selectors
import socket
import sys
import time

port, batch_file, token = int(sys.argv[1]), sys.argv[2], sys.argv[3]
connections, seconds = int(sys.argv[4]), float(sys.argv[5])
ready_file, stop_file = sys.argv[6], sys.argv[7]
body = open(batch_file, "rb").read()
request = (f"POST /v1/reports HTTP/1.1\r\nHost: collector\r\n"
           f"Authorization: Bearer {token}\r\n"
           f"Content-Type: application/x-protobuf\r\n"
           f"Content-Length: {len(body)}\r\n\r\n").encode() + body

selector = selectors.DefaultSelector()
statuses, first_body = {}, {}
missing_retry_after = lost = 0
answered_once = set()
ready_written = False


def connect(slot):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(request)
    s.setblocking(False)
    selector.register(s, selectors.EVENT_READ, {"slot": slot, "buffer": b""})


def answer_in(buffer):
    """(status, headers, body, rest) once a whole answer is in, else None."""
    head_end = buffer.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    lines = buffer[:head_end].decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    length = int(headers.get("content-length", "0"))
    if len(buffer) < head_end + 4 + length:
        return None
    body_end = head_end + 4 + length
    return int(lines[0].split(" ")[1]), headers, buffer[head_end + 4:body_end], buffer[body_end:]


started = time.monotonic()
for slot in range(connections):
    connect(slot)
deadline = time.monotonic() + seconds
next_stop_check = 0.0
while time.monotonic() < deadline:
    if time.monotonic() >= next_stop_check:
        if os.path.exists(stop_file):
            break
        next_stop_check = time.monotonic() + 0.1
    for key, _ in selector.select(timeout=0.2):
        s, state = key.fileobj, key.data
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, BlockingIOError):
            chunk = b""
        if not chunk:  # closed by the server: open another
            if state["buffer"]:
                lost += 1
            selector.unregister(s)
            s.close()
            connect(state["slot"])
            continue
        state["buffer"] += chunk
        parsed = answer_in(state["buffer"])
        if parsed is None:
            continue
        status, headers, answer_body, state["buffer"] = parsed
        statuses[status] = statuses.get(status, 0) + 1
        first_body.setdefault(status, answer_body.decode("utf-8", "replace"))
        if status == 429 and "retry-after" not in headers:
            missing_retry_after += 1
        answered_once.add(state["slot"])
        if not ready_written and len(answered_once) == connections:
            open(ready_file, "w").write("ready\n")
            ready_written = True
        if headers.get("connection", "").lower() == "close":
            selector.unregister(s)
            s.close()
            connect(state["slot"])
        else:
            s.setblocking(True)
            s.sendall(request)
            s.setblocking(False)
for key in list(selector.get_map().values()):
    key.fileobj.close()
print(json.dumps({"connections": connections, "seconds": round(time.monotonic() - started, 2),
                  "answered": sum(statuses.values()),
                  "status": {str(k): v for k, v in sorted(statuses.items())},
                  "missing_retry_after": missing_retry_after, "lost": lost,
                  "first_body": {str(k): v for k, v in sorted(first_body.items())}}))
