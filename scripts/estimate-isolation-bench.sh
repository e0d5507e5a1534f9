#!/usr/bin/env bash
# "Estimates never stall ingest", measured: one collector on SQLite with a
# large store (an OLH metric, d = 4096, REPORTS reports over 30 days of
# hourly buckets, filled fast by store_fill through Store::insert), ingest
# measured by blur-device-sim load (device batches: 16 metrics x 4 reports,
# device tokens, the default contribution bound) unloaded and while 4
# clients loop the 30-day daily series of the OLH metric over HTTP, rounds
# interleaved (unloaded, loaded, unloaded, loaded, ...) so the machine's
# other work slows both alike. Prints each round, the loaded/unloaded ratio
# (goal: >= 90%) and the series the clients completed meanwhile.
#
#   scripts/estimate-isolation-bench.sh [REPORTS] [seconds] [rounds] [serve arguments...]
#   (default 10000000 10 2; e.g. --read-idle-class false to compare)
#
# SERIES_PARAMS, if set, is added to the clients' series query: e.g.
# SERIES_PARAMS='&values=7' loops the dashboard's form (one value's
# series) instead of the whole table (26.5 MB of JSON at 10^6 reports).
#
# REPORTS 1000000 is a quick run. Filling 10^7 reports takes a few minutes
# (at nice 19). Needs a host build of blur-collector, blur-device-sim and
# store_fill (cmake --build build/host --target store_fill).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
reports=${1:-10000000}
seconds=${2:-10}
rounds=${3:-2}
shift $(($# < 3 ? $# : 3))
serve_args=("$@")
collector=$root/build/host/collector/blur-collector
sim=$root/build/host/collector/tools/device-sim/blur-device-sim
fill=$root/build/host/tests/bench/store_fill
for tool in "$collector" "$sim" "$fill"; do
  [ -x "$tool" ] || { echo "missing $tool: build it first (host preset)" >&2; exit 1; }
done
work=$(mktemp -d)
pids=()
cleanup() {
  touch "$work/stop"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$root/scripts/lib/collector.sh"
olh=100:olh:1:4096:max_reports_per_bucket=64
echo "filling the store: $reports OLH (d = 4096) reports over 30 days of hourly buckets ..."
nice -n 19 "$fill" "$work/blur.db" "$olh" "$reports" 30
metrics=()
for m in $(seq 16); do metrics+=(--metric "$m:rr:1"); done
start_collector "$collector" "$work/server.log" --db "$work/blur.db" "${metrics[@]}" \
  --metric "$olh" --log-requests false \
  --enrollments-per-address 100000000 --enrollments-per-secret 100000000 ${serve_args[@]+"${serve_args[@]}"}
pids+=("$collector_pid")
url=http://127.0.0.1:$collector_port
from=$(date -u -d '30 days ago' +%Y-%m-%d)
to=$(date -u -d tomorrow +%Y-%m-%d)
series="$url/v1/metrics/100/series?bucket=day&from=$from&to=$to${SERIES_PARAMS:-}"
read_api "$series" > "$work/series.json"
/usr/bin/python3 - "$work/series.json" "$reports" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
points = s.get("series", s.get("points", []))
n = sum(p.get("n", 0) for p in points) if isinstance(points, list) else None
print(f"the 30-day daily series: {len(points)} days, n = {n} (stored: {sys.argv[2]})")
PY

# 4 clients looping the series until $work/stop; each writes its latencies.
clients() {
  rm -f "$work/stop"
  /usr/bin/python3 - "$series" "${BLUR_READER_TOKEN:-}" "$work/stop" "$work/$1.json" <<'PY' &
import json, os, sys, threading, time, urllib.request, urllib.error
url, token, stop, out = sys.argv[1:]
done, statuses, lock = [], {}, threading.Lock()
def loop():
    while not os.path.exists(stop):
        request = urllib.request.Request(url, headers={"Authorization": "Bearer " + token} if token else {})
        t = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                answer.read()
                status = answer.status
        except urllib.error.HTTPError as e:
            status = e.code
        except Exception:
            status = "error"
        with lock:
            done.append(time.monotonic() - t)
            statuses[str(status)] = statuses.get(str(status), 0) + 1
threads = [threading.Thread(target=loop) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
done.sort()
json.dump({"series": len(done), "statuses": statuses,
           "p50_ms": 1000 * done[len(done) // 2] if done else 0,
           "max_ms": 1000 * done[-1] if done else 0}, open(out, "w"))
PY
  clients_pid=$!
  pids+=("$clients_pid")
}
ingest() {  # ingest NAME: one load of device batches
  "$sim" load --collector "$url" --metric 1 --duration "$seconds" --devices $((seconds * 5000)) \
    --batch 64 --connections 16 --json > "$work/$1.json" 2> "$work/$1.err" ||
    { cat "$work/$1.err" >&2; echo "the load $1 failed" >&2; exit 1; }
}
for round in $(seq "$rounds"); do
  echo "round $round: load average $(cut -d' ' -f1-3 /proc/loadavg) (the machine's, before it)"
  ingest "unloaded-$round"
  clients "clients-$round"
  sleep 1  # the series already under way when the load starts sending
  ingest "loaded-$round"
  touch "$work/stop"
  wait "$clients_pid"
done
/usr/bin/python3 - "$work" "$rounds" "$reports" <<'PY'
import json, sys
work, rounds, reports = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
load = lambda name: json.load(open(f"{work}/{name}.json"))
total = {"unloaded": 0.0, "loaded": 0.0}
for r in range(1, rounds + 1):
    u, l, c = load(f"unloaded-{r}"), load(f"loaded-{r}"), load(f"clients-{r}")
    total["unloaded"] += u["reports_per_s"]
    total["loaded"] += l["reports_per_s"]
    print(f"round {r}: unloaded {u['reports_per_s']:,.0f} accepted reports/s (p99 {u['latency_ms']['p99']:.1f} ms); "
          f"with 4 series clients {l['reports_per_s']:,.0f} (p99 {l['latency_ms']['p99']:.1f} ms) = "
          f"{100 * l['reports_per_s'] / u['reports_per_s']:.1f}%; the clients completed {c['series']} "
          f"30-day OLH series (p50 {c['p50_ms']:.0f} ms, max {c['max_ms']:.0f} ms, statuses {c['statuses']})")
ratio = total["loaded"] / total["unloaded"]
print(f"ingest with 4 clients looping 30-day OLH series over {reports:,} reports: "
      f"{100 * ratio:.1f}% of unloaded (goal >= 90%: {'met' if ratio >= 0.9 else 'not met'})")
PY
