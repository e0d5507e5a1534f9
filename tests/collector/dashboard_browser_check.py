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
  - what the page says it plotted (<script id="plotted">) equals the JSON
    API's answer: values, estimates, 95% interval ends, series points;
  - a 401 from the API shows the reader-token message, as text;
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


def screenshot(browser, name):
    data = base64.b64decode(browser.send("Page.captureScreenshot", {"format": "png"})["data"])
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10000, f"{name}: not a PNG"
    path = os.path.join(artifacts, name)
    with open(path, "wb") as f:
        f.write(data)
    print(f"screenshot: {path} ({len(data)} bytes)")


def same_rows(view, shown, expected_rows, key):
    assert shown["values"] == [r["value"] for r in expected_rows], (view, shown["values"])
    assert shown["estimates"] == [r[key] for r in expected_rows], f"{view}: estimates differ"


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
    assert plotted["metric_id"] == 1 and plotted["n"] == estimate["n"] > 0
    assert current["postprocess"] == "none" and current["top_values"] is False
    same_rows(view, current, estimate["estimates"], "estimate")
    assert current["ci95"] == [r["ci95"] for r in estimate["estimates"]], f"{view}: intervals"
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
    assert plotted["series"]["starts"] == [p["start"] for p in series]
    assert plotted["series"]["estimates"] == [r["estimate"] for r in rows]
    assert plotted["series"]["ci95"] == [r["ci95"] for r in rows]
    print(f"{view}: {len(current['values'])} bars and {len(series)} hourly points equal the "
          f"API's; {count} API requests, each with the bearer token")
    screenshot(browser, "dashboard.png")

    view = "grr metric, Norm-Sub"
    state, plotted = open_view(browser, "metric=1&normsub=1&bucket=day")  # token: sessionStorage
    assert state == "ready", view
    assert_clean(browser, view)
    assert_requests(browser, view)
    normsub = api("/v1/metrics/1/estimate?postprocess=norm-sub")
    current = plotted["current"]
    assert current["postprocess"] == "norm-sub"
    same_rows(view, current, normsub["estimates"], "estimate_normsub")
    assert min(current["estimates"]) >= 0 and abs(sum(current["estimates"]) - normsub["n"]) < 1e-6
    assert current["ci95"] == [None] * len(current["values"])
    days = api("/v1/metrics/1/series?bucket=day")["series"]
    assert plotted["series"]["bucket"] == "day"
    assert plotted["series"]["starts"] == [p["start"] for p in days]
    print(f"{view}: Norm-Sub bars equal the API's; daily series of {len(days)} points")


def check_numeric(browser):
    view = "laplace metric"
    state, plotted = open_view(browser, "metric=2&bucket=day")
    assert state == "ready", view
    assert_clean(browser, view)
    assert_requests(browser, view)
    estimate = api("/v1/metrics/2/estimate")
    mean = estimate["estimates"][0]
    assert plotted["current"] == {"estimate": mean["estimate"], "ci95": mean["ci95"]}, view
    histogram = estimate["histogram"]
    same_rows(view, plotted["histogram"], histogram, "estimate")
    assert plotted["histogram"]["ci95"] == [b["ci95"] for b in histogram]
    series = api("/v1/metrics/2/series?bucket=day")["series"]
    assert plotted["series"]["value"] == "mean"
    assert plotted["series"]["estimates"] == [p["estimates"][0]["estimate"] for p in series]
    assert plotted["series"]["ci95"] == [p["estimates"][0]["ci95"] for p in series]
    print(f"{view}: mean, {len(histogram)} histogram bins and the daily means equal the API's")
    screenshot(browser, "dashboard-numeric.png")


def check_large_domain(browser):
    view = "olh metric over 1024 values"
    state, plotted = open_view(browser, "metric=3")
    assert state == "ready", view
    assert_clean(browser, view)
    estimate = api("/v1/metrics/3/estimate")
    current = plotted["current"]
    top = sorted(estimate["estimates"], key=lambda r: -r["estimate"])[:len(current["values"])]
    assert current["top_values"] is True and len(current["values"]) == 40, current["values"]
    assert sorted(current["estimates"], reverse=True) == [r["estimate"] for r in top], view
    assert set(current["values"]) == {r["value"] for r in top}, view
    note = browser.evaluate("document.getElementById('current-note').textContent")
    assert "40 values with the largest estimates, of 1024" in note, note
    assert "Intervals: " + estimate["variance"] + "." in note, note  # how they were computed
    print(f"{view}: the page shows the 40 largest estimates and says so")


def check_empty(browser):
    view = "metric without reports"
    state, plotted = open_view(browser, "metric=4")
    assert state == "ready", view
    assert_clean(browser, view)
    assert plotted == {"metric_id": 4, "mechanism": "rr", "n": 0}, plotted
    message = browser.evaluate("document.getElementById('message').textContent")
    assert message == "No reports for metric 4 yet.", message
    print(f"{view}: the page says so")


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
