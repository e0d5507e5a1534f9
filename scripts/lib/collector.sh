# Sourced by scripts and tests: starts blur-collector on a free loopback
# port and waits until it listens.
#
#   start_collector BINARY LOGFILE serve-arguments...
#   -> sets $collector_pid and $collector_port; returns 1 (log printed) on failure
start_collector() {
  local binary=$1 log=$2
  shift 2
  "$binary" serve --address 127.0.0.1 --port 0 "$@" > "$log" 2>&1 &
  collector_pid=$!
  collector_port=""
  for _ in $(seq 100); do
    collector_port=$(sed -n 's|.*listening on https\{0,1\}://127.0.0.1:\([0-9]*\).*|\1|p' "$log")
    [ -n "$collector_port" ] && return 0
    kill -0 "$collector_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$log" >&2
  return 1
}
