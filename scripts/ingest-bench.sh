#!/usr/bin/env bash
# Collector ingest on loopback, measured by the load generator
# (blur-device-sim load), with the count the store holds afterwards:
#
#   scripts/ingest-bench.sh sqlite     [seconds]   one collector on SQLite: 64-report
#                                                  batches, then single-report POSTs; with
#                                                  device tokens (the default), then --no-auth
#   scripts/ingest-bench.sh postgresql [seconds]   two collectors on one local PostgreSQL
#                                                  (started here as the postgres user),
#                                                  one load generator each, 64-report batches
#
# Needs a host build (cmake --preset host && cmake --build --preset host).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
backend=${1:-sqlite}
seconds=${2:-10}
collector=$root/build/host/collector/blur-collector
sim=$root/build/host/collector/tools/device-sim/blur-device-sim
[ -x "$collector" ] && [ -x "$sim" ] || { echo "build the host preset first" >&2; exit 1; }
work=$(mktemp -d)
chmod 755 "$work"  # the PostgreSQL server runs as the postgres user
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ "$backend" != postgresql ] || "$root/tests/support/postgres_server.sh" stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$root/scripts/lib/collector.sh"
stored() { "$collector" estimate --db "$1" --metric "$2" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["n"])'; }
summary() { /usr/bin/python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("  %s: %.0f requests/s, %.0f acknowledged reports/s, p50 %.2f ms, p99 %.2f ms, acknowledged %d"
      % (sys.argv[2], r["requests_per_s"], r["reports_per_s"], r["latency_ms"]["p50"],
         r["latency_ms"]["p99"], r["reports_acknowledged"]))
PY
}

# With authentication each request carries its own device token (every
# load request is a fresh device nonce, enrolled before the clock starts);
# --devices leaves room for the fastest rate seen on 2 cores.
sqlite_run() {  # auth | no-auth
  local mode=$1 db=$work/$1.db
  local flags=()
  if [ "$mode" = no-auth ]; then
    flags=(--no-auth)
    unset BLUR_ENROLLMENT_SECRET
  fi
  # 64-report batches from one device nonce: above the default contribution bound.
  start_collector "$collector" "$work/$mode.log" --db "$db" "${flags[@]}" \
    --metric 1:rr:1:max_reports_per_bucket=64 --metric 2:rr:1
  pids+=("$collector_pid")
  "$sim" load --collector "http://127.0.0.1:$collector_port" --metric 1 --duration "$seconds" \
    --batch 64 --connections 16 --devices $((seconds * 4000)) --json > "$work/$mode-b64.json"
  "$sim" load --collector "http://127.0.0.1:$collector_port" --metric 2 --duration "$seconds" \
    --batch 1 --connections 64 --devices $((seconds * 20000)) --json > "$work/$mode-b1.json"
  kill "$collector_pid"; wait "$collector_pid" || true; pids=()
  echo "SQLite, one collector, $mode, ${seconds} s each:"
  summary "$work/$mode-b64.json" "64-report batches, 16 connections"
  echo "    stored: $(stored "$db" 1)"
  summary "$work/$mode-b1.json" "1-report POSTs, 64 connections"
  echo "    stored: $(stored "$db" 2)"
}

if [ "$backend" = sqlite ]; then
  sqlite_run auth
  sqlite_run no-auth
  /usr/bin/python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
for size in ("b64", "b1"):
    on, off = (json.load(open(f"{w}/{m}-{size}.json"))["reports_per_s"] for m in ("auth", "no-auth"))
    print(f"  {size}: with device tokens {on:,.0f} reports/s = {100 * on / off:.1f}% of without ({off:,.0f})")
PY
else
  "$root/tests/support/postgres_server.sh" start "$work/pg" > /dev/null
  db=$(cat "$work/pg/url")
  for node in a b; do
    start_collector "$collector" "$work/$node.log" --db "$db" --auth-dir "$work/auth" \
      --metric 1:rr:1:max_reports_per_bucket=64
    pids+=("$collector_pid")
    eval "port_$node=$collector_port"
  done
  "$sim" load --collector "http://127.0.0.1:$port_a" --metric 1 --duration "$seconds" \
    --batch 64 --connections 16 --devices $((seconds * 3000)) --json > "$work/a.json" &
  load_a=$!
  "$sim" load --collector "http://127.0.0.1:$port_b" --metric 1 --duration "$seconds" \
    --batch 64 --connections 16 --devices $((seconds * 3000)) --json > "$work/b.json"
  wait "$load_a"
  for pid in "${pids[@]}"; do kill "$pid"; done
  wait "${pids[@]}" || true; pids=()
  echo "PostgreSQL, two collectors, ${seconds} s, 64-report batches, 16 connections each:"
  summary "$work/a.json" "collector a"
  summary "$work/b.json" "collector b"
  /usr/bin/python3 -c 'import json,sys
t = sum(json.load(open(f))["reports_per_s"] for f in sys.argv[1:])
print(f"  together: {t:,.0f} acknowledged reports/s")' "$work/a.json" "$work/b.json"
  echo "    stored: $(stored "$db" 1)"
fi
