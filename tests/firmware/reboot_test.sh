#!/bin/bash
# Runs the persistent firmware image three times in one directory (its
# flash lives in ./blur-device-flash.bin): three boots of one device.
#   reboot_test.sh IMAGE EMULATOR...
set -euo pipefail
image=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$@" "$image" > boot1.txt 2>&1 || true  # semihosting prints on stderr
"$@" "$image" > boot2.txt 2>&1 || true  # semihosting prints on stderr
"$@" "$image" > boot3.txt 2>&1 || true  # semihosting prints on stderr
cat boot1.txt boot2.txt boot3.txt | grep -v '^[0-9a-f]*$'
grep -q "ledger provisioned" boot1.txt
grep -q "spent 10000000 of 20000000" boot1.txt
# Boot 2 finds the ledger: metric 1 (1 nat) fits, metric 2 (2 nats) would
# take the day to 13 of its 12 nats.
if grep -q "ledger provisioned" boot2.txt; then echo "boot 2 provisioned again"; exit 1; fi
grep -q "recording failed: window budget exhausted" boot2.txt
# Boot 3: metric 1 has spent its 2-nat cap over the two boots.
grep -q "recording failed: metric budget exhausted" boot3.txt
echo "three boots of one device: the ledger, its window and its metric caps persisted"
