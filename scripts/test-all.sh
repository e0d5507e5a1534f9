#!/usr/bin/env bash
# Every test, on every target: host, host with ASan+UBSan, the SDK's
# tests built by clang (the Android NDK's compiler), Cortex-M4 on
# QEMU (mps2-an386), aarch64, s390x (big-endian) and armhf (32-bit Arm)
# Linux under qemu-user, and the libFuzzer fuzzers; the device subset
# (BLUR_TEST_SET=device, tests/CMakeLists.txt) on Cortex-M0+ (QEMU
# mps2-an385 and microbit), Cortex-M33 (mps2-an505), Cortex-M7 (mps2-an500)
# and RISC-V 32 (virt).
# Does its own set-up (Debian packages, nanopb/mbedTLS sources).
#
#   scripts/test-all.sh [preset ...]      (default: all presets)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
toolchains/setup.sh

presets=("$@")
[ ${#presets[@]} -gt 0 ] ||
  presets=(host host-asan host-clang cortex-m4 cortex-m0plus cortex-m33 cortex-m7 riscv32 aarch64 s390x armhf fuzz)
jobs=$(nproc)
# Line tables only (-g1): ASan and gdb backtraces keep file:line, and the
# template-heavy sources (Boost.Beast, Eigen) compile about 30% faster than -g.
line_tables=(-DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1
             "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
             "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
# A compiler cache where the machine has one (Debian's ccache): a later run
# from any clone recompiles only what changed. Paths are hashed relative to
# this clone, so two clones of the same commit share their objects.
launcher=()
if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# Where a preset's time goes: wall-clock seconds and CPU seconds (user +
# system of every process the phase waited for, from bash's `times`; a
# server a test daemonizes is not counted) of its configure, build and
# test phases. CPU seconds are comparable on a loaded machine, wall seconds
# are not. Printed per preset below the summary, and in build/ci-times.tsv.
# (`times` in this shell, not in a $(...) subshell, which has no children.)
cpu=0
read_cpu() {  # sets cpu to the children's CPU seconds so far
  times > build/.times
  awk 'END { split($1, u, /[ms]/); split($2, s, /[ms]/)
             printf "%d\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' build/.times > build/.cpu
  read -r cpu < build/.cpu
}
phase_wall=0 phase_cpu=0
phase_start() { phase_wall=$(date +%s); read_cpu; phase_cpu=$cpu; }
phase_end() {  # phase name: appends "name wall/cpu" to the preset's figures
  local wall=$(( $(date +%s) - phase_wall ))
  read_cpu
  times_line+=" $1 $wall/$(( cpu - phase_cpu ))"
  printf '%s\t%s\t%s\t%s\n' "$preset" "$1" "$wall" "$(( cpu - phase_cpu ))" >> build/ci-times.tsv
}
declare -A results phase_times
failed=0
start_all=$(date +%s)
mkdir -p build
printf 'preset\tphase\twall_s\tcpu_s\n' > build/ci-times.tsv
for preset in "${presets[@]}"; do
  start=$(date +%s)
  times_line=""
  echo "=== $preset: configure and build"
  log=build/$preset-build.log
  phase_start
  if ! cmake --preset "$preset" "${line_tables[@]}" ${launcher[@]+"${launcher[@]}"} > "$log" 2>&1; then
    tail -n 40 "$log"
    results[$preset]="CONFIGURE FAILED"
    failed=1
    continue
  fi
  phase_end configure
  phase_start
  if ! cmake --build --preset "$preset" -j "$jobs" >> "$log" 2>&1; then
    tail -n 40 "$log"
    results[$preset]="BUILD FAILED"
    failed=1
    continue
  fi
  phase_end build
  echo "=== $preset: test"
  phase_start
  if ctest --preset "$preset" -j "$jobs" 2>&1 | tee "build/$preset-test.log" | grep -vE '^\s+Start |Test +#'; then
    :
  fi
  phase_end test
  summary=$(grep -E 'tests passed' "build/$preset-test.log" || echo "no test summary")
  grep -qE '^100% tests passed' "build/$preset-test.log" || failed=1
  results[$preset]="$summary ($(( $(date +%s) - start )) s)"
  phase_times[$preset]=$times_line
  # The size report fails on an image over one of its target's budgets
  # (examples/firmware-m4/size_budgets.cmake), and so does this script.
  if [[ "$preset" == cortex-m* || "$preset" == riscv32 ]]; then
    phase_start
    if ! cmake --build --preset "$preset" --target firmware-size 2>&1 | grep -vE '^\['; then
      results[$preset]+="; FIRMWARE OVER ITS SIZE BUDGET"
      failed=1
    fi
    phase_end size
    phase_times[$preset]=$times_line
  fi
done

# What failed and why, just above the summary, where a truncated CI log
# still shows it: each failing test's assertion and error lines.
for preset in "${presets[@]}"; do
  failed_list=build/$preset/Testing/Temporary/LastTestsFailed.log
  full_log=build/$preset/Testing/Temporary/LastTest.log
  [ -s "$failed_list" ] && [ -f "$full_log" ] || continue
  echo
  echo "=== $preset: why the failing tests failed"
  cut -d: -f2- "$failed_list" | while read -r name; do
    echo "--- $name"
    awk -v name="$name" '
      $0 ~ "Testing: " name "$" { inside = 1; next }
      inside && /^<end of output>/ { inside = 0 }
      inside && /Failure|FAILED|error|Error|Expected|Which is|Value of|Actual|timeout|Timeout|FAIL/ { print }
    ' "$full_log" | head -n 12
  done
done

echo
echo "=== summary ($(( $(date +%s) - start_all )) s)"
for preset in "${presets[@]}"; do
  printf '  %-13s %s\n' "$preset" "${results[$preset]}"
done
echo "=== seconds per phase, wall/CPU (build/ci-times.tsv)"
for preset in "${presets[@]}"; do
  printf '  %-13s%s\n' "$preset" "${phase_times[$preset]-}"
done
exit $failed
