#!/usr/bin/env bash
# A fake fleet (issue 26, attack 6) and the quarantine of new devices.
# blur-collector serve (SQLite, authentication on) with two binary rr
# metrics at epsilon 1: metric 1 without a quarantine, metric 2 with
# quarantine=Q. HONEST devices (blur-device-sim, true share 0.3) report
# metric 1. Another HONEST devices report metric 2 twice: at once (all held
# back: they have just enrolled; the device drops what the collector
# refused) and again Q seconds later (the same seed: the same nonces and
# device keys, so the renewal keeps their first enrollment time; the same
# values and report ids, none stored before). Then FAKES fake devices,
# enrolled from one address with the app's secret at attack time, each
# post 4 crafted reports of value 1 (the bound's worth;
# tests/collector/crafted_reports_poster.cpp) to both metrics.
#
# Checks (exact, over the collector's own numbers: no false alarms):
#   - metric 1 accepts all 4 x FAKES crafted reports and its share moves by
#     exactly the analytic shift(B) = B / (n + B) ((1 - q)/(p - q) - s)
#     (docs/collector.md, the contribution bound), to 1e-6 (the JSON rounding);
#   - metric 2 accepts none of them: its n and share do not move at all
#     (the issue's goal: a shift of at most 0.01), and the honest devices'
#     reports all count (n = HONEST);
#   - /metrics shows the attack: reports_quarantined_total = HONEST (the
#     first try) + 4 x FAKES, reports_received_total{metric="2",
#     device_age="enrolled_last_day"} = 2 x HONEST + 4 x FAKES,
#     enrollments_total{kind="new_device"} = 2 x HONEST + 2 x FAKES and
#     {kind="renewal"} = HONEST.
#
#   sybil_quarantine_test.sh COLLECTOR DEVICE_SIM CRAFTED_REPORTS_POSTER [HONEST FAKES]
set -euo pipefail
collector=$1
device_sim=$2
poster=$3
honest=${4:-20000}
fakes=${5:-1000}
quarantine=20  # seconds: long enough to outlast the first fleet's last enrollment
work=$(mktemp -d)
collector_pid=""
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:rr:1 \
  --metric 2:rr:1:quarantine=${quarantine}s --log-requests false
url=http://127.0.0.1:$collector_port

fleet() {  # METRIC SEED NAME
  "$device_sim" fleet --collector "$url" --devices "$honest" --true-rate 0.3 --epsilon 1 \
    --metric "$1" --seed "$2" --threads 8 > "$work/$3.json" 2> "$work/$3.err" ||
    { cat "$work/$3.err" >&2; echo "FAIL: the honest fleet $3" >&2; exit 1; }
}
fleet 1 61 fleet-1
fleet 2 62 enroll-2  # held back: every report quarantined
sleep $((quarantine + 1))
fleet 2 62 fleet-2
for metric in 1 2; do read_api "$url/v1/metrics/$metric/estimate" > "$work/honest-$metric.json"; done

# The attack: fresh nonces, one address, all at once; 4 reports each.
minute=$(( $(date +%s) / 60 ))
"$poster" "$url" 1 1000000 7000000000 "$fakes" 4 "$minute" 8 > "$work/fake-1.json"
"$poster" "$url" 2 1000000 8000000000 "$fakes" 4 "$minute" 8 > "$work/fake-2.json"
for metric in 1 2; do read_api "$url/v1/metrics/$metric/estimate" > "$work/poisoned-$metric.json"; done
read_api "$url/metrics" > "$work/metrics.txt"

/usr/bin/python3 - "$work" "$honest" "$fakes" <<'PY'
import json, math, re, sys
work, honest, fakes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
load = lambda name: json.load(open(f"{work}/{name}.json"))
held, counted = load("enroll-2"), load("fleet-2")
print("metric 2 before the quarantine ended:", held.get("accepted"), "accepted; after:",
      counted.get("accepted"))
def share(e):
    return e["estimates"][1]["estimate"] / e["n"]
p = math.e / (1 + math.e)
q = 1 - p
crafted = 4 * fakes
rows = []
for metric in (1, 2):
    before, after, posted = load(f"honest-{metric}"), load(f"poisoned-{metric}"), load(f"fake-{metric}")
    s, n, added = share(before), before["n"], after["n"] - before["n"]
    shift = share(after) - s
    bound = crafted / (n + crafted) * ((1 - q) / (p - q) - s)
    rows.append((metric, n, added, s, shift, bound))
    print(f"metric {metric}: {n} honest reports, share {s:.4f}; {fakes} fakes posted {crafted}, "
          f"{posted['accepted']} accepted; share moved {shift:+.4f} (bound for {crafted}: {bound:+.4f})")
    assert n == honest, (metric, n, honest)
    assert posted["failed"] == 0, posted
(_, n1, added1, s1, shift1, bound1), (_, n2, added2, s2, shift2, _) = rows
assert added1 == crafted, added1
assert abs(shift1 - bound1) < 1e-6, (shift1, bound1)  # the JSON rounding
assert added2 == 0 and shift2 == 0, (added2, shift2)
assert abs(shift2) <= 0.01
text = open(f"{work}/metrics.txt").read()
def metric(name, **labels):
    for line in text.splitlines():
        m = re.match(r'(\w+)(?:\{(.*)\})? (\S+)$', line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if got == {k: str(v) for k, v in labels.items()}:
            return float(m.group(3))
    raise AssertionError(f"no {name} {labels}")
assert metric("blur_collector_reports_quarantined_total") == honest + crafted
assert metric("blur_collector_reports_received_total", metric=2,
              device_age="enrolled_last_day") == 2 * honest + crafted
assert metric("blur_collector_enrollments_total", kind="new_device") == 2 * honest + 2 * fakes
assert metric("blur_collector_enrollments_total", kind="renewal") == honest
print(f"PASS: {fakes} fakes moved metric 1 by {shift1:+.4f} (the bound) and metric 2, "
      f"quarantined, by {shift2:+.4f}; /metrics counted {crafted} quarantined reports")
PY
