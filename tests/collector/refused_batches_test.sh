#!/usr/bin/env bash
# Per-metric refused-batch counters (issue 28): blur-collector serve
# (SQLite, authentication on) with metrics 1 (grr), 2 (laplace) and 3 (rr,
# quarantine 1h), and blur-device-sim fleets refused for different reasons,
# one batch per device:
#   - 5 devices report metric 1 with the wrong epsilon: 400, malformed;
#   - 7 devices report 6 reports each of metric 2, over its bound of 4 per
#     bucket: 200 storing 4, contribution_bound;
#   - 9 new devices report metric 3: all held back, quarantine;
#   - 3 devices report metric 9, which nobody registered: 400, unknown_metric;
#   - 20 devices report metric 1 correctly: nothing refused.
# Checks: blur_collector_batches_refused_total{metric,reason} on /metrics
# is exactly {1,malformed}=5, {2,contribution_bound}=7, {3,quarantine}=9 and
# nothing else (no series for the unregistered metric 9: the labels stay
# bounded by the configured metrics); the request-level counter counts the
# same batches by reason (and unknown_metric=3); GET /v1/metrics answers the
# same counts per metric in "refused_batches".
#
#   refused_batches_test.sh COLLECTOR DEVICE_SIM
set -euo pipefail
collector=$1
device_sim=$2
work=$(mktemp -d)
collector_pid=""
trap 'if [ -n "$collector_pid" ]; then kill $collector_pid 2>/dev/null || true; fi; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"

start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:grr:2:4 \
  --metric 2:laplace:1:16 --metric 3:rr:1:quarantine=1h --log-requests false
url=http://127.0.0.1:$collector_port
fleet() {  # EXPECTED_EXIT NAME fleet-arguments...
  local expected=$1 name=$2 status=0
  shift 2
  "$device_sim" fleet --collector "$url" --threads 1 --retries 0 "$@" \
    > "$work/$name.json" 2> "$work/$name.err" || status=$?
  if [ "$status" != "$expected" ]; then
    echo "FAIL: fleet $name exited $status, expected $expected" >&2
    cat "$work/$name.err" >&2
    exit 1
  fi
}
fleet 1 malformed --metric 1 --mechanism grr --epsilon 3 --domain 4 --devices 5 --seed 1
fleet 0 bound --metric 2 --mechanism laplace --epsilon 1 --domain 16 --devices 7 --reports 6 --seed 2
fleet 0 quarantine --metric 3 --devices 9 --seed 3
fleet 1 unknown --metric 9 --devices 3 --seed 4
fleet 0 honest --metric 1 --mechanism grr --epsilon 2 --domain 4 --devices 20 --seed 5
curl -sf "$url/metrics" > "$work/metrics.txt"
curl -sf -H "Authorization: Bearer $BLUR_READER_TOKEN" "$url/v1/metrics" > "$work/v1-metrics.json"

/usr/bin/python3 - "$work/metrics.txt" "$work/v1-metrics.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
def series(name):
    out = {}
    for line in text.splitlines():
        m = re.fullmatch(name + r"\{(.*)\} (\S+)", line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
            out[tuple(sorted(labels.items()))] = float(m.group(2))
    return out
per_metric = {(dict(k)["metric"], dict(k)["reason"]): v
              for k, v in series("blur_collector_batches_refused_total").items()}
expected = {("1", "malformed"): 5, ("2", "contribution_bound"): 7, ("3", "quarantine"): 9}
assert per_metric == expected, per_metric
requests = {dict(k)["reason"]: v for k, v in series("blur_collector_requests_refused_total").items()}
for reason, count in [("malformed", 5), ("contribution_bound", 7), ("quarantine", 9),
                      ("unknown_metric", 3)]:
    assert requests[reason] == count, (reason, requests[reason], count)
assert "# TYPE blur_collector_batches_refused_total counter" in text
answered = {m["metric_id"]: m["refused_batches"] for m in json.load(open(sys.argv[2]))["metrics"]}
assert answered == {1: {"malformed": 5}, 2: {"contribution_bound": 7}, 3: {"quarantine": 9}}, answered
print("per-metric refused batches:", per_metric, "; /v1/metrics:", answered)
PY
echo PASS
