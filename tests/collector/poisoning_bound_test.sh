#!/usr/bin/env bash
# Poisoning against the contribution bound, end to end (blur-collector serve
# on SQLite, real SDK devices from blur-device-sim, an attacker posting SDK-
# encoded batches). Two binary rr metrics at epsilon 1, each with 20,000
# honest devices (true share 0.3): metric 1 with the default bound (4 reports
# per device per bucket), metric 2 with the bound off (10^9). Then, per
# metric, one device nonce posts 10,000 crafted reports of value 1 and 100
# fake nonces post 10,000 each, all in one time bucket.
#
# The estimator (collector/src/estimate/frequency_oracle.h) is
# c_hat = (I - n q) / (p - q). B crafted reports of value 1 add B to both I
# and n, so c_hat grows by exactly B (1 - q) / (p - q) and the share
# s = c_hat / n moves by
#   shift(B) = B / (n + B) * ((1 - q) / (p - q) - s),
# increasing in B. With the bound, B <= (1 + 100) x 4 = 404 per bucket, so
# the shift is at most shift(404) (about 0.025 here); without it B is
# 1,010,000 and the share is pushed past 1. Both checks are exact
# inequalities over the collector's own numbers (no sampling: no false
# alarms); the honest estimates themselves are checked within 5 standard
# errors of the fleet's truth (false-alarm rate 6e-7 each).
#
# FAKE_NONCES (default 100; 10 under the sanitizers, where ingest is ~10x
# slower) changes the attack's size, not the checks.
#
#   poisoning_bound_test.sh COLLECTOR DEVICE_SIM CRAFTED_REPORTS_POSTER [FAKE_NONCES]
set -euo pipefail
collector=$1
device_sim=$2
poster=$3
fakes=${4:-100}
work=$(mktemp -d)
collector_pid=""
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:rr:1 \
  --metric 2:rr:1:max_reports_per_bucket=1000000000
url=http://127.0.0.1:$collector_port

estimate() {  # the estimate of metric $1 as JSON
  read_api "$url/v1/metrics/$1/estimate"
}

for metric in 1 2; do
  "$device_sim" fleet --collector "$url" --devices 20000 --true-rate 0.3 --epsilon 1 \
    --metric $metric --seed $((40 + metric)) --threads 8 > "$work/fleet-$metric.json" \
    2> "$work/fleet-$metric.err"
  estimate $metric > "$work/honest-$metric.json"
done

# The attack: nonces far from the simulator's, each metric its own, one
# minute (so one bucket) for every crafted report.
minute=$(( $(date +%s) / 60 ))
for metric in 1 2; do
  base=$((metric * 1000000000))
  "$poster" "$url" $metric 1000000 $base 1 10000 $minute 1 > "$work/one-$metric.json"
  "$poster" "$url" $metric 1000000 $((base + 1)) $fakes 10000 $minute 8 > "$work/fake-$metric.json"
  estimate $metric > "$work/poisoned-$metric.json"
done
# One enrolled device posting under other nonces (fresh nonces per batch):
# every batch refused with 403, nothing stored.
before=$(estimate 2)
if "$poster" "$url" 2 1000000 3000000000 10 64 $minute 2 impersonate > "$work/impersonate.json"; then
  echo "FAIL: batches under other devices' nonces were accepted" >&2; exit 1
fi
/usr/bin/python3 - "$work/impersonate.json" "$before" "$(estimate 2)" <<'PY'
import json, sys
out, before, after = json.load(open(sys.argv[1])), json.loads(sys.argv[2]), json.loads(sys.argv[3])
# Nonce 0 is the token's own: its batch is stored; the other 9 are refused.
assert out["batches"] == 10 and out["failed"] == 9 and out["accepted"] == 64, out
assert out["first_error"].startswith("403 "), out
assert after["n"] - before["n"] == 64, (before["n"], after["n"])
print("impersonation: 9 of 10 batches under other nonces refused with 403:", out["first_error"])
PY
kill $collector_pid; wait $collector_pid || true
grep "over their contribution bound refused" "$work/server.log"

/usr/bin/python3 - "$work" "$fakes" <<'PY'
import json, math, sys
work, fakes = sys.argv[1], int(sys.argv[2])
load = lambda name: json.load(open(f"{work}/{name}.json"))
eps = 1.0
p, q = math.exp(eps) / (math.exp(eps) + 1), 1 / (math.exp(eps) + 1)
pull = (1 - q) / (p - q)  # what one crafted report of value 1 adds to c_hat
crafted = 10000 + fakes * 10000
B = (1 + fakes) * 4  # nonces x max_reports_per_bucket, one bucket

def shares(metric):
    fleet, honest, poisoned = load(f"fleet-{metric}"), load(f"honest-{metric}"), load(f"poisoned-{metric}")
    one = honest["estimates"][1]
    assert honest["n"] == 20000 == fleet["devices"], honest["n"]
    assert abs(one["estimate"] - fleet["true_counts"][1]) < 5 * one["stderr"], (one, fleet)
    s = one["estimate"] / honest["n"]
    s_poisoned = poisoned["estimates"][1]["estimate"] / poisoned["n"]
    accepted = sum(load(f"{who}-{metric}")["accepted"] for who in ("one", "fake"))
    refused = sum(load(f"{who}-{metric}")["over_limit"] for who in ("one", "fake"))
    assert accepted + refused == crafted, (accepted, refused)
    assert poisoned["n"] - honest["n"] == accepted, (poisoned["n"], honest["n"], accepted)
    return s, s_poisoned, accepted, refused

s1, s1p, accepted1, refused1 = shares(1)
shift_bound = B / (20000 + B) * (pull - s1)
print(f"bound on (4 per device per bucket): share {s1:.4f} -> {s1p:.4f}, shift {s1p - s1:+.4f}; "
      f"{accepted1} of {crafted} crafted reports accepted, {refused1} refused; "
      f"analytic bound: B = {1 + fakes} x 4 = {B} reports, count shift <= {B * pull:.1f}, "
      f"share shift <= {shift_bound:.4f}")
print("  limit answer:", load("one-1")["limit"])
assert accepted1 == B, accepted1
assert load("one-1")["limit"] == "metric 1 accepts at most 4 reports per device per 3600-second bucket"
# Equality when every accepted crafted report is a 1; 1e-6 absorbs the JSON rounding.
assert s1p - s1 <= shift_bound + 1e-6, (s1p - s1, shift_bound)

s2, s2p, accepted2, refused2 = shares(2)
print(f"bound off (10^9): share {s2:.4f} -> {s2p:.4f}, shift {s2p - s2:+.4f}; "
      f"{accepted2} of {crafted} crafted reports accepted")
assert accepted2 == crafted and refused2 == 0
assert s2p - s2 > 10 * shift_bound, (s2p - s2, shift_bound)
print(f"the bound cut the shift from {s2p - s2:+.4f} to {s1p - s1:+.4f} (analytic bound {shift_bound:.4f})")
PY
