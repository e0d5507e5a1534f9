# Sourced by scripts and tests: starts blur-collector on a free loopback
# port and waits until it listens.
#
#   start_collector BINARY LOGFILE serve-arguments...
#   -> sets $collector_pid and $collector_port; returns 1 (log printed) on failure
#
# Authentication is on unless the arguments say --no-auth. Then the
# collector's credentials directory is $collector_auth_dir, and the tokens
# it made at first start are exported for blur-device-sim and curl:
# BLUR_ENROLLMENT_SECRET, BLUR_READER_TOKEN, BLUR_ADMIN_TOKEN. A test fleet
# enrolls every device from 127.0.0.1, so the new-device limits per address
# and per secret are lifted here, unless the arguments set them (to test
# them: an option may be given once).
start_collector() {
  local binary=$1 log=$2
  shift 2
  local lifted=() arg
  local address=(--enrollments-per-address 100000000) secret=(--enrollments-per-secret 100000000)
  for arg in "$@"; do
    [ "$arg" = --enrollments-per-address ] && address=()
    [ "$arg" = --enrollments-per-secret ] && secret=()
  done
  lifted=("${address[@]}" "${secret[@]}")
  : > "$log"  # before the child runs: the loop below reads it at once
  "$binary" serve --address 127.0.0.1 --port 0 "${lifted[@]}" "$@" \
    > "$log" 2>&1 &
  collector_pid=$!
  collector_port=""
  collector_auth_dir=""
  # Up to a minute: a start that takes longer is hung, not slow.
  for _ in $(seq 600); do
    collector_port=$(sed -n 's|.*listening on https\{0,1\}://127.0.0.1:\([0-9]*\).*|\1|p' "$log")
    if [ -n "$collector_port" ]; then
      collector_auth_dir=$(sed -n 's|^blur-collector: credentials directory \([^ ]*\).*|\1|p' "$log")
      if [ -n "$collector_auth_dir" ]; then
        load_collector_tokens "$collector_auth_dir"
      fi
      return 0
    fi
    kill -0 "$collector_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$log" >&2
  return 1
}

# Exports the tokens a collector wrote at first start in DIR.
load_collector_tokens() {
  local dir=$1
  [ -f "$dir/enrollment-secret" ] && BLUR_ENROLLMENT_SECRET=$(cat "$dir/enrollment-secret")
  [ -f "$dir/reader-token" ] && BLUR_READER_TOKEN=$(cat "$dir/reader-token")
  [ -f "$dir/admin-token" ] && BLUR_ADMIN_TOKEN=$(cat "$dir/admin-token")
  export BLUR_ENROLLMENT_SECRET BLUR_READER_TOKEN BLUR_ADMIN_TOKEN
}

# curl with the reader token (if any): read_api URL [curl arguments...]
read_api() {
  local url=$1
  shift
  if [ -n "${BLUR_READER_TOKEN:-}" ]; then
    curl -sf -H "Authorization: Bearer $BLUR_READER_TOKEN" "$@" "$url"
  else
    curl -sf "$@" "$url"
  fi
}
