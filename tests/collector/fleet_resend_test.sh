#!/usr/bin/env bash
# The devices' resend path against the real collector: the fleet starts
# while nothing listens on the collector's port, the collector comes up,
# is killed (SIGKILL) midway and restarted on the same database. Every
# device must end with nothing pending, every report be stored exactly once
# (the store's n equals devices x reports, and the simulator's new + already
# stored counts add up to it), batches must actually have been resent, and
# the aggregates must equal a re-aggregation of the raw reports.
#
#   fleet_resend_test.sh COLLECTOR DEVICE_SIM [sqlite|postgresql]
# postgresql: on the ctest fixture's server (BLUR_TEST_POSTGRES_URL_FILE), in
# a schema of its own.
set -euo pipefail
collector=$1
device_sim=$2
backend=${3:-sqlite}
work=$(mktemp -d)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
collector_pid="" fleet_pid="" schema=""
psql=/usr/lib/postgresql/15/bin/psql
[ -x "$psql" ] || psql=psql
cleanup() {
  for pid in $collector_pid $fleet_pid; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -z "$schema" ] || "$psql" "$server" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
if [ "$backend" = postgresql ]; then
  url_file=${BLUR_TEST_POSTGRES_URL_FILE:?run with ctest (fixture postgres)}
  [ -s "$url_file" ] || { echo "FAIL: no PostgreSQL URL in $url_file: the postgres fixture failed" >&2; exit 1; }
  server=$(cat "$url_file")
  schema=blur_resend_$$
  "$psql" "$server" -qc "CREATE SCHEMA $schema"
  db="$server&options=-csearch_path%3D$schema"
else
  db="$work/blur.db"
fi
json() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
expect() {
  if [ "$2" != "$3" ]; then echo "FAIL: $1: got $2, expected $3" >&2; exit 1; fi
}
# The credentials exist before any collector runs (devices are provisioned
# with the enrollment secret first).
auth=(--auth-dir "$work/auth")
"$collector" credentials --db "$db" "${auth[@]}" > "$work/credentials.log"
. "$here/../../scripts/lib/collector.sh"
load_collector_tokens "$work/auth"
stored() {
  /usr/bin/python3 -c 'import json,os,sys,urllib.request
request = urllib.request.Request(sys.argv[1],
    headers={"Authorization": "Bearer " + os.environ["BLUR_READER_TOKEN"]})
try: print(json.load(urllib.request.urlopen(request, timeout=2))["n"])
except Exception: print(-1)' "http://127.0.0.1:$port/v1/metrics/1/estimate"
}
serve() {
  "$collector" serve --address 127.0.0.1 --port "$port" --db "$db" --metric 1:rr:1 \
    "${auth[@]}" --enrollments-per-address 100000000 \
    >> "$work/server.log" 2>&1 &
  collector_pid=$!
  for _ in $(seq 100); do
    [ "$(grep -c "listening on" "$work/server.log")" -ge "$1" ] && return 0
    kill -0 "$collector_pid" 2>/dev/null || break
    sleep 0.05
  done
  cat "$work/server.log" >&2
  exit 1
}
# A free port, left unbound until the collector takes it.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
devices=3000 reports=3

"$device_sim" fleet --collector "http://127.0.0.1:$port" --metric 1 --devices $devices \
  --reports $reports --threads 8 --retries 12 > "$work/fleet.json" 2> "$work/fleet.err" &
fleet_pid=$!
sleep 1  # every device's first POSTs find nothing listening
serve 1
# Midway: some reports stored, the fleet still running.
for _ in $(seq 200); do
  n=$(stored)
  [ "$n" -ge 1500 ] && break
  sleep 0.05
done
kill -0 "$fleet_pid" 2>/dev/null || { echo "FAIL: the fleet ended before the collector was killed" >&2; exit 1; }
kill -KILL "$collector_pid"
wait "$collector_pid" 2>/dev/null || true
echo "collector killed with $n reports stored"
sleep 0.5
serve 2
status=0
wait "$fleet_pid" || status=$?
fleet_pid=""
cat "$work/fleet.err" | tail -n 3
expect "fleet exit status" "$status" 0
expect "reports left pending on devices" "$(json "$work/fleet.json" pending)" 0
expect "failed devices" "$(json "$work/fleet.json" failed_devices)" 0
expect "acknowledged" "$(json "$work/fleet.json" acknowledged)" $((devices * reports))
accepted=$(json "$work/fleet.json" accepted) duplicates=$(json "$work/fleet.json" duplicates)
expect "new + already stored" $((accepted + duplicates)) $((devices * reports))
resent=$(json "$work/fleet.json" resent)
[ "$resent" -gt 0 ] || { echo "FAIL: no batch was resent" >&2; exit 1; }
expect "stored (estimate n)" "$(stored)" $((devices * reports))
kill "$collector_pid"
wait "$collector_pid" 2>/dev/null || true
collector_pid=""
"$collector" verify --db "$db" || { echo "FAIL: aggregates differ from the raw reports" >&2; exit 1; }
n=$("$collector" estimate --db "$db" --metric 1 |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["n"])')
expect "stored after shutdown" "$n" $((devices * reports))
echo "resend ($backend): $resent batches resent; all $((devices * reports)) reports stored once" \
  "($accepted new, $duplicates already stored); nothing pending"
