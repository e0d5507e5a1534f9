#!/usr/bin/env bash
# Word-discovery reads cannot freeze the collector (issue 26, attack 2).
#
# The attack: word-discovery (pem) estimates and series are the collector's
# costliest reads, and reports can be chosen to make them costlier. Load: one
# device posting 4 uniformly random pem reports per hour for the 720 hours
# before now (2,880 reports, 720 hourly buckets, within its contribution
# bound), and DEVICES more doing the same over the last 24 hours (96 each).
# Then, at once: 4 discovery estimates (top_k 1000 to 997: the widest
# beam, and four cache keys), an hourly series (top_k 32) and an hourly
# series at top_k 1000 (720 discoveries of the widest beam: longer than
# the deadline anywhere), while /healthz is polled every 20 ms and an
# honest fleet posts.
#
# Checks (orderings and statuses, no time bound):
# - a /healthz sent after every read was sent was answered 200 before the
#   first read was answered: reads do not hold the I/O threads (on the I/O
#   threads, 6 reads occupy all 4 of them until one finishes);
# - every read answered 200 or 503 with refusal "deadline" (--read-deadline
#   3 s here), at least one did, and the server counted each of those
#   (blur_collector_requests_refused_total{reason="deadline"});
# - the cancelled reads stopped working: blur_collector_reads_running
#   returns to 0;
# - the honest fleet completes, every report acknowledged;
# - SIGTERM while reads are running (a collector with a 600 s deadline):
#   the process exits 0, the reads answered or closed (polled with a
#   generous deadline; the time it took is printed).
# Prints /healthz latencies and the fleet's rate without and with the
# reads.
#
#   discovery_reads_test.sh COLLECTOR DEVICE_SIM PEM_REPORTS_POSTER [DEVICES]
set -euo pipefail
collector=$1
device_sim=$2
poster=$3
devices=${4:-1000}  # fewer under the sanitizers (tests/collector/CMakeLists.txt)
fleet_devices=$(( devices >= 1000 ? 3000 : 500 ))
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
collector_pid="" fleet_pid=""
cleanup() {
  for pid in $fleet_pid $collector_pid; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$here/../../scripts/lib/collector.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 11:pem:4:16 \
  --metric 1:rr:1 --metric 2:rr:1 --threads 4 --read-threads 2 --read-deadline 3 \
  --shutdown-timeout 5
url=http://127.0.0.1:$collector_port

# The attack's reports (nonces far from the fleet simulator's).
"$poster" "$url" 11 4000000 16 7000000000 1 720 4 1 > "$work/attacker.json"
"$poster" "$url" 11 4000000 16 8000000000 "$devices" 24 4 8 > "$work/devices.json"
echo "attacker (one device, 4 per hour x 720 hours): $(cat "$work/attacker.json")"
echo "$devices devices (4 per hour x 24 hours): $(cat "$work/devices.json")"

# Runs a fleet of $fleet_devices on metric $1, seed $2; prints its wall time (s).
fleet() {
  local start end
  start=$(date +%s.%N)
  "$device_sim" fleet --collector "$url" --metric "$1" --devices $fleet_devices --seed "$2" \
    --threads 8 > "$work/fleet-$1.json" 2> "$work/fleet-$1.err" ||
    { tail -3 "$work/fleet-$1.err" >&2; return 1; }
  end=$(date +%s.%N)
  /usr/bin/python3 -c "print(f'{$end - $start:.2f}')" > "$work/fleet-$1.seconds"
}

# The reads and the /healthz poller; results in $1.
cat > "$work/reads.py" <<'PY'
import http.client, json, os, sys, threading, time, urllib.parse
port, out, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
token = os.environ.get("BLUR_READER_TOKEN", "")

def get(path, timeout=300):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    sent = time.monotonic()
    try:
        c.request("GET", path, headers={"Authorization": "Bearer " + token} if token else {})
        r = c.getresponse()
        body = r.read().decode()
        return {"path": path, "sent": sent, "received": time.monotonic(), "status": r.status,
                "body": body[:300]}
    except Exception as e:  # closed by a stopping server
        return {"path": path, "sent": sent, "received": time.monotonic(), "status": 0,
                "body": repr(e)}
    finally:
        c.close()

if mode == "sigterm":  # reads that run until the server stops
    paths = ["/v1/metrics/11/series?bucket=hour&top_k=%d" % k for k in (990, 991, 992)]
else:
    paths = ["/v1/metrics/11/estimate?top_k=%d" % k for k in (1000, 999, 998, 997)]
    paths += ["/v1/metrics/11/series?bucket=hour", "/v1/metrics/11/series?bucket=hour&top_k=1000"]
baseline = [get("/healthz") for _ in range(20)]
reads = [None] * len(paths)
def read(i): reads[i] = get(paths[i])
threads = [threading.Thread(target=read, args=(i,)) for i in range(len(paths))]
start = time.monotonic()
for t in threads: t.start()
all_sent = time.monotonic()
healthz = []
while any(t.is_alive() for t in threads):
    healthz.append(get("/healthz", timeout=60))  # unanswered in 60 s: status 0
    time.sleep(0.02)
for t in threads: t.join()
json.dump({"start": start, "all_sent": all_sent, "baseline": baseline, "reads": reads,
           "healthz": healthz}, open(out, "w"))
PY

metric_value() {  # a sample of the collector's /metrics: metric_value NAME ("" if none)
  { curl -sf --max-time 60 "$url/metrics" || true; } | awk -v name="$1" '$1 == name { print int($2) }'
}

# 1. The fleet alone.
fleet 1 11 || fail "the fleet without reads did not complete"
echo "fleet without reads: $fleet_devices devices in $(cat "$work/fleet-1.seconds") s"

# 2. The reads while the fleet posts.
fleet 2 12 &
fleet_pid=$!
/usr/bin/python3 "$work/reads.py" "$collector_port" "$work/reads.json" concurrent
fleet_status=0
wait $fleet_pid || fleet_status=$?
fleet_pid=""
# Counted when answered: final once every read has its answer.
deadline_refusals=$(metric_value 'blur_collector_requests_refused_total{reason="deadline"}')
/usr/bin/python3 - "$work/reads.json" "${deadline_refusals:-0}" "$work/fleet-1.seconds" \
  "$work/fleet-2.seconds" "$fleet_devices" <<'PY'
import json, os, statistics, sys
r = json.load(open(sys.argv[1]))
refused = int(sys.argv[2])
devices = int(sys.argv[5])
seconds = lambda path: float(open(path).read()) if os.path.exists(path) else float("nan")
quiet, loaded = seconds(sys.argv[3]), seconds(sys.argv[4])
ms = lambda x: 1000 * (x["received"] - x["sent"])
for read in r["reads"]:
    print(f"  {read['path']}: {read['status']} after {read['received'] - read['sent']:.2f} s")
first_answer = min(read["received"] for read in r["reads"])
during = [h for h in r["healthz"] if h["sent"] >= r["all_sent"] + 0.25]
in_time = [h for h in during if h["received"] < first_answer and h["status"] == 200]
base = [ms(h) for h in r["baseline"]]
lat = [ms(h) for h in r["healthz"]]
print(f"/healthz before the reads: median {statistics.median(base):.1f} ms, max {max(base):.1f} ms")
if lat:
    print(f"/healthz during the reads: {len(lat)} polls, median {statistics.median(lat):.1f} ms, "
          f"max {max(lat):.1f} ms; {len(in_time)} answered 200 before the first read's answer "
          f"({first_answer - r['all_sent']:.2f} s after the reads were sent)")
print(f"fleet: {devices / quiet:.0f} devices/s without the reads, {devices / loaded:.0f} with them")
assert in_time, "no /healthz was answered while the reads were running: they hold the I/O threads"
assert all(h["status"] == 200 for h in r["healthz"]), [h for h in r["healthz"] if h["status"] != 200][:3]
late = 0
for read in r["reads"]:
    if read["status"] == 503:
        assert "deadline" in json.loads(read["body"])["error"], read
        late += 1
    else:
        assert read["status"] == 200, read
assert late >= 1, "no read passed the 3 s deadline: the cancellation was not exercised"
assert refused == late, f"{late} reads answered 503 deadline, {refused} counted"
print(f"every read answered 200 or 503 deadline ({late} past the deadline, {refused} counted)")
PY
[ "$fleet_status" = 0 ] || fail "the fleet with reads did not complete"
echo "fleet with reads: $fleet_devices devices in $(cat "$work/fleet-2.seconds") s"
for metric in 1 2; do
  /usr/bin/python3 - "$work/fleet-$metric.json" "$fleet_devices" <<'PY'
import json, sys
fleet, devices = json.load(open(sys.argv[1])), int(sys.argv[2])
assert fleet["acknowledged"] == devices and fleet["accepted"] == devices, fleet
PY
done
# The cancelled reads stop working (generous deadline: 120 s).
for _ in $(seq 1200); do
  [ "$(metric_value blur_collector_reads_running)" = 0 ] && break
  sleep 0.1
done
[ "$(metric_value blur_collector_reads_running)" = 0 ] || fail "cancelled reads still running"

# 3. SIGTERM while reads run: a collector whose reads have 600 s.
kill -TERM $collector_pid
wait $collector_pid || fail "the collector did not exit 0 on SIGTERM"
collector_pid=""
start_collector "$collector" "$work/server2.log" --db "$work/blur.db" --threads 4 \
  --read-threads 2 --read-deadline 600 --shutdown-timeout 5
url=http://127.0.0.1:$collector_port
/usr/bin/python3 "$work/reads.py" "$collector_port" "$work/sigterm-reads.json" sigterm &
reads_pid=$!
for _ in $(seq 1200); do  # until both read threads are busy (120 s at most)
  [ "$(metric_value blur_collector_reads_running)" = 2 ] && break
  sleep 0.1
done
[ "$(metric_value blur_collector_reads_running)" = 2 ] || fail "the reads did not start"
sent=$(date +%s.%N)
kill -TERM $collector_pid
for _ in $(seq 600); do  # exit within the 5 s shutdown timeout; polled for 60 s
  kill -0 $collector_pid 2>/dev/null || break
  sleep 0.1
done
kill -0 $collector_pid 2>/dev/null && fail "still running 60 s after SIGTERM with reads in progress"
status=0
wait $collector_pid || status=$?
collector_pid=""
took=$(/usr/bin/python3 -c "import time; print(f'{time.time() - $sent:.2f}')")
[ "$status" = 0 ] || fail "the collector exited $status on SIGTERM"
grep -q "blur-collector: stopped" "$work/server2.log" || fail "no clean stop in the log"
wait $reads_pid
/usr/bin/python3 - "$work/sigterm-reads.json" "$took" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for read in r["reads"]:
    print(f"  {read['path']}: {read['status'] or 'closed'} {read['body'][:80]}")
    assert read["status"] in (0, 200, 503), read
print(f"SIGTERM with 2 reads running and 1 queued: exited 0 after {sys.argv[2]} s "
      f"(--shutdown-timeout 5)")
PY
echo "PASS"
