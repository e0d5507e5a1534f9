#!/usr/bin/env bash
# blur-device-sim's delivery, against the real collector (HTTP, SQLite) and a
# stand-in that gives the answers the real one rarely does:
#  (a) two fleets run one after the other with default (fresh) seeds are both
#      stored: different device nonces, nothing dropped as a duplicate;
#  (b) a rerun with the first fleet's --seed is all "already stored", exit 0;
#  (c) a 400 (metric registered with another mechanism) is final: not
#      retried, nothing acknowledged, every report still pending, exit 1;
#  (d) load for 2 s (64- and 1-report batches): the acknowledged count it
#      prints is exactly what the store gained, and every request got a 200;
#  (e) stand-in 409: one POST per device (never retried), nothing
#      acknowledged, the first error printed, exit 1;
#  (f) stand-in alternating 503/200: every batch resent until stored;
#  (g) stand-in 200 whose counts do not add up to the batch: exit 1.
# LOAD_DEVICES (default 20,000): the device nonces (d) enrolls before each
# load, one per request; fewer under the sanitizers, where enrolling
# 20,000 took 50 s for the ~500 requests sent (the count check is the same
# when the nonces run out first).
set -euo pipefail
collector=$1
device_sim=$2
load_devices=${3:-20000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
collector_pid="" fake_pid=""
cleanup() {
  for pid in $collector_pid $fake_pid; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$here/../../scripts/lib/collector.sh"
# Metric 2 takes the load generator's 64-report batches from one device nonce
# (above the default contribution bound of 4 per device and bucket).
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:rr:1 \
  --metric 2:rr:1:max_reports_per_bucket=64
url=http://127.0.0.1:$collector_port

# A JSON field of a file: json FILE KEY [KEY...]
json() {
  /usr/bin/python3 -c 'import json,sys,functools
print(functools.reduce(lambda o, k: o[k], sys.argv[2:], json.load(open(sys.argv[1]))))' "$@"
}
stored() {  # reports of metric $1 the collector holds
  read_api "$url/v1/metrics/$1/estimate" | /usr/bin/python3 -c 'import json,sys
print(json.load(sys.stdin)["n"])'
}
expect() {  # expect WHAT ACTUAL EXPECTED
  if [ "$2" != "$3" ]; then echo "FAIL: $1: got $2, expected $3" >&2; exit 1; fi
}
fleet() { "$device_sim" fleet --collector "$url" --metric 1 --devices 500 --reports 2 --threads 8 "$@"; }

# (a) Two fleets, default seeds.
fleet > "$work/a1.json" 2> "$work/a1.err"
fleet > "$work/a2.json" 2> "$work/a2.err"
seed1=$(json "$work/a1.json" seed) seed2=$(json "$work/a2.json" seed)
[ "$seed1" != "$seed2" ] || { echo "FAIL: two runs drew the same seed $seed1" >&2; exit 1; }
grep -q "seed $seed1 (fresh; --seed repeats this run)" "$work/a1.err"
for run in a1 a2; do
  grep -q "1000 reports acknowledged (1000 new, 0 already stored)" "$work/$run.err"
  expect "$run accepted" "$(json "$work/$run.json" accepted)" 1000
done
expect "stored after two fleets" "$(stored 1)" 2000
echo "(a) two fleets with fresh seeds ($seed1, $seed2): 2000 reports stored"

# (b) The first fleet again, exactly: identical reports, answered as duplicates.
fleet --seed "$seed1" > "$work/b.json" 2> "$work/b.err"
grep -q "1000 reports acknowledged (0 new, 1000 already stored)" "$work/b.err"
expect "rerun duplicates" "$(json "$work/b.json" duplicates)" 1000
expect "stored after the rerun" "$(stored 1)" 2000
echo "(b) rerun with --seed $seed1: all 1000 already stored, exit 0"

# (c) A 400 is final.
start=$(date +%s%N)
if "$device_sim" fleet --collector "$url" --metric 1 --mechanism grr --domain 4 --devices 50 \
  --threads 4 --retries 5 > "$work/c.json" 2> "$work/c.err"; then
  echo "FAIL: a refused fleet exited 0" >&2; exit 1
fi
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
expect "400: acknowledged" "$(json "$work/c.json" acknowledged)" 0
expect "400: still pending" "$(json "$work/c.json" pending)" 50
expect "400: failed devices" "$(json "$work/c.json" failed_devices)" 50
expect "400: resent" "$(json "$work/c.json" resent)" 0
grep -q "first error: device [0-9]*: collector answered 400" "$work/c.err"
[ "$elapsed_ms" -lt 5000 ] || { echo "FAIL: 400s took $elapsed_ms ms: retried?" >&2; exit 1; }
expect "stored after the refused fleet" "$(stored 1)" 2000
echo "(c) 400: not retried, 50 reports still pending on their devices, exit 1"

# (d) The load generator's acknowledged count is what the store gained.
for batch in 64 1; do
  before=$(stored 2)
  "$device_sim" load --collector "$url" --metric 2 --metrics 1 --duration 2 --batch $batch --connections 8 \
    --devices "$load_devices" --json > "$work/load.json" 2> "$work/load.err"
  after=$(stored 2)
  acknowledged=$(json "$work/load.json" reports_acknowledged)
  sent=$(json "$work/load.json" requests_sent)
  expect "load --batch $batch: stored gain" $((after - before)) "$acknowledged"
  expect "load --batch $batch: statuses" "$(json "$work/load.json" status)" "{'200': $sent}"
  expect "load --batch $batch: acknowledged" "$acknowledged" $((sent * batch))
  [ "$sent" -gt 0 ] || { echo "FAIL: load sent nothing" >&2; exit 1; }
  echo "(d) load --batch $batch: $sent requests, $acknowledged reports acknowledged = stored"
done

# The stand-in collector.
fake() {
  coproc FAKE { exec /usr/bin/python3 "$here/fake_collector.py" "$1"; }
  fake_pid=$FAKE_PID
  read -r fake_port <&"${FAKE[0]}"
}
stop_fake() { kill "$fake_pid"; wait "$fake_pid" 2>/dev/null || true; fake_pid=""; }
fake_stats() {
  /usr/bin/python3 -c 'import json,sys,urllib.request
print(json.load(urllib.request.urlopen(sys.argv[1] + "/stats"))[sys.argv[2]])' \
    "http://127.0.0.1:$fake_port" "$1"
}
sim_fake() {  # the stand-in takes reports without enrollment
  env -u BLUR_ENROLLMENT_SECRET "$device_sim" fleet --collector "http://127.0.0.1:$fake_port" --metric 1 --devices 20 \
    --reports 3 "$@"
}

# (e) 409: a conflicting duplicate is a hard error for the device.
fake conflict
if sim_fake --threads 4 > "$work/e.json" 2> "$work/e.err"; then echo "FAIL: 409s exited 0" >&2; exit 1; fi
expect "409: POSTs" "$(fake_stats posts)" 20
expect "409: acknowledged" "$(json "$work/e.json" acknowledged)" 0
expect "409: failed devices" "$(json "$work/e.json" failed_devices)" 20
expect "409: pending" "$(json "$work/e.json" pending)" 60
grep -q 'first error: device [0-9]*: collector answered 409 {"error": "report [0-9]* reuses' "$work/e.err"
stop_fake
echo "(e) 409: one POST per device, nothing acknowledged, exit 1"

# (f) 503 then 200: resent until stored, then acknowledged (one connection:
# each device's first POST is an odd one, answered 503).
fake flaky
sim_fake --seed 7 --threads 1 > "$work/f.json" 2> "$work/f.err"
expect "503: acknowledged" "$(json "$work/f.json" acknowledged)" 60
expect "503: pending" "$(json "$work/f.json" pending)" 0
expect "503: resent" "$(json "$work/f.json" resent)" 20
expect "503: POSTs" "$(fake_stats posts)" 40
expect "503: reports the stand-in stored" "$(fake_stats reports)" 60
stop_fake
echo "(f) 503: every batch resent once and then acknowledged"

# (g) A 200 that does not account for every report of the batch.
fake miscount
if sim_fake --threads 4 > "$work/g.json" 2> "$work/g.err"; then echo "FAIL: miscounted 200s exited 0" >&2; exit 1; fi
expect "miscount: acknowledged" "$(json "$work/g.json" acknowledged)" 0
grep -q "collector answered 200 for 3 reports but counted 2 new and 0 already stored" "$work/g.err"
stop_fake
echo "(g) a 200 that counts fewer reports than sent: not acknowledged, exit 1"
