#!/usr/bin/env bash
# End to end through the real programs: blur-collector serve (HTTP, SQLite)
# <- blur-device-sim (N SDK instances) -> blur-collector estimate (offline).
# Checks: every report stored; the estimate is within 5 standard errors of
# the fleet's truth (false-alarm rate 6e-7; a collector that did not debias
# would be off by ~30 standard errors here).
set -euo pipefail
collector=$1
device_sim=$2
work=$(mktemp -d)
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 3:rr:0.75
port=$collector_port

"$device_sim" fleet --collector "http://127.0.0.1:$port" --devices 3000 --true-rate 0.2 \
  --epsilon 0.75 --metric 3 --seed 99 --threads 8 > "$work/fleet.json"
kill $collector_pid; wait $collector_pid || true

"$collector" estimate --db "$work/blur.db" --metric 3 > "$work/estimate.json"
/usr/bin/python3 - "$work/fleet.json" "$work/estimate.json" <<'PY'
import json, sys
fleet = json.load(open(sys.argv[1]))
est = json.load(open(sys.argv[2]))
assert est["n"] == fleet["devices"] == 3000, (est["n"], fleet)
one = est["estimates"][1]
error = abs(one["estimate"] - fleet["true_ones"])
print(f"truth {fleet['true_ones']}, estimate {one['estimate']:.1f}, stderr {one['stderr']:.1f}")
assert error < 5 * one["stderr"], "estimate too far from the truth"
PY
