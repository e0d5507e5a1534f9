#!/usr/bin/env bash
# blur-collector serve stops on SIGTERM within --shutdown-timeout although
# a slow client is connected, answers the request in flight, exits 0.
#   serve_shutdown_test.sh BLUR_COLLECTOR REPORT_BATCH_KAT
# 1. A client dripping a header and an idle keep-alive client are connected,
#    and a POST is half sent; SIGTERM; the others are closed while the POST
#    is still unfinished, the rest of the POST is sent: it is answered 200
#    (Connection: close), the process exits 0 without waiting for its
#    deadline (an hour), and the batch is stored.
# 2. A client that never finishes its body: the process exits 0 at the
#    deadline (2 s), not before.
# Events, not speed: each half-sent request waits for the server's
# "100 Continue" (its header was read) before the signal, and every wait
# gives up only after $hung seconds, which fails a hung test and nothing else.
set -euo pipefail
collector=$1
kat=$2
work=$(mktemp -d)
collector_pid=""
trap '[ -n "$collector_pid" ] && kill -9 $collector_pid 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
batch_hex=$(awk '$1 == "one_report" { print $5 }' "$kat")

hung=60

# Waits (up to $hung s) for the collector to exit; sets $status and $took
# (seconds since $1, a date +%s.%N time).
wait_exit() {
  local waited=0
  while kill -0 "$collector_pid" 2>/dev/null && [ $waited -lt $((hung * 10)) ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -0 "$collector_pid" 2>/dev/null &&
    { echo "FAIL: still running $hung s after SIGTERM" >&2; exit 1; }
  status=0
  wait "$collector_pid" || status=$?
  took=$(echo "$(date +%s.%N) - $1" | bc)
  collector_pid=""
}

start_collector "$collector" "$work/serve1.log" --db "$work/blur.db" --metric 1:rr:1 \
  --shutdown-timeout 3600 --no-auth  # raw sockets post the KAT batch; auth: auth_api_test
# SIGTERM must reach the thread waiting for it: every other thread blocks it
# (bit 15 of SigBlk; the waiter shows it unblocked while in sigwait). A
# thread started before main() by a library (OpenBLAS's pool did) would
# not, and the signal could kill the process instead of stopping it.
unblocked=0
for status in /proc/"$collector_pid"/task/*/status; do
  mask=$(awk '/^SigBlk:/ { print $2 }' "$status")
  (( (16#$mask >> 14) & 1 )) || unblocked=$((unblocked + 1))
done
[ "$unblocked" = 1 ] || { echo "FAIL: $unblocked threads accept SIGTERM (want only the waiter)" >&2; exit 1; }
/usr/bin/python3 - "$collector_port" "$collector_pid" "$batch_hex" "$work/sigterm-time" $hung <<'PY'
import os, signal, socket, sys, time
port, pid, batch = int(sys.argv[1]), int(sys.argv[2]), bytes.fromhex(sys.argv[3])
hung = float(sys.argv[5])

def connect():
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(hung)
    return s

def read_answer(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk: raise SystemExit("closed before an answer: %r" % data)
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
    while len(body) < length:
        body += s.recv(4096)
    return head.decode(), body.decode()

def closed_within(s, seconds):
    s.settimeout(seconds)
    try:
        while True:
            if not s.recv(4096): return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False

slow = connect(); slow.sendall(b"GET /healthz HTTP/1.1\r\nHo")
idle = connect(); idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
assert " 200 " in read_answer(idle)[0]
post = connect()
head = ("POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        "Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(batch)).encode()
post.sendall(head)
interim = b""
while b"\r\n\r\n" not in interim:  # the server has read the header
    chunk = post.recv(1)
    if not chunk: raise SystemExit("closed before 100 Continue: %r" % interim)
    interim += chunk
assert interim.startswith(b"HTTP/1.1 100 "), interim
post.sendall(batch[:5])

open(sys.argv[4], "w").write("%.6f" % time.time())
os.kill(pid, signal.SIGTERM)
t0 = time.monotonic()
assert closed_within(slow, hung), "the slow client was not closed"
assert closed_within(idle, hung), "the idle client was not closed"
post.settimeout(0)
try:
    assert post.recv(1) is None, "the request in flight was cut off"
except BlockingIOError:
    pass  # nothing yet: still in flight
post.settimeout(hung)
post.sendall(batch[5:])
head, body = read_answer(post)
print("in flight at SIGTERM:", head.splitlines()[0], body)
assert " 200 " in head and '"accepted":1' in body, (head, body)
assert "connection: close" in head.lower(), head
assert closed_within(post, hung)
print("closed %.2f s after SIGTERM" % (time.monotonic() - t0))
PY
wait_exit "$(cat "$work/sigterm-time")"
echo "run 1: exit $status after $took s (deadline an hour, nothing left to wait for)"
[ "$status" -eq 0 ]
grep -q "stopped" "$work/serve1.log"
"$collector" estimate --db "$work/blur.db" | grep -q '"n": 1'

# 2. A body that never ends: the deadline (2 s) decides.
start_collector "$collector" "$work/serve2.log" --db "$work/blur.db" --metric 1:rr:1 \
  --shutdown-timeout 2 --no-auth
exec 3<>"/dev/tcp/127.0.0.1/$collector_port"
printf 'POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n' >&3
IFS= read -r -t $hung -u 3 interim || { echo "FAIL: no 100 Continue" >&2; exit 1; }
case $interim in "HTTP/1.1 100 "*) ;; *) echo "FAIL: $interim" >&2; exit 1;; esac
printf 'abc' >&3
sent=$(date +%s.%N)
kill -TERM "$collector_pid"
wait_exit "$sent"
exec 3>&-
echo "run 2: exit $status after $took s (deadline 2 s)"
[ "$status" -eq 0 ]
awk -v t="$took" 'BEGIN { exit !(t >= 1.9) }'  # a deadline, not an early close
echo "SIGTERM: in-flight request answered, slow clients closed, exit 0 within the deadline"
