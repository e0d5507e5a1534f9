#!/usr/bin/env bash
# Two collector processes on one PostgreSQL (the ctest fixture `postgres`,
# a fresh schema): two simulated fleets report to one collector each, then
# `blur-collector estimate` on the shared database sees both.
# Checks: every report stored once; one node per collector, whose aggregate
# counts its own fleet's reports; the estimate is within 5 standard errors
# of the two fleets' combined truth (false-alarm rate 6e-7).
# SCALE (default 1) divides the fleets' sizes: 5 under the sanitizers.
set -euo pipefail
collector=$1
device_sim=$2
scale=${3:-1}
fleet_a_devices=$(( 3000 / scale )) fleet_b_devices=$(( 2000 / scale ))
url_file=${BLUR_TEST_POSTGRES_URL_FILE:?run with ctest (fixture postgres)}
[ -s "$url_file" ] || { echo "no PostgreSQL URL in $url_file: the postgres fixture failed" >&2; exit 1; }
server=$(cat "$url_file")
psql=/usr/lib/postgresql/15/bin/psql
[ -x "$psql" ] || psql=psql
schema=blur_fleet_$$
db="$server&options=-csearch_path%3D$schema"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$psql" "$server" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$psql" "$server" -qc "CREATE SCHEMA $schema"
. "$(dirname "$0")/../../scripts/lib/collector.sh"

# The collectors of one database share one credentials directory: a device
# enrolled by either is known to both.
start_collector "$collector" "$work/a.log" --db "$db" --metric 3:rr:0.75 --auth-dir "$work/auth"
pids+=("$collector_pid")
port_a=$collector_port
start_collector "$collector" "$work/b.log" --db "$db" --metric 3:rr:0.75 --auth-dir "$work/auth"
pids+=("$collector_pid")
port_b=$collector_port
grep -q 'database postgresql://' "$work/a.log" || { cat "$work/a.log" >&2; exit 1; }

"$device_sim" fleet --collector "http://127.0.0.1:$port_a" --devices "$fleet_a_devices" --true-rate 0.2 \
  --epsilon 0.75 --metric 3 --seed 99 --threads 8 > "$work/fleet-a.json" 2> "$work/fleet-a.err" &
fleet_a=$!
"$device_sim" fleet --collector "http://127.0.0.1:$port_b" --devices "$fleet_b_devices" --true-rate 0.2 \
  --epsilon 0.75 --metric 3 --seed 98 --threads 8 > "$work/fleet-b.json" 2> "$work/fleet-b.err" ||
  { cat "$work/fleet-b.err" "$work/b.log" >&2; exit 1; }
wait "$fleet_a" || { cat "$work/fleet-a.err" "$work/a.log" >&2; exit 1; }
kill "${pids[@]}"
wait "${pids[@]}" || true
pids=()

"$collector" estimate --db "$db" --metric 3 > "$work/estimate.json"
"$collector" verify --db "$db" > /dev/null || { echo "FAIL: aggregates differ from raw" >&2; exit 1; }

# The same fleets (same seeds) against one collector on SQLite: the two-node
# estimate must equal the single-node one exactly (same reports, aggregates
# that add up, one estimator).
start_collector "$collector" "$work/single.log" --db "$work/single.db" --metric 3:rr:0.75
pids+=("$collector_pid")
for fleet in "$fleet_a_devices 99" "$fleet_b_devices 98"; do
  set -- $fleet
  "$device_sim" fleet --collector "http://127.0.0.1:$collector_port" --devices "$1" \
    --true-rate 0.2 --epsilon 0.75 --metric 3 --seed "$2" --threads 8 > /dev/null 2>&1 ||
    { echo "FAIL: single-node fleet (seed $2)" >&2; exit 1; }
done
kill "${pids[@]}"
wait "${pids[@]}" || true
pids=()
"$collector" estimate --db "$work/single.db" --metric 3 > "$work/single.json"
"$psql" "$server" -At -c "SELECT count(*) FROM $schema.reports" > "$work/reports.txt"
"$psql" "$server" -At -c "SELECT count(*) FROM $schema.nodes" > "$work/nodes.txt"
"$psql" "$server" -At -c "SELECT reports FROM $schema.aggregates WHERE metric_id = 3 ORDER BY reports" \
  > "$work/aggregates.txt"
/usr/bin/python3 - "$work" $(( fleet_a_devices + fleet_b_devices )) <<'PY'
import json, sys
work = sys.argv[1]
devices = int(sys.argv[2])
a = json.load(open(f"{work}/fleet-a.json"))
b = json.load(open(f"{work}/fleet-b.json"))
est = json.load(open(f"{work}/estimate.json"))
reports = int(open(f"{work}/reports.txt").read())
nodes = int(open(f"{work}/nodes.txt").read())
aggregates = [int(x) for x in open(f"{work}/aggregates.txt").read().split()]
assert reports == devices, reports
assert nodes == 2, nodes
# One bucket, normally; a run across a bucket boundary splits a node's rows.
assert sum(aggregates) == devices, aggregates
assert est["n"] == devices, est["n"]
truth = a["true_counts"][1] + b["true_counts"][1]
one = est["estimates"][1]
print(f"two collectors, one PostgreSQL: {reports} reports, node aggregates {aggregates}, "
      f"truth {truth}, estimate {one['estimate']:.1f} (stderr {one['stderr']:.1f})")
assert abs(one["estimate"] - truth) < 5 * one["stderr"], "estimate too far from the truth"
single = json.load(open(f"{work}/single.json"))
assert single["estimates"] == est["estimates"], (single["estimates"], est["estimates"])
print("two nodes on PostgreSQL and one node on SQLite give the same estimate")
PY
