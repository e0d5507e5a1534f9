#!/bin/sh
# One long libFuzzer campaign (docs/fuzzing.md): FUZZER from the seeds ctest
# writes, at the lowest CPU priority, for RUNS executions (default 10^7).
# New inputs go to build/fuzz/long/FUZZER/, the log and any crashing input
# next to it. Prints the executions, wall time, exec/s and final coverage.
# SECONDS, if given, ends the campaign then if RUNS are not done (a busy
# machine: docs/fuzzing.md records how far it got).
#
#   cmake --preset fuzz && cmake --build --preset fuzz && ctest --preset fuzz -R seeds
#   scripts/fuzz-long.sh time_text_fuzz [RUNS [SECONDS]]
set -eu
name=${1:?usage: $0 FUZZER [RUNS [SECONDS]]}
runs=${2:-10000000}
seconds_cap=${3:-0}  # 0: no limit
build=${BLUR_FUZZ_BUILD:-build/fuzz}
bin=$build/tests/fuzz/$name
[ -x "$bin" ] || { echo "$bin not built (cmake --build --preset fuzz)" >&2; exit 2; }

# Inputs longer than the parser could ever accept only slow a campaign down.
case $name in
  batch_decoder_fuzz) max_len=40000 ;;   # the largest encoded batch is 36,879 bytes
  ledger_storage_fuzz) max_len=3072 ;;   # the simulated flash
  device_token_fuzz) max_len=256 ;;      # a token is 79 characters
  enrollment_request_fuzz) max_len=1024 ;;  # the route takes at most 512 bytes
  time_text_fuzz) max_len=64 ;;          # parse_time refuses more than 40
  query_fuzz) max_len=1024 ;;
  http_answer_fuzz) max_len=1024 ;;      # the transport reads at most 1,023 bytes
  next_word_model_fuzz) max_len=2048 ;;  # its built models are at most 1,826 bytes
  *) max_len=8192 ;;
esac

out=$build/long
mkdir -p "$out/$name"
log=$out/$name.log
start=$(date +%s)
status=0
nice -n 19 "$bin" -runs="$runs" -max_total_time="$seconds_cap" -seed=1 -max_len="$max_len" -print_final_stats=1 \
  -artifact_prefix="$out/$name-" "$out/$name" "$build/tests/fuzz/$name-corpus" \
  "$build/tests/fuzz/corpus" >"$log" 2>&1 || status=$?
seconds=$(($(date +%s) - start))
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
echo "$name: exit $status, ${execs:-?} executions in ${seconds} s" \
     "($(( ${execs:-0} / (seconds > 0 ? seconds : 1) )) exec/s); last: $last"
exit "$status"
