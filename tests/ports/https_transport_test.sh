#!/bin/bash
# The HTTPS transport end to end: a test CA and a collector certificate made
# with openssl, the collector serving HTTPS, and a Linux device (mbedTLS)
# that must verify the collector before anything is acknowledged. The
# collector asks for client certificates from a fleet CA (mutual TLS): a
# device with one from that CA needs no token, one with a certificate of
# another CA is refused at the handshake, devices with tokens and no
# certificate are still served.
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

# A second device, provisioned (nothing sent) to learn its nonce, with a
# certificate binding that nonce from the fleet CA, and one from another
# fleet's CA.
env -u BLUR_ENROLLMENT_SECRET "$send" mtls-device.bin localhost 1 ca.pem 0 > provision.txt
nonce=$(sed -n 's/^device \([0-9a-f]\{16\}\)$/\1/p' provision.txt)
[ -n "$nonce" ]
make_device_certificate . "$nonce" device
make_device_certificate . 0000000000000001 stranger
mkdir other-fleet
make_device_certificate other-fleet "$nonce" device

# The one device below sends 8 reports within a bucket: above the default
# contribution bound of 4.
start_collector "$collector" collector.log --db blur.db --metric 1:rr:1:max_reports_per_bucket=16 \
  --tls-cert server.pem --tls-key server.key --tls-client-ca fleet-ca.pem
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

# A token the collector no longer takes (here one it never signed): 401,
# the transport enrolls again with the device key (a renewal of the nonce
# enrolled above) and the batch goes through.
BLUR_DEVICE_TOKEN=bt1-00000001-0000000000000001-00000000ffffffff-00000000000000000000000000000000 \
  "$send" device.bin localhost "$collector_port" ca.pem 1 | tee stale-token.txt
grep -q "sent 1 pending 0" stale-token.txt

# A simulated fleet over HTTPS (cpp-httplib's OpenSSL client, verifying
# against the same CA).
"$device_sim" fleet \
  --collector "https://localhost:$collector_port" --ca ca.pem --metric 1 --devices 300 \
  --epsilon 1 --seed 4 --threads 2 > fleet.txt
"$collector" estimate --db blur.db | grep -q '"n": 309'

# Without a device token the collector refuses (401, final: not retried)
# and the report waits on the device.
if env -u BLUR_ENROLLMENT_SECRET "$send" device.bin localhost "$collector_port" ca.pem 1 \
  > no-token.txt; then
  echo "a device without a token was accepted" >&2
  exit 1
fi
cat no-token.txt
grep -q "failed after 1 attempts: HTTP/1.1 401 Unauthorized; sent 0 pending 1" no-token.txt

# Mutual TLS from the mbedTLS transport, without a token: the certificate
# is the device's identity. A certificate of another fleet's CA fails the
# handshake (the collector's alert), nothing is stored...
if env -u BLUR_ENROLLMENT_SECRET "$send" mtls-device.bin localhost "$collector_port" ca.pem 2 \
    --client-cert other-fleet/device.pem --client-key other-fleet/device.key > other-fleet.txt; then
  echo "a device certificate of another CA was accepted" >&2
  exit 1
fi
cat other-fleet.txt
# The alert, or the reset of a connection closed on the rest of the
# device's flight, depending on when mbedTLS reads.
grep -Eq "fatal alert message was received from our peer|Connection was reset by peer" \
  other-fleet.txt
grep -q "pending 2" other-fleet.txt
"$collector" estimate --db blur.db | grep -q '"n": 309'
# ...the fleet's certificate of another device: the batch's nonce is not
# the one it binds (403, final)...
if env -u BLUR_ENROLLMENT_SECRET "$send" mtls-device.bin localhost "$collector_port" ca.pem 0 \
    --client-cert stranger.pem --client-key stranger.key > stranger.txt; then
  echo "a batch for another device's nonce was accepted" >&2
  exit 1
fi
cat stranger.txt
grep -q "failed after 1 attempts: HTTP/1.1 403 Forbidden; sent 0 pending 2" stranger.txt
# ...and the device's own certificate delivers the waiting reports and a new one.
env -u BLUR_ENROLLMENT_SECRET "$send" mtls-device.bin localhost "$collector_port" ca.pem 1 \
  --client-cert device.pem --client-key device.key | tee fleet-device.txt
grep -q "sent 3 pending 0" fleet-device.txt
"$collector" estimate --db blur.db | grep -q '"n": 312'

# The collector down: retried with backoff, then the reports wait again.
kill "$collector_pid"
wait "$collector_pid" 2>/dev/null || true
collector_pid=""
if "$send" device.bin localhost "$collector_port" ca.pem 2 > down.txt; then exit 1; fi
cat down.txt
grep -q "failed after 3 attempts" down.txt
grep -q "pending 3" down.txt
echo "HTTPS: the collector verified against the app's CA; reports acknowledged only after 200;"
echo "mutual TLS: a fleet device certificate is the device's identity, another CA's is refused"
