#!/bin/bash
# Attacks 4 and 5 of issue 26 against a real collector, whoever holds the
# app's enrollment secret (every copy of the app does):
#   (a) identity theft: enroll a victim's nonce (it is in clear in the
#       victim's token) with another device key -> 409, nothing changes; the
#       victim's next batch (report ids 0..63) is stored and it still renews.
#   (b) lock-out: three source addresses (127.0.0.2-4) enroll new devices
#       as fast as they can against a secret allowance of 3,000 an hour;
#       once refusals begin, while they keep at it, a new device from a
#       fourth address (127.0.0.5) still enrolls, and so does a device
#       renewing its token (renewals take no new-device allowance).
#   (c) a fleet of 1,500 devices behind one NAT address enrolls and reports
#       with the collector's default limits.
# Before device keys (5da76db): (a) 200 for the thief, the victim's batch
# 409; (b) 3,000 enrolled, the fourth address and the renewal 429; (c)
# about 490 of 1,500 devices never reported. BLUR_ENROLLMENT_LEGACY_BODY=1 sends the old
# body (no device_key) to measure such a collector: the checks then fail,
# the figures print.
#   enrollment_attacks_test.sh BLUR_COLLECTOR BLUR_DEVICE_SIM CRAFTED_REPORTS_POSTER [FLEET]
set -uo pipefail
collector=$1 device_sim=$2 poster=$3 fleet=${4:-1500}
here=$(cd "$(dirname "$0")" && pwd)
client="$here/enrollment_client.py"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
. "$here/../../scripts/lib/collector.sh"

failures=0
check() {  # WHAT ACTUAL EXPECTED: a failure is counted, the run goes on (all figures print)
  if [ "$2" = "$3" ]; then echo "  ok: $1: $2"; else echo "  FAIL: $1: $2, expected $3"; failures=$((failures + 1)); fi
}
status_of() { echo "${1%% *}"; }
refusals() {  # the enrollment_rate refusals the collector counted
  curl -sf "http://127.0.0.1:$collector_port/metrics" |
    sed -n 's/^blur_collector_requests_refused_total{reason="enrollment_rate"} //p'
}

# The defaults, as the collector states them (the NAT fleet uses them as they are).
help=$("$collector" serve --help)
default_per_address=$(echo "$help" | sed -n 's/.*--enrollments-per-address UINT=\([0-9]*\).*/\1/p')
default_per_secret=$(echo "$help" | sed -n 's/.*--enrollments-per-secret UINT=\([0-9]*\).*/\1/p')
echo "defaults: $default_per_address new devices per address and hour, $default_per_secret per secret"

# (a) and (b): the secret's allowance at 3,000 an hour (as in the probe), the
# per-address limit at its default; 64 reports per device and bucket.
start_collector "$collector" "$work/a.log" --db "$work/a.db" \
  --metric 1:rr:1:max_reports_per_bucket=64 \
  --enrollments-per-address "$default_per_address" --enrollments-per-secret 3000 || exit 1
pids+=("$collector_pid")
port=$collector_port

echo "(a) identity theft"
victim=5eed5eed5eed0001
answer=$(python3 "$client" enroll "$port" 127.0.0.1 $victim victim)
check "the victim enrolls" "$(status_of "$answer")" 200
victim_token=${answer#* }
for thief in 127.0.0.9 127.0.0.1; do
  answer=$(python3 "$client" enroll "$port" $thief $victim thief)
  echo "  the thief from $thief: $answer" | cut -c1-160
  check "the thief enrolls the victim's nonce from $thief" "$(status_of "$answer")" 409
  if [ "$(status_of "$answer")" = 200 ]; then
    # As before device keys: the thief posts ids 0..63 (observed this
    # minute: other content than the victim's reports under those ids).
    BLUR_DEVICE_TOKEN=${answer#* } BLUR_FIRST_REPORT_ID=0 "$poster" "http://127.0.0.1:$port" \
      1 1000000 $((16#$victim)) 1 64 $(($(date +%s) / 60)) 1 > "$work/thief.json"
    echo "  the thief's batch: $(cat "$work/thief.json")"
  fi
done
BLUR_DEVICE_TOKEN=$victim_token BLUR_FIRST_REPORT_ID=0 \
  "$poster" "http://127.0.0.1:$port" 1 1000000 $((16#$victim)) 1 64 0 1 > "$work/victim.json"
echo "  the victim's batch (report ids 0..63): $(cat "$work/victim.json")" | cut -c1-300
check "the victim's reports stored" \
  "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["accepted"])' "$work/victim.json")" 64
answer=$(python3 "$client" enroll "$port" 127.0.0.1 $victim victim)
check "the victim renews" "$(status_of "$answer")" 200

echo "(b) lock-out"
renewing=5eed5eed5eed0002
answer=$(python3 "$client" enroll "$port" 127.0.0.1 $renewing renewing)
check "a device enrolls before the attack" "$(status_of "$answer")" 200
# The attackers keep at it while the honest devices try: once the
# allowance is spent (refusals begin), every refill is theirs to take.
before=$(refusals)
python3 "$client" drain "$port" 127.0.0.2,127.0.0.3,127.0.0.4 120 a77ac0000000 \
  127.0.0.5:5eed5eed5eed0003:newcomer 127.0.0.1:$renewing:renewing > "$work/drain.json"
python3 - "$work/drain.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = sum(c.get("200", 0) for c in d["sources"].values())
refused = sum(c.get("429", 0) for c in d["sources"].values())
per = ", ".join(f'{s}: {c.get("200", 0):,}' for s, c in d["sources"].items())
print(f"  3 sources, {ok + refused:,} new devices tried in {d['seconds']} s: {ok:,} enrolled "
      f"({per}), {refused:,} refused (429)")
for h, what in zip(d["honest"], ("a new device from 127.0.0.5", "the device renewing its token")):
    when = "during the attack" if h["during"] else "before the allowance was spent"
    print(f"  {what}, {when}: {h['status']} {h['answer']}"[:170])
PY
field() { python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$work/drain.json" "$1"; }
check "refusals counted as enrollment_rate" $(($(refusals) - before)) \
  "$(field 'sum(c.get("429", 0) for c in d["sources"].values()) + sum(h["status"] == 429 for h in d["honest"])')"
check "the honest devices tried once the allowance was spent" "$(field 'all(h["during"] for h in d["honest"])')" True
check "a new device from a fourth address" "$(field 'd["honest"][0]["status"]')" 200
check "a renewal" "$(field 'd["honest"][1]["status"]')" 200
kill "$collector_pid"; wait "$collector_pid" 2>/dev/null

echo "(c) $fleet devices behind one NAT address, default limits"
start_collector "$collector" "$work/c.log" --db "$work/c.db" --metric 1:rr:1 \
  --enrollments-per-address "$default_per_address" \
  --enrollments-per-secret "$default_per_secret" || exit 1
pids+=("$collector_pid")
"$device_sim" fleet --collector "http://127.0.0.1:$collector_port" --metric 1 \
  --devices "$fleet" --epsilon 1 --seed 26 --threads 8 > "$work/fleet.json" 2> "$work/fleet.err"
n=$(read_api "http://127.0.0.1:$collector_port/v1/metrics/1/estimate" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["n"])')
echo "  $fleet devices from 127.0.0.1 (one report each): $n reported, $((fleet - n)) never did"
grep -m1 "first error" "$work/fleet.err"
check "devices that reported" "$n" "$fleet"

if [ $failures -ne 0 ]; then
  echo "FAIL: $failures checks"
  exit 1
fi
echo "enrollment: the thief got 409 and the victim stored its 64 reports; three addresses left"
echo "a fourth and a renewing device their tokens; $fleet devices behind one address all reported"
