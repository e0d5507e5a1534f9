#!/usr/bin/env bash
# Instructions per report on the microcontroller targets, counted by QEMU
# with -icount (examples/firmware-m4/report_cost.cpp: Client::record() of
# the minimal image's grr and laplace metrics, the mean of 256 each).
# Configures each preset if needed, builds its report-cost image only, and
# runs it.
#
#   scripts/report-cost.sh [preset ...]
#       (default: cortex-m0plus cortex-m4 cortex-m33 cortex-m7 riscv32)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(cortex-m0plus cortex-m4 cortex-m33 cortex-m7 riscv32)
for preset in "${presets[@]}"; do
  [ -f "build/$preset/CMakeCache.txt" ] || cmake --preset "$preset" > /dev/null
  # The firmware target's short name (the toolchain file's BLUR_FIRMWARE_TARGET).
  target=$(sed -n 's/^BLUR_FIRMWARE_TARGET:[A-Z]*=//p' "build/$preset/CMakeCache.txt")
  [ -n "$target" ] || { echo "$preset: no BLUR_FIRMWARE_TARGET in its build (not a bare-metal preset?)"; exit 1; }
  cmake --build --preset "$preset" --target "blur-report-cost-$target" > /dev/null
  status=0
  output=$(ctest --preset "$preset" -R '^firmware\.instructions_per_report$' -V 2>&1) || status=$?
  echo "$output" | sed -n "s/^.*blur report cost: /$preset: /p"
  [ $status = 0 ] || { echo "$output" | tail -n 20; echo "$preset: the report-cost image failed"; exit 1; }
done
