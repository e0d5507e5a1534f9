"""The collector's dashboard in a real headless Chromium (devtools_client.py),
against a running collector whose metrics 1 (grr, 8 values), 2 (laplace)
and 3 (olh, 1024 values) have reports, and metric 4 (rr) none.

Checks, per view opened through the address fragment:
  - the page reaches data-state "ready" with no console error or warning,
    no uncaught exception and no error in the browser's log (which also
    reports failed loads and Content-Security-Policy violations);
  - every request stays on the collector, and every API request carries
    "Authorization: Bearer <token>" (the token came once in #token=, then
    lives in sessionStorage and is gone from the address bar);
  - what Chart.js plots equals the JSON API's answer: read from the chart
    instances in the page (Chart.getChart(canvas)): their labels, datasets
    and whisker intervals, and each drawn element's position read back
    through the chart's y scale (to the pixel); values, estimates, 95%
    interval ends, series points. (<script id="plotted">, the page's own
    account, is only used for what it chose: norm-sub, top values.)
  - a 401 from the API shows the reader-token message, as text;
  - the refused batches by reason (GET /v1/metrics) in the metric's table:
    "None." for metric 1, malformed 3 for metric 4 (refused, no reports);
and saves screenshots (non-empty PNGs) into the artifacts directory.

  dashboard_browser_check.py CHROMIUM BASE_URL ARTIFACTS_DIR
"""
import base64
import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from devtools_client import Browser, BrowserError  # noqa: E402

chromium, base, artifacts = sys.argv[1:4]
token = os.environ["BLUR_READER_TOKEN"]  # the collector's first-start reader token
os.makedirs(artifacts, exist_ok=True)


def api(path):
    request = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


# Every Chart.js chart in the page, as Chart.js holds it: per canvas, its
# labels and datasets (data, whisker intervals) and, per dataset, the value
# each drawn element stands at (its pixel read back through the y scale),
# with half a pixel's worth of value as the tolerance of that reading.
CHARTS = """JSON.stringify(Object.fromEntries(
  ['current-chart', 'histogram-chart', 'series-chart'].map((id) => {
    const chart = Chart.getChart(document.getElementById(id));
    if (!chart) return [id, null];
    const y = chart.scales.y;
    return [id, {
      type: chart.config.type,
      labels: chart.data.labels,
      half_pixel: (y.max - y.min) / (y.bottom - y.top) / 2,
      datasets: chart.data.datasets.map((dataset, i) => ({
        label: dataset.label,
        data: dataset.data,
        intervals: dataset.intervals || null,
        drawn: chart.getDatasetMeta(i).data.map((element) => y.getValueForPixel(element.y)),
      })),
    }];
  })))"""


def charts(browser):
    return json.loads(browser.evaluate(CHARTS))


def assert_drawn(view, chart, index, values):
    """Dataset `index` of `chart` holds `values` and Chart.js drew an element
    at each (to half a pixel)."""
    dataset = chart["datasets"][index]
    assert dataset["data"] == values, f"{view}: the chart's data differ from the API's"
    drawn = dataset["drawn"]
    assert len(drawn) == len(values), f"{view}: {len(drawn)} elements drawn for {len(values)}"
    for at, value in zip(drawn, values):
        assert abs(at - value) <= chart["half_pixel"] * 1.01 + 1e-9, \
            f"{view}: an element drawn at {at}, its value {value}"


def assert_bars(view, chart, values, estimates, intervals):
    """A bar chart of `estimates` labelled by `values`, with whiskers."""
    assert chart and chart["type"] == "bar", f"{view}: no bar chart: {chart}"
    assert chart["labels"] == [str(v) for v in values], f"{view}: labels {chart['labels']}"
    assert_drawn(view, chart, 0, estimates)
    assert chart["datasets"][0]["intervals"] == intervals, f"{view}: whisker intervals differ"


def assert_band(view, chart, estimates, intervals):
    """A line of `estimates` over a 95% band: datasets lower edge, upper
    edge, estimate."""
    assert chart and chart["type"] == "line", f"{view}: no line chart: {chart}"
    assert len(chart["labels"]) == len(estimates), f"{view}: labels {chart['labels']}"
    assert_drawn(view, chart, 2, estimates)
    assert_drawn(view, chart, 0, [i[0] for i in intervals])
    assert_drawn(view, chart, 1, [i[1] for i in intervals])


def open_view(browser, fragment):
    """Loads the page afresh (not a same-document fragment change) and waits
    until it has drawn or given up; returns (state, plotted)."""
    browser.send("Page.navigate", {"url": "about:blank"})
    browser.wait_for("document.readyState === 'complete' && location.href === 'about:blank'")
    browser.events.clear()
    browser.send("Page.navigate", {"url": base + "/#" + fragment})
    state = browser.wait_for("document.readyState === 'complete' && document.body && "
                             "document.body.dataset.state !== 'loading' && "
                             "document.body.dataset.state")
    plotted = json.loads(browser.evaluate("document.getElementById('plotted').textContent"))
    return state, plotted


def assert_clean(browser, view, allowed_log=()):
    problems = []
    for call in browser.events_named("Runtime.consoleAPICalled"):
        if call["type"] in ("error", "warning", "assert"):
            problems.append(f"console.{call['type']}: {call['args']}")
    for thrown in browser.events_named("Runtime.exceptionThrown"):
        problems.append(f"uncaught: {thrown['exceptionDetails']}")
    for entry in browser.events_named("Log.entryAdded"):
        entry = entry["entry"]
        if entry["level"] == "error" and not any(a in entry["text"] for a in allowed_log):
            problems.append(f"log: {entry['text']} ({entry.get('url', '')})")
    assert not problems, f"{view}: the page reported errors:\n" + "\n".join(problems)


def assert_requests(browser, view, with_token=True):
    requests = [r["request"] for r in browser.events_named("Network.requestWillBeSent")]
    api_requests = [r for r in requests if "/v1/" in r["url"]]
    assert api_requests, f"{view}: the page made no API request"
    for request in requests:
        assert request["url"].startswith(base + "/"), \
            f"{view}: a request left the collector: {request['url']}"
    for request in api_requests:
        sent = {k.lower(): v for k, v in request["headers"].items()}.get("authorization")
        expected = f"Bearer {token}" if with_token else None
        assert sent == expected, f"{view}: {request['url']} sent Authorization {sent!r}"
    return len(api_requests)


def refusals_shown(browser):
    """The refused-batches table as the page shows it: {reason: count}, and
    whether it says "None."."""
    rows = json.loads(browser.evaluate(
        "JSON.stringify([...document.querySelectorAll('#refusals-table tbody tr')]"
        ".filter(() => !document.getElementById('refusals-table').hidden)"
        ".map(r => [r.cells[0].dataset.reason, r.cells[1].textContent]))"))
    none = browser.evaluate("!document.getElementById('refusals-none').hidden")
    return {reason: int(count) for reason, count in rows}, none


def screenshot(browser, name):
    data = base64.b64decode(browser.send("Page.captureScreenshot", {"format": "png"})["data"])
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10000, f"{name}: not a PNG"
    path = os.path.join(artifacts, name)
    with open(path, "wb") as f:
        f.write(data)
    print(f"screenshot: {path} ({len(data)} bytes)")


def check_frequency(browser):
    view = "grr metric, unbiased"
    state, plotted = open_view(browser, f"metric=1&token={token}")
    assert state == "ready", f"{view}: state {state}: {browser.evaluate('document.body.innerText')}"
    assert_clean(browser, view)
    count = assert_requests(browser, view)
    assert "token" not in browser.evaluate("location.href"), "the token stayed in the address bar"
    assert browser.evaluate("sessionStorage.getItem('blur.readerToken')") == token

    estimate = api("/v1/metrics/1/estimate")
    current = plotted["current"]
    drawn = charts(browser)
    assert plotted["metric_id"] == 1 and plotted["n"] == estimate["n"] > 0
    assert plotted["refused_batches"] == {} and refusals_shown(browser) == ({}, True), view
    assert current["postprocess"] == "none" and current["top_values"] is False
    rows = estimate["estimates"]
    assert_bars(view, drawn["current-chart"], [r["value"] for r in rows],
                [r["estimate"] for r in rows], [r["ci95"] for r in rows])
    shown = {f["dataset"]["fact"]: f["text"] for f in browser.evaluate(
        "[...document.querySelectorAll('dd')].map(d => ({dataset: {...d.dataset}, "
        "text: d.textContent}))")}
    assert shown["reports (n)"] == str(estimate["n"]), shown
    assert shown["ε per report"].startswith(str(estimate["epsilon"])), shown

    # The series of the value with the largest estimate (the page's default).
    best = max(estimate["estimates"], key=lambda r: r["estimate"])["value"]
    series = api("/v1/metrics/1/series?bucket=hour")["series"]
    rows = [next(r for r in p["estimates"] if r["value"] == best) for p in series]
    assert plotted["series"]["bucket"] == "hour" and plotted["series"]["value"] == best
    assert drawn["series-chart"]["labels"] == [
        p["start"].replace("T", " ").removesuffix(":00Z") for p in series], view
    assert_band(view, drawn["series-chart"], [r["estimate"] for r in rows],
                [r["ci95"] for r in rows])
    print(f"{view}: the {len(estimate['estimates'])} bars and {len(series)} hourly points "
          f"Chart.js drew equal the API's; {count} API requests, each with the bearer token")
    screenshot(browser, "dashboard.png")

    view = "grr metric, Norm-Sub"
    state, plotted = open_view(browser, "metric=1&normsub=1&bucket=day")  # token: sessionStorage
    assert state == "ready", view
    assert_clean(browser, view)
    assert_requests(browser, view)
    normsub = api("/v1/metrics/1/estimate?postprocess=norm-sub")
    current = plotted["current"]
    drawn = charts(browser)
    assert current["postprocess"] == "norm-sub"
    rows = normsub["estimates"]
    estimates = [r["estimate_normsub"] for r in rows]
    assert_bars(view, drawn["current-chart"], [r["value"] for r in rows], estimates,
                [None] * len(rows))  # Norm-Sub: no whiskers
    assert min(estimates) >= 0 and abs(sum(estimates) - normsub["n"]) < 1e-6
    days = api("/v1/metrics/1/series?bucket=day")["series"]
    assert plotted["series"]["bucket"] == "day"
    assert drawn["series-chart"]["labels"] == [p["start"][:10] for p in days], view
    best = plotted["series"]["value"]
    day_rows = [next(r for r in p["estimates"] if r["value"] == best) for p in days]
    assert_band(view, drawn["series-chart"], [r["estimate"] for r in day_rows],
                [r["ci95"] for r in day_rows])
    print(f"{view}: the Norm-Sub bars Chart.js drew equal the API's; daily series of "
          f"{len(days)} points")


def check_numeric(browser):
    view = "laplace metric"
    state, plotted = open_view(browser, "metric=2&bucket=day")
    assert state == "ready", view
    assert_clean(browser, view)
    assert_requests(browser, view)
    estimate = api("/v1/metrics/2/estimate")
    drawn = charts(browser)
    mean = estimate["estimates"][0]
    assert plotted["current"] == {"estimate": mean["estimate"], "ci95": mean["ci95"]}, view
    histogram = estimate["histogram"]
    assert_bars(view, drawn["histogram-chart"], [b["value"] for b in histogram],
                [b["estimate"] for b in histogram], [b["ci95"] for b in histogram])
    assert drawn["current-chart"] is None, f"{view}: a frequency chart on a numeric metric"
    series = api("/v1/metrics/2/series?bucket=day")["series"]
    assert plotted["series"]["value"] == "mean"
    assert_band(view, drawn["series-chart"], [p["estimates"][0]["estimate"] for p in series],
                [p["estimates"][0]["ci95"] for p in series])
    print(f"{view}: mean, the {len(histogram)} histogram bins and the daily means Chart.js drew "
          "equal the API's")
    screenshot(browser, "dashboard-numeric.png")


def check_large_domain(browser):
    view = "olh metric over 1024 values"
    state, plotted = open_view(browser, "metric=3")
    assert state == "ready", view
    assert_clean(browser, view)
    estimate = api("/v1/metrics/3/estimate")
    current = plotted["current"]
    chart = charts(browser)["current-chart"]
    bars = dict(zip(chart["labels"], chart["datasets"][0]["data"]))
    top = sorted(estimate["estimates"], key=lambda r: -r["estimate"])[:40]
    assert current["top_values"] is True and len(bars) == 40, chart["labels"]
    assert bars == {str(r["value"]): r["estimate"] for r in top}, view
    assert_bars(view, chart, [int(label) for label in chart["labels"]],
                chart["datasets"][0]["data"],
                [next(r["ci95"] for r in top if str(r["value"]) == label)
                 for label in chart["labels"]])
    note = browser.evaluate("document.getElementById('current-note').textContent")
    assert "40 values with the largest estimates, of 1024" in note, note
    assert "Intervals: " + estimate["variance"] + "." in note, note  # how they were computed
    print(f"{view}: the page shows the 40 largest estimates and says so")


def check_empty(browser):
    view = "metric without reports"
    state, plotted = open_view(browser, "metric=4")
    assert state == "ready", view
    assert_clean(browser, view)
    listed = next(m for m in api("/v1/metrics")["metrics"] if m["metric_id"] == 4)
    assert listed["refused_batches"] == {"malformed": 3}, listed
    assert plotted == {"metric_id": 4, "mechanism": "rr", "n": 0,
                       "refused_batches": {"malformed": 3}}, plotted
    assert refusals_shown(browser) == ({"malformed": 3}, False), refusals_shown(browser)
    drawn = charts(browser)
    assert all(chart is None for chart in drawn.values()), f"{view}: charts drawn: {drawn}"
    message = browser.evaluate("document.getElementById('message').textContent")
    assert message == "No reports for metric 4 yet.", message
    print(f"{view}: the page says so, and shows its 3 batches refused as malformed")


def check_unauthorized(browser):
    """The API answers 401 with HTML in its message (intercepted: the
    collector's own messages have none): the page asks for a reader token,
    and the server's text stays text."""
    view = "401 from the API"
    error = "a reader token is required <b id=injected>here</b>"
    body = base64.b64encode(json.dumps({"error": error}).encode()).decode()
    browser.event_hooks["Fetch.requestPaused"] = lambda paused: browser.post(
        "Fetch.fulfillRequest",
        {"requestId": paused["requestId"], "responseCode": 401, "body": body,
         "responseHeaders": [{"name": "Content-Type", "value": "application/json"}]})
    browser.send("Fetch.enable", {"patterns": [{"urlPattern": "*/v1/*"}]})
    browser.evaluate("sessionStorage.clear()")
    state, _ = open_view(browser, "metric=1")
    browser.send("Fetch.disable")
    assert state == "auth", f"{view}: state {state}"
    assert_clean(browser, view, allowed_log=("status of 401",))
    assert_requests(browser, view, with_token=False)
    message = browser.evaluate("document.getElementById('message').textContent")
    assert "needs a reader token" in message and error in message, message
    assert browser.evaluate("document.getElementById('injected') === null"), \
        "the server's error text was inserted as HTML"
    print(f"{view}: the page asks for a reader token: {message!r}")


def check_wrong_token(browser):
    """The real collector refuses an unknown token (401): the page asks for a
    reader token instead of drawing."""
    view = "unknown token"
    browser.evaluate("sessionStorage.clear()")
    state, _ = open_view(browser, "metric=1&token=blur-reader-" + "0" * 64)
    assert state == "auth", f"{view}: state {state}"
    assert_clean(browser, view, allowed_log=("status of 401",))
    message = browser.evaluate("document.getElementById('message').textContent")
    assert "needs a reader token" in message and "unknown token" in message, message
    print(f"{view}: the collector answered 401 and the page asks for a reader token")


try:
    browser = Browser(chromium, os.path.join(artifacts, "chromium.log"))
except BrowserError as error:
    sys.exit(f"FAIL: {error}")
try:
    for domain in ("Runtime", "Log", "Network", "Page"):
        browser.send(f"{domain}.enable")
    check_frequency(browser)
    check_numeric(browser)
    check_large_domain(browser)
    check_empty(browser)
    check_wrong_token(browser)
    check_unauthorized(browser)
finally:
    browser.close()
print("dashboard: all checks passed")
