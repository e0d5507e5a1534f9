#!/bin/bash
# The plain C example end to end: two runs of the app on one storage file
# (state persists), the device enrolled with the body the C API wrote
# (blur_enrollment_body) and the app's enrollment secret, its batch POSTed to
# a real collector with the device token, the acknowledgement fed back, and
# the queue then holding only the new reports.
#   c_app_test.sh BLUR_C_APP BLUR_COLLECTOR BLUR_PROTO
set -euo pipefail
app=$1 collector=$2 proto=$3
work=$(mktemp -d)
trap 'kill $collector_pid 2>/dev/null || true; rm -rf "$work"' EXIT
source "$(dirname "$0")/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/collector.log" --db "$work/blur.db" \
  --metric 1:rr:1 --metric 2:oue:2:16 --metric 3:laplace:1:101

post() {  # POST PATH FILE CONTENT_TYPE TOKEN; prints the JSON answer, fails on non-200
  /usr/bin/python3 - "http://127.0.0.1:$collector_port$1" "$2" "$3" "$4" <<'PY'
import sys, urllib.request
url, path, content_type, token = sys.argv[1:5]
request = urllib.request.Request(url, data=open(path, "rb").read(),
    headers={"Content-Type": content_type, "Authorization": "Bearer " + token})
print(urllib.request.urlopen(request).read().decode())
PY
}
post_batch() { post /v1/reports "$1" application/x-protobuf "$device_token"; }

"$app" --storage "$work/device.bin" --batch "$work/batch1.bin" --enrollment-body "$work/enroll.json" 3 7 > "$work/run1.txt"
grep -qx '{"device_nonce":"[0-9a-f]\{16\}","device_key":"[0-9a-f]\{64\}"}' "$work/enroll.json"
device_token=$(post /v1/enroll "$work/enroll.json" application/json "$BLUR_ENROLLMENT_SECRET" |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
cat "$work/run1.txt"
grep -q "provisioned a new device" "$work/run1.txt"
grep -q "budget: spent 8.000000 of 50.000000 nats (today 8.000000), 6 reports pending" "$work/run1.txt"
token=$(sed -n 's/^batch: 6 reports, [0-9]* bytes, token \([0-9]*\)$/\1/p' "$work/run1.txt")
[ "$token" = 5 ]
# The batch is a valid blur.ReportBatch (Google's decoder) with report ids 0..5.
protoc --decode=blur.ReportBatch -I "$(dirname "$proto")" "$proto" < "$work/batch1.bin" \
  > "$work/batch1.txt"
[ "$(sed -n 's/^  report_id: //p' "$work/batch1.txt" | tr '\n' ' ')" = "0 1 2 3 4 5 " ]
post_batch "$work/batch1.bin" | tee "$work/answer1.json"
grep -q '"accepted":6' "$work/answer1.json"

# Second boot: acknowledge, record one more value. The daily allowance
# (10 nats) refuses oue's 2 nats before spending anything; rr and laplace
# fit exactly. Only the two new reports are pending.
"$app" --storage "$work/device.bin" --ack "$token" --batch "$work/batch2.bin" \
  --enrollment-body "$work/enroll2.json" 12 > "$work/run2.txt" 2> "$work/run2.err"
# The same device key after a reboot: enrolling again is a renewal.
cmp "$work/enroll.json" "$work/enroll2.json"
post /v1/enroll "$work/enroll2.json" application/json "$BLUR_ENROLLMENT_SECRET" | grep '"token"' > /dev/null
cat "$work/run2.txt" "$work/run2.err"
if grep -q "provisioned" "$work/run2.txt"; then echo "the second boot provisioned again"; exit 1; fi
grep -q "metric 2: window budget exhausted" "$work/run2.err"
grep -q "spent 10.000000 of 50.000000 nats (today 10.000000), 2 reports pending" "$work/run2.txt"
grep -q "^batch: 2 reports, [0-9]* bytes, token 7$" "$work/run2.txt"
post_batch "$work/batch2.bin" | grep -q '"accepted":2'

# Third boot: the day's allowance is spent, every metric is refused.
"$app" --storage "$work/device.bin" --ack 7 9 > "$work/run3.txt" 2> "$work/run3.err"
[ "$(grep -c "window budget exhausted" "$work/run3.err")" = 3 ]
grep -q "spent 10.000000 of 50.000000 nats (today 10.000000), 0 reports pending" "$work/run3.txt"
echo "C example: provisioned, 8 reports charged, queued, stored by the collector and acknowledged;"
echo "the daily allowance refused the rest before spending"
