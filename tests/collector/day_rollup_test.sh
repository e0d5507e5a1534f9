#!/usr/bin/env bash
# Day roll-ups in a serving collector, end to end on SQLite: a fleet of
# NONCES crafted-report devices (each 4 binary-rr reports in every hourly
# bucket of 24 hours, at least 12 of them yesterday's), then a restart:
# the new collector's first pass rolls yesterday up (its log line, and
# blur_collector_rollup_days_total 1 on /metrics); the daily series and
# `verify` answer the same as before the roll-up. Then late reports for
# yesterday through the restarted collector: yesterday's n grows by exactly
# the reports accepted (counted once, in the bucket row and the day row),
# and `verify` still finds the aggregates equal to the raw reports.
#
#   day_rollup_test.sh COLLECTOR CRAFTED_REPORTS_POSTER [NONCES]
set -euo pipefail
collector=$1
poster=$2
nonces=${3:-50}
work=$(mktemp -d)
collector_pid=""
trap 'if [ -n "$collector_pid" ]; then kill $collector_pid 2>/dev/null || true; fi; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
db=$work/blur.db
serve=(--db "$db" --no-auth --metric 1:rr:1.0)

# Yesterday's point of the daily series: "n" and the estimates, one line.
yesterday=$(( ($(date +%s) / 86400 - 1) * 86400 ))
yesterday_point() {
  "$collector" series --db "$db" --metric 1 --bucket day |
    python3 -c "
import json, sys
series = json.load(sys.stdin)['series']
point = [p for p in series if p['start_unix'] == $yesterday]
assert len(point) == 1, 'no point for yesterday in %r' % [p['start_unix'] for p in series]
print(point[0]['n'], json.dumps(point[0]['estimates'], sort_keys=True))"
}
stop() { kill "$collector_pid"; wait "$collector_pid" || true; collector_pid=""; }

start_collector "$collector" "$work/first.log" "${serve[@]}"
url=http://127.0.0.1:$collector_port
# The 24 hours of reports end now, or 12 hours ago in the day's second half,
# so that at least 12 of them fall on yesterday at any time of day (the
# oldest 36 hours back, within the 3 days a report may be late).
minute=$(( $(date +%s) / 60 ))
[ $(( minute % 1440 )) -lt 720 ] || minute=$(( minute - 720 ))
"$poster" "$url" 1 1000000 1000 "$nonces" 96 "$minute/4/60" 2 > "$work/first.json"
cat "$work/first.json"
stop
grep -q "rolled up" "$work/first.log" && fail "the first collector rolled up a day it had no reports of"
before=$(yesterday_point)
[ "${before%% *}" -gt 0 ] || fail "no reports yesterday: $before"

start_collector "$collector" "$work/second.log" "${serve[@]}"
url=http://127.0.0.1:$collector_port
for _ in $(seq 600); do grep -q "rolled up" "$work/second.log" && break; sleep 0.1; done
grep "rolled up 1 metric days" "$work/second.log" || { cat "$work/second.log"; fail "no roll-up at start"; }
curl -sf "$url/metrics" | grep -x 'blur_collector_rollup_days_total 1' ||
  fail "blur_collector_rollup_days_total is not 1"
# Late reports observed yesterday at 12:00 (4 per device, fresh nonces).
"$poster" "$url" 1 1000000 9000 "$nonces" 4 $(( (yesterday + 43200) / 60 )) 2 > "$work/late.json"
cat "$work/late.json"
late=$(python3 -c "import json; print(json.load(open('$work/late.json'))['accepted'])")
[ "$late" -eq $(( nonces * 4 )) ] || fail "late reports accepted: $late of $(( nonces * 4 ))"
stop
after=$(yesterday_point)
[ "${after%% *}" -eq $(( ${before%% *} + late )) ] ||
  fail "yesterday's n went from ${before%% *} to ${after%% *}, not by the $late late reports"
"$collector" verify --db "$db" || fail "aggregates differ from the raw reports"
# The roll-up read the same as the bucket rows: the same point before and
# after (the late reports aside), checked by rebuilding without day rows.
"$collector" reaggregate --db "$db" > /dev/null
[ "$(yesterday_point)" = "$after" ] || fail "the day rows and the bucket rows answer differently"
echo "PASS: yesterday rolled up at start; ${before%% *} + $late late reports counted once"
