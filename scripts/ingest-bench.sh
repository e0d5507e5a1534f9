#!/usr/bin/env bash
# The collector's ingest figures (docs/collector.md, "Measured"), in one
# command, on loopback, with the load generator on the same cores:
#
#   scripts/ingest-bench.sh [all|sqlite|postgresql] [seconds]   (default: all 10)
#
# Every run as a fleet of real devices meets the collector: authentication
# on (each request a fresh device nonce with its own device token, enrolled
# before the clock starts), the default contribution bound (4 reports per
# device, metric and hour), 16 metrics registered (1..16, rr at epsilon 1).
#
#   sqlite      one collector on SQLite: device batches (64 reports: 16
#               metrics x 4), then single-report POSTs
#   postgresql  two collectors on one local PostgreSQL (started here as the
#               postgres user), one load generator of device batches each
#
# Beside each load, a probe (blur-device-sim load --rate: an honest device
# sending the same kind of request at a low rate on its own connections)
# measures what a device waits under that load: its p50/p99 are printed.
# Each figure is checked against the store: the accepted count the load
# generator summed from the answers equals what the store holds.
#
# The enrollment limits are lifted explicitly (a benchmark enrolls hundreds
# of thousands of devices from one address and secret, past the defaults of
# 10,000 an hour per address and 100,000 per secret).
#
# Connections (environment): BATCH_CONNECTIONS for device batches (16; on
# PostgreSQL per collector), SINGLE_CONNECTIONS for single-report POSTs (64).
# A closed-loop load generator waits for each answer, so its connections
# bound how many requests a commit can hold; a fleet has thousands in flight.
#
# Needs a host build of blur-collector and blur-device-sim.
set -euo pipefail
batch_connections=${BATCH_CONNECTIONS:-16}
single_connections=${SINGLE_CONNECTIONS:-64}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
what=${1:-all}
seconds=${2:-10}
case $what in all | sqlite | postgresql) ;; *) echo "usage: $0 [all|sqlite|postgresql] [seconds]" >&2; exit 2 ;; esac
collector=$root/build/host/collector/blur-collector
sim=$root/build/host/collector/tools/device-sim/blur-device-sim
[ -x "$collector" ] && [ -x "$sim" ] || { echo "build the host preset first" >&2; exit 1; }
work=$(mktemp -d)
chmod 755 "$work"  # the PostgreSQL server runs as the postgres user
pids=()
pg_started=""
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -z "$pg_started" ] || "$root/tests/support/postgres_server.sh" stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$root/scripts/lib/collector.sh"
metrics=()
for m in $(seq 16); do metrics+=(--metric "$m:rr:1"); done
serve() {  # serve NAME serve-arguments...: sets $collector_pid, $collector_port
  local name=$1
  shift
  start_collector "$collector" "$work/$name.log" "${metrics[@]}" --log-requests false \
    --enrollments-per-address 100000000 --enrollments-per-secret 100000000 "$@"
  pids+=("$collector_pid")
}
stored() {  # stored DB: reports of metrics 1..16 in the store
  local total=0 m n
  for m in $(seq 16); do
    n=$("$collector" estimate --db "$1" --metric "$m" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["n"])')
    total=$((total + n))
  done
  echo "$total"
}
# load NAME PORT DEVICES load-arguments...: in the background ($load_pid);
# returns once its enrollment is done and it sends.
load() {
  local name=$1 port=$2 devices=$3
  shift 3
  "$sim" load --collector "http://127.0.0.1:$port" --metric 1 --duration "$seconds" \
    --devices "$devices" --json "$@" > "$work/$name.json" 2> "$work/$name.err" &
  load_pid=$!
  until grep -q "load http" "$work/$name.err"; do
    kill -0 "$load_pid" 2>/dev/null || { cat "$work/$name.err" >&2; return 1; }
    sleep 0.1
  done
}
# probe NAME PORT RATE load-arguments...: a paced load beside the one running.
probe() {
  local name=$1 port=$2 rate=$3
  shift 3
  "$sim" load --collector "http://127.0.0.1:$port" --metric 1 --duration $((seconds - 2)) \
    --devices $((rate * seconds)) --rate "$rate" --connections 4 --json "$@" \
    > "$work/$name.json" 2> "$work/$name.err" &
  probe_pid=$!
}
summary() {  # summary TITLE STORED GOAL reports|posts LOAD.json... -- PROBE.json
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
args = sys.argv[1:]
title, stored, goal, unit = args[0], int(args[1]), float(args[2]), args[3]
cut = args.index("--")
loads = [json.load(open(f)) for f in args[4:cut]]
probe = json.load(open(args[cut + 1]))
rate = sum(r["reports_per_s"] for r in loads)
posts = sum(r["requests_per_s"] for r in loads)
accepted = sum(r["reports_acknowledged"] for r in loads) + probe["reports_acknowledged"]
over = sum(r["reports_over_limit"] for r in loads)
failed = sum(r["requests_failed"] for r in loads)
print(f"{title}:")
print(f"  {rate:,.0f} accepted reports/s ({posts:,.0f} POSTs/s), "
      + ", ".join(f"p50 {r['latency_ms']['p50']:.1f} ms p99 {r['latency_ms']['p99']:.1f} ms" for r in loads)
      + f"; over the bound {over}, failed requests {failed}")
print(f"  probe ({probe['rate']:g} requests/s beside it): p50 {probe['latency_ms']['p50']:.1f} ms, "
      f"p99 {probe['latency_ms']['p99']:.1f} ms, max {probe['latency_ms']['max']:.1f} ms, "
      f"statuses {probe['status']}")
print(f"  accepted {accepted:,} = stored {stored:,}: {'yes' if accepted == stored else 'NO'}")
figure = rate if unit == "reports" else posts
print(f"  goal >= {goal:,.0f} {'accepted reports' if unit == 'reports' else 'POSTs'}/s: "
      f"{'met' if figure >= goal else 'not met'} ({100 * figure / goal:.0f}% of it)")
PY
}

sqlite_run() {
  local db=$work/sqlite.db
  serve sqlite --db "$db"
  local port=$collector_port pid=$collector_pid
  load sqlite-b64 "$port" $((seconds * 5000)) --batch 64 --connections "$batch_connections"
  probe sqlite-b64-probe "$port" 20 --batch 64
  wait "$load_pid" "$probe_pid" || true
  load sqlite-b1 "$port" $((seconds * 25000)) --batch 1 --connections "$single_connections"
  probe sqlite-b1-probe "$port" 50 --batch 1
  wait "$load_pid" "$probe_pid" || true
  kill "$pid"; wait "$pid" || true; pids=()
  local total
  total=$(stored "$db")
  # Each phase's store gain is its own: the batches' count, then the rest.
  /usr/bin/python3 - "$work" "$total" > "$work/sqlite-split" <<'PY'
import json, sys
w, total = sys.argv[1], int(sys.argv[2])
b64 = sum(json.load(open(f"{w}/{n}.json"))["reports_acknowledged"] for n in ("sqlite-b64", "sqlite-b64-probe"))
print(b64, total - b64)
PY
  read -r stored_b64 stored_b1 < "$work/sqlite-split"
  summary "SQLite, one collector, device batches (16 metrics x 4 reports), $batch_connections connections, ${seconds} s" \
    "$stored_b64" 200000 reports "$work/sqlite-b64.json" -- "$work/sqlite-b64-probe.json"
  summary "SQLite, one collector, single-report POSTs, $single_connections connections, ${seconds} s" \
    "$stored_b1" 20000 posts "$work/sqlite-b1.json" -- "$work/sqlite-b1-probe.json"
  echo "  (stored: $total in all; the single-report share is the total less the batches' accepted count)"
}

postgresql_run() {
  "$root/tests/support/postgres_server.sh" start "$work/pg" > /dev/null
  pg_started=1
  local db
  db=$(cat "$work/pg/url")
  serve pg-a --db "$db" --auth-dir "$work/auth"
  local port_a=$collector_port
  serve pg-b --db "$db" --auth-dir "$work/auth"
  local port_b=$collector_port
  # Both generators enroll first, then send at once.
  local node port loads=()
  for node in a b; do
    port=$port_a
    [ $node = b ] && port=$port_b
    "$sim" load --collector "http://127.0.0.1:$port" --metric 1 --duration "$seconds" \
      --devices $((seconds * 4000)) --batch 64 --connections "$batch_connections" --json \
      --start-file "$work/pg-go" > "$work/pg-$node.json" 2> "$work/pg-$node.err" &
    loads+=($!)
  done
  for node in a b; do
    until grep -q "waiting for" "$work/pg-$node.err"; do
      kill -0 "${loads[0]}" 2>/dev/null && kill -0 "${loads[1]}" 2>/dev/null ||
        { cat "$work/pg-$node.err" >&2; return 1; }
      sleep 0.1
    done
  done
  touch "$work/pg-go"
  probe pg-probe "$port_a" 20 --batch 64
  wait "${loads[@]}" "$probe_pid" || true
  for pid in "${pids[@]}"; do kill "$pid"; done
  wait "${pids[@]}" || true; pids=()
  summary "PostgreSQL, two collectors, device batches (16 metrics x 4 reports), $batch_connections connections each, ${seconds} s" \
    "$(stored "$db")" 150000 reports "$work/pg-a.json" "$work/pg-b.json" -- "$work/pg-probe.json"
}

echo "goals: SQLite >= 200,000 accepted reports/s in device batches and >= 20,000 single-report POSTs/s;"
echo "       PostgreSQL with two collectors >= 150,000 accepted reports/s (authentication on, default bound)"
[ "$what" = postgresql ] || sqlite_run
[ "$what" = sqlite ] || postgresql_run
