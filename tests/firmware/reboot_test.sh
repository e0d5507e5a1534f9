#!/bin/bash
# Runs the persistent firmware image three times in one directory (its
# flash lives in ./blur-device-flash.bin): three boots of one device.
#   reboot_test.sh IMAGE GEOMETRY EMULATOR...
# Each boot's exit status is checked: boot 1 records, sends and exits 0;
# boots 2 and 3 stop at a refused charge and exit 1 (the image's failure
# status), having said which cap refused it.
set -euo pipefail
image=$1
geometry=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
declare -a statuses
for n in 1 2 3; do
  status=0
  "$@" "$image" > "boot$n.txt" 2>&1 || status=$?  # semihosting prints on stderr
  statuses[$n]=$status
done
cat boot1.txt boot2.txt boot3.txt | grep -v '^[0-9a-f]*$'
echo "exit statuses: ${statuses[1]} ${statuses[2]} ${statuses[3]}"
[ "${statuses[1]}" = 0 ] || fail "boot 1 exited with ${statuses[1]}, not 0"
grep -qxF "blur firmware: flash of $geometry" boot1.txt || fail "no flash geometry line: $geometry"
grep -q "ledger provisioned" boot1.txt || fail "boot 1 did not provision the ledger"
grep -q "spent 10000000 of 20000000" boot1.txt || fail "boot 1 did not spend 10 nats"
grep -qx "blur firmware: acknowledged; 0 reports pending" boot1.txt || fail "boot 1 did not acknowledge"
# Boot 2 finds the ledger: metric 1 (1 nat) fits, metric 2 (2 nats) would
# take the day to 13 of its 12 nats.
if grep -q "ledger provisioned" boot2.txt; then fail "boot 2 provisioned again"; fi
grep -qx "blur firmware: recording failed: window budget exhausted" boot2.txt ||
  fail "boot 2 was not refused by the window cap"
[ "${statuses[2]}" = 1 ] || fail "boot 2 exited with ${statuses[2]}, not 1"
# Boot 3: metric 1 has spent its 2-nat cap over the two boots.
grep -qx "blur firmware: recording failed: metric budget exhausted" boot3.txt ||
  fail "boot 3 was not refused by metric 1's cap"
[ "${statuses[3]}" = 1 ] || fail "boot 3 exited with ${statuses[3]}, not 1"
echo "three boots of one device: the ledger, its window and its metric caps persisted"
