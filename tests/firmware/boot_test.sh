#!/bin/bash
# Boots a firmware image once on the emulated board and checks what it
# says and how it ends: exit status 0 (the image exits with its result over
# semihosting), the flash geometry it runs on (ECC-shaped: 6 blocks of
# 2,048 bytes, programmed in 8-byte units), its batch, and the
# acknowledgement that empties the queue.
#   boot_test.sh IMAGE BATCH_REGEX EMULATOR...
set -euo pipefail
image=$1
batch=$2
shift 2
status=0
output=$("$@" "$image" 2>&1) || status=$?  # semihosting prints on stderr
echo "$output" | grep -v '^[0-9a-f]*$'
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$status" = 0 ] || fail "the image exited with status $status"
echo "$output" | grep -qx "blur firmware: flash of 6 blocks of 2048 bytes, program unit 8 bytes (ECC)" ||
  fail "no ECC flash geometry line (6 x 2048 B, 8-byte units)"
echo "$output" | grep -qE "^blur firmware: $batch\$" || fail "no line matching: $batch"
echo "$output" | grep -qx "blur firmware: acknowledged; 0 reports pending" ||
  fail "the batch was not acknowledged"
