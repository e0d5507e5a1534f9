#!/usr/bin/env bash
# blur-device-sim load's counting against the real collector (HTTP, SQLite,
# device tokens), with a small contribution bound so that every answer has
# something to count:
#  (a) --metrics 4 --batch 16: 4 reports per metric and device against a
#      bound of 3 (metrics 1-3) and 10^9 (metric 4): every request a 200
#      with 10 accepted and 3 over the bound, so the load prints
#      accepted = 13 x requests, over_limit = 3 x requests, failed 0, exit 0,
#      and the store gained exactly the accepted count;
#  (b) --metrics 1 --batch 8 on metric 1 (the bound's own mode): 3 accepted
#      and 5 over the bound per request;
#  (c) --metrics 5 --batch 5: metric 5 is not registered, so every request
#      is answered 400: failed = sent, nothing accepted, exit 1;
#  (d) enrollment refused (a collector with --enrollments-per-secret 20):
#      the load generator stops with the collector's status and Retry-After
#      instead of waiting silently, exit 2.
set -euo pipefail
collector=$1
device_sim=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
collector_pid=""
cleanup() {
  [ -z "$collector_pid" ] || kill "$collector_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$here/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --log-requests false \
  --metric 1:rr:1:max_reports_per_bucket=3 --metric 2:rr:1:max_reports_per_bucket=3 \
  --metric 3:rr:1:max_reports_per_bucket=3 --metric 4:rr:1:max_reports_per_bucket=1000000000
url=http://127.0.0.1:$collector_port
stored() {  # reports of metrics 1-4 the collector holds
  local total=0 m n
  for m in 1 2 3 4; do
    n=$(read_api "$url/v1/metrics/$m/estimate" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["n"])')
    total=$((total + n))
  done
  echo $total
}
# check NAME FILE accepted-per-request over-per-request failed(all|0) expected-exit actual-exit
check() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
name, path, accepted, over, failed, want_exit, got_exit, gained = sys.argv[1:]
r = json.load(open(path))
sent = r["requests_sent"]
assert sent > 0, (name, "sent nothing", r)
want_failed = sent if failed == "all" else 0
checks = {
    "exit status": (int(got_exit), int(want_exit)),
    "requests_failed": (r["requests_failed"], want_failed),
    "reports_acknowledged": (r["reports_acknowledged"], int(accepted) * (sent - want_failed)),
    "reports_over_limit": (r["reports_over_limit"], int(over) * (sent - want_failed)),
    "stored gain": (int(gained), r["reports_acknowledged"]),
    "reports_sent": (r["reports_sent"], sent * r["batch"]),
}
bad = {k: v for k, v in checks.items() if v[0] != v[1]}
assert not bad, (name, "got/expected", bad, r)
print(f"{name}: {sent} requests, {r['reports_acknowledged']} accepted, "
      f"{r['reports_over_limit']} over the bound, {r['requests_failed']} failed, statuses {r['status']}")
PY
}
run() {  # run NAME load-arguments...: sets $status
  local name=$1
  shift
  status=0
  "$device_sim" load --collector "$url" --duration 1 --connections 4 --devices 400 --json "$@" \
    > "$work/$name.json" 2> "$work/$name.err" || status=$?
  [ -s "$work/$name.json" ] || { cat "$work/$name.err" >&2; fail "$name: the load printed nothing"; }
}

before=$(stored)
run a --metric 1 --metrics 4 --batch 16
check "(a) 4 metrics x 4 reports, bound 3" "$work/a.json" 13 3 0 0 "$status" $(($(stored) - before))

before=$(stored)
run b --metric 1 --metrics 1 --batch 8
check "(b) one metric x 8 reports, bound 3" "$work/b.json" 3 5 0 0 "$status" $(($(stored) - before))
grep -q "refused over the contribution bound" "$work/b.err" || fail "(b) no word about the bound"

before=$(stored)
run c --metric 1 --metrics 5 --batch 5
check "(c) an unregistered metric" "$work/c.json" 0 0 all 1 "$status" $(($(stored) - before))
/usr/bin/python3 -c 'import json,sys; r = json.load(open(sys.argv[1])); assert list(r["status"]) == ["400"], r' "$work/c.json"

# (d) Enrollment refused: 20 an hour for the secret (10 in its upper half,
# then the source's reserve of 10).
kill "$collector_pid"; wait "$collector_pid" || true
start_collector "$collector" "$work/limited.log" --db "$work/limited.db" --metric 1:rr:1 \
  --enrollments-per-secret 20 --log-requests false
status=0
"$device_sim" load --collector "http://127.0.0.1:$collector_port" --metric 1 --metrics 1 \
  --duration 1 --devices 100 --retries 1 > "$work/d.out" 2> "$work/d.err" || status=$?
[ "$status" = 2 ] || { cat "$work/d.err" >&2; fail "(d) exit $status, expected 2"; }
grep -q "429 (Retry-After [0-9]* s)" "$work/d.err" ||
  { cat "$work/d.err" >&2; fail "(d) the refusal's status and Retry-After are not printed"; }
grep -q "load http" "$work/d.err" && fail "(d) the load started without its devices"
echo "(d) enrollment refused: $(grep -m1 -o '429 (Retry-After [0-9]* s)' "$work/d.err"), exit 2"
echo "load counting: 4 passed, 0 failed"
