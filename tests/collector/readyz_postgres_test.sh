#!/usr/bin/env bash
# /readyz against a real PostgreSQL failure: a collector on a private
# PostgreSQL server (tests/support/postgres_server.sh, not the shared
# fixture's, since this test stops it) answers
#   200 while the server answers;
#   503 "did not answer within" once the server hangs (SIGSTOP), and within
#       the --ready-timeout, not when the query gives up;
#   200 again once it resumes (SIGCONT);
#   503 with the connection error once the server is stopped;
#   200 again once it is restarted (the store reconnects).
# /healthz stays 200 throughout: the process is alive.
set -euo pipefail
collector=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
chmod 755 "$work"  # the postgres user must reach the server's directory
pg_dir=$work/pg
collector_pid="" stopped=""
pg_bin=${BLUR_PG_BIN:-/usr/lib/postgresql/15/bin}
cleanup() {
  if [ -n "$stopped" ]; then resume_server || true; fi
  if [ -n "$collector_pid" ]; then kill "$collector_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  "$here/../support/postgres_server.sh" stop "$pg_dir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$here/../../scripts/lib/collector.sh"
url=$("$here/../support/postgres_server.sh" start "$pg_dir")
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# The server's processes: the postmaster and its children (by pid, exactly).
server_pids() {
  local main
  main=$(head -n 1 "$pg_dir/data/postmaster.pid")
  echo "$main" $(ps -o pid= --ppid "$main")
}
pause_server() { stopped=1; kill -STOP $(server_pids); }
resume_server() { kill -CONT $(server_pids); stopped=""; }

start_collector "$collector" "$work/server.log" --db "$url" --auth-dir "$work/auth" --metric 1:rr:1 --ready-timeout 0.5 \
  --log-requests false
api=http://127.0.0.1:$collector_port
# readyz URL -> "STATUS TIME_MS REASON"
probe() { /usr/bin/python3 -c 'import json,sys,time,urllib.request,urllib.error
start = time.monotonic()
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=10); status, body = r.status, r.read()
except urllib.error.HTTPError as e:
    status, body = e.code, e.read()
print(status, int((time.monotonic() - start) * 1000), json.loads(body).get("reason", ""))' "$1"; }
expect_ready() {  # WHAT STATUS [REASON-PART]
  local answer
  for _ in $(seq 50); do
    answer=$(probe "$api/readyz")
    if [ "${answer%% *}" = "$2" ] && [[ "$answer" == *"${3:-}"* ]]; then
      echo "$1: $answer"
      return 0
    fi
    sleep 0.1
  done
  echo "FAIL: $1: /readyz answered '$answer', expected $2 ${3:-}" >&2
  exit 1
}

expect_ready "server up" 200
pause_server
answer=$(probe "$api/readyz")
echo "server hung: $answer"
read -r status ms reason <<<"$answer"
[ "$status" = 503 ] || { echo "FAIL: hung server: $answer" >&2; exit 1; }
[[ "$reason" == *"did not answer within 500 ms"* ]] || { echo "FAIL: reason: $answer" >&2; exit 1; }
[ "$ms" -lt 3000 ] || { echo "FAIL: took $ms ms, the timeout is 500" >&2; exit 1; }
[ "$(probe "$api/healthz" | cut -d' ' -f1)" = 200 ]
resume_server
expect_ready "server resumed" 200

as_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop >/dev/null
expect_ready "server stopped" 503 "postgresql://"
[ "$(probe "$api/healthz" | cut -d' ' -f1)" = 200 ]
as_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w start >/dev/null
expect_ready "server restarted" 200
