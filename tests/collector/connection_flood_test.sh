#!/usr/bin/env bash
# Overload (issue 13): a flood of connections past the connection cap. The
# collector runs with a small open-file limit (ulimit -n 320), so its cap is
# (320 - 64) / 2 = 128 connections, and as many refusals in flight.
# Checks: of 300 silent connections, exactly 128 are held open (served,
# waiting for a header); the others are answered 503 with Retry-After and a
# JSON error, or (past the refusals in flight) closed: none is left waiting.
# An honest request meanwhile gets its 503 (once a refusal slot is free)
# instead of timing out; once the flood goes, it is served, and the refusals
# were counted as "overloaded".
# Events, not speed: each wait gives up only after HUNG seconds, which fails
# a hung test and nothing else; the measured times are printed.
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
HUNG = 60.0

def honest(path="/healthz"):
    """One request on a new connection: (status, headers, body, seconds);
    status None if the server closed it unanswered."""
    start = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=HUNG)
    data = b""
    try:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: collector\r\n\r\n".encode())
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, BrokenPipeError):
        pass
    s.close()
    if b"\r\n\r\n" not in data:
        return None, {}, data, time.monotonic() - start
    head = data.split(b"\r\n\r\n")[0].decode()
    lines = head.split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return int(lines[0].split(" ")[1]), headers, data, time.monotonic() - start

def honest_until(wanted):
    """Asks until the answer is one of `wanted` (or HUNG s pass): the
    answer, and how many 503s came before it."""
    deadline = time.monotonic() + HUNG
    refusals = 0
    while True:
        status, headers, data, seconds = honest()
        if status in wanted or time.monotonic() > deadline:
            return status, headers, seconds, refusals
        refusals += status == 503
        time.sleep(0.1)

socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(flood)]
# What each got: an answer, an end of stream, or nothing. Waits until all
# but `cap` have an answer or an end (a server holding more never gets
# there: HUNG fails it), then takes whatever else has arrived by then.
selector = selectors.DefaultSelector()
received = {s: b"" for s in socks}
ended = set()
for s in socks:
    s.setblocking(False)
    selector.register(s, selectors.EVENT_READ)
started = time.monotonic()
deadline = started + HUNG
def settled():
    return sum(1 for s in socks if received[s] or s in ended) >= flood - cap
while True:
    done = settled() or time.monotonic() >= deadline
    for key, _ in selector.select(timeout=0 if done else 0.05):
        try:
            chunk = key.fileobj.recv(4096)
        except ConnectionResetError:
            chunk = b""
        if chunk:
            received[key.fileobj] += chunk
        else:
            ended.add(key.fileobj)
            selector.unregister(key.fileobj)
    if done:
        break
print(f"the flood settled in {(time.monotonic() - started) * 1000:.0f} ms")
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

# Once a refusal in flight is over (each lingers a second at most), an
# honest request is refused with a 503, not left to time out. (Before
# that it may be closed unanswered: it asks again.)
status, headers, seconds, _ = honest_until({503})
print(f"an honest request during the flood: {status} in {seconds * 1000:.0f} ms")
assert status == 503 and headers.get("retry-after") == "1", (status, headers)

for s in socks:
    s.close()
# Served once the server has seen the flood go (a 503 until then).
status, _, seconds, late_refusals = honest_until({200})
print(f"after the flood: {status} in {seconds * 1000:.0f} ms ({late_refusals} 503s before)")
assert status == 200, status
metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
overloaded = next(float(l.split(" ")[1]) for l in metrics.splitlines()
                  if l.startswith('blur_collector_requests_refused_total{reason="overloaded"}'))
print(f"refusals counted as overloaded: {overloaded:.0f}")
assert overloaded == len(refused) + 1 + late_refusals, (overloaded, len(refused), late_refusals)
PY
