#!/usr/bin/env bash
# Backdating past the contribution bound (issue 26, attack 3), end to end:
# blur-collector serve on SQLite, 20,000 honest SDK devices from
# blur-device-sim (binary rr, epsilon 1, true share 0.3), then k enrolled
# fake devices each posting 4 crafted reports of value 1 in each of H past
# hourly buckets (the per-bucket bound, 4, met in every bucket), the newest
# first, the first 30 minutes before the attack starts.
#
# Run three times on fresh databases, the same honest fleet each time:
#  - defended (the defaults): per device and metric at most A = 4 x 24 = 96
#    reports per UTC day of arrival (max_reports_per_day), and observation
#    times more than --max-report-age (3 days) before arrival bucketed at
#    arrival. Every fake has far more than A reports within the bucket
#    bound, so exactly k x A are accepted; no accepted crafted report lies
#    in a bucket older than the window; the reports observed past the window
#    (4 x (H - 72) per fake: the 72 newest hours are within it as long as
#    the attack takes under 30 minutes, well past the ctest timeout) are
#    counted in blur_collector_reports_implausible_time_total.
#  - daily4: the same with max_reports_per_day=4 (a metric an honest
#    device records a few times a day): exactly k x 4 accepted.
#  - undefended (issue 26's figures): --max-report-age 30d and
#    max_reports_per_day at its largest: all k x 4 x H are accepted, spread
#    over H buckets.
#
# The share's shift, from the estimator c_hat = (I - n q) / (p - q): B
# crafted reports of value 1 move the share s by exactly
#   shift(B) = B / (n + B) * ((1 - q) / (p - q) - s),
# increasing in B, so the defended shift is at most shift(k x A). Exact
# inequalities over the collector's own numbers (no sampling: no false
# alarms); the honest estimate is within 5 standard errors of the fleet's
# truth (false-alarm rate 6e-7).
#
# The allowance counts per UTC day: an attack that straddled midnight would
# get 2 x A per fake, so the attack waits for the next day when it starts
# within MARGIN seconds of midnight.
#
# FAKES (default 100), HOURS (719) and HONEST (20,000) change the attack's
# and the fleet's size, not the checks (the sanitizer build uses 10 fakes
# and 5,000 honest devices).
#
#   backdating_bound_test.sh COLLECTOR DEVICE_SIM CRAFTED_REPORTS_POSTER [FAKES] [HOURS] [HONEST]
set -euo pipefail
collector=$1
device_sim=$2
poster=$3
fakes=${4:-100}
hours=${5:-719}
honest=${6:-20000}
margin=600
work=$(mktemp -d)
collector_pid=""
trap 'if [ -n "$collector_pid" ]; then kill $collector_pid 2>/dev/null || true; fi; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"

# run NAME serve-arguments...: the honest fleet, then the attack.
run() {
  local name=$1
  shift
  start_collector "$collector" "$work/$name.log" --db "$work/$name.db" "$@"
  local url=http://127.0.0.1:$collector_port
  # Clocks set to this hour (--spread-hours 1): honest times are plausible.
  "$device_sim" fleet --collector "$url" --devices $honest --true-rate 0.3 --epsilon 1 \
    --spread-hours 1 --metric 1 --seed 43 --threads 8 > "$work/$name-fleet.json" \
    2> "$work/$name-fleet.err"
  read_api "$url/v1/metrics/1/estimate" > "$work/$name-honest.json"
  local to_midnight=$(( 86400 - $(date -u +%s) % 86400 ))
  if [ $to_midnight -lt $margin ]; then
    echo "waiting $to_midnight s for the next UTC day (the allowance counts per day)"
    sleep $(( to_midnight + 2 ))
  fi
  local start
  start=$(date -u +%s)
  "$poster" "$url" 1 1000000 1000000000 "$fakes" $(( 4 * hours )) \
    "$(( start / 60 - 30 ))/4/60" 8 > "$work/$name-attack.json"
  local end
  end=$(date -u +%s)
  if [ $(( start / 86400 )) != $(( end / 86400 )) ]; then
    echo "FAIL: the attack straddled midnight UTC (took $(( end - start )) s)" >&2
    exit 1
  fi
  # The buckets before the window's (as of the attack's start): no report
  # arriving later can claim them.
  local old=$(( (start - 3 * 86400) / 3600 * 3600 ))
  echo "{\"start\": $start, \"end\": $end, \"old\": $old}" > "$work/$name-time.json"
  read_api "$url/v1/metrics/1/estimate" > "$work/$name-poisoned.json"
  read_api "$url/v1/metrics/1/estimate?to=$old" > "$work/$name-old.json"
  curl -sf "$url/metrics" > "$work/$name-metrics.txt"
  kill "$collector_pid"
  wait "$collector_pid" || true
  collector_pid=""
}

run defended --metric 1:rr:1
run daily4 --metric 1:rr:1:max_reports_per_day=4
run undefended --metric 1:rr:1:max_reports_per_day=1440000000000 --max-report-age 30d
grep "over their contribution bound refused" "$work/defended.log"

/usr/bin/python3 - "$work" "$fakes" "$hours" "$honest" <<'PY'
import json, math, re, sys
work, fakes, hours, honest = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
load = lambda name: json.load(open(f"{work}/{name}.json"))
eps = 1.0
p, q = math.exp(eps) / (math.exp(eps) + 1), 1 / (math.exp(eps) + 1)
pull = (1 - q) / (p - q)  # what one crafted report of value 1 adds to c_hat
crafted = fakes * 4 * hours
A = 4 * 24  # max_reports_per_day's default: max_reports_per_bucket x buckets per day
window_hours = 72  # --max-report-age 3d: the newest 72 hours of each fake are within it

def counter(run, name, labels=""):
    for line in open(f"{work}/{run}-metrics.txt"):
        m = re.match(r"^" + re.escape(name + labels) + r" (\S+)$", line.strip())
        if m:
            return float(m.group(1))
    raise AssertionError(f"{name}{labels} not in /metrics")

def shares(run):
    fleet, before, after = load(f"{run}-fleet"), load(f"{run}-honest"), load(f"{run}-poisoned")
    one = before["estimates"][1]
    assert before["n"] == honest == fleet["devices"], (before["n"], fleet["devices"])
    assert abs(one["estimate"] - fleet["true_counts"][1]) < 5 * one["stderr"], (one, fleet)
    attack = load(f"{run}-attack")
    assert attack["failed"] == 0, attack
    assert attack["accepted"] + attack["over_limit"] == crafted, attack
    assert after["n"] - before["n"] == attack["accepted"], (after["n"], before["n"], attack)
    s = one["estimate"] / before["n"]
    s_after = after["estimates"][1]["estimate"] / after["n"]
    t = load(f"{run}-time")
    return s, s_after, attack, t["end"] - t["start"]

def shift_bound(B, s):
    return B / (honest + B) * (pull - s)

s0, s1, attack, seconds = shares("undefended")
print(f"undefended (--max-report-age 30d, no daily allowance): {fakes} fakes x 4 x {hours} "
      f"buckets: {attack['accepted']:,} of {crafted:,} crafted reports accepted in {seconds} s; "
      f"all-time share {s0:.4f} -> {s1:.4f} (shift {s1 - s0:+.4f}); "
      f"in buckets older than 3 days: {load('undefended-old')['n']:,}")
assert attack["accepted"] == crafted, attack
# Undefended, every crafted bucket before the window's is filled.
t = load("undefended-time")
first_minute = t["start"] // 60 - 30
old_buckets = sum(1 for i in range(hours) if (first_minute - 60 * i) * 60 // 3600 * 3600 < t["old"])
assert load("undefended-old")["n"] == fakes * 4 * old_buckets, (load("undefended-old"), old_buckets)
assert counter("undefended", "blur_collector_reports_implausible_time_total") == 0

d0, d1, attack, seconds = shares("defended")
B = fakes * A
bound = shift_bound(B, d0)
implausible = fakes * 4 * max(0, hours - window_hours)
print(f"defended (the defaults): {attack['accepted']:,} of {crafted:,} accepted in {seconds} s "
      f"(k x A = {fakes} x {A} = {B:,}); {attack['over_limit']:,} refused; "
      f"all-time share {d0:.4f} -> {d1:.4f} (shift {d1 - d0:+.4f}; analytic bound "
      f"{B:,}/({honest:,} + {B:,}) x ({pull:.4f} - {d0:.4f}) = {bound:.4f}); "
      f"in buckets older than 3 days: {load('defended-old')['n']}; "
      f"implausible_time_total {counter('defended', 'blur_collector_reports_implausible_time_total'):.0f}")
print("  limit answer:", attack["limit"])
assert attack["accepted"] == B, (attack["accepted"], B)
assert attack["limit"] == "metric 1 accepts at most 96 reports per device per day of arrival (UTC)", attack
# Equality when every accepted crafted report is a 1; 1e-6 absorbs the JSON rounding.
assert d1 - d0 <= bound + 1e-6, (d1 - d0, bound)
assert load("defended-old")["n"] == 0, load("defended-old")
assert counter("defended", "blur_collector_reports_implausible_time_total") == implausible
assert counter("defended", "blur_collector_requests_refused_total",
               '{reason="contribution_bound"}') > 0
assert s1 - s0 > 2 * (d1 - d0), (s1 - s0, d1 - d0)

f0, f1, attack, seconds = shares("daily4")
B4 = fakes * 4
bound4 = shift_bound(B4, f0)
print(f"max_reports_per_day=4: {attack['accepted']:,} of {crafted:,} accepted in {seconds} s; "
      f"all-time share {f0:.4f} -> {f1:.4f} (shift {f1 - f0:+.4f}; analytic bound {bound4:.4f})")
assert attack["accepted"] == B4, (attack["accepted"], B4)
assert f1 - f0 <= bound4 + 1e-6, (f1 - f0, bound4)
assert load("daily4-old")["n"] == 0, load("daily4-old")
print(f"the allowance and the window cut the accepted crafted reports from {crafted:,} to {B:,} "
      f"and the shift from {s1 - s0:+.4f} to {d1 - d0:+.4f} (bound {bound:.4f})")
PY
