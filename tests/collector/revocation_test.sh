#!/usr/bin/env bash
# Revocation across two collectors sharing one credentials directory and one
# PostgreSQL database (the ctest fixture `postgres`, a fresh schema), over
# HTTPS with mutual TLS and a CRL (issue 26):
#  - a reader token made on A reads on B once B has taken in the file;
#  - revoked on A by its id: A refuses it at once (401), B within its reload
#    interval (polled with a 60 s deadline, the time printed, not asserted);
#  - a device revoked on A by its nonce: its token gets 401 on both, its
#    re-enrollment 403, until an admin on B restores it;
#  - the enrollment secret revoked by its name: enrollment gets 401 on both;
#  - the last admin token cannot be revoked (409);
#  - a device certificate that the replaced CRL lists gets 401 on both, one
#    it does not list is served;
#  - an unusable credentials file: both keep the last good credentials and
#    say so once each; a good file again is taken in.
#   revocation_test.sh BLUR_COLLECTOR
set -euo pipefail
collector=$1
url_file=${BLUR_TEST_POSTGRES_URL_FILE:?run with ctest (fixture postgres)}
[ -s "$url_file" ] || { echo "no PostgreSQL URL in $url_file: the postgres fixture failed" >&2; exit 1; }
server=$(cat "$url_file")
psql=/usr/lib/postgresql/15/bin/psql
[ -x "$psql" ] || psql=psql
schema=blur_revocation_$$
db="$server&options=-csearch_path%3D$schema"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$psql" "$server" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$psql" "$server" -qc "CREATE SCHEMA $schema"
. "$(dirname "$0")/../../scripts/lib/collector.sh"
. "$(dirname "$0")/../../scripts/lib/tls.sh"

make_test_certificates "$work"
make_device_certificate "$work" 00000000000000c1 kept
make_device_certificate "$work" 00000000000000c2 lost
make_fleet_crl "$work"  # revokes nothing yet
serve_args=(--db "$db" --metric 1:rr:1 --auth-dir "$work/auth"
  --tls-cert "$work/server.pem" --tls-key "$work/server.key"
  --tls-client-ca "$work/fleet-ca.pem" --tls-client-crl "$work/fleet.crl"
  --credentials-reload-seconds 1)
start_collector "$collector" "$work/a.log" "${serve_args[@]}"
pids+=("$collector_pid")
port_a=$collector_port
start_collector "$collector" "$work/b.log" "${serve_args[@]}"
pids+=("$collector_pid")
port_b=$collector_port
grep -q 'client CRL .*: 1 CRL, 0 revoked certificates' "$work/a.log" || { cat "$work/a.log" >&2; exit 1; }

call() {  # call PORT METHOD PATH TOKEN [BODY CONTENT_TYPE] -> "STATUS BODY"
  /usr/bin/python3 - "$work/ca.pem" "$@" <<'PY'
import http.client, ssl, sys
ca, port, method, path, token = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
body = sys.argv[6].encode() if len(sys.argv) > 6 else None
headers = {"Content-Type": sys.argv[7]} if len(sys.argv) > 7 else {}
if token:
    headers["Authorization"] = "Bearer " + token
c = http.client.HTTPSConnection("127.0.0.1", port, timeout=10,
                                context=ssl.create_default_context(cafile=ca))
c.request(method, path, body=body, headers=headers)
r = c.getresponse()
print(r.status, r.read().decode())
PY
}
field() { /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.read().split(" ", 1)[1])[sys.argv[1]])' "$1"; }
expect_status() {  # WHAT EXPECTED "STATUS BODY"
  [ "${3%% *}" = "$2" ] || { echo "FAIL: $1: expected $2, got $3" >&2; exit 1; }
}
# A device posting a body that is no batch: 400 once it is authenticated
# (then decoded), 401 if it is not.
post_as_token() { call "$1" POST /v1/reports "$2" "not a batch" application/x-protobuf; }
post_as_certificate() {  # PORT NAME -> "STATUS"
  curl -s -o /dev/null -w '%{http_code}' --cacert "$work/ca.pem" \
    --cert "$work/$2.pem" --key "$work/$2.key" -H 'Content-Type: application/x-protobuf' \
    --data-binary 'not a batch' "https://127.0.0.1:$1/v1/reports"
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# Runs COMMAND... until its output starts with EXPECTED (60 s at most);
# prints the milliseconds it took.
wait_for() {  # WHAT EXPECTED COMMAND...
  local what=$1 expected=$2 start answer
  shift 2
  start=$(now_ms)
  while :; do
    answer=$("$@")
    [ "${answer%% *}" = "$expected" ] && break
    if [ $(( $(now_ms) - start )) -gt 60000 ]; then
      echo "FAIL: $what: still '$answer' after 60 s" >&2
      exit 1
    fi
    sleep 0.05
  done
  echo "$what: $(( $(now_ms) - start )) ms"
}

admin=$BLUR_ADMIN_TOKEN
answer=$(call "$port_a" POST /v1/admin/tokens "$admin" '{"role": "reader", "name": "dashboard"}' application/json)
expect_status "a reader token made on A" 200 "$answer"
reader=$(echo "$answer" | field token)
reader_id=$(echo "$answer" | field id)
expect_status "it reads on A at once" 200 "$(call "$port_a" GET /v1/metrics "$reader")"
wait_for "B takes in the reader token made on A" 200 call "$port_b" GET /v1/metrics "$reader"
answer=$(call "$port_b" GET /v1/admin/tokens "$admin")
expect_status "list the tokens" 200 "$answer"
case $answer in *"\"id\":\"$reader_id\""*) ;; *) echo "FAIL: $reader_id not listed: $answer" >&2; exit 1 ;; esac
case $answer in *blur-reader-*) echo "FAIL: a token in the listing" >&2; exit 1 ;; esac

# A token revoked on A by its id.
expect_status "revoke the reader on A" 200 \
  "$(call "$port_a" POST /v1/admin/tokens/revoke "$admin" "{\"id\": \"$reader_id\"}" application/json)"
expect_status "A refuses it at once" 401 "$(call "$port_a" GET /v1/metrics "$reader")"
token_took=$(wait_for "B refuses the revoked reader token" 401 call "$port_b" GET /v1/metrics "$reader")
echo "$token_took"

# A device revoked on A by its nonce.
enroll() {  # PORT NONCE -> "STATUS BODY"
  local key  # any device key will do for a test nonce: the nonce's SHA-256
  key=$(printf %s "$2" | sha256sum | cut -c1-64)
  call "$1" POST /v1/enroll "$BLUR_ENROLLMENT_SECRET" \
    "{\"device_nonce\": \"$2\", \"device_key\": \"$key\"}" application/json
}
answer=$(enroll "$port_a" 00000000000000d1)
expect_status "enroll d1" 200 "$answer"
device=$(echo "$answer" | field token)
expect_status "d1 posts on B" 400 "$(post_as_token "$port_b" "$device")"
expect_status "revoke d1 on A" 200 \
  "$(call "$port_a" POST /v1/admin/devices/revoke "$admin" '{"device_nonce": "00000000000000d1"}' application/json)"
expect_status "A refuses d1's token at once" 401 "$(post_as_token "$port_a" "$device")"
device_took=$(wait_for "B refuses the revoked device's token" 401 post_as_token "$port_b" "$device")
echo "$device_took"
expect_status "d1 cannot enroll again on A" 403 "$(enroll "$port_a" 00000000000000d1)"
expect_status "d1 cannot enroll again on B" 403 "$(enroll "$port_b" 00000000000000d1)"
answer=$(call "$port_b" GET /v1/admin/devices/revoked "$admin")
case $answer in *'"device_nonce":"00000000000000d1"'*) ;; *) echo "FAIL: d1 not listed: $answer" >&2; exit 1 ;; esac
expect_status "restore d1 on B" 200 \
  "$(call "$port_b" POST /v1/admin/devices/restore "$admin" '{"device_nonce": "00000000000000d1"}' application/json)"
expect_status "B serves d1's old token again" 400 "$(post_as_token "$port_b" "$device")"
wait_for "A takes in the restoration" 400 post_as_token "$port_a" "$device"
expect_status "d1 enrolls again" 200 "$(enroll "$port_a" 00000000000000d1)"

# The last admin token stays; the enrollment secret goes by its name.
answer=$(call "$port_a" POST /v1/admin/tokens/revoke "$admin" '{"name": "admin (first start)"}' application/json)
expect_status "the last admin token" 409 "$answer"
expect_status "the admin still works" 200 "$(call "$port_a" GET /v1/admin/tokens "$admin")"
expect_status "revoke the enrollment secret on B" 200 \
  "$(call "$port_b" POST /v1/admin/tokens/revoke "$admin" '{"name": "enrollment (first start)"}' application/json)"
expect_status "B refuses enrollment at once" 401 "$(enroll "$port_b" 00000000000000d2)"
wait_for "A refuses the revoked enrollment secret" 401 enroll "$port_a" 00000000000000d2

# Certificates: the CRL replaced by one listing "lost".
for port in "$port_a" "$port_b"; do
  [ "$(post_as_certificate "$port" lost)" = 400 ] || { echo "FAIL: lost's certificate before the CRL" >&2; exit 1; }
done
make_fleet_crl "$work" lost
crl_a=$(wait_for "A refuses the certificate on the new CRL" 401 post_as_certificate "$port_a" lost)
crl_b=$(wait_for "B refuses the certificate on the new CRL" 401 post_as_certificate "$port_b" lost)
echo "$crl_a"
echo "$crl_b"
for port in "$port_a" "$port_b"; do
  [ "$(post_as_certificate "$port" kept)" = 400 ] || { echo "FAIL: kept's certificate refused" >&2; exit 1; }
done

# An unusable credentials file: both keep the last good credentials.
credentials=$work/auth/credentials.toml
cp -p "$credentials" "$work/good.toml"
printf 'not [[ toml\n' > "$work/auth/bad.toml"
chmod 600 "$work/auth/bad.toml"
mv "$work/auth/bad.toml" "$credentials"
for port in "$port_a" "$port_b"; do
  wait_for "a collector on :$port still serves the admin over a bad file" 200 \
    call "$port" GET /v1/admin/tokens "$admin" > /dev/null
done
for _ in 1 2 3 4; do  # more reload intervals, with requests: nothing new is said
  call "$port_a" GET /v1/metrics "$admin" > /dev/null
  call "$port_b" GET /v1/metrics "$admin" > /dev/null
  sleep 1
done
for log in "$work/a.log" "$work/b.log"; do
  n=$(grep -c 'keeping the credentials loaded before' "$log" || true)
  [ "$n" = 1 ] || { echo "FAIL: $log says 'keeping the credentials' $n times, not once" >&2; cat "$log" >&2; exit 1; }
done
expect_status "an admin change while the file is bad" 503 \
  "$(call "$port_a" POST /v1/admin/tokens "$admin" '{"role": "reader"}' application/json)"
mv "$work/good.toml" "$credentials"
touch "$credentials"
expect_status "the reader is still revoked after the good file is back" 401 "$(call "$port_b" GET /v1/metrics "$reader")"
for log in "$work/a.log" "$work/b.log"; do
  if grep -q "$admin\|$reader\|$device" "$log"; then echo "FAIL: a token in $log" >&2; exit 1; fi
done

echo "revocation across two collectors (reload every 1 s): $token_took; $device_took; $crl_a; $crl_b"
