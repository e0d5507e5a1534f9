#!/usr/bin/env bash
# End to end through the real programs: blur-collector serve (HTTP, SQLite)
# <- blur-device-sim (N SDK instances) -> blur-collector estimate (offline),
# and blur-device-sim's offline fleet and randomize commands.
# Checks: every report stored; each estimate is within 5 standard errors of
# the fleet's truth (false-alarm rate 6e-7 per value; a collector that did
# not debias would be off by ~30 standard errors for rr here).
# SCALE (default 1) divides every fleet's size: 5 under the sanitizers,
# which check memory, not statistical power (the same checks, with the
# same false-alarm rate per value).
set -euo pipefail
collector=$1
device_sim=$2
randomizer_kat=$3
scale=${4:-1}
n() { echo $(( $1 / scale )); }
work=$(mktemp -d)
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 3:rr:0.75 \
  --metric 4:oue:1:64 --metric 5:olh:1:64
port=$collector_port

"$device_sim" fleet --collector "http://127.0.0.1:$port" --devices "$(n 3000)" --true-rate 0.2 \
  --epsilon 0.75 --metric 3 --seed 99 --threads 8 > "$work/fleet.json"
"$device_sim" fleet --collector "http://127.0.0.1:$port" --mechanism oue --domain 64 --epsilon 1 \
  --devices "$(n 2000)" --metric 4 --seed 98 --threads 8 > "$work/fleet-oue.json"
"$device_sim" fleet --collector "http://127.0.0.1:$port" --mechanism olh --domain 64 --epsilon 1 \
  --devices "$(n 2000)" --metric 5 --seed 97 --threads 8 > "$work/fleet-olh.json"
kill $collector_pid; wait $collector_pid || true

"$collector" estimate --db "$work/blur.db" --metric 3 > "$work/estimate.json"
"$collector" estimate --db "$work/blur.db" --metric 4 > "$work/estimate-oue.json"
"$collector" estimate --db "$work/blur.db" --metric 5 > "$work/estimate-olh.json"
/usr/bin/python3 - "$work/fleet.json" "$work/estimate.json" "$work/fleet-oue.json" \
  "$work/estimate-oue.json" "$work/fleet-olh.json" "$work/estimate-olh.json" "$scale" <<'PY'
import json, sys
scale = int(sys.argv[7])
fleet = json.load(open(sys.argv[1]))
est = json.load(open(sys.argv[2]))
assert est["n"] == fleet["devices"] == 3000 // scale, (est["n"], fleet)
one = est["estimates"][1]
error = abs(one["estimate"] - fleet["true_counts"][1])
print(f"rr over HTTP: truth {fleet['true_counts'][1]}, estimate {one['estimate']:.1f}, stderr {one['stderr']:.1f}")
assert error < 5 * one["stderr"], "estimate too far from the truth"
for fleet_path, estimate_path, name in ((sys.argv[3], sys.argv[4], "oue"),
                                        (sys.argv[5], sys.argv[6], "olh")):
    fleet = json.load(open(fleet_path))
    est = json.load(open(estimate_path))
    assert est["n"] == 2000 // scale and len(est["estimates"]) == 64
    for e, truth in zip(est["estimates"], fleet["true_counts"]):
        assert abs(e["estimate"] - truth) < 5 * e["stderr"], (e, truth)
    print(f"{name} over HTTP and SQLite: all 64 estimates within 5 standard errors")
PY

"$device_sim" fleet --offline --mechanism grr --epsilon 2 --domain 16 --devices "$(n 4000)" --seed 5 \
  > "$work/offline.json"
"$device_sim" fleet --offline --mechanism oue --epsilon 1 --domain 64 --devices "$(n 3000)" --seed 6 \
  > "$work/offline-oue.json"
"$device_sim" fleet --offline --mechanism hr --epsilon 1 --domain 100 --devices "$(n 5000)" --seed 9 \
  > "$work/offline-hr.json"
"$device_sim" fleet --offline --mechanism olh --epsilon 2 --domain 100 --devices "$(n 5000)" --seed 10 \
  > "$work/offline-olh.json"
"$device_sim" fleet --offline --mechanism blh --epsilon 1 --domain 100 --devices "$(n 5000)" --seed 11 \
  > "$work/offline-blh.json"
"$device_sim" fleet --offline --mechanism rappor --epsilon 2 --domain 100 --devices "$(n 5000)" --seed 12 \
  --postprocess norm-sub > "$work/offline-rappor.json"
"$device_sim" fleet --offline --mechanism laplace --epsilon 2 --domain 101 --devices "$(n 3000)" --seed 7 \
  > "$work/offline-laplace.json"
"$device_sim" fleet --offline --mechanism onebit --epsilon 1 --domain 101 --devices "$(n 3000)" --seed 8 \
  > "$work/offline-onebit.json"
"$device_sim" randomize --mechanism grr --epsilon 1.5 --domain 16 --input 9 --count "$(n 20000)" \
  --seed 3 > "$work/randomize.json"
/usr/bin/python3 - "$work/offline.json" "$work/randomize.json" "$work/offline-oue.json" \
  "$work/offline-laplace.json" "$work/offline-onebit.json" "$work/offline-hr.json" \
  "$work/offline-olh.json" "$work/offline-blh.json" "$work/offline-rappor.json" "$scale" <<'PY'
import json, math, sys
scale = int(sys.argv[10])
rappor = json.load(open(sys.argv[9]))
assert rappor["postprocessing"] == "norm-sub"
consistent = [e["estimate_normsub"] for e in rappor["estimates"]]
assert min(consistent) >= 0 and abs(sum(consistent) - 5000 // scale) < 1e-6, sum(consistent)
print("rappor offline: Norm-Sub estimates are non-negative and sum to n")
for path in sys.argv[4:6]:  # numeric
    numeric = json.load(open(path))
    mean = numeric["estimates"][0]
    assert numeric["n"] == 3000 // scale and mean["value"] == "mean"
    if numeric["mechanism"] == "laplace":  # the grid histogram: one bin per grid point
        assert [b["value"] for b in numeric["histogram"]] == list(range(101))
        assert all(b["stderr"] > 0 and b["ci95"][0] < b["ci95"][1] for b in numeric["histogram"])
    assert abs(mean["estimate"] - numeric["true_mean"]) < 5 * mean["stderr"], numeric
    print(f"{numeric['mechanism']} offline: mean {mean['estimate']:.2f} vs true "
          f"{numeric['true_mean']:.2f} (stderr {mean['stderr']:.2f})")
for path, name, n, d in ((sys.argv[1], "grr", 4000, 16), (sys.argv[3], "oue", 3000, 64),
                         (sys.argv[6], "hr", 5000, 100), (sys.argv[7], "olh", 5000, 100),
                         (sys.argv[8], "blh", 5000, 100), (sys.argv[9], "rappor", 5000, 100)):
    offline = json.load(open(path))
    assert offline["n"] == n // scale and len(offline["estimates"]) == d and offline["mechanism"] == name
    for e, truth in zip(offline["estimates"], offline["true_counts"]):
        assert abs(e["estimate"] - truth) < 5 * e["stderr"], (name, e, truth)
    print(f"{name} offline: all {d} estimates within 5 standard errors")
r = json.load(open(sys.argv[2]))
assert r["epsilon_charged_micros"] == 1500000 and sum(r["support"]) == 20000 // scale
p = math.exp(1.5) / (math.exp(1.5) + 15)
count = 20000 // scale
z = (r["support"][9] - count * p) / math.sqrt(count * p * (1 - p))
print(f"randomize: P(truth) z-score {z:.2f}")
assert abs(z) < 4.89, z
PY

# The simulator's randomize command counts the same support as the shared
# randomizer known answers (tests/vectors/randomizer_outputs.kat), with each
# support rule re-implemented here from its definition (the Bloom hash from
# Python's hashlib).
names=(_ rr grr sue oue laplace onebit hr olh blh rappor)
grep -vE '^(#|$)' "$randomizer_kat" | while read -r mechanism epsilon domain seed input count outputs; do
  # pem and sfp: a word input; word_discovery_test and fragment_puzzle_discovery_test count them
  [ "$mechanism" -ge 11 ] && continue
  name=${names[$mechanism]}
  eps=$(/usr/bin/python3 -c "print($epsilon / 1e6)")
  "$device_sim" randomize --mechanism "$name" --epsilon "$eps" --domain "$domain" --seed "$seed" \
    --input "$input" --count "$count" |
    /usr/bin/python3 -c "
import collections, hashlib, json, struct, sys
mechanism, epsilon, domain = $mechanism, $epsilon, $domain
result = json.load(sys.stdin)
tokens = '$outputs'.split(',')
POLY = [0, 0x3, 0x7, 0xB, 0x13, 0x25, 0x43, 0x83, 0x11B, 0x211, 0x409, 0x805, 0x1053]
def gf2_multiply(a, b, k):
    product = 0
    for i in range(k):
        if (b >> i) & 1: product ^= a << i
    for bit in range(2 * k - 2, k - 1, -1):
        if (product >> bit) & 1: product ^= POLY[k] << (bit - k)
    return product
def bloom_position(cohort, value):
    text = str(value).encode()
    digest = hashlib.sha256(b'blur.bloom.v1' + struct.pack('<IQII', 1, 0, cohort, len(text)) + text).digest()
    return (digest[0] | digest[1] << 8) % 256
if 'histogram' in result:
    expected = {str(k): v for k, v in collections.Counter(int(t) for t in tokens).items()}
    assert result['histogram'] == expected, (result['histogram'], expected)
    sys.exit(0)
expected = [0] * domain
for token in tokens:
    for v in range(domain):
        if mechanism in (1, 2):
            expected[v] += int(token) == v
        elif mechanism == 7:  # Hadamard: j supports v iff popcount((v+1) & j) is even
            expected[v] += bin((v + 1) & int(token)).count('1') % 2 == 0
        elif mechanism in (3, 4):  # unary: bit v of the payload
            expected[v] += (bytes.fromhex(token)[v // 8] >> (v % 8)) & 1
        elif mechanism in (8, 9):  # local hashing: top(a v + b) == bucket
            a, b, y = map(int, token.split(':'))
            thresholds = [603456, 1538340, 2333474, 3073962, 3789965, 4494347, 5193064]
            g_bits = 1 if mechanism == 9 else 1 + sum(epsilon >= t for t in thresholds)
            k = max(max(1, (domain - 1).bit_length()), g_bits)
            expected[v] += (gf2_multiply(a, v, k) ^ b) >> (k - g_bits) == y
        elif mechanism == 10:  # RAPPOR, h = 1: v's Bloom bit in the report's cohort
            cohort, filter_hex = token.split(':')
            position = bloom_position(int(cohort), v)
            expected[v] += (bytes.fromhex(filter_hex)[position // 8] >> (position % 8)) & 1
assert result['support'] == expected, (mechanism, result['support'], expected)
"
done
echo "randomize: support counts match the randomizer known answers"
