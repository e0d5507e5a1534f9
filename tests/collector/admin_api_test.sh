#!/usr/bin/env bash
# The admin API and key rotation through the real collector (SQLite):
#  - the first-start admin token creates a reader token; it reads at once
#    and after a restart; it cannot call the admin API (403);
#  - device-key rotation: a device token from before still posts, a new one
#    is signed by key 2, and both keep working after a restart;
#  - a metric registered over the API (TOML body) is listed and takes reports;
#  - prune answers per metric; nothing without a token (401);
#  - a retired metric refuses new reports (counted), keeps its estimate and
#    is listed as retired;
#  - a reader token revoked by its id gets 401, the last admin token 409, a
#    revoked device's token 401 and its enrollment 403 until restored;
#    the database is 0600 and the credentials directory 0700;
#  - serve --no-auth warns on stderr.
#   admin_api_test.sh BLUR_COLLECTOR BLUR_DEVICE_SIM
set -euo pipefail
collector=$1
device_sim=$2
work=$(mktemp -d)
collector_pid=""
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"

start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:rr:1
grep -q "credentials directory $work/blur.db.auth (first start" "$work/server.log"
call() {  # call METHOD PATH TOKEN [BODY CONTENT_TYPE] -> "STATUS BODY"
  /usr/bin/python3 - "$collector_port" "$@" <<'PY'
import http.client, sys
port, method, path, token = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
body = sys.argv[5].encode() if len(sys.argv) > 5 else None
headers = {"Content-Type": sys.argv[6]} if len(sys.argv) > 6 else {}
if token:
    headers["Authorization"] = "Bearer " + token
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
c.request(method, path, body=body, headers=headers)
r = c.getresponse()
print(r.status, r.read().decode())
PY
}
field() { /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.read().split(" ", 1)[1])[sys.argv[1]])' "$1"; }
expect_status() {  # WHAT EXPECTED "STATUS BODY"
  [ "${3%% *}" = "$2" ] || { echo "FAIL: $1: expected $2, got $3" >&2; exit 1; }
}

# A reader token made by the admin.
answer=$(call POST /v1/admin/tokens "$BLUR_ADMIN_TOKEN" '{"role": "reader", "name": "grafana"}' application/json)
expect_status "create a reader token" 200 "$answer"
reader=$(echo "$answer" | field token)
expect_status "the new reader reads" 200 "$(call GET /v1/metrics "$reader")"
expect_status "a reader on the admin API" 403 "$(call POST /v1/admin/device-keys "$reader")"
expect_status "no token on the admin API" 401 "$(call POST /v1/admin/prune "")"
expect_status "no token on a read" 401 "$(call GET /v1/metrics "")"
if grep -q "$reader" "$work/blur.db.auth/credentials.toml"; then
  echo "FAIL: a token stored in plain text" >&2; exit 1
fi

# Rotation: a token from key 1, then key 2.
enroll() {  # NONCE: any device key will do for a new nonce (here the nonce's SHA-256)
  local key
  key=$(printf %s "$1" | sha256sum | cut -c1-64)
  call POST /v1/enroll "$BLUR_ENROLLMENT_SECRET" \
    "{\"device_nonce\": \"$1\", \"device_key\": \"$key\"}" application/json | field token
}
old_token=$(enroll 00000000000000a1)
case $old_token in bt1-00000001-*) ;; *) echo "FAIL: first key: $old_token" >&2; exit 1 ;; esac
answer=$(call POST /v1/admin/device-keys "$BLUR_ADMIN_TOKEN")
expect_status "rotate" 200 "$answer"
[ "$(echo "$answer" | field key_id)" = 2 ]
new_token=$(enroll 00000000000000a2)
case $new_token in bt1-00000002-*) ;; *) echo "FAIL: after rotation: $new_token" >&2; exit 1 ;; esac

# A metric over the API; a fleet (enrolling after the rotation) reports to it.
answer=$(call POST /v1/admin/metrics "$BLUR_ADMIN_TOKEN" $'[[metric]]\nid = 5\nmechanism = "grr"\nepsilon = 1.0\ndomain = 4\n' application/toml)
expect_status "register metric 5" 200 "$answer"
read_api "http://127.0.0.1:$collector_port/v1/metrics" | grep -q '"metric_id":5'
"$device_sim" fleet --collector "http://127.0.0.1:$collector_port" --mechanism grr --domain 4 \
  --epsilon 1 --metric 5 --devices 200 --seed 3 > "$work/fleet.json" 2> "$work/fleet.err"
expect_status "prune" 200 "$(call POST /v1/admin/prune "$BLUR_ADMIN_TOKEN")"

# Retirement: metric 5 refuses new reports (a 200 that says why, counted as
# refusals), keeps its estimate, and is listed as retired.
expect_status "retire an unknown metric" 404 \
  "$(call POST /v1/admin/metrics/retire "$BLUR_ADMIN_TOKEN" '{"metric_id": 77}' application/json)"
expect_status "a retire body of another shape" 400 \
  "$(call POST /v1/admin/metrics/retire "$BLUR_ADMIN_TOKEN" '{"metric": 5}' application/json)"
expect_status "a reader cannot retire" 403 \
  "$(call POST /v1/admin/metrics/retire "$reader" '{"metric_id": 5}' application/json)"
answer=$(call POST /v1/admin/metrics/retire "$BLUR_ADMIN_TOKEN" '{"metric_id": 5}' application/json)
expect_status "retire metric 5" 200 "$answer"
retired_at=$(echo "$answer" | /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.read().split(" ", 1)[1])["retired"]["retired_at"])')
"$device_sim" fleet --collector "http://127.0.0.1:$collector_port" --mechanism grr --domain 4 \
  --epsilon 1 --metric 5 --devices 20 --seed 4 > "$work/fleet-retired.json" 2> "$work/fleet-retired.err" ||
  { echo "FAIL: a fleet reporting to a retired metric:" >&2; cat "$work/fleet-retired.err" >&2; exit 1; }
[ "$(call GET /v1/metrics/5/estimate "$reader" | field n)" = 200 ] ||
  { echo "FAIL: a retired metric stored new reports or lost its estimate" >&2; exit 1; }
read_api "http://127.0.0.1:$collector_port/v1/metrics" | /usr/bin/python3 -c '
import json, sys
metrics = {m["metric_id"]: m for m in json.load(sys.stdin)["metrics"]}
assert metrics[5].get("retired_at") == sys.argv[1], metrics[5]
assert "retired_at" not in metrics[1], metrics[1]' "$retired_at"
scraped=$(curl -sf "http://127.0.0.1:$collector_port/metrics")
grep -Eq '^blur_collector_requests_refused_total\{reason="retired_metric"\} [1-9]' <<<"$scraped" ||
  { echo "FAIL: retired-metric refusals not counted on /metrics" >&2; exit 1; }
listing=$("$collector" metrics --db "$work/blur.db")
grep -q "(retired at $retired_at)" <<<"$listing" ||
  { echo "FAIL: blur-collector metrics does not show the retirement" >&2; exit 1; }

# Both device tokens and the new reader survive a restart (saved first).
kill "$collector_pid"; wait "$collector_pid" || true
start_collector "$collector" "$work/server2.log" --db "$work/blur.db" --metric 1:rr:1
grep -q "credentials directory $work/blur.db.auth$" "$work/server2.log"
expect_status "the reader after a restart" 200 "$(call GET /v1/metrics/5/estimate "$reader")"
[ "$(call GET /v1/metrics/5/estimate "$reader" | field n)" = 200 ]
# A token's device posting an empty batch body is a 400 (authenticated, then
# decoded); another device's 401/403 paths are in poisoning_bound_test.sh.
for token in "$old_token" "$new_token"; do
  expect_status "an old and a new device token after restart" 400 \
    "$(call POST /v1/reports "$token" "not a batch" application/x-protobuf)"
done
last=${old_token: -1}
forged=${old_token%?}$([ "$last" = 0 ] && echo 1 || echo 0)
expect_status "a forged token" 401 \
  "$(call POST /v1/reports "$forged" "not a batch" application/x-protobuf)"

# Revocation (two collectors sharing the credentials: revocation_test.sh).
answer=$(call GET /v1/admin/tokens "$BLUR_ADMIN_TOKEN")
expect_status "list the tokens" 200 "$answer"
case $answer in *blur-reader-*|*blur-admin-*) echo "FAIL: a token in the listing" >&2; exit 1 ;; esac
reader_id=$(/usr/bin/python3 -c '
import json, sys
tokens = json.loads(sys.argv[1].split(" ", 1)[1])["tokens"]
print(next(t["id"] for t in tokens if t["name"] == "grafana"))' "$answer")
expect_status "a revoke body of another shape" 400 \
  "$(call POST /v1/admin/tokens/revoke "$BLUR_ADMIN_TOKEN" '{"id": "x", "name": "y"}' application/json)"
expect_status "a reader cannot revoke" 403 \
  "$(call POST /v1/admin/tokens/revoke "$reader" "{\"id\": \"$reader_id\"}" application/json)"
expect_status "revoke the reader by id" 200 \
  "$(call POST /v1/admin/tokens/revoke "$BLUR_ADMIN_TOKEN" "{\"id\": \"$reader_id\"}" application/json)"
expect_status "the revoked reader" 401 "$(call GET /v1/metrics "$reader")"
expect_status "the last admin token" 409 \
  "$(call POST /v1/admin/tokens/revoke "$BLUR_ADMIN_TOKEN" '{"name": "admin (first start)"}' application/json)"
expect_status "revoke a device" 200 \
  "$(call POST /v1/admin/devices/revoke "$BLUR_ADMIN_TOKEN" '{"device_nonce": "00000000000000a1"}' application/json)"
expect_status "the revoked device's token" 401 \
  "$(call POST /v1/reports "$old_token" "not a batch" application/x-protobuf)"
expect_status "the revoked device enrolling" 403 \
  "$(call POST /v1/enroll "$BLUR_ENROLLMENT_SECRET" \
    "{\"device_nonce\": \"00000000000000a1\", \"device_key\": \"$(printf %s 00000000000000a1 | sha256sum | cut -c1-64)\"}" application/json)"
expect_status "a nonce of another shape" 400 \
  "$(call POST /v1/admin/devices/revoke "$BLUR_ADMIN_TOKEN" '{"device_nonce": "A1"}' application/json)"
expect_status "restore the device" 200 \
  "$(call POST /v1/admin/devices/restore "$BLUR_ADMIN_TOKEN" '{"device_nonce": "00000000000000a1"}' application/json)"
expect_status "the restored device's token" 400 \
  "$(call POST /v1/reports "$old_token" "not a batch" application/x-protobuf)"
kill "$collector_pid"; wait "$collector_pid" || true; collector_pid=""
[ "$(stat -c %a "$work/blur.db")" = 600 ] || { echo "FAIL: blur.db is $(stat -c %a "$work/blur.db")" >&2; exit 1; }
[ "$(stat -c %a "$work/blur.db.auth")" = 700 ] || { echo "FAIL: the credentials directory" >&2; exit 1; }

# --no-auth says what it means on every start.
start_collector "$collector" "$work/noauth.log" --db "$work/other.db" --metric 1:rr:1 --no-auth
grep -q "WARNING: --no-auth" "$work/noauth.log"
[ ! -e "$work/other.db.auth" ]
expect_status "--no-auth reads without a token" 200 "$(call GET /v1/metrics "")"
echo "admin API: reader token made and scoped, key rotation keeps old tokens, metric registered, retired, prune; --no-auth warns"
