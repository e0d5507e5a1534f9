#!/usr/bin/env bash
# A conflicting duplicate against the real collector: a fleet rerun with the
# same --seed (same device nonces and report ids) but another metric reuses
# every stored (device nonce, report id) with different content. The
# collector must refuse it with 409, and blur-device-sim must count every
# device as failed, acknowledge nothing and exit 1; the store keeps the
# first fleet only.
set -euo pipefail
collector=$1
device_sim=$2
work=$(mktemp -d)
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:rr:1 --metric 2:rr:1
json() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
expect() {
  if [ "$2" != "$3" ]; then echo "FAIL: $1: got $2, expected $3" >&2; exit 1; fi
}
fleet() {
  "$device_sim" fleet --collector "http://127.0.0.1:$collector_port" --devices 200 --seed 5 \
    --threads 4 "$@"
}
fleet --metric 1 > "$work/first.json" 2> "$work/first.err"
status=0
fleet --metric 2 > "$work/conflict.json" 2> "$work/conflict.err" || status=$?
expect "exit status" "$status" 1
expect "acknowledged" "$(json "$work/conflict.json" acknowledged)" 0
expect "failed devices" "$(json "$work/conflict.json" failed_devices)" 200
expect "still pending" "$(json "$work/conflict.json" pending)" 200
grep -q "first error: device [0-9]*: collector answered 409 .*\"report_id\"" "$work/conflict.err"
n() {
  "$collector" estimate --db "$work/blur.db" --metric "$1" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["n"])'
}
expect "metric 1 stored" "$(n 1)" 200
expect "metric 2 stored" "$(n 2)" 0
echo "409: 200 conflicting reports refused, none acknowledged, first fleet kept"
