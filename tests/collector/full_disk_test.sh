#!/usr/bin/env bash
# A full disk (issue 26, item 7): the collector's database on a small tmpfs
# that a filler file then fills. Checks:
#   - batches posted meanwhile are answered 503 with a message that names
#     no server path and no database detail;
#   - the operator's log says why once (one line when writes start failing,
#     not one per request) and once more when they succeed again;
#   - /readyz is not ready while the store refuses writes (a full disk
#     still answers reads), and ready again, without any batch arriving,
#     once the filler is removed (the readiness check probes a write);
#   - every report acknowledged before, during and after is stored
#     (nothing acknowledged is lost), and posting works again.
# Needs root (mount -t tmpfs); it fails, saying so, without it.
#
#   full_disk_test.sh COLLECTOR CRAFTED_REPORTS_POSTER
set -euo pipefail
collector=$1
poster=$2
work=$(mktemp -d)
disk=$work/disk
collector_pid=""
cleanup() {
  kill "$collector_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  umount "$disk" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$disk"
mount -t tmpfs -o size=6m tmpfs "$disk" ||
  { echo "FAIL: cannot mount a tmpfs at $disk (the test needs root)" >&2; exit 1; }
. "$(dirname "$0")/../../scripts/lib/collector.sh"
unset BLUR_ENROLLMENT_SECRET  # --no-auth: the poster then posts without enrolling
start_collector "$collector" "$work/server.log" --db "$disk/blur.db" --no-auth \
  --metric 1:rr:1:max_reports_per_bucket=1000000000 --log-requests false
url=http://127.0.0.1:$collector_port
minute=$(( $(date +%s) / 60 ))
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# 1. A healthy store.
before=$("$poster" "$url" 1 1000000 1000 20 64 "$minute" 2)
[ "$(field "$before" failed)" = 0 ] || { echo "FAIL: posting to a healthy store: $before" >&2; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" = 200 ] ||
  { echo "FAIL: /readyz before the disk filled" >&2; exit 1; }

# 2. The disk fills; batches keep coming.
dd if=/dev/zero of="$disk/filler" bs=64k 2>/dev/null || true  # stops at ENOSPC
during=$("$poster" "$url" 1 1000000 2000 40 640 "$minute" 4 || true)
echo "while full: $during"
failed=$(field "$during" failed)
[ "$failed" -gt 0 ] || { echo "FAIL: no batch failed on a full disk: $during" >&2; exit 1; }
error=$(field "$during" first_error)
case "$error" in
  503*) ;;
  *) echo "FAIL: a failed commit must be a 503, got: $error" >&2; exit 1 ;;
esac
for leak in "$work" blur.db sqlite SQLITE; do
  case "$error" in
    *"$leak"*) echo "FAIL: the device saw '$leak': $error" >&2; exit 1 ;;
  esac
done
# One more batch of the same size just before /readyz: the readiness check
# probes a write itself once no commit was tried for 10 s (a small probe
# can fit where a batch does not), and a loaded machine can take that long
# between the posts above and this check.
last=$("$poster" "$url" 1 1000000 9000 1 64 "$minute" 1 || true)
ready=$(curl -s -w ' %{http_code}' "$url/readyz")
echo "/readyz while full: $ready"
case "$ready" in
  *" 503") ;;
  *) echo "FAIL: /readyz must be 503 while writes fail: $ready" >&2; exit 1 ;;
esac
case "$ready" in
  *"$work"*|*blur.db*) echo "FAIL: /readyz shows a path: $ready" >&2; exit 1 ;;
esac
failing_lines=$(grep -c "writes to the database are failing" "$work/server.log" || true)
[ "$failing_lines" = 1 ] ||
  { cat "$work/server.log" >&2; echo "FAIL: $failing_lines log lines for one outage ($failed failed batches), want 1" >&2; exit 1; }

# 3. Space again: ready without any batch arriving, then posting works.
rm -f "$disk/filler"
for _ in $(seq 300); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" = 200 ] && break
  sleep 0.1
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" = 200 ] ||
  { cat "$work/server.log" >&2; echo "FAIL: /readyz not ready after space came back" >&2; exit 1; }
grep -q "the database takes writes again" "$work/server.log" ||
  { cat "$work/server.log" >&2; echo "FAIL: the log does not say writes recovered" >&2; exit 1; }
after=$("$poster" "$url" 1 1000000 3000 20 64 "$minute" 2)
[ "$(field "$after" failed)" = 0 ] || { echo "FAIL: posting after recovery: $after" >&2; exit 1; }

# 4. Nothing acknowledged is lost.
acknowledged=$(( $(field "$before" accepted) + $(field "$during" accepted) + $(field "$last" accepted) + $(field "$after" accepted) ))
stored=$(read_api "$url/v1/metrics/1/estimate" | python3 -c 'import json,sys; print(json.load(sys.stdin)["n"])')
echo "acknowledged $acknowledged, stored $stored; $failed batches refused while full"
[ "$acknowledged" = "$stored" ] ||
  { echo "FAIL: $acknowledged reports acknowledged, $stored stored" >&2; exit 1; }
echo "PASS: full disk: 503 without server detail, one log line each way, /readyz follows writes"
