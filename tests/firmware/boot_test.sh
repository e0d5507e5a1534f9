#!/bin/bash
# Boots a firmware image once on the emulated board and checks what it
# says and how it ends: exit status 0 (the image exits with its result over
# semihosting), the flash geometry it runs on (its target's: e.g. ECC-shaped,
# 6 blocks of 2,048 bytes programmed in 8-byte units), its batch, and the
# acknowledgement that empties the queue.
#   boot_test.sh IMAGE BATCH_REGEX GEOMETRY EMULATOR...
set -euo pipefail
image=$1
batch=$2
geometry=$3
shift 3
status=0
output=$("$@" "$image" 2>&1) || status=$?  # semihosting prints on stderr
echo "$output" | grep -v '^[0-9a-f]*$'
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$status" = 0 ] || fail "the image exited with status $status"
echo "$output" | grep -qxF "blur firmware: flash of $geometry" || fail "no flash geometry line: $geometry"
echo "$output" | grep -qE "^blur firmware: $batch\$" || fail "no line matching: $batch"
echo "$output" | grep -qx "blur firmware: acknowledged; 0 reports pending" ||
  fail "the batch was not acknowledged"
