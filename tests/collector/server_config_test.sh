#!/usr/bin/env bash
# The server file (serve --config-file, config check), with docs/collector.md's
# example itself (the ```toml block after <!-- server-file-example -->), so the
# documented file cannot rot:
#  - config check takes it (exit 0), and --print's output is taken again
#    and printed the same;
#  - a typo'd key, a value out of range, a float for an integer, an unknown
#    table: exit 2 naming the key and FILE:LINE:COLUMN;
#  - serve takes it over HTTPS, flags over its keys (--port, --db,
#    --log-file, --metrics-address); its metrics, the file's and the
#    included file's, are registered;
#  - the monitoring token: /metrics, /healthz, /readyz on both ports give 401
#    without it or with a wrong one, 200 with it;
#  - SIGHUP: a [[metric]] added to the file is registered, and a keep-alive
#    connection opened before answers after it.
#   server_config_test.sh BLUR_COLLECTOR DOCS_COLLECTOR_MD
set -euo pipefail
collector=$1
docs=$2
work=$(mktemp -d)
pid=""
keepalive=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  [ -n "$keepalive" ] && kill "$keepalive" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
. "$(dirname "$0")/../../scripts/lib/tls.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

# The example, as /etc/blur/ would hold it: its relative paths resolve here.
etc=$work/etc
mkdir -p "$etc/tls"
sed -n '/^<!-- server-file-example -->$/,/^```$/p' "$docs" | sed '1,2d;$d' > "$etc/blur-collector.toml"
[ -s "$etc/blur-collector.toml" ] || fail "no server file example in $docs"
grep -q '^\[monitoring\]' "$etc/blur-collector.toml" || fail "the example lost its tables"
make_test_certificates "$work"
cp "$work/server.pem" "$work/server.key" "$etc/tls/"
printf 'monitoring-token-0123456789abcdef\n' > "$etc/monitoring-token"
chmod 600 "$etc/monitoring-token"
cat > "$etc/metrics.toml" <<'EOF'
[[metric]]
id = 2
mechanism = "grr"
epsilon = "0.5"
domain = 16
EOF

"$collector" config check "$etc/blur-collector.toml" > "$work/check.out" ||
  fail "config check refused the documented example: $(cat "$work/check.out")"
grep -q 'is valid' "$work/check.out" || fail "config check said: $(cat "$work/check.out")"
"$collector" config check "$etc/blur-collector.toml" --print | sed '1,2d' > "$etc/printed.toml"
grep -q '^port = 8443$' "$etc/printed.toml" || fail "--print lost a key: $(cat "$etc/printed.toml")"
"$collector" config check "$etc/printed.toml" --print | sed '1,2d' > "$etc/printed-again.toml"
cmp "$etc/printed.toml" "$etc/printed-again.toml" || fail "--print's output reads back differently"

refused() {  # NAME SED-EXPRESSION EXPECTED-MESSAGE
  sed "$2" "$etc/blur-collector.toml" > "$etc/$1.toml"
  local status=0
  "$collector" config check "$etc/$1.toml" > /dev/null 2> "$work/$1.err" || status=$?
  [ "$status" = 2 ] || fail "$1: config check exited $status, not 2"
  grep -qF -- "$3" "$work/$1.err" || fail "$1: expected '$3', got: $(cat "$work/$1.err")"
}
line=$(grep -n '^port = 8443' "$etc/blur-collector.toml" | cut -d: -f1)
refused typo 's/^port = 8443/prot = 8443/' \
  "$etc/typo.toml:$line:1: unknown key 'prot' in [server] (it takes address, port,"
refused range 's/^port = 8443/port = 70000/' \
  "$etc/range.toml:$line:8: server.port must be an integer in 0..65535"
refused float 's/^port = 8443/port = 8443.0/' "server.port must be an integer"
refused table 's/^\[reads\]/[read]/' "unknown top-level key 'read'"
refused duration 's/^max_report_age = "3d"/max_report_age = "3 days"/' \
  "store.max_report_age must be a duration"
refused no_file 's|^cert = "tls/server.pem"|cert = "tls/missing.pem"|' \
  "tls.cert (--tls-cert): cannot read $etc/tls/missing.pem"
refused half_tls 's|^key = "tls/server.key"|key = ""|' "go together"
printf '[[metric]]\nid = 1\nmechanism = "rr"\nepsilon = "0.5"\n' > "$etc/conflict.toml"
refused twice 's|^metrics_file = "metrics.toml"|metrics_file = "conflict.toml"|' \
  "metric 1 is configured twice, differently (epsilon_micros: 1000000 -> 500000)"
# serve refuses what config check refuses, with the same words.
status=0
"$collector" serve --config-file "$etc/typo.toml" > "$work/serve-typo.log" 2>&1 || status=$?
[ "$status" = 2 ] && grep -qF "unknown key 'prot'" "$work/serve-typo.log" ||
  fail "serve took a file config check refuses (exit $status): $(cat "$work/serve-typo.log")"

# Served: the file over HTTPS, the flags over its keys (start_collector adds
# --address 127.0.0.1 --port 0).
start_collector "$collector" "$work/serve.log" --config-file "$etc/blur-collector.toml" \
  --db "$work/blur.db" --log-file "$work/requests.log" --metrics-address 127.0.0.1:0 ||
  fail "serve did not start"
pid=$collector_pid
grep -q "listening on https://127.0.0.1:$collector_port " "$work/serve.log" || fail "not HTTPS"
[ "$collector_port" != 8443 ] || fail "--port did not override the file"
[ -f "$work/blur.db" ] || fail "--db did not override the file"
[ "$collector_auth_dir" = "$etc/auth" ] || fail "auth.directory not relative to the file: $collector_auth_dir"
metrics_port=$(sed -n 's|.*metrics on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.log")
[ -n "$metrics_port" ] || fail "no metrics server: $(cat "$work/serve.log")"

# request URL [TOKEN] -> the status; a keep-alive session is in the Python below.
request() {
  local auth=()
  [ -n "${2:-}" ] && auth=(-H "Authorization: Bearer $2")
  curl -s -o /dev/null -w '%{http_code}' --cacert "$work/ca.pem" "${auth[@]}" "$1"
}
api=https://127.0.0.1:$collector_port
token=monitoring-token-0123456789abcdef
for url in "$api/healthz" "$api/readyz" "http://127.0.0.1:$metrics_port/metrics" \
           "http://127.0.0.1:$metrics_port/healthz" "http://127.0.0.1:$metrics_port/readyz"; do
  [ "$(request "$url")" = 401 ] || fail "$url answered without the monitoring token"
  [ "$(request "$url" wrong-token-0123456789abcdef)" = 401 ] || fail "$url took a wrong token"
  [ "$(request "$url" "$token")" = 200 ] || fail "$url refused the monitoring token"
done
curl -s -D - -o /dev/null --cacert "$work/ca.pem" "$api/healthz" | grep -qi '^www-authenticate: Bearer' ||
  fail "a 401 without WWW-Authenticate"
# /metrics left the API port (monitoring.address, overridden by the flag).
[ "$(request "$api/metrics" "$token")" = 404 ] || fail "/metrics still on the API port"
[ "$(request "$api/v1/metrics" "$BLUR_READER_TOKEN")" = 200 ] || fail "the API needs the reader token only"

metric_ids() {
  curl -s --cacert "$work/ca.pem" -H "Authorization: Bearer $BLUR_READER_TOKEN" "$api/v1/metrics" |
    /usr/bin/python3 -c 'import json,sys; print(" ".join(str(m["metric_id"]) for m in json.load(sys.stdin)["metrics"]))'
}
[ "$(metric_ids)" = "1 2" ] || fail "metrics registered: $(metric_ids), not the file's 1 and the included file's 2"

# SIGHUP: the file's metrics read again, connections untouched. The
# keep-alive session sends one request, waits for the go file, sends another
# on the same connection.
/usr/bin/python3 - "$work/ca.pem" "$collector_port" "$BLUR_READER_TOKEN" "$work/go" \
  > "$work/keepalive.out" 2>&1 <<'PY' &
import http.client, os, ssl, sys, time
ca, port, token, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
c = http.client.HTTPSConnection("127.0.0.1", port, timeout=60,
                                context=ssl.create_default_context(cafile=ca))
def get():
    c.request("GET", "/v1/metrics", headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    r.read()
    return r.status
first = get()
sock = c.sock
open(go + ".ready", "w").close()
deadline = time.time() + 120
while not os.path.exists(go) and time.time() < deadline:
    time.sleep(0.05)
second = get()
print("first", first, "second", second, "same connection", c.sock is sock and sock is not None)
PY
keepalive=$!
cat >> "$etc/blur-collector.toml" <<'EOF'

[[metric]]
id = 3
mechanism = "rr"
epsilon = "0.5"
EOF
for _ in $(seq 600); do [ -e "$work/go.ready" ] && break; sleep 0.1; done
[ -e "$work/go.ready" ] || fail "keep-alive client: $(cat "$work/keepalive.out")"
kill -HUP "$pid"
for _ in $(seq 600); do
  grep -q 'reloaded: 3 metrics (new: 3)' "$work/serve.log" && break
  kill -0 "$pid" 2>/dev/null || fail "SIGHUP stopped the collector: $(cat "$work/serve.log")"
  sleep 0.1
done
grep -q 'reloaded: 3 metrics (new: 3); credentials: ' "$work/serve.log" ||
  fail "no reload after SIGHUP: $(cat "$work/serve.log")"
[ "$(metric_ids)" = "1 2 3" ] || fail "after SIGHUP: metrics $(metric_ids)"
touch "$work/go"
wait "$keepalive" || fail "keep-alive client: $(cat "$work/keepalive.out")"
grep -q 'first 200 second 200 same connection True' "$work/keepalive.out" ||
  fail "the keep-alive connection did not survive SIGHUP: $(cat "$work/keepalive.out")"

# A changed metric in the file is refused on SIGHUP, and said; the rest stays.
sed -i 's/^epsilon = "0.5"$/epsilon = "0.25"/' "$etc/blur-collector.toml"
kill -HUP "$pid"
for _ in $(seq 600); do
  grep -q 'NOT TAKEN IN: metric 3 is already registered' "$work/serve.log" && break
  sleep 0.1
done
grep -q 'NOT TAKEN IN: metric 3 is already registered with another configuration' "$work/serve.log" ||
  fail "a changed metric on SIGHUP was not reported: $(cat "$work/serve.log")"
[ "$(request "$api/healthz" "$token")" = 200 ] || fail "not serving after a refused reload"
echo "server file: example valid, refusals named, flags over keys, token on 5 endpoints, SIGHUP reload"
