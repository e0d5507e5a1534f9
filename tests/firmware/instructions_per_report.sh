#!/bin/bash
# Instructions per report of a RISC-V firmware image: boots it RUNS times
# under QEMU with -icount (the image's minstret counter then counts retired
# instructions exactly) and prints, from its line "N reports recorded in I
# instructions", the instructions per report (record(): randomization,
# ledger charge, queue append) of each run and their minimum, median and
# maximum. The count varies from run to run: the exact samplers draw a
# random number of random words, and the DRBG is seeded from the host.
#   instructions_per_report.sh IMAGE RUNS EMULATOR... -kernel
set -euo pipefail
image=$1
runs=$2
shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "${*: -1}" = -kernel ] || fail "the emulator's command must end with -kernel: $*"
emulator=("${@:1:$#-1}")
per_report=()
for ((run = 0; run < runs; ++run)); do
  output=$("${emulator[@]}" -icount shift=0 -kernel "$image" 2>&1) || fail "the image exited with status $?: $output"
  line=$(echo "$output" | grep -E '^blur firmware: [0-9]+ reports recorded in [0-9]+ instructions') ||
    fail "no instruction count in the image's output: $output"
  read -r reports instructions < <(echo "$line" | sed -E 's/^blur firmware: ([0-9]+) reports recorded in ([0-9]+) .*/\1 \2/')
  [ "$reports" -gt 0 ] && [ "$instructions" -gt 0 ] || fail "nothing counted: $line"
  per_report+=($((instructions / reports)))
done
sorted=($(printf '%s\n' "${per_report[@]}" | sort -n))
echo "$(basename "$image"): instructions per report over $runs runs: ${per_report[*]}"
echo "min ${sorted[0]}, median ${sorted[$((runs / 2))]}, max ${sorted[$((runs - 1))]}"
