#!/usr/bin/env bash
# `blur-collector reaggregate` while a collector serves a fleet, on SQLite or
# on the fixture's PostgreSQL (a fresh schema): the rebuilds run as their
# own process, over and over, while devices report. Checks: at least two
# rebuilds ran while the fleet was reporting; afterwards `verify` finds the
# aggregates equal to a re-aggregation of the raw reports, and the
# estimate's n is exactly the reports the fleet had acknowledged as new
# (nothing lost or counted twice).
#   reaggregate_serving_test.sh BLUR_COLLECTOR BLUR_DEVICE_SIM sqlite|postgresql
set -euo pipefail
collector=$1
device_sim=$2
backend=$3
work=$(mktemp -d)
pids=()
schema=blur_reaggregate_$$
psql=/usr/lib/postgresql/15/bin/psql
[ -x "$psql" ] || psql=psql
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$backend" = postgresql ]; then
    "$psql" "$server" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
case $backend in
  sqlite) db=$work/blur.db ;;
  postgresql)
    url_file=${BLUR_TEST_POSTGRES_URL_FILE:?run with ctest (fixture postgres)}
    [ -s "$url_file" ] || { echo "no PostgreSQL URL in $url_file: the postgres fixture failed" >&2; exit 1; }
    server=$(cat "$url_file")
    "$psql" "$server" -qc "CREATE SCHEMA $schema"
    db="$server&options=-csearch_path%3D$schema" ;;
  *) echo "usage: reaggregate_serving_test.sh COLLECTOR DEVICE_SIM sqlite|postgresql" >&2; exit 2 ;;
esac
. "$(dirname "$0")/../../scripts/lib/collector.sh"

start_collector "$collector" "$work/serve.log" --db "$db" --metric 3:grr:1:8 --auth-dir "$work/auth"
pids+=("$collector_pid")
"$device_sim" fleet --collector "http://127.0.0.1:$collector_port" --mechanism grr --domain 8 \
  --epsilon 1 --metric 3 --devices 3000 --seed 7 --threads 4 > "$work/fleet.json" 2> "$work/fleet.err" &
fleet=$!
rebuilds=0
while kill -0 "$fleet" 2>/dev/null; do
  "$collector" reaggregate --db "$db" --metric 3 > "$work/rebuild.out" 2> "$work/rebuild.err" ||
    { echo "FAIL: reaggregate while serving:" >&2; cat "$work/rebuild.err" >&2; exit 1; }
  rebuilds=$((rebuilds + 1))
done
wait "$fleet" || { echo "FAIL: the fleet:" >&2; cat "$work/fleet.err" "$work/serve.log" >&2; exit 1; }
[ "$rebuilds" -ge 2 ] || { echo "FAIL: only $rebuilds rebuilds ran while the fleet reported" >&2; exit 1; }
"$collector" verify --db "$db" --metric 3 > "$work/verify.out" ||
  { echo "FAIL: aggregates differ from the raw reports:" >&2; cat "$work/verify.out" >&2; exit 1; }
read_api "http://127.0.0.1:$collector_port/v1/metrics/3/estimate" > "$work/estimate.json"
/usr/bin/python3 - "$work" "$rebuilds" "$backend" <<'PY'
import json, sys
work, rebuilds, backend = sys.argv[1], int(sys.argv[2]), sys.argv[3]
fleet = json.load(open(f"{work}/fleet.json"))
n = json.load(open(f"{work}/estimate.json"))["n"]
assert fleet["failed_devices"] == 0, fleet
assert n == fleet["accepted"], (n, fleet["accepted"])
print(f"{backend}: {rebuilds} rebuilds while 3,000 devices reported; "
      f"n = {n} = the reports acknowledged as new; verify: aggregates equal the raw reports")
PY
