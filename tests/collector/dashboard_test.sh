#!/usr/bin/env bash
# The collector's web dashboard, end to end: blur-collector serve (SQLite)
# <- blur-device-sim fleets (a frequency metric over 8 values, a numeric
# one, a frequency metric over 1024 values; a fourth metric has none), then
#   - the dashboard's routes: the page, its files built into the binary
#     (Chart.js byte for byte Debian's), Cache-Control and ETag/304, 404;
#   - a real headless Chromium on the page (dashboard_browser_check.py):
#     no console errors, the bearer token on every API call, what Chart.js
#     plots equal to the JSON API's, a 401 shown as a token request, the
#     metric's refused batches by reason (metric 4: 3 malformed);
#     screenshots into ARTIFACTS_DIR.
# Fails (never skips) when Chromium is missing or cannot start.
#
#   dashboard_test.sh BLUR_COLLECTOR BLUR_DEVICE_SIM ARTIFACTS_DIR
set -euo pipefail
collector=$1
device_sim=$2
artifacts=$3
here=$(cd "$(dirname "$0")" && pwd)
chart_js=/usr/share/javascript/chart.js/chart.min.js

chromium=$(command -v chromium || true)
if [ -z "$chromium" ]; then
  echo "FAIL: chromium is not installed (toolchains/setup.sh installs Debian's chromium)" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$here/../../scripts/lib/collector.sh"
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 1:grr:1:8 \
  --metric 2:laplace:2:21 --metric 3:olh:2:1024 --metric 4:rr:1
base="http://127.0.0.1:$collector_port"

"$device_sim" fleet --collector "$base" --mechanism grr --domain 8 --epsilon 1 --devices 3000 \
  --metric 1 --seed 41 --threads 2 --spread-hours 12 > /dev/null 2>&1
"$device_sim" fleet --collector "$base" --mechanism laplace --domain 21 --epsilon 2 \
  --devices 2000 --metric 2 --seed 42 --threads 2 --spread-hours 12 > /dev/null 2>&1
"$device_sim" fleet --collector "$base" --mechanism olh --domain 1024 --epsilon 2 \
  --devices 2000 --metric 3 --seed 43 --threads 2 > /dev/null 2>&1
# Metric 4 gets no report: 3 batches with the wrong epsilon, refused (malformed).
if "$device_sim" fleet --collector "$base" --metric 4 --epsilon 2 --devices 3 --retries 0 \
  --seed 44 --threads 1 > /dev/null 2>&1; then
  echo "FAIL: a fleet with the wrong epsilon was accepted" >&2; exit 1
fi

# Device clocks spread over the last 12 hours: 12 hourly points to plot.
points=$(read_api "$base/v1/metrics/1/series?bucket=hour" |
  /usr/bin/python3 -c 'import json,sys; s = json.load(sys.stdin)["series"]
assert sum(p["n"] for p in s) == 3000, s
print(len(s))')
[ "$points" = 12 ] || { echo "FAIL: $points hourly points, expected 12" >&2; exit 1; }

# The routes. header NAME FILE: the header's value in a saved answer.
header() { tr -d '\r' < "$2" | sed -n "s/^$1: //Ip" | head -1; }
curl -sS -D "$work/index.head" -o "$work/index.html" "$base/"
grep -q '^HTTP/1.1 200' "$work/index.head"
[ "$(header Content-Type "$work/index.head")" = "text/html; charset=utf-8" ]
[ "$(header Cache-Control "$work/index.head")" = "no-cache" ]
grep -q "default-src 'none'" <(header Content-Security-Policy "$work/index.head")
grep -q '<script src="/static/dashboard.js">' "$work/index.html"
curl -sS -D "$work/chart.head" -o "$work/chart.js" "$base/static/chart.js"
[ "$(header Content-Type "$work/chart.head")" = "text/javascript; charset=utf-8" ]
cmp "$work/chart.js" "$chart_js"
for name in api.js charts.js dashboard.js; do
  cmp <(curl -sS "$base/static/$name") "$here/../../collector/web/$name"
done
[ "$(curl -sS -o /dev/null -w '%{http_code} %{content_type}' "$base/static/dashboard.css")" = \
  "200 text/css; charset=utf-8" ]
etag=$(header ETag "$work/chart.head")
[ "$(curl -sS -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$base/static/chart.js")" \
  = 304 ]
[ "$(curl -sS -o /dev/null -w '%{http_code}' -H 'If-None-Match: "other"' \
  "$base/static/chart.js")" = 200 ]
[ "$(curl -sS -o "$work/missing" -w '%{http_code}' "$base/static/missing.js")" = 404 ]
grep -q '"error"' "$work/missing"
echo "routes: page, files (Chart.js as Debian ships it), Cache-Control, ETag/304 and 404"

/usr/bin/python3 "$here/dashboard_browser_check.py" "$chromium" "$base" "$artifacts"
for png in dashboard.png dashboard-numeric.png; do
  [ -s "$artifacts/$png" ] && head -c 8 "$artifacts/$png" | grep -q PNG
done
