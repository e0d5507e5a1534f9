#!/usr/bin/env bash
# Results out (issue 28): blur-collector serve (SQLite, authentication on)
# <- blur-device-sim fleets of a frequency oracle (grr, 4 values, reports
# spread over 30 hours) and a numeric mean (laplace); then the read API with
# Accept: text/csv, application/x-ndjson and application/jsonl, and
# `blur-collector export`, read back with Python's csv and json modules.
#
# Checks:
#   - every row equals the JSON answer's value it flattens (estimate,
#     stderr, ci95 ends, fraction, n, design effect: equal floats, as both
#     write the shortest round-trip form), one row per value per period, in
#     order, and the periods are the JSON series' (bucket_start ISO 8601
#     UTC, bucket_end = start + the bucket);
#   - the answer's Content-Type; Accept */* and none answer JSON, text/*
#     CSV; an Accept of none of them is 406 with a JSON error; a 404 stays
#     JSON under Accept: text/csv;
#   - blur-collector export writes the same bytes the API answered, to
#     --out or the standard output; a bad metric exits 2 writing nothing;
#   - words with commas, quotes, CR/LF and a non-UTF-8 byte
#     (result_rows_sample) survive csv.reader and json.loads unchanged (the
#     byte as U+FFFD), one row each.
#
#   export_test.sh COLLECTOR DEVICE_SIM RESULT_ROWS_SAMPLE
set -euo pipefail
collector=$1
device_sim=$2
sample=$3
work=$(mktemp -d)
collector_pid=""
trap 'if [ -n "$collector_pid" ]; then kill $collector_pid 2>/dev/null || true; fi; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
python=/usr/bin/python3

start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:grr:2:4 \
  --metric 2:laplace:1:16 --log-requests false
url=http://127.0.0.1:$collector_port
"$device_sim" fleet --collector "$url" --metric 1 --mechanism grr --epsilon 2 --domain 4 \
  --devices 600 --spread-hours 30 --threads 2 --seed 11 > "$work/fleet1.json" 2> "$work/fleet1.err"
"$device_sim" fleet --collector "$url" --metric 2 --mechanism laplace --epsilon 1 --domain 16 \
  --devices 300 --spread-hours 30 --threads 2 --seed 12 > "$work/fleet2.json" 2> "$work/fleet2.err"

# The API: every format of every read, saved for the comparison below.
$python - "$url" "$work" <<'PY'
import json, os, sys, urllib.error, urllib.request
url, work = sys.argv[1:3]
token = os.environ["BLUR_READER_TOKEN"]
def get(path, accept=None):
    headers = {"Authorization": "Bearer " + token}
    if accept is not None:
        headers["Accept"] = accept
    try:
        with urllib.request.urlopen(urllib.request.Request(url + path, headers=headers),
                                    timeout=30) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()
reads = {"e1": "/v1/metrics/1/estimate", "d1": "/v1/metrics/1/series?bucket=day",
         "h1": "/v1/metrics/1/series?bucket=hour&from=2000-01-01",
         "n1": "/v1/metrics/1/estimate?postprocess=norm-sub",
         "e2": "/v1/metrics/2/estimate", "h2": "/v1/metrics/2/series?bucket=hour"}
kinds = {"json": ("application/json", "application/json"),
         "csv": ("text/csv", "text/csv; charset=utf-8; header=present"),
         "ndjson": ("application/x-ndjson", "application/x-ndjson"),
         "jsonl": ("application/jsonl", "application/jsonl")}
for name, path in reads.items():
    for kind, (accept, content_type) in kinds.items():
        status, got_type, body = get(path, accept)
        assert status == 200, (path, accept, status, body)
        assert got_type == content_type, (path, accept, got_type)
        open(os.path.join(work, f"api-{name}.{kind}"), "wb").write(body)
    assert open(os.path.join(work, f"api-{name}.ndjson"), "rb").read() == \
        open(os.path.join(work, f"api-{name}.jsonl"), "rb").read(), name
# Negotiation.
for accept, content_type in [(None, "application/json"), ("*/*", "application/json"),
                             ("text/*", "text/csv; charset=utf-8; header=present"),
                             ("application/json;q=0.5, text/csv", "text/csv; charset=utf-8; header=present"),
                             ("text/csv;q=0, */*;q=0.1", "application/json")]:
    status, got_type, _ = get(reads["e1"], accept)
    assert (status, got_type) == (200, content_type), (accept, status, got_type)
for accept in ["image/png", "text/csv;q=0", "text/html, application/xml"]:
    status, got_type, body = get(reads["e1"], accept)
    assert status == 406 and got_type == "application/json", (accept, status, got_type)
    assert "text/csv" in json.loads(body)["error"], body
status, got_type, body = get("/v1/metrics/9/estimate", "text/csv")
assert status == 404 and got_type == "application/json" and "error" in json.loads(body), body
status, _, body = get("/v1/metrics/1/series?bucket=week", "text/csv")
assert status == 400 and "bucket" in json.loads(body)["error"], body
print("API: 6 reads x 4 formats answered; negotiation and refusals as documented")
PY

kill "$collector_pid"; wait "$collector_pid" 2>/dev/null || true; collector_pid=""

# The CLI: the same bytes as the API, through a file and the standard output.
export_cli() {  # NAME FORMAT ARGS...
  local name=$1 format=$2
  shift 2
  "$collector" export --db "$work/blur.db" --format "$format" --out "$work/cli-$name.$format" "$@"
  cmp "$work/cli-$name.$format" "$work/api-$name.$format" || {
    echo "FAIL: export $* --format $format differs from the API's answer" >&2; exit 1; }
}
for format in csv jsonl; do  # api-NAME.jsonl: the application/jsonl answer
  for pair in "e1:--metric 1" "d1:--metric 1 --bucket day" "h1:--metric 1 --bucket hour --from 2000-01-01" \
              "n1:--metric 1 --postprocess norm-sub" "e2:--metric 2" "h2:--metric 2 --bucket hour"; do
    name=${pair%%:*}
    # shellcheck disable=SC2086
    export_cli "$name" "$format" ${pair#*:}
  done
done
"$collector" export --db "$work/blur.db" --metric 1 --bucket day --format csv > "$work/stdout.csv"
cmp "$work/stdout.csv" "$work/api-d1.csv"
if "$collector" export --db "$work/blur.db" --metric 9 --format csv --out "$work/none.csv" \
  2> "$work/none.err"; then
  echo "FAIL: export of an unknown metric succeeded" >&2; exit 1
fi
grep -q "unknown metric 9" "$work/none.err"
[ ! -e "$work/none.csv" ] && [ ! -e "$work/none.csv.tmp" ]
echo "CLI: export wrote the API's bytes for 6 reads x 2 formats; an unknown metric exits non-zero"

# Rows against the JSON they flatten, read with Python's csv and json.
$python - "$work" <<'PY'
import csv, datetime, io, json, os, sys
work = sys.argv[1]
def load(name, kind):
    return open(os.path.join(work, f"api-{name}.{kind}"), "rb").read()
def csv_rows(name):
    text = load(name, "csv").decode("utf-8")
    assert text.endswith("\r\n"), name
    return list(csv.DictReader(io.StringIO(text, newline="")))
def jsonl_rows(name):
    return [json.loads(line) for line in load(name, "ndjson").decode("utf-8").splitlines()]
def number(cell):
    return None if cell in ("", None) else float(cell)
def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
VALUE = ["metric_id", "mechanism", "epsilon", "bucket", "bucket_start", "bucket_end", "value",
         "estimate", "stderr", "ci95_low", "ci95_high", "fraction", "estimate_normsub", "n",
         "design_effect"]
MEAN = ["metric_id", "mechanism", "epsilon", "bucket", "bucket_start", "bucket_end", "mean",
        "stderr", "ci95_low", "ci95_high", "n", "design_effect"]
def expected(name):
    """The rows the JSON answer holds, as (period, estimate object, answer)."""
    answer = json.loads(load(name, "json"))
    if "series" in answer:
        width = 3600 if answer["bucket"] == "hour" else 86400
        return [(answer["bucket"], iso(p["start_unix"]), iso(p["start_unix"] + width), p)
                for p in answer["series"]]
    return [("all", answer.get("from"), answer.get("to"), answer)]
checked = 0
for name, mean in [("e1", False), ("d1", False), ("h1", False), ("n1", False), ("e2", True),
                   ("h2", True)]:
    columns = MEAN if mean else VALUE
    want = []
    for bucket, start, end, estimate in expected(name):
        for e in estimate["estimates"]:
            row = {"bucket": bucket, "bucket_start": start, "bucket_end": end,
                   "estimate": e["estimate"], "stderr": e["stderr"], "ci95_low": e["ci95"][0],
                   "ci95_high": e["ci95"][1], "n": estimate["n"],
                   "design_effect": estimate["design_effect"],
                   "metric_id": estimate["metric_id"], "mechanism": estimate["mechanism"],
                   "epsilon": estimate["epsilon"]}
            if mean:
                row["mean"] = row.pop("estimate")
            else:
                row.update(value=e["value"], fraction=e["fraction"],
                           estimate_normsub=e.get("estimate_normsub"))
            want.append(row)
    # At least: 4 values or 1 mean; 2 days (30 hours); 20 hours with reports.
    least = {"e1": 4, "n1": 4, "d1": 8, "h1": 80, "e2": 1, "h2": 20}[name]
    assert len(want) >= least, (name, len(want), least)
    got_csv, got_jsonl = csv_rows(name), jsonl_rows(name)
    assert list(got_csv[0].keys()) == columns, (name, list(got_csv[0].keys()))
    assert len(got_csv) == len(got_jsonl) == len(want), (name, len(got_csv), len(got_jsonl), len(want))
    for c, j, w in zip(got_csv, got_jsonl, want):
        assert list(j.keys()) == columns, (name, list(j.keys()))
        for column in columns:
            expect = w[column]
            if column in ("mechanism", "bucket", "bucket_start", "bucket_end"):
                assert j[column] == expect and c[column] == (expect or ""), (name, column, c, j, w)
            else:
                assert j[column] == expect, (name, column, j[column], expect)
                assert number(c[column]) == (None if expect is None else float(expect)), \
                    (name, column, c[column], expect)
        checked += 1
    if name == "n1":
        assert all(r["estimate_normsub"] != "" for r in got_csv), "norm-sub column empty"
    if name == "e1":
        assert all(r["estimate_normsub"] == "" for r in got_csv), "norm-sub column filled"
print(f"rows: {checked} rows of 6 reads equal the JSON answers' values, in CSV and JSON lines")
PY

# Hostile words: one row each, unchanged through the readers.
"$sample" csv > "$work/sample.csv"
"$sample" jsonl > "$work/sample.jsonl"
$python - "$work/sample.csv" "$work/sample.jsonl" <<'PY'
import csv, json, sys
words = ["plain", "a,b", 'say "hi"', "two\nlines", 'cr\r\nlf, "all"', "bad \ufffd byte", "=1+2", ""]
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    rows = list(csv.DictReader(f))
lines = open(sys.argv[2], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "JSON lines end in a newline"
jsonl = [json.loads(line) for line in lines[:-1]]
assert [r["value"] for r in rows] == words, [r["value"] for r in rows]
assert [r["value"] for r in jsonl] == words, [r["value"] for r in jsonl]
assert [float(r["estimate"]) for r in rows] == [100 - 10 * i for i in range(len(words))]
assert all(r["bucket_start"] == "2026-11-18T00:00:00Z" for r in rows), rows[0]
print(f"hostile words: {len(words)} rows read back unchanged by csv and json")
PY
echo "PASS"
