#!/usr/bin/env bash
# kill -9 of a real `blur-collector serve` in the middle of its day roll-up
# pass, on SQLite or on the fixture's PostgreSQL (a fresh schema): loses and
# double-counts nothing.
#
# store_fill writes DAYS days of hourly buckets of one metric, twice with
# different seeds (two nodes, as two collectors: each day has a day row per
# node, written in the day's one transaction), and nothing rolls them up.
# Each `serve` then starts its roll-up pass at once. The test freezes it
# (SIGSTOP) at short intervals and kills it (SIGKILL) only when it is frozen
# inside a roll-up transaction (SQLite: it holds the write lock, so BEGIN
# IMMEDIATE fails; PostgreSQL: its session has a transaction open) with at
# least one more day rolled up than at the last kill and days still to do;
# otherwise it lets it run on (SIGCONT). KILLS such kills, at different
# points, then one serve that finishes the pass. Checks: every restart went
# on from the days committed before it, and the last pass rolled up exactly
# the days left (none twice, none skipped); the daily series (n and
# estimates per day, read from the day rows) is what it was from the bucket
# rows before any roll-up; `verify` finds the aggregates (day rows for the
# rolled-up days) equal to a re-aggregation of the raw reports.
#
#   rollup_kill_test.sh BLUR_COLLECTOR STORE_FILL sqlite|postgresql [KILLS]
set -euo pipefail
collector=$1 store_fill=$2 backend=$3 kills=${4:-5}
work=$(mktemp -d)
collector_pid=""
schema=blur_rollup_kill_$$ server=""  # server: the PostgreSQL URL
app=blur_rollup_kill_$$  # the collector's sessions in pg_stat_activity
psql=/usr/lib/postgresql/15/bin/psql
[ -x "$psql" ] || psql=psql
fail() { echo "FAIL: $*" >&2; exit 1; }
cleanup() {
  if [ -n "$collector_pid" ]; then kill -9 "$collector_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  if [ -n "$server" ]; then
    "$psql" "$server" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
metric=5
spec=$metric:grr:1:64:max_reports_per_bucket=64
case $backend in
  sqlite)
    db=$work/blur.db
    days=365 reports=128000
    # The roll-up's write transaction holds SQLite's write lock (BEGIN
    # IMMEDIATE) from its start to its commit.
    in_transaction() { ! sqlite3 "$db" "BEGIN IMMEDIATE; ROLLBACK;" 2>/dev/null; }
    # A reader can find the WAL index locked by the frozen collector: the
    # caller then lets it run on and asks again.
    sql() { sqlite3 "$db" "$1" 2>/dev/null; } ;;
  postgresql)
    url_file=${BLUR_TEST_POSTGRES_URL_FILE:?run with ctest (fixture postgres)}
    [ -s "$url_file" ] ||
      fail "PostgreSQL did not start: no URL in $url_file (see the postgres.start test's output)"
    server=$(cat "$url_file")
    "$psql" "$server" -qc "CREATE SCHEMA $schema" || fail "PostgreSQL at $server does not answer"
    db="$server&options=-csearch_path%3D$schema&application_name=$app"
    days=90 reports=32000  # a roll-up day costs more round trips here, a fill more
    in_transaction() {
      [ "$("$psql" "$server" -Atc "SELECT count(*) FROM pg_stat_activity
           WHERE application_name = '$app' AND xact_start IS NOT NULL")" -gt 0 ]
    }
    sql() { "$psql" "$server" -Atc "SET search_path = $schema; $1" | tail -n 1; } ;;
  *) fail "usage: rollup_kill_test.sh COLLECTOR STORE_FILL sqlite|postgresql [KILLS]" ;;
esac
. "$(dirname "$0")/../../scripts/lib/collector.sh"
rolled_days() { sql "SELECT count(DISTINCT day_start) FROM day_aggregates WHERE metric_id = $metric"; }
daily_series() { "$collector" series --db "$db" --metric $metric --bucket day; }

for seed in 0 1; do
  "$store_fill" "$db" "$spec" "$reports" "$days" "$seed" > "$work/fill.out" 2>&1 ||
    { cat "$work/fill.out" >&2; fail "store_fill (seed $seed)"; }
done
[ "$(rolled_days)" -eq 0 ] || fail "store_fill rolled days up"
daily_series > "$work/before.json"
# The closed days with reports: what the roll-up has to do.
closed_days() {
  python3 -c "
import json, sys
today = $(date +%s) // 86400 * 86400
print(sum(1 for p in json.load(open('$work/before.json'))['series'] if p['start_unix'] < today))"
}
total=$(closed_days)
[ "$total" -ge 30 ] || fail "only $total closed days to roll up"

# Kill points. A freeze every `pause` seconds of running (varied per kill),
# timed by the shell's read (a sleep process takes longer to start on a busy
# machine than a roll-up day takes).
exec {never}<> <(:)
pause_for() { read -r -t "$1" -u "$never" || true; }
pauses=(0.002 0.006 0.004 0.01 0.003 0.008 0.005)
rolled=0
points=()
freezes=0 outside=0  # freezes; those after progress, outside a transaction
for kill in $(seq "$kills"); do
  : > "$work/serve-$kill.log"
  "$collector" serve --address 127.0.0.1 --port 0 --db "$db" --no-auth --metric "$spec" \
    > "$work/serve-$kill.log" 2>&1 &
  collector_pid=$!
  pause=${pauses[$(( (kill - 1) % ${#pauses[@]} ))]}
  killed=""
  for _ in $(seq 2000); do
    pause_for "$pause"
    kill -STOP "$collector_pid" 2>/dev/null ||
      { cat "$work/serve-$kill.log" >&2; fail "serve $kill exited"; }
    freezes=$((freezes + 1))
    now_rolled=$(rolled_days) || { kill -CONT "$collector_pid"; continue; }
    if [ "$now_rolled" -ge "$total" ]; then
      cat "$work/serve-$kill.log" >&2
      fail "serve $kill finished the roll-up ($now_rolled of $total days) before it could be" \
           "killed inside one of its transactions: kill $kill of $kills"
    fi
    if [ "$now_rolled" -gt "$rolled" ] && in_transaction; then
      kill -KILL "$collector_pid"
      killed=yes
      break
    fi
    [ "$now_rolled" -gt "$rolled" ] && outside=$((outside + 1))
    kill -CONT "$collector_pid"
  done
  wait "$collector_pid" 2>/dev/null || true
  collector_pid=""
  [ -n "$killed" ] || fail "serve $kill made no roll-up progress to kill in (still $rolled days)"
  grep -q "rolled up" "$work/serve-$kill.log" && fail "serve $kill logged a finished pass"
  after=$(rolled_days)
  # The day in progress at the kill may have committed (a kill inside its
  # COMMIT), never more.
  if [ "$after" -lt "$now_rolled" ] || [ "$after" -gt $(( now_rolled + 1 )) ]; then
    fail "kill $kill at $now_rolled rolled-up days left $after"
  fi
  points+=("$after")
  rolled=$after
done

# The last serve finishes the pass: exactly the days left (its log line;
# none if the last kill came inside the last day's commit and it held).
start_collector "$collector" "$work/last.log" --db "$db" --no-auth --metric "$spec"
for _ in $(seq 600); do
  grep -q "rolled up" "$work/last.log" && break
  [ "$rolled" -lt "$total" ] || [ "$(rolled_days)" -lt "$total" ] || break
  sleep 0.1
done
kill "$collector_pid"
wait "$collector_pid" || true
collector_pid=""
total=$(closed_days)  # again: a UTC midnight may have passed
left=$(sed -n 's/.*rolled up \([0-9]*\) metric days.*/\1/p' "$work/last.log")
grep "rolled up" "$work/last.log" || true
[ "${left:-0}" -eq $(( total - rolled )) ] ||
  { cat "$work/last.log" >&2; fail "the last pass rolled up ${left:-0} days, not the $(( total - rolled )) left of $total"; }
[ "$(rolled_days)" -eq "$total" ] || fail "$(rolled_days) days rolled up, not $total"

daily_series > "$work/after.json"
python3 - "$work/before.json" "$work/after.json" <<'PY' || fail "the daily series changed across the kills"
import json, sys
before = json.load(open(sys.argv[1]))["series"]
after = json.load(open(sys.argv[2]))["series"]
if before != after:
    b = {p["start_unix"]: p for p in before}
    a = {p["start_unix"]: p for p in after}
    for start in sorted(set(a) | set(b)):
        n_b = b.get(start, {}).get("n")
        n_a = a.get(start, {}).get("n")
        if b.get(start) != a.get(start):
            print(f"day {start}: n {n_b} from the bucket rows, {n_a} after the roll-up", file=sys.stderr)
    sys.exit(1)
PY
"$collector" verify --db "$db" > "$work/verify.out" ||
  { cat "$work/verify.out" >&2; fail "aggregates differ from the raw reports"; }
cat "$work/verify.out"
echo "PASS ($backend): killed inside a roll-up transaction at ${points[*]} of $total days" \
     "rolled up ($freezes freezes, $outside of them between transactions), then ${left:-0} more;" \
     "daily series and raw reports agree"
