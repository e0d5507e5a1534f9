#!/bin/bash
# The HTTPS transport end to end: a test CA and a collector certificate made
# with openssl, the collector serving HTTPS, and a Linux device (mbedTLS)
# that must verify the collector before anything is acknowledged.
#   https_transport_test.sh HTTPS_SEND BLUR_COLLECTOR BLUR_DEVICE_SIM
set -euo pipefail
send=$1 collector=$2 device_sim=$3
work=$(mktemp -d)
collector_pid=""
trap '[ -n "$collector_pid" ] && kill $collector_pid 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/../../scripts/lib/collector.sh"
source "$(dirname "$0")/../../scripts/lib/tls.sh"
cd "$work"

# A CA, a certificate for localhost signed by it, and an unrelated CA.
make_test_certificates .
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj "/CN=Someone else" -keyout other.key -out other.pem 2>/dev/null

# The one device below sends 8 reports within a bucket: above the default
# contribution bound of 4.
start_collector "$collector" collector.log --db blur.db --metric 1:rr:1:max_reports_per_bucket=16 \
  --tls-cert server.pem --tls-key server.key
grep -q "listening on https://" collector.log

# An unknown CA: the handshake fails, nothing is acknowledged, the reports wait.
if "$send" device.bin localhost "$collector_port" other.pem 5 > wrong-ca.txt; then
  echo "a collector signed by another CA was trusted" >&2
  exit 1
fi
cat wrong-ca.txt
grep -q "failed after 1 attempts: X509 - Certificate verification failed" wrong-ca.txt
grep -q "pending 5" wrong-ca.txt

# The right CA: the five waiting reports and three new ones are delivered.
"$send" device.bin localhost "$collector_port" ca.pem 3 | tee right-ca.txt
grep -q "sent 8 pending 0" right-ca.txt
"$collector" estimate --db blur.db | grep -q '"n": 8'

# A simulated fleet over HTTPS (cpp-httplib's OpenSSL client, verifying
# against the same CA).
"$device_sim" fleet \
  --collector "https://localhost:$collector_port" --ca ca.pem --metric 1 --devices 300 \
  --epsilon 1 --seed 4 --threads 2 > fleet.txt
"$collector" estimate --db blur.db | grep -q '"n": 308'

# Without a device token the collector refuses (401, final: not retried)
# and the report waits on the device.
if env -u BLUR_ENROLLMENT_SECRET "$send" device.bin localhost "$collector_port" ca.pem 1 \
  > no-token.txt; then
  echo "a device without a token was accepted" >&2
  exit 1
fi
cat no-token.txt
grep -q "failed after 1 attempts: HTTP/1.1 401 Unauthorized; sent 0 pending 1" no-token.txt

# The collector down: retried with backoff, then the reports wait again.
kill "$collector_pid"
wait "$collector_pid" 2>/dev/null || true
collector_pid=""
if "$send" device.bin localhost "$collector_port" ca.pem 2 > down.txt; then exit 1; fi
cat down.txt
grep -q "failed after 3 attempts" down.txt
grep -q "pending 3" down.txt
echo "HTTPS: the collector verified against the app's CA; reports acknowledged only after 200"
