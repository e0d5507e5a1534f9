#!/usr/bin/env bash
# deploy/container: the image build-image.sh makes from this build's
# collector, run with podman (runc, cgroupfs). It must start as its
# non-root user, answer /readyz, take a simulated fleet's reports, and keep
# them on its volume: a second container on the same volume answers the
# same estimates (n and every value) as the first did before it stopped.
# Without a working podman the test fails, saying so.
set -euo pipefail
collector=$1
device_sim=$2
source_dir=$3
uid=65532
tag=localhost/blur-collector-test:$$
volume=blur-collector-test-$$
podman=(podman --runtime runc --cgroup-manager cgroupfs)
# This machine's sandbox refuses podman's default (raised) rlimits; these
# are at or under the limits the test runs with.
limits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)

if ! command -v podman > /dev/null || ! podman info > /dev/null 2> /tmp/podman-info.$$; then
  echo "FAIL: podman cannot run here (Debian's podman and runc; toolchains/setup.sh):" >&2
  cat /tmp/podman-info.$$ >&2 2>/dev/null || true
  rm -f /tmp/podman-info.$$
  exit 1
fi
rm -f /tmp/podman-info.$$

work=$(mktemp -d)
cleanup() {
  "${podman[@]}" rm -f -t 0 blur-test-a-$$ blur-test-b-$$ > /dev/null 2>&1 || true
  podman volume rm -f "$volume" > /dev/null 2>&1 || true
  podman rmi -f "$tag" > /dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$source_dir/deploy/container/build-image.sh" "$collector" "$tag" > "$work/build.log" 2>&1 ||
  { echo "FAIL: build-image.sh:" >&2; cat "$work/build.log" >&2; exit 1; }
tail -n1 "$work/build.log"
[ "$(podman image inspect --format '{{.Config.User}}' "$tag")" = "$uid:$uid" ] ||
  { echo "FAIL: the image's user is not $uid:$uid" >&2; exit 1; }
# Nothing but the collector: no shell to run.
if "${podman[@]}" run --rm "${limits[@]}" --entrypoint /bin/sh "$tag" -c true > /dev/null 2>&1; then
  echo "FAIL: the image has a shell" >&2
  exit 1
fi
podman volume create "$volume" > /dev/null
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port

# run NAME: a container on the volume, until its /readyz answers 200.
run() {
  local name=$1
  "${podman[@]}" run -d --name "$name" "${limits[@]}" -v "$volume:/var/lib/blur-collector" \
    -p "127.0.0.1:$port:8080" "$tag" --metric 1:rr:1 --metric 2:olh:1:64 \
    --enrollments-per-address 100000000 --log-requests false > /dev/null 2> "$work/run.log" ||
    { echo "FAIL: podman run:" >&2; cat "$work/run.log" >&2; exit 1; }
  for _ in $(seq 600); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/readyz")" = 200 ] && return 0
    [ "$(podman inspect --format '{{.State.Running}}' "$name")" = true ] || break
    sleep 0.1
  done
  echo "FAIL: container $name never answered /readyz 200; its log:" >&2
  podman logs "$name" >&2
  exit 1
}

# estimates FILE: both metrics' estimates, as the reader sees them.
estimates() {
  for metric in 1 2; do
    curl -sf -H "Authorization: Bearer $BLUR_READER_TOKEN" "$base/v1/metrics/$metric/estimate"
    echo
  done > "$1"
}

run blur-test-a-$$
echo "container A ready on $base"
processes=$(podman top blur-test-a-$$ huser args | tail -n +2)
echo "$processes"
if echo "$processes" | awk '{print $1}' | grep -qvx "$uid"; then
  echo "FAIL: a process in the container does not run as $uid" >&2
  exit 1
fi
state=$(podman volume inspect --format '{{.Mountpoint}}' "$volume")
# The volume's files as the container's user ids name them (rootless podman
# maps them: read through its user namespace).
as_storage() { if [ "$(id -u)" -eq 0 ]; then "$@"; else podman unshare "$@"; fi; }
[ "$(as_storage stat -c %u:%a "$state")" = "$uid:700" ] &&
  [ "$(as_storage stat -c %u "$state/blur.db")" = "$uid" ] ||
  { echo "FAIL: the volume and the store are not the container user's alone" >&2;
    as_storage ls -lan "$state" >&2; exit 1; }
BLUR_ENROLLMENT_SECRET=$(as_storage cat "$state/blur.db.auth/enrollment-secret")
BLUR_READER_TOKEN=$(as_storage cat "$state/blur.db.auth/reader-token")
export BLUR_ENROLLMENT_SECRET BLUR_READER_TOKEN

"$device_sim" fleet --collector "$base" --devices 800 --true-rate 0.3 --epsilon 1 --metric 1 \
  --seed 41 --threads 4 > "$work/fleet-rr.json" 2> "$work/fleet.log"
"$device_sim" fleet --collector "$base" --mechanism olh --domain 64 --epsilon 1 --devices 500 \
  --metric 2 --seed 42 --threads 4 > "$work/fleet-olh.json" 2>> "$work/fleet.log"
estimates "$work/before.json"
"${podman[@]}" stop -t 30 blur-test-a-$$ > /dev/null
podman logs blur-test-a-$$ 2>&1 | tail -n1
"${podman[@]}" rm blur-test-a-$$ > /dev/null

run blur-test-b-$$
echo "container B ready on the same volume"
estimates "$work/after.json"
/usr/bin/python3 - "$work/before.json" "$work/after.json" <<'PY'
import json, sys
before = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
after = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
assert [b["n"] for b in before] == [800, 500], ("every report stored", [b["n"] for b in before])
for b, a in zip(before, after):
    assert a["n"] == b["n"], f"metric {b['metric_id']}: n {b['n']} before the restart, {a['n']} after"
    assert a["estimates"] == b["estimates"], f"metric {b['metric_id']}: estimates changed"
    print(f"metric {b['metric_id']} ({b['mechanism']}): n {a['n']} and its "
          f"{len(a['estimates'])} estimates the same after the restart")
PY
