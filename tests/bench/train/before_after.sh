#!/usr/bin/env bash
# Two builds of the trainer alternated in one run, on BENCHMARKS.md's
# configuration (train_bench's NonPrivateStep/0 and DpSgdStep/0), for a
# before/after comparison on a shared, noisy machine:
#
#   tests/bench/train/before_after.sh BUILD_BEFORE BUILD_AFTER [ROUNDS]
#
# Each round runs each build once: its plain and DP steps interleaved in
# random order, 3 repetitions of 0.6 s, and prints the minimum over the
# repetitions of the wall time and of the process CPU time (all workers;
# train_bench measures it) per step, and the DP/plain ratio of each. A
# loaded machine moves the CPU time far less than the wall time.
set -euo pipefail
before=${1:?usage: before_after.sh BUILD_BEFORE BUILD_AFTER [ROUNDS]}
after=${2:?usage: before_after.sh BUILD_BEFORE BUILD_AFTER [ROUNDS]}
rounds=${3:-5}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    build=$before
    [ "$side" = after ] && build=$after
    "$build/tests/bench/train_bench" --benchmark_filter='^(NonPrivateStep/0|DpSgdStep/0)/' \
      --benchmark_min_time=0.6 --benchmark_repetitions=3 \
      --benchmark_enable_random_interleaving=true --benchmark_format=json 2>/dev/null |
      python3 -c '
import json, sys
side, round_ = sys.argv[1], sys.argv[2]
runs = [b for b in json.load(sys.stdin)["benchmarks"] if b.get("run_type") == "iteration"]
def least(prefix, key):
    return min(b[key] for b in runs if b["run_name"].startswith(prefix))
pw, dw = least("NonPrivateStep/0/", "real_time"), least("DpSgdStep/0/", "real_time")
pc, dc = least("NonPrivateStep/0/", "cpu_time"), least("DpSgdStep/0/", "cpu_time")
print(f"round {round_} {side:6}: wall plain {pw:6.1f} DP {dw:6.1f} ms, DP/plain {dw / pw:.3f} | "
      f"CPU plain {pc:6.1f} DP {dc:6.1f} ms, DP/plain {dc / pc:.3f}")
' "$side" "$round"
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
