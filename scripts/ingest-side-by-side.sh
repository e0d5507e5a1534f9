#!/usr/bin/env bash
# Two collector binaries side by side on loopback: both serve at once, one
# load generator each (blur-device-sim load, the same arguments, with device
# tokens), so whatever else runs on the machine slows both alike. Per round
# (fresh databases): device batches of 64 reports (16 metrics x 4, the
# default contribution bound) on 16 connections, then single-report POSTs on
# 64 connections. Prints each side's rate, latency and the
# collector's CPU time per POST, and the new/old ratio per round.
#
#   scripts/ingest-side-by-side.sh OLD_COLLECTOR NEW_COLLECTOR [seconds] [rounds]
#
# Needs a host build (blur-device-sim). E.g. against an older commit: build
# it in a scratch worktree and pass both blur-collector paths. Environment:
# OLD_DEVICE_SIM, the load generator for the old side when its enrollment
# differs (default: this build's); CONNECTIONS, for the batches (16);
# NO_AUTH=1, both with --no-auth (no
# enrollment at all). Both generators enroll first, then start sending at
# once (--start-file); an OLD_DEVICE_SIM must have that option.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
old=$1
new=$2
seconds=${3:-8}
rounds=${4:-3}
sim=$root/build/host/collector/tools/device-sim/blur-device-sim
old_sim=${OLD_DEVICE_SIM:-$sim}
auth=()
[ "${NO_AUTH:-0}" = 1 ] && auth=(--no-auth)
[ -x "$old" ] && [ -x "$new" ] && [ -x "$sim" ] && [ -x "$old_sim" ] ||
  { echo "usage: $0 OLD NEW [seconds] [rounds] (after a host build)" >&2; exit 2; }
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$root/scripts/lib/collector.sh"
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime, clock ticks
declare -A pid port secret
metrics=()
for m in $(seq 16); do metrics+=(--metric "$m:rr:1"); done
for run in $(seq "$rounds"); do
  for side in old new; do
    binary=$old
    [ $side = new ] && binary=$new
    mkdir -p "$work/$side-$run"
    start_collector "$binary" "$work/$side-$run/log" --db "$work/$side-$run/blur.db" \
      "${metrics[@]}" --log-requests false \
      "${auth[@]}"
    pid[$side]=$collector_pid port[$side]=$collector_port
    secret[$side]=""
    [ -n "$collector_auth_dir" ] &&
      secret[$side]="--enrollment-secret-file $collector_auth_dir/enrollment-secret"
    pids+=("$collector_pid")
  done
  for size in 64 1; do
    connections=${CONNECTIONS:-16} devices=$((seconds * 4000))
    [ $size = 1 ] && connections=64 devices=$((seconds * 12000))
    loads=()
    go=$work/go-$run-$size
    for side in old new; do
      load_sim=$sim
      [ $side = old ] && load_sim=$old_sim
      # shellcheck disable=SC2086 # the secret option: two words or none
      env -u BLUR_ENROLLMENT_SECRET "$load_sim" load --collector "http://127.0.0.1:${port[$side]}" \
        --metric 1 --duration "$seconds" --batch $size --connections $connections \
        --devices "$devices" --seed $((run * 10 + size)) ${secret[$side]} --start-file "$go" --json \
        > "$work/$side-$run-b$size.json" 2> "$work/$side-$run-b$size.err" &
      loads+=($!)
    done
    # Both send at once, when both have enrolled; the collectors' CPU from then on.
    for side in old new; do
      until grep -q "waiting for" "$work/$side-$run-b$size.err"; do
        kill -0 "${loads[0]}" 2>/dev/null && kill -0 "${loads[1]}" 2>/dev/null ||
          { cat "$work/$side-$run-b$size.err" >&2; exit 1; }
        sleep 0.05
      done
    done
    for side in old new; do ticks "${pid[$side]}" > "$work/$side-$run-b$size.t0"; done
    touch "$go"
    wait "${loads[@]}" || true
    for side in old new; do
      echo $(($(ticks "${pid[$side]}") - $(cat "$work/$side-$run-b$size.t0"))) \
        > "$work/$side-$run-b$size.ticks"
    done
  done
  kill "${pid[old]}" "${pid[new]}"
  wait "${pid[old]}" "${pid[new]}" || true
  pids=()
done
/usr/bin/python3 - "$work" "$rounds" "$(getconf CLK_TCK)" <<'PY'
import json, statistics, sys
work, rounds, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for size, what in (("b64", "64-report batches (16 metrics x 4)"), ("b1", "single-report POSTs, 64 connections")):
    print(what + ":")
    rate, cpu = [], []
    for run in range(1, rounds + 1):
        seen = {}
        for side in ("old", "new"):
            r = json.load(open(f"{work}/{side}-{run}-{size}.json"))
            ticks = int(open(f"{work}/{side}-{run}-{size}.ticks").read())
            seen[side] = (r, 1e6 * ticks / hz / max(1, r["requests_answered"]))
        rate.append(seen["new"][0]["reports_per_s"] / seen["old"][0]["reports_per_s"])
        cpu.append(seen["new"][1] / seen["old"][1])
        for side in ("old", "new"):
            r, us = seen[side]
            print(f"  round {run} {side}: {r['reports_per_s']:,.0f} reports/s ({r['requests_per_s']:,.0f} POSTs/s), "
                  f"p50 {r['latency_ms']['p50']:.1f} ms, p99 {r['latency_ms']['p99']:.1f} ms, "
                  f"{us:.0f} us collector CPU per POST, statuses {r['status']}")
    print(f"  new/old rate per round: {', '.join(f'{100 * x:.1f}%' for x in rate)} "
          f"(mean {100 * statistics.mean(rate):.1f}%); CPU per POST new/old: mean {100 * statistics.mean(cpu):.1f}%")
PY
