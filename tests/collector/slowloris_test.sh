#!/usr/bin/env bash
# Overload (issue 13): 500 slowloris clients (a header that never ends, one
# byte a second, reconnecting whenever closed) while a 20,000-device fleet
# reports to the real collector (HTTP, SQLite).
# Checks: the slow clients really held 500 connections at once; the fleet
# completes (exit 0, every report acknowledged); every report acknowledged
# with a 200 is stored, and nothing else; the server closed every slow
# connection (although it kept sending) at its header deadline (10 s), none
# before it, and answered none.
# Events, not speed: each wait gives up only after $hung seconds, which
# fails a hung test and nothing else; the measured times are printed.
# Prints the fleet's time without the slow clients (metric 2) and with them
# (metric 1), against the same collector.
set -euo pipefail
collector=$1
device_sim=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
collector_pid="" slow_pid=""
cleanup() {
  touch "$work/stop"
  for pid in $slow_pid $collector_pid; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$here/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:rr:1 \
  --metric 2:rr:1
url=http://127.0.0.1:$collector_port
devices=${3:-20000}  # fewer under the sanitizers (tests/collector/CMakeLists.txt)
slow=500
hung=120

# A field of a JSON file: json FILE KEY
json() {
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"
}
stored() {  # reports of metric $1 the collector holds (with a reader token if it needs one)
  /usr/bin/python3 -c 'import json,os,sys,urllib.request
request = urllib.request.Request(sys.argv[1] + "/v1/metrics/" + sys.argv[2] + "/estimate")
if os.environ.get("BLUR_READER_TOKEN"):
    request.add_header("Authorization", "Bearer " + os.environ["BLUR_READER_TOKEN"])
print(json.load(urllib.request.urlopen(request))["n"])' "$url" "$1"
}
gauge() {  # a sample of the collector's /metrics: gauge NAME [LABELS]
  /usr/bin/python3 -c 'import sys,urllib.request
name = sys.argv[2] + (("{" + sys.argv[3] + "}") if len(sys.argv) > 3 else "")
for line in urllib.request.urlopen(sys.argv[1] + "/metrics").read().decode().splitlines():
    if line.split(" ")[0] == name: print(int(float(line.split(" ")[1])))' "$url" "$@"
}
fail() { echo "FAIL: $*" >&2; exit 1; }
# Runs a fleet of $devices on metric $1, seed $2; prints its wall time (s).
fleet() {
  local start end
  start=$(date +%s.%N)
  "$device_sim" fleet --collector "$url" --metric "$1" --devices $devices --seed "$2" \
    --threads 8 > "$work/fleet-$1.json" 2> "$work/fleet-$1.err" ||
    { cat "$work/fleet-$1.err" >&2; fail "the fleet on metric $1 did not complete"; }
  end=$(date +%s.%N)
  /usr/bin/python3 -c "print(f'{$end - $start:.1f}')"
}
check_fleet() {  # every report acknowledged, and exactly the acknowledged ones stored
  local acknowledged accepted n
  acknowledged=$(json "$work/fleet-$1.json" acknowledged)
  accepted=$(json "$work/fleet-$1.json" accepted)
  n=$(stored "$1")
  [ "$acknowledged" = $devices ] || fail "metric $1: $acknowledged of $devices acknowledged"
  [ "$accepted" = $devices ] || fail "metric $1: $accepted new of $devices"
  [ "$n" = "$accepted" ] || fail "metric $1: $n stored, $accepted acknowledged"
}

# Without slow clients.
quiet_time=$(fleet 2 7)
check_fleet 2
echo "without slow clients: $devices devices in $quiet_time s"

# With them: wait until all of them are connected at once.
/usr/bin/python3 "$here/slow_clients.py" "$collector_port" $slow "$work/slow.json" "$work/stop" \
  > "$work/slow-final.json" &
slow_pid=$!
for _ in $(seq $((hung * 10))); do
  [ -f "$work/slow.json" ] && [ "$(json "$work/slow.json" ready)" = True ] && break
  sleep 0.1
done
[ "$(json "$work/slow.json" ready)" = True ] || fail "the $slow slow clients did not connect"
# ... and the collector holds them (it may still be accepting the last ones).
for _ in $(seq $((hung * 5))); do
  open=$(gauge blur_collector_open_connections)
  [ "$open" -ge $slow ] && break
  sleep 0.2
done
[ "$open" -ge $slow ] || fail "the collector had $open connections open, not the $slow slow ones"
loris_time=$(fleet 1 8)
check_fleet 1
echo "with $slow slow clients ($open connections open): $devices devices in $loris_time s" \
  "(resent: $(json "$work/fleet-1.json" resent) batches)"

# Every first slow connection closed by the server (header_timeout: 10 s).
for _ in $(seq $((hung * 10))); do
  [ "$(json "$work/slow.json" closed_by_server)" -ge $slow ] && break
  sleep 0.1
done
touch "$work/stop"
wait $slow_pid
slow_pid=""
/usr/bin/python3 - "$work/slow-final.json" $slow <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
count = int(sys.argv[2])
print(f"slow clients: {s['opened']} connections over {s['seconds']:.1f} s, {s['closed_by_server']} "
      f"closed by the server after {s['min_lifetime']:.1f} to {s['max_lifetime']:.1f} s, "
      f"{s['bytes_sent']} bytes sent, {s['answered']} answered, "
      f"{s['connect_failures']} failed connects")
assert s["closed_by_server"] >= count, "slow connections left open past the header deadline"
# Lifetimes start before connecting, so none is shorter than the deadline
# (with a margin for clock reading); no upper bound: a busy machine is late.
assert 9.0 <= s["min_lifetime"], "closed before the 10 s deadline"
assert s["answered"] == 0, "a header that never ended got an answer"
assert s["connect_failures"] == 0, "a slow client could not connect"
PY
refused=$(gauge blur_collector_requests_refused_total 'reason="overloaded"')
[ "$refused" = 0 ] || fail "$refused connections refused below the connection cap"

kill $collector_pid
wait $collector_pid || true
collector_pid=""
total=$("$collector" metrics --db "$work/blur.db" | sed -n 's/^\([0-9]*\) reports stored$/\1/p')
[ "$total" = $((2 * devices)) ] || fail "$total reports in the database, expected $((2 * devices))"
echo "database: $total reports, exactly the $((2 * devices)) acknowledged"
