#!/usr/bin/env bash
# Live reload across two collectors sharing one PostgreSQL database (the
# ctest fixture `postgres`, a fresh schema) and one credentials directory:
# A looks for others' changes every hour (so only SIGHUP or the admin API
# can make it look), B every second.
#  - a metric and a reader token made with A's admin API: B serves them
#    (the estimate answers, a fleet's reports for the new metric are
#    accepted) within its interval, polled with a 60 s deadline (the time
#    printed, not asserted);
#  - a metric and a token made on B: A refuses them (404, 401) until a
#    SIGHUP, then serves them;
#  - POST /v1/admin/reload on A answers a metric made on B since as new, and
#    A serves it from then on;
#  - keep-alive connections to both, opened before any of it, answer after.
#   live_reload_test.sh BLUR_COLLECTOR BLUR_DEVICE_SIM
set -euo pipefail
collector=$1
device_sim=$2
. "$(dirname "$0")/../../scripts/lib/postgres_schema.sh"
postgres_test_schema blur_live_reload
. "$(dirname "$0")/../../scripts/lib/collector.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

start_collector "$collector" "$work/a.log" --db "$db" --metric 1:rr:1 --auth-dir "$work/auth" \
  --reload-seconds 3600 || fail "A did not start"
pids+=("$collector_pid")
pid_a=$collector_pid
port_a=$collector_port
start_collector "$collector" "$work/b.log" --db "$db" --metric 1:rr:1 --auth-dir "$work/auth" \
  --reload-seconds 1 || fail "B did not start"
pids+=("$collector_pid")
port_b=$collector_port
admin=$BLUR_ADMIN_TOKEN

call() {  # PORT METHOD PATH TOKEN [BODY CONTENT_TYPE] -> "STATUS BODY"
  local args=(-s -w '\n%{http_code}' -X "$2" -H "Authorization: Bearer $4")
  [ $# -gt 4 ] && args+=(-H "Content-Type: $6" --data-binary "$5")
  local out
  out=$(curl "${args[@]}" "http://127.0.0.1:$1$3")
  echo "${out##*$'\n'} ${out%$'\n'*}"
}
expect() {  # WHAT EXPECTED-STATUS "STATUS BODY"
  [ "${3%% *}" = "$2" ] || fail "$1: expected $2, got $3"
}
metric_toml() { printf '[[metric]]\nid = %s\nmechanism = "rr"\nepsilon = "0.75"\n' "$1"; }
new_reader() {  # PORT NAME -> the token
  call "$1" POST /v1/admin/tokens "$admin" "{\"role\": \"reader\", \"name\": \"$2\"}" application/json |
    cut -d' ' -f2- | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])'
}
wait_for() {  # WHAT DEADLINE-S PORT PATH TOKEN: until 200
  local start=$SECONDS answer
  while :; do
    answer=$(call "$3" GET "$4" "$5")
    [ "${answer%% *}" = 200 ] && break
    [ $((SECONDS - start)) -lt "$2" ] || fail "$1: still $answer after $2 s"
    sleep 0.1
  done
  echo "$1: after $((SECONDS - start)) s"
}

# Keep-alive connections to both, one request each now and one at the end.
/usr/bin/python3 - "$port_a" "$port_b" "$work/go" > "$work/keepalive.out" 2>&1 <<'PY' &
import http.client, os, sys, time
ports, go = [int(p) for p in sys.argv[1:3]], sys.argv[3]
connections = [http.client.HTTPConnection("127.0.0.1", p, timeout=60) for p in ports]
def get(c):
    c.request("GET", "/healthz")
    r = c.getresponse()
    r.read()
    return r.status
first = [get(c) for c in connections]
sockets = [c.sock for c in connections]
open(go + ".ready", "w").close()
deadline = time.time() + 240
while not os.path.exists(go) and time.time() < deadline:
    time.sleep(0.05)
second = [get(c) for c in connections]
same = all(c.sock is s and s is not None for c, s in zip(connections, sockets))
print("first", first, "second", second, "same connections", same)
PY
keepalive=$!
pids+=("$keepalive")
for _ in $(seq 600); do [ -e "$work/go.ready" ] && break; sleep 0.1; done
[ -e "$work/go.ready" ] || fail "keep-alive client: $(cat "$work/keepalive.out")"

# Made on A, served by B within its interval.
expect "metric 9 on A" 200 "$(call "$port_a" POST /v1/admin/metrics "$admin" "$(metric_toml 9)" application/toml)"
reader=$(new_reader "$port_a" made-on-a)
expect "A's new reader on A" 200 "$(call "$port_a" GET /v1/metrics/9/estimate "$reader")"
wait_for "B serves metric 9 to a reader made on A" 60 "$port_b" /v1/metrics/9/estimate "$reader"
grep -q 'took in metric(s) 9 registered in the store by another collector' "$work/b.log" ||
  fail "B did not log the new metric: $(cat "$work/b.log")"
"$device_sim" fleet --collector "http://127.0.0.1:$port_b" --devices 40 --true-rate 0.5 \
  --epsilon 0.75 --metric 9 --seed 7 --threads 4 > "$work/fleet.json" 2> "$work/fleet.err" ||
  fail "B refused reports for metric 9: $(cat "$work/fleet.err")"
n=$(call "$port_a" GET /v1/metrics/9/estimate "$reader" | cut -d' ' -f2- |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["n"])')
[ "$n" = 40 ] || fail "metric 9 holds $n reports, not the fleet's 40"

# Made on B: A (an hour's interval) refuses them until SIGHUP.
expect "metric 10 on B" 200 "$(call "$port_b" POST /v1/admin/metrics "$admin" "$(metric_toml 10)" application/toml)"
reader_b=$(new_reader "$port_b" made-on-b)
expect "metric 10 on A before SIGHUP" 404 "$(call "$port_a" GET /v1/metrics/10/estimate "$admin")"
expect "B's reader on A before SIGHUP" 401 "$(call "$port_a" GET /v1/metrics/1/estimate "$reader_b")"
kill -HUP "$pid_a"
wait_for "A serves metric 10 to B's reader after SIGHUP" 30 "$port_a" /v1/metrics/10/estimate "$reader_b"
kill -0 "$pid_a" || fail "SIGHUP stopped A"
grep -q 'reloaded: 3 metrics (new: 10); credentials: ' "$work/a.log" ||
  fail "A did not log its reload: $(cat "$work/a.log")"

# The admin API's reload: answered with what is new, in force at once.
expect "metric 11 on B" 200 "$(call "$port_b" POST /v1/admin/metrics "$admin" "$(metric_toml 11)" application/toml)"
expect "metric 11 on A before the reload" 404 "$(call "$port_a" GET /v1/metrics/11/estimate "$admin")"
answer=$(call "$port_a" POST /v1/admin/reload "$admin")
expect "POST /v1/admin/reload" 200 "$answer"
echo "${answer#* }" | /usr/bin/python3 -c '
import json, sys
a = json.load(sys.stdin)
assert a["new_metrics"] == [11] and a["metrics"] == 4 and a["problems"] == [], a
assert "tokens in force" in a["credentials"], a' || fail "reload answered $answer"
expect "metric 11 on A after the reload" 200 "$(call "$port_a" GET /v1/metrics/11/estimate "$reader_b")"
expect "reload needs an admin" 403 "$(call "$port_a" POST /v1/admin/reload "$reader")"

touch "$work/go"
wait "$keepalive" || fail "keep-alive client: $(cat "$work/keepalive.out")"
grep -q 'first \[200, 200\] second \[200, 200\] same connections True' "$work/keepalive.out" ||
  fail "keep-alive connections did not survive the reloads: $(cat "$work/keepalive.out")"
echo "live reload: B took in A's changes by polling; A by SIGHUP and by POST /v1/admin/reload"
