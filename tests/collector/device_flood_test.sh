#!/usr/bin/env bash
# Issue 26, attack 1: one device stalls all ingestion. One enrolled device
# nonce re-POSTs the same 64-report batch over FLOOD keep-alive connections
# (tests/collector/same_device_flood.py) while an honest fleet posts
# single-report batches, each from a device of its own (blur-device-sim
# load, 4 connections, every request a fresh enrolled nonce).
#
# Before the fix the commit queue took any number of one nonce's batches and
# drained them one per transaction (a group holds one batch per nonce): the
# attacker's batches filled it and honest POSTs were answered 503 "the commit
# queue is full". The queue bound here is 2,048 reports (32 of the
# attacker's batches), so that 128 connections overfill it as 1,100 overfill
# the default 65,536.
#
# Checks: the honest fleet gets only 200s, unloaded and under the flood (no
# 503); the flood's extra batches are answered 429 with Retry-After, counted
# as refusal device_busy. Prints the honest fleet's rate and p50/p99
# latency unloaded and under the flood (not asserted: the machine is
# shared).
#
#   device_flood_test.sh COLLECTOR DEVICE_SIM [FLOOD_CONNECTIONS] [HONEST_REQUESTS]
set -euo pipefail
collector=$1
device_sim=$2
flood=${3:-128}
honest=${4:-4000}  # honest requests per phase (each a device enrolled beforehand)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
collector_pid="" flood_pid=""
cleanup() {
  touch "$work/stop"
  for pid in $flood_pid $collector_pid; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$here/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:rr:1 \
  --max-queued-reports 2048 --log-requests false
url=http://127.0.0.1:$collector_port

# The attacker: one real SDK device's 64-report batch, its nonce enrolled.
"$device_sim" load --collector "$url" --metric 1 --metrics 1 --batch 64 --seed 26 \
  --save-batch "$work/batch.bin" > /dev/null
token=$(/usr/bin/python3 - "$url" "$work/batch.bin" <<'PY'
import json, os, struct, sys, urllib.request
url, batch = sys.argv[1], open(sys.argv[2], "rb").read()
i = 1  # field 1 (varint), then field 2 (fixed64): the device nonce
while batch[i] & 0x80:
    i += 1
assert batch[0] == 0x08 and batch[i + 1] == 0x11, batch[:16]
nonce = struct.unpack("<Q", batch[i + 2:i + 10])[0]
request = urllib.request.Request(
    url + "/v1/enroll",
    data=json.dumps({"device_nonce": f"{nonce:016x}", "device_key": "ab" * 32}).encode(),
    headers={"Authorization": "Bearer " + os.environ["BLUR_ENROLLMENT_SECRET"],
             "Content-Type": "application/json"})
print(json.load(urllib.request.urlopen(request))["token"])
PY
)

honest_load() {  # honest_load NAME SEED: single-report POSTs, fresh devices
  "$device_sim" load --collector "$url" --metric 1 --batch 1 --connections 4 --duration 20 \
    --devices "$honest" --seed "$2" --json > "$work/$1.json" 2> "$work/$1.err" || true
  [ -s "$work/$1.json" ] || { cat "$work/$1.err" >&2; fail "the honest load ($1) did not run"; }
}

honest_load unloaded 1
/usr/bin/python3 "$here/same_device_flood.py" "$collector_port" "$work/batch.bin" "$token" \
  "$flood" 120 "$work/ready" "$work/stop" > "$work/flood.json" &
flood_pid=$!
for _ in $(seq 600); do
  [ -f "$work/ready" ] && break
  kill -0 $flood_pid 2>/dev/null || fail "the flood ended before every connection was answered"
  sleep 0.1
done
[ -f "$work/ready" ] || fail "the flood's connections were not all answered within 60 s"
honest_load flooded 2
touch "$work/stop"
wait $flood_pid
flood_pid=""

/usr/bin/python3 - "$work" "$url" <<'PY'
import json, sys, urllib.request
work, url = sys.argv[1:]
load = lambda name: json.load(open(f"{work}/{name}.json"))
flood = load("flood")
metrics = urllib.request.urlopen(url + "/metrics").read().decode()
busy = next(float(l.split(" ")[1]) for l in metrics.splitlines()
            if l.startswith('blur_collector_requests_refused_total{reason="device_busy"}'))
for name, label in (("unloaded", "unloaded"), ("flooded", "under the flood")):
    r = load(name)
    print(f"honest single-report POSTs, {label}: {r['requests_answered']} answered in "
          f"{r['duration_s']:.1f} s ({r['requests_per_s']:.0f}/s), "
          f"p50 {r['latency_ms']['p50']:.2f} ms, "
          f"p99 {r['latency_ms']['p99']:.2f} ms, statuses {r['status']}")
print(f"flood: {flood['connections']} connections re-POSTing one device's 64-report batch for "
      f"{flood['seconds']} s: {flood['answered']} answered, statuses {flood['status']}; "
      f"device_busy refusals counted: {busy:.0f}")
for name in ("unloaded", "flooded"):
    r = load(name)
    assert r["status"] == {"200": r["requests_answered"]} and r["lost"] == 0, \
        f"honest POSTs ({name}) not all answered 200: {r['status']} {r['first_error_body']}"
    assert r["requests_answered"] > 0, name
refused = flood["status"].get("429", 0)
assert refused > 0, \
    f"the flood's batches were not refused 429: {flood['status']} {flood['first_body']}"
assert flood["missing_retry_after"] == 0, flood
assert "another batch of this device" in flood["first_body"]["429"], flood["first_body"]
assert busy >= refused, (busy, refused)
assert set(flood["status"]) <= {"200", "429"}, flood
PY
