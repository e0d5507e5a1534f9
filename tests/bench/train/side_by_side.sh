#!/usr/bin/env bash
# The trainer's speed next to Opacus's, in one run, on BENCHMARKS.md's
# configuration (vocabulary 5000, embedding 64, LSTM 128, 20-token
# sequences, expected batch 64, sigma 1, C 1, 2 threads):
#
#   tests/bench/train/side_by_side.sh BUILD_DIR [OPACUS_SOURCE_DIR]
#
# 1. Blur: train_bench's NonPrivateStep/0 and DpSgdStep/0 (examples/s,
#    FLOPs per example, achieved GFLOP/s) and GemmRate (the machine's GEMM
#    roofline as the trainer runs GEMMs: one single-threaded sgemm per
#    worker thread).
# 2. Opacus 1.4.0 on Debian's PyTorch (python3-torch), if its source tree
#    is given (not part of Blur: fetch it yourself, e.g. the v1.4.0 tag of
#    the pytorch/opacus repository). opacus_peer.py times plain SGD and
#    DP-SGD (DPLSTM + PrivacyEngine, Poisson sampling, RDP) on the same
#    configuration. Opacus imports opt_einsum, which Debian lacks; shim/
#    forwards it to torch.einsum. It also imports SciPy: install Debian's
#    python3-torch and python3-scipy (not in toolchains/setup.sh: no test
#    needs them).
# Then the ratios the goals are stated in (BENCHMARKS.md), and the DP/plain
# ratio of the steps' process CPU time (all workers), which a loaded
# machine disturbs far less than the wall time.
set -euo pipefail
build=${1:?usage: side_by_side.sh BUILD_DIR [OPACUS_SOURCE_DIR]}
opacus=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
seconds=${SECONDS_PER_MEASUREMENT:-15}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The plain and DP steps are measured in REPETITIONS rounds of
# seconds/REPETITIONS each, in a random order per round (Google Benchmark's
# random interleaving), and compared by their medians: the machine's speed
# drifts by 10-20% over minutes, which back-to-back single runs put into the
# DP/plain ratio.
repetitions=${REPETITIONS:-5}
"$build/tests/bench/train_bench" --benchmark_filter='^(NonPrivateStep/0|DpSgdStep/0|GemmRate)' \
  --benchmark_min_time="$(python3 -c "print($seconds / $repetitions)")" \
  --benchmark_repetitions="$repetitions" --benchmark_enable_random_interleaving=true \
  --benchmark_format=json >"$out/blur.json"

if [ -n "$opacus" ]; then
  [ -d "$opacus/opacus" ] || { echo "side_by_side: $opacus has no opacus/ package" >&2; exit 2; }
  # Debian's interpreter, whose python3-torch is the peer's PyTorch. Its
  # BLAS is Debian's libblas.so.3 alternative: OpenBLAS once installed (as
  # Blur's setup does), the reference BLAS on a plain install; both are run.
  multiarch=$(gcc -print-multiarch)
  for blas in system reference; do
    if [ "$blas" = reference ]; then
      [ -e "/usr/lib/$multiarch/blas/libblas.so.3" ] || continue
      export LD_LIBRARY_PATH="/usr/lib/$multiarch/blas"
    fi
    PYTHONPATH="$opacus:$here/shim" /usr/bin/python3 "$here/opacus_peer.py" --seconds "$seconds" \
      --threads 2 | tee "$out/opacus-$blas.log" >&2
    tail -n 1 "$out/opacus-$blas.log" >"$out/opacus-$blas.json"
    unset LD_LIBRARY_PATH
  done
fi

python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
runs = json.load(open(os.path.join(out, "blur.json")))["benchmarks"]
# The median of the repetitions (the single run when there is one).
medians = {b["run_name"]: b for b in runs if b.get("aggregate_name") == "median"}
blur = {b["run_name"]: medians.get(b["run_name"], b) for b in runs}
def step(prefix):
    return next(b for n, b in blur.items() if n.startswith(prefix))
plain = step("NonPrivateStep/0/")
dp = step("DpSgdStep/0/")
def rounds_of(b):
    return [r for r in runs if r["run_name"] == b["run_name"] and r.get("run_type") == "iteration"]
rounds = len(rounds_of(dp))
print(f"Blur: medians of {rounds} interleaved rounds")
roof = max(b["GFLOP_per_s"] for n, b in blur.items() if n.startswith("GemmRate"))
print(f"GEMM backend: {dp.get('label', '')}")
print(f"FLOPs per example: {dp['MFLOP_per_example']:.1f} MFLOP")
print(f"GEMM roofline (best GemmRate): {roof:.0f} GFLOP/s")
print(f"{'system':40} {'plain ex/s':>11} {'DP ex/s':>9} {'DP/plain step':>14} {'DP GFLOP/s':>11}")
print(f"{'Blur train_bench':40} {plain['items_per_second']:11.1f} {dp['items_per_second']:9.1f} "
      f"{plain['items_per_second'] / dp['items_per_second']:14.2f} {dp['GFLOP_per_s']:11.1f}")
for blas, label in (("system", "libblas.so.3 alternative"), ("reference", "reference BLAS")):
    peer = os.path.join(out, f"opacus-{blas}.json")
    if not os.path.exists(peer):
        continue
    o = json.load(open(peer))
    name = f"Opacus 1.4.0, torch {o['torch']}, {label}"
    print(f"{name:40} {o['plain_examples_per_s']:11.1f} "
          f"{o['dp_examples_per_s']:9.1f} {o['dp_over_plain_step_time']:14.2f} {'':>11}")
    print(f"  Blur DP-SGD / this peer's DP-SGD examples/s: "
          f"{dp['items_per_second'] / o['dp_examples_per_s']:.1f}x")
print(f"Blur DP step at {dp['GFLOP_per_s'] / roof:.2f} of the GEMM roofline")
# The steps' process CPU time (all workers; train_bench measures it): on a
# loaded machine it moves far less than the wall time. The minimum over the
# rounds is the least disturbed.
cpu = {name: [r["cpu_time"] for r in rounds_of(b)] for name, b in (("plain", plain), ("dp", dp))}
print(f"Blur DP / plain step, process CPU time: median {dp['cpu_time'] / plain['cpu_time']:.3f}, "
      f"minimum over rounds {min(cpu['dp']) / min(cpu['plain']):.3f} "
      f"({min(cpu['plain']):.1f} / {min(cpu['dp']):.1f} ms)")
print(f"Load average at the end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
PY
