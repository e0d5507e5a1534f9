#!/usr/bin/env bash
# The collector's operator view through the real programs: blur-collector
# serve (SQLite) <- blur-device-sim fleets and hand-made bad requests, then
# /metrics parsed as Prometheus text and the request log parsed as JSON.
#
# Checks:
#  - reports_accepted equals the store's n (blur-collector estimate), the
#    duplicates equal the rerun fleet's, and every committed report is one
#    or the other (commit_reports_sum == accepted + duplicates);
#  - refusals by reason: malformed, bad_content_type, unknown_metric,
#    not_found, method_not_allowed, unauthenticated (no or an unknown
#    token), forbidden (a device token reading); auth failures = 401s + 403s;
#  - the request-duration histograms count exactly the logged requests, per
#    route and status class;
#  - the request log: every line JSON with the fields, the X-Request-Id a
#    client got is in it, and no token, Authorization header, query value,
#    payload or address appears anywhere in it;
#  - /readyz 200; store size > 0;
#  - serve --metrics-address: /metrics only there (404 on the API's port),
#    /healthz and /readyz on both; --log-requests false writes no line.
set -euo pipefail
collector=$1
device_sim=$2
work=$(mktemp -d)
collector_pid=""
trap 'if [ -n "$collector_pid" ]; then kill $collector_pid 2>/dev/null || true; fi; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
python=/usr/bin/python3
expect() {  # expect WHAT ACTUAL EXPECTED
  if [ "$2" != "$3" ]; then echo "FAIL: $1: got $2, expected $3" >&2; exit 1; fi
}
json() { $python -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:rr:1 \
  --log-file "$work/requests.log"
url=http://127.0.0.1:$collector_port

"$device_sim" fleet --collector "$url" --metric 1 --devices 400 --reports 2 --threads 4 --seed 7 \
  > "$work/fleet.json" 2> "$work/fleet.err"
# The same fleet again: every report a duplicate.
"$device_sim" fleet --collector "$url" --metric 1 --devices 400 --reports 2 --threads 4 --seed 7 \
  > "$work/rerun.json" 2> "$work/rerun.err"
# A metric nobody registered: refused (400, unknown_metric), exit 1.
if "$device_sim" fleet --collector "$url" --metric 9 --devices 5 --threads 1 --retries 0 \
  > "$work/unknown.json" 2> "$work/unknown.err"; then
  echo "FAIL: a fleet of an unregistered metric was accepted" >&2; exit 1
fi

# Hand-made requests; the markers must never reach the log.
$python - "$collector_port" "$work/client.json" <<'PY'
import http.client, json, os, sys
port, out = int(sys.argv[1]), sys.argv[2]
def call(method, path, body=None, headers={}):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    r.read()
    c.close()
    return r.status, r.getheader("X-Request-Id")
def enroll():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("POST", "/v1/enroll",
              body=b'{"device_nonce": "0123456789abcdef", "device_key": "' + b"ab" * 32 + b'"}',
              headers={"Content-Type": "application/json",
                       "Authorization": "Bearer " + os.environ["BLUR_ENROLLMENT_SECRET"]})
    r = c.getresponse()
    assert r.status == 200, r.status
    return json.loads(r.read())["token"]
device = {"Authorization": "Bearer " + enroll()}
results = {}
results["malformed"] = call("POST", "/v1/reports", b"PAYLOAD-MARKER-1 not a protobuf",
                            {"Content-Type": "application/x-protobuf", **device})
results["unauthenticated"] = call("POST", "/v1/reports", b"PAYLOAD-MARKER-5",
                                  {"Content-Type": "application/x-protobuf"})
results["forbidden"] = call("GET", "/v1/metrics", headers=device)
results["reader"] = call("GET", "/v1/metrics",
                         headers={"Authorization": "Bearer " + os.environ["BLUR_READER_TOKEN"]})
results["bad_content_type"] = call("POST", "/v1/reports", b"PAYLOAD-MARKER-2",
                                   {"Content-Type": "text/plain"})
results["secret"] = call("GET", "/v1/metrics?query-marker=QUERY-MARKER-3",
                         headers={"Authorization": "Bearer secret-token-123"})
results["not_found"] = call("GET", "/no/such/PATH-MARKER-4")
results["method_not_allowed"] = call("DELETE", "/v1/reports")
results["ready"] = call("GET", "/readyz")
expected = {"malformed": 400, "bad_content_type": 415, "secret": 401, "not_found": 404,
            "method_not_allowed": 405, "ready": 200, "unauthenticated": 401, "forbidden": 403,
            "reader": 200}
for name, (status, request_id) in results.items():
    assert status == expected[name], (name, status)
    assert request_id and len(request_id) == 16 and int(request_id, 16) >= 0, (name, request_id)
json.dump(results, open(out, "w"))
PY
curl_metrics() { $python -c 'import sys,urllib.request
r = urllib.request.urlopen(sys.argv[1], timeout=10)
assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), r.headers["Content-Type"]
sys.stdout.write(r.read().decode())' "$1"; }
curl_metrics "$url/metrics" > "$work/metrics.txt"
kill "$collector_pid"; wait "$collector_pid" || true; collector_pid=""

"$collector" estimate --db "$work/blur.db" --metric 1 > "$work/estimate.json"
stored=$(json "$work/estimate.json" n)
expect "stored" "$stored" 800

$python - "$work/metrics.txt" "$work/requests.log" "$work/client.json" "$stored" \
  "$(json "$work/rerun.json" duplicates)" <<'PY'
import collections, json, re, sys
metrics_path, log_path, client_path = sys.argv[1:4]
stored, duplicates = int(sys.argv[4]), int(sys.argv[5])

# --- the exposition text: every line parses; HELP and TYPE before samples.
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')
types, samples = {}, collections.defaultdict(float)
for line in open(metrics_path).read().splitlines():
    if line.startswith("# HELP ") or line.startswith("# TYPE "):
        parts = line.split(" ", 3)
        if parts[1] == "TYPE":
            assert parts[2] not in types, "TYPE twice: " + line
            types[parts[2]] = parts[3]
        continue
    m = SAMPLE.match(line)
    assert m, "not a sample line: " + repr(line)
    name, labels_text, value = m.group(1), m.group(3) or "", m.group(4)
    family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in types else name
    assert family in types, "sample before its TYPE: " + line
    labels, at = [], 0
    while at < len(labels_text):
        lm = LABEL.match(labels_text, at)
        assert lm, "bad labels: " + labels_text
        labels.append((lm.group(1), lm.group(2)))
        at = lm.end()
    samples[(name, tuple(labels))] = float(value)

def get(name, **labels):
    return samples[(name, tuple(labels.items()))]

assert get("blur_collector_reports_accepted_total") == stored, (samples, stored)
assert get("blur_collector_reports_duplicate_total") == duplicates == stored
# Every valid report, by its device's age: all 400 devices enrolled just now.
assert get("blur_collector_reports_received_total", metric="1",
           device_age="enrolled_last_day") == stored + duplicates
assert get("blur_collector_enrollments_total", kind="new_device") >= 400  # and the hand-made ones
assert get("blur_collector_enrollments_total", kind="renewal") == 400    # the rerun fleet
assert get("process_open_fds") > 0 and get("process_cpu_seconds_total") > 0
assert get("blur_collector_commit_reports_sum") == stored + duplicates
assert get("blur_collector_commit_reports_count") == get("blur_collector_commit_duration_seconds_count") > 0
assert get("blur_collector_batches_conflicting_total") == 0
assert get("blur_collector_auth_failures_total") == 3
assert get("blur_collector_store_size_bytes") > 0
assert get("blur_collector_open_connections") >= 1  # the scrape's own
refused = {r: get("blur_collector_requests_refused_total", reason=r) for r in (
    "malformed", "bad_content_type", "unknown_metric", "not_found", "method_not_allowed",
    "unauthenticated", "forbidden", "contribution_bound", "conflict", "unavailable", "too_large")}
assert refused == {"malformed": 1, "bad_content_type": 1, "unknown_metric": 5, "not_found": 1,
                   "method_not_allowed": 1, "unauthenticated": 2, "forbidden": 1,
                   "contribution_bound": 0, "conflict": 0, "unavailable": 0, "too_large": 0}, refused

# Histograms: buckets cumulative, +Inf == _count.
for (name, labels), value in samples.items():
    if not name.endswith("_count") or types.get(name[:-6]) != "histogram":
        continue
    base = name[:-6]
    buckets = sorted(((float(dict(l)["le"]), v) for (n, l), v in samples.items()
                      if n == base + "_bucket" and tuple(x for x in l if x[0] != "le") == labels))
    assert buckets and buckets[-1][0] == float("inf") and buckets[-1][1] == value, (name, labels)
    assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), (name, labels)

# --- the request log.
log_text = open(log_path).read()
for marker in ("secret-token-123", "Bearer", "Authorization", "QUERY-MARKER-3", "query-marker",
               "bt1-", "blur-reader-", "blur-enrollment-", "0123456789abcdef", "abababab",
               "PAYLOAD-MARKER", "PATH-MARKER-4", "127.0.0.1", "not a protobuf"):
    assert marker not in log_text, "the log holds " + marker
FIELDS = {"time", "request_id", "method", "route", "status", "latency_ms"}
lines = [json.loads(line) for line in log_text.splitlines()]
per_route = collections.Counter()
for entry in lines:
    assert FIELDS <= entry.keys() <= FIELDS | {"reports", "refusal"}, entry
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["time"]), entry
    assert re.fullmatch(r"[0-9a-f]{16}", entry["request_id"]), entry
    assert entry["latency_ms"] >= 0
    assert ("refusal" in entry) == (entry["status"] >= 400 and entry["route"] != "/readyz"), entry
    if entry["route"] == "/v1/reports" and entry["status"] == 200:
        assert "reports" in entry, entry
    per_route[(entry["route"], f"{entry['status'] // 100}xx")] += 1
assert len({e["request_id"] for e in lines}) == len(lines), "request ids repeat"
# The last scrape is logged after its body was rendered: not in the histograms yet.
scrapes = per_route.pop(("/metrics", "2xx"))
assert scrapes == 1
assert sum(e.get("reports", 0) for e in lines) == stored
for route, status_class in per_route:
    counted = get("blur_collector_http_request_duration_seconds_count", route=route,
                  status_class=status_class)
    assert counted == per_route[(route, status_class)], (route, status_class, counted)
total = sum(v for (n, l), v in samples.items() if n == "blur_collector_http_request_duration_seconds_count")
assert total == sum(per_route.values()), (total, per_route)
by_id = {e["request_id"]: e for e in lines}
client = json.load(open(client_path))
for name, (status, request_id) in client.items():
    assert request_id in by_id, (name, request_id)
    assert by_id[request_id]["status"] == status, (name, by_id[request_id])
assert by_id[client["secret"][1]]["route"] == "/v1/metrics"
assert by_id[client["not_found"][1]]["route"] == "unmatched"
assert by_id[client["malformed"][1]]["refusal"] == "malformed"
print(f"metrics: {stored} accepted = stored, {duplicates} duplicates, refusals {refused}; "
      f"log: {len(lines)} lines, histograms agree")
PY

# --- A separate metrics address; no request log.
start_collector "$collector" "$work/server2.log" --db "$work/blur.db" --metric 1:rr:1 \
  --metrics-address 127.0.0.1:0 --log-requests false
metrics_port=$(sed -n 's|.*metrics on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/server2.log")
[ -n "$metrics_port" ] || { cat "$work/server2.log" >&2; echo "FAIL: no metrics address" >&2; exit 1; }
status() { $python -c 'import sys,urllib.request,urllib.error
try: print(urllib.request.urlopen(sys.argv[1], timeout=10).status)
except urllib.error.HTTPError as e: print(e.code)' "$1"; }
expect "/metrics on the API port" "$(status "http://127.0.0.1:$collector_port/metrics")" 404
for path in /metrics /healthz /readyz; do
  expect "$path on the metrics port" "$(status "http://127.0.0.1:$metrics_port$path")" 200
done
for path in /healthz /readyz; do
  expect "$path on the API port" "$(status "http://127.0.0.1:$collector_port$path")" 200
done
"$device_sim" fleet --collector "http://127.0.0.1:$collector_port" --metric 1 --devices 50 \
  --threads 2 > "$work/fleet2.json" 2> "$work/fleet2.err"
curl_metrics "http://127.0.0.1:$metrics_port/metrics" > "$work/metrics2.txt"
grep -qx "blur_collector_reports_accepted_total 50" "$work/metrics2.txt"
grep -qx 'blur_collector_requests_refused_total{reason="not_found"} 1' "$work/metrics2.txt"
kill "$collector_pid"; wait "$collector_pid" || true; collector_pid=""
if grep -q '"request_id"' "$work/server2.log"; then
  echo "FAIL: --log-requests false still logged requests" >&2; exit 1
fi
echo "--metrics-address: /metrics only on the metrics port, probes on both; no request log"
