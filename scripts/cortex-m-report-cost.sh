#!/usr/bin/env bash
# Instructions per report on the Cortex-M targets, counted by QEMU with
# -icount (examples/firmware-m4/report_cost.cpp: Client::record() of the
# minimal image's grr and laplace metrics, the mean of 256 each). Configures
# each preset if needed, builds its report-cost image only, and runs it.
#
#   scripts/cortex-m-report-cost.sh [preset ...]
#       (default: cortex-m0plus cortex-m4 cortex-m33 cortex-m7)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(cortex-m0plus cortex-m4 cortex-m33 cortex-m7)
for preset in "${presets[@]}"; do
  target=${preset#cortex-}
  [ -f "build/$preset/CMakeCache.txt" ] || cmake --preset "$preset" > /dev/null
  cmake --build --preset "$preset" --target "blur-report-cost-$target" > /dev/null
  status=0
  output=$(ctest --preset "$preset" -R '^firmware\.instructions_per_report$' -V 2>&1) || status=$?
  echo "$output" | sed -n "s/^.*blur report cost: /$preset: /p"
  [ $status = 0 ] || { echo "$output" | tail -n 20; echo "$preset: the report-cost image failed"; exit 1; }
done
