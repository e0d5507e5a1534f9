#!/bin/bash
# The Java binding end to end against a real collector, one JVM per step:
#  1. a new device: Java's Status and Mechanism mirror blur.h, the version
#     crosses, values are recorded, refusals (unknown metric, bad value)
#     name their status and spend nothing;
#  2. a second JVM on the same storage: the budget is what the first left,
#     the day's allowance refuses further records without spending, the
#     device enrolls with its enrollment body, POSTs its pending batch and
#     acknowledges it; lifetime and metric caps; a failing port fails closed;
#     the monotonic counter refuses a restored storage image;
#  3. a fleet of devices (one storage directory each) reports a known
#     distribution, and the collector's debiased estimates are checked
#     against the truth;
#  4. records per second through JNI;
#  5. the example app, twice on one storage directory.
#   java_binding_test.sh JAVA BLUR_JAR EXAMPLE_JAR TEST_JAR JNI_LIBRARY_DIR BLUR_COLLECTOR SDK_INCLUDE_DIR
set -euo pipefail
java=$1 blur_jar=$2 example_jar=$3 test_jar=$4 library_dir=$5 collector=$6 include=$7
devices=${BLUR_JAVA_TEST_DEVICES:-1000}
records=${BLUR_JAVA_TEST_RECORDS:-20000}
work=$(mktemp -d)
# The fleet and the throughput loop on tmpfs where there is one: the SDK
# syncs every charge and every report, and on this disk an fsync costs
# milliseconds; tmpfs measures the binding and the SDK, not the disk.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then fast=$(mktemp -d /dev/shm/blur-java.XXXXXX); else fast=$work/fast; fi
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work" "$fast"' EXIT
source "$(dirname "$0")/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/collector.log" --db "$work/blur.db" \
  --metric 1:rr:1 --metric 2:oue:2:16 --metric 3:laplace:1:101 \
  --metric 10:rr:1 --metric 11:oue:2:8
url=http://127.0.0.1:$collector_port

run() {  # run CLASS ARGS...: the JVM with the binding; -Xcheck:jni checks every JNI call
  "$java" -Xcheck:jni -Djava.library.path="$library_dir" \
    -cp "$blur_jar:$test_jar:$example_jar" "$@"
}
start=$(date +%s.%N)

# The SDK version, from version.h, must be what Blur.version() reports.
version=$(for part in Major Minor Patch; do
  sed -n "s/.*kSdkVersion$part = \([0-9]*\);.*/\1/p" "$include/version.h"; done | paste -sd.)

# 1 and 2. -Xcheck:jni prints its warnings ("WARNING in native method")
# instead of failing: any warning fails the test.
run org.blur.test.BindingTest first "$work/device" "$work/state" "$include/blur.h" \
  "$include/mechanisms/mechanism_table.h" "$version" > "$work/first.log" 2>&1 || { cat "$work/first.log"; exit 1; }
run org.blur.test.BindingTest second "$work/device" "$work/state" "$url" > "$work/second.log" 2>&1 ||
  { cat "$work/second.log"; exit 1; }
cat "$work/first.log" "$work/second.log"
if grep -q "WARNING" "$work/first.log" "$work/second.log"; then exit 1; fi

# The second JVM's five reports reached the collector, each metric's
# exactly: rr 3 (one from the first JVM, two from the second), oue 1,
# laplace 1 (n read as a JSON number, so 30 is not 3).
for expected in 1:3 2:1 3:1; do
  metric=${expected%:*} want=${expected#*:}
  n=$(read_api "$url/v1/metrics/$metric/estimate" |
      /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["n"])')
  [ "$n" = "$want" ] || { echo "FAIL: metric $metric holds $n reports, not $want" >&2; exit 1; }
done
echo "the five reports reached the collector: metric 1 3, metric 2 1, metric 3 1"

# 3. The fleet. Estimates must lie within 4.5 of the collector's own standard
# errors of the truth. SecureRandom cannot be seeded, so the randomization
# differs each run: each value's check fails by chance with probability
# P(|Z| > 4.5) = 6.8e-6, under 7e-5 for the test's 10 values together.
# The check has power: with 1000 devices, 10% of them saying yes, a
# collector that did not debias would miss rr's truth by ~7 standard errors
# (raw yes-count 100 * 0.73 + 900 * 0.27 = 315 against 100, stderr 30).
"$java" -Djava.library.path="$library_dir" -cp "$blur_jar:$test_jar" \
  org.blur.test.BindingTest fleet "$url" "$fast/fleet" "$devices" 4 "$work/truth.json"
read_api "$url/v1/metrics/10/estimate" > "$work/rr.json"
read_api "$url/v1/metrics/11/estimate" > "$work/oue.json"
/usr/bin/python3 - "$work/truth.json" "$work/rr.json" "$work/oue.json" <<'PY'
import json, sys
truth = json.load(open(sys.argv[1]))
n = truth["devices"]
for name, path in (("rr", sys.argv[2]), ("oue", sys.argv[3])):
    est = json.load(open(path))
    assert est["n"] == n, (name, est["n"], n)
    assert len(est["estimates"]) == len(truth[name]), name
    worst = 0
    for e, true_count in zip(est["estimates"], truth[name]):
        z = abs(e["estimate"] - true_count) / e["stderr"]
        assert z < 4.5, f"{name} value {e['value']}: estimate {e['estimate']:.1f}, truth {true_count}, stderr {e['stderr']:.1f}"
        worst = max(worst, z)
    shown = ", ".join(f"{e['value']}: {e['estimate']:.0f} (truth {t}, ±{e['stderr']:.0f})"
                      for e, t in zip(est["estimates"], truth[name]))
    print(f"fleet {name} estimates over {n} devices: {shown}; worst {worst:.2f} standard errors")
PY

# 4. Throughput through JNI (a FlashFilePort file on tmpfs; no -Xcheck:jni
# here or in the fleet, whose checks slow every JNI call).
"$java" -Djava.library.path="$library_dir" -cp "$blur_jar:$test_jar" \
  org.blur.test.BindingTest throughput "$fast/throughput" "$records" | tee "$work/throughput.txt"
grep -q "^jni: [0-9]* records/s" "$work/throughput.txt"

# 5. The example app: provisions once, then keeps spending from the same budget.
run org.blur.example.RecordExample "$work/example" 1 > "$work/example1.txt"
run org.blur.example.RecordExample "$work/example" 0 > "$work/example2.txt"
cat "$work/example1.txt" "$work/example2.txt"
grep -qx "provisioned a new device (Blur $version)" "$work/example1.txt"
grep -q "^budget: spent 1.000000 of 50.000000 nats (today 1.000000), 1 reports pending$" "$work/example1.txt"
if grep -q provisioned "$work/example2.txt"; then exit 1; fi  # (a bare `! grep` never fails under set -e)
grep -q "^budget: spent 2.000000 of 50.000000 nats (today 2.000000), 2 reports pending$" "$work/example2.txt"

echo "Java binding: restart keeps the budget, refusals name their status and spend nothing,"
echo "batches reach the collector and are acknowledged, estimates match the truth;" \
  "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f s", e - s }')"
