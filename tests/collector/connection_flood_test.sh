#!/usr/bin/env bash
# Overload (issue 13): a flood of connections past the connection cap. The
# collector runs with a small open-file limit (ulimit -n 320), so its cap is
# (320 - 64) / 2 = 128 connections, and as many refusals in flight.
# Checks: of 300 silent connections, exactly 128 are held open (served,
# waiting for a header); the others are answered 503 with Retry-After and a
# JSON error at once, or (past the refusals in flight) closed at once: none
# is left waiting. An honest request meanwhile gets its 503 within a second
# instead of timing out; once the flood goes, it is served, and the refusals
# were counted as "overloaded".
set -euo pipefail
collector=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
collector_pid=""
cleanup() {
  kill "$collector_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$here/../../scripts/lib/collector.sh"
soft=$(ulimit -Sn)
ulimit -Sn 320
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:rr:1 \
  --log-requests false
ulimit -Sn "$soft"
grep -q "serving at most 128 connections at once, not 4096" "$work/server.log" ||
  { cat "$work/server.log" >&2; echo "FAIL: the cap was not lowered to fit ulimit -n" >&2; exit 1; }

/usr/bin/python3 - "$collector_port" <<'PY'
import json, selectors, socket, sys, time, urllib.request

port, flood, cap = int(sys.argv[1]), 300, 128

def honest(path="/healthz"):
    """One request on a new connection: (status, headers, body, seconds)."""
    start = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: collector\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    head = data.split(b"\r\n\r\n")[0].decode()
    lines = head.split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return int(lines[0].split(" ")[1]), headers, data, time.monotonic() - start

socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(flood)]
# What each got within a second: an answer, an end of stream, or nothing.
selector = selectors.DefaultSelector()
received = {s: b"" for s in socks}
ended = set()
for s in socks:
    s.setblocking(False)
    selector.register(s, selectors.EVENT_READ)
deadline = time.monotonic() + 1.0
while time.monotonic() < deadline:
    for key, _ in selector.select(timeout=max(0.0, deadline - time.monotonic())):
        try:
            chunk = key.fileobj.recv(4096)
        except ConnectionResetError:
            chunk = b""
        if chunk:
            received[key.fileobj] += chunk
        else:
            ended.add(key.fileobj)
            selector.unregister(key.fileobj)
refused = [s for s in socks if received[s]]
closed = [s for s in socks if s in ended and not received[s]]
held = [s for s in socks if s not in ended and not received[s]]
print(f"{flood} connections: {len(held)} held, {len(refused)} answered 503, "
      f"{len(closed)} closed unanswered")
assert len(held) == cap, f"{len(held)} connections served, the cap is {cap}"
assert refused, "no connection past the cap was answered"
for s in refused:
    head, _, body = received[s].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503 "), head
    assert b"\r\nRetry-After: 1\r\n" in head + b"\r\n", head
    assert b"limit of 128 connections" in body, body

# The refusals in flight are over (each lingers a second at most): an
# honest request is refused at once, not left to time out.
time.sleep(1.5)
status, headers, _, seconds = honest()
print(f"an honest request during the flood: {status} in {seconds * 1000:.0f} ms")
assert status == 503 and headers.get("retry-after") == "1", (status, headers)
assert seconds < 1.0, seconds

for s in socks:
    s.close()
time.sleep(0.5)
status, _, _, seconds = honest()
print(f"after the flood: {status} in {seconds * 1000:.0f} ms")
assert status == 200, status
metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
overloaded = next(float(l.split(" ")[1]) for l in metrics.splitlines()
                  if l.startswith('blur_collector_requests_refused_total{reason="overloaded"}'))
print(f"refusals counted as overloaded: {overloaded:.0f}")
assert overloaded == len(refused) + 1, (overloaded, len(refused))
PY
