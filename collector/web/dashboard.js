// The dashboard page: the metric list, then for the chosen metric its
// current estimate and its series over time, all read from the JSON API.
//
// The address fragment holds the view, so a view can be linked or opened by
// a test: #metric=ID&bucket=hour|day&value=V&normsub=1 (and token=..., which
// api.js moves to sessionStorage). What the charts plot is also published as
// JSON in <script id="plotted">, and <body data-state> says loading, ready,
// auth (a reader token is needed) or error.
//
// Text from the collector (names, error messages) goes in with textContent
// only, never as HTML.
"use strict";

(() => {
  const topValues = 40; // larger domains show their largest estimates only
  const numericMechanisms = new Set(["laplace", "onebit"]);
  let metrics = [];
  let generation = 0; // a newer render makes older answers stale

  const $ = (id) => document.getElementById(id);

  function setState(state) {
    document.body.dataset.state = state;
  }

  function showMessage(text) {
    $("message").textContent = text;
    $("message").hidden = !text;
  }

  function showError(error) {
    if (error instanceof BlurApi.AuthError) {
      setState("auth");
      showMessage(
        "This collector needs a reader token to show its metrics. Enter a reader token " +
          "above and press Use. (The collector answered: " + error.message + ")"
      );
    } else {
      setState("error");
      showMessage("Could not load the dashboard: " + error.message);
    }
  }

  // What the charts show, for people who read the page's source and for tests.
  function publish(plotted) {
    $("plotted").textContent = JSON.stringify(plotted).replace(/</g, "\\u003c");
  }

  const format = (x) => (Number.isFinite(x) ? String(Number(x.toPrecision(4))) : String(x));

  function view() {
    const params = BlurApi.fragmentParams();
    return {
      metricId: params.get("metric"),
      bucket: params.get("bucket") === "day" ? "day" : "hour",
      value: params.get("value"),
      normsub: params.get("normsub") === "1",
    };
  }

  function changeView(changes) {
    const params = BlurApi.fragmentParams();
    for (const [key, value] of Object.entries(changes)) {
      if (value === null || value === false) params.delete(key);
      else params.set(key, value === true ? "1" : String(value));
    }
    BlurApi.setFragmentParams(params);
    render();
  }

  function showTokenState() {
    $("token-state").textContent = BlurApi.token() ? "token set for this tab" : "no token";
  }

  function wireControls() {
    $("token-form").addEventListener("submit", (event) => {
      event.preventDefault();
      BlurApi.setToken($("token-input").value.trim());
      $("token-input").value = "";
      showTokenState();
      load();
    });
    $("token-forget").addEventListener("click", () => {
      BlurApi.setToken("");
      showTokenState();
      load();
    });
    $("normsub").addEventListener("change", (e) => changeView({ normsub: e.target.checked }));
    $("bucket").addEventListener("change", (e) => changeView({ bucket: e.target.value }));
    $("series-value").addEventListener("change", (e) => changeView({ value: e.target.value }));
    window.addEventListener("hashchange", () => {
      BlurApi.adoptFragmentToken();
      showTokenState();
      render();
    });
  }

  function describeMetric(m) {
    const parts = [m.mechanism, "ε " + format(m.epsilon)];
    if (!numericMechanisms.has(m.mechanism)) parts.push(m.domain_size + " values");
    else parts.push("values 0.." + (m.domain_size - 1));
    return parts.join(" · ");
  }

  function renderList(chosenId) {
    const list = $("metric-list");
    list.replaceChildren();
    for (const m of metrics) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = "metric " + m.metric_id;
      const detail = document.createElement("small");
      detail.textContent = describeMetric(m);
      button.append(detail);
      button.setAttribute("aria-current", String(String(m.metric_id) === chosenId));
      button.addEventListener("click", () => changeView({ metric: m.metric_id, value: null }));
      const item = document.createElement("li");
      item.append(button);
      list.append(item);
    }
  }

  function renderFacts(metric, estimate) {
    const facts = [
      ["mechanism", metric.mechanism],
      ["ε per report", format(metric.epsilon) + " nats"],
      ["reports (n)", String(estimate.n)],
      ["domain", String(metric.domain_size)],
    ];
    const list = $("metric-facts");
    list.replaceChildren();
    for (const [term, value] of facts) {
      const pair = document.createElement("div");
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      dd.textContent = value;
      dd.dataset.fact = term;
      pair.append(dt, dd);
      list.append(pair);
    }
  }

  // The values to chart: all of a small domain in order, else the largest.
  function shownEstimates(estimates, key) {
    if (estimates.length <= topValues) return { rows: estimates, top: false };
    const rows = [...estimates].sort((a, b) => b[key] - a[key]).slice(0, topValues);
    return { rows, top: true };
  }

  function renderFrequency(metric, estimate, current) {
    const key = current.normsub ? "estimate_normsub" : "estimate";
    const { rows, top } = shownEstimates(estimate.estimates, key);
    const notes = [];
    if (top) {
      notes.push(
        "Showing the " + rows.length + " values with the largest estimates, of " +
          estimate.estimates.length + "."
      );
    }
    if (current.normsub) {
      notes.push(
        "Norm-Sub estimates are non-negative and sum to n; the 95% intervals belong to " +
          "the unbiased estimates and are not drawn."
      );
    } else {
      notes.push("Bars: unbiased estimates of the number of devices per value; whiskers: 95% intervals.");
    }
    if (estimate.variance) notes.push("Intervals: " + estimate.variance + ".");
    $("current-note").textContent = notes.join(" ");
    $("normsub").checked = current.normsub;
    const values = rows.map((e) => e[key]);
    const intervals = rows.map((e) => (current.normsub ? null : e.ci95));
    BlurCharts.bars("current-chart", {
      labels: rows.map((e) => String(e.value)),
      values,
      intervals,
      label: current.normsub ? "Norm-Sub estimate" : "estimate",
      xTitle: "value",
      yTitle: "devices",
    });
    return {
      postprocess: current.normsub ? "norm-sub" : "none",
      top_values: top,
      values: rows.map((e) => e.value),
      estimates: values,
      ci95: intervals,
    };
  }

  function renderNumeric(metric, estimate) {
    const mean = estimate.estimates[0];
    $("mean-text").textContent =
      format(mean.estimate) + " (95% interval " + format(mean.ci95[0]) + " to " +
      format(mean.ci95[1]) + ", standard error " + format(mean.stderr) +
      (estimate.variance ? "; " + estimate.variance : "") + ")";
    const histogram = estimate.histogram;
    $("histogram-block").hidden = !histogram;
    if (!histogram) {
      BlurCharts.clear("histogram-chart");
      return { current: { estimate: mean.estimate, ci95: mean.ci95 }, histogram: null };
    }
    BlurCharts.bars("histogram-chart", {
      labels: histogram.map((b) => String(b.value)),
      values: histogram.map((b) => b.estimate),
      intervals: histogram.map((b) => b.ci95),
      label: "devices",
      xTitle: "value",
      yTitle: "devices",
    });
    return {
      current: { estimate: mean.estimate, ci95: mean.ci95 },
      histogram: {
        values: histogram.map((b) => b.value),
        estimates: histogram.map((b) => b.estimate),
        ci95: histogram.map((b) => b.ci95),
      },
    };
  }

  // The series' value choice: the fragment's, else the largest estimate.
  function fillValueChoice(estimate, wanted) {
    const rows = shownEstimates(estimate.estimates, "estimate").rows;
    const best = rows.reduce((a, b) => (b.estimate > a.estimate ? b : a), rows[0]);
    const known = estimate.estimates.some((e) => String(e.value) === wanted);
    const chosen = known ? wanted : String(best.value);
    const select = $("series-value");
    select.replaceChildren();
    const values = rows.map((e) => String(e.value));
    if (!values.includes(chosen)) values.unshift(chosen);
    for (const value of values) {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = value;
      select.append(option);
    }
    select.value = chosen;
    return chosen;
  }

  function bucketLabel(start, bucket) {
    const text = start.replace("T", " ").replace(/:00Z$/, "");
    return bucket === "day" ? text.slice(0, 10) : text;
  }

  function renderSeries(series, numeric, value, bucket) {
    const points = series.series.map((point) => {
      const row = numeric
        ? point.estimates[0]
        : point.estimates.find((e) => String(e.value) === value);
      return { start: point.start, estimate: row.estimate, ci95: row.ci95 };
    });
    $("bucket").value = bucket;
    $("series-title").textContent = numeric
      ? "Mean per " + bucket
      : "Devices with value " + value + " per " + bucket;
    if (points.length === 0) {
      BlurCharts.clear("series-chart");
    } else {
      BlurCharts.band("series-chart", {
        labels: points.map((p) => bucketLabel(p.start, bucket)),
        values: points.map((p) => p.estimate),
        intervals: points.map((p) => p.ci95),
        label: numeric ? "mean" : "estimate",
        xTitle: bucket + " starting (UTC)",
        yTitle: numeric ? "mean" : "devices",
      });
    }
    return {
      bucket,
      value: numeric ? "mean" : Number(value),
      starts: points.map((p) => p.start),
      estimates: points.map((p) => p.estimate),
      ci95: points.map((p) => p.ci95),
    };
  }

  // The metric's refused batches by reason (GET /v1/metrics: this
  // collector's counts since it started); returns what it shows.
  function renderRefusals(metric) {
    const refused = metric.refused_batches || {};
    const reasons = Object.keys(refused).sort();
    const body = $("refusals-table").querySelector("tbody");
    body.replaceChildren();
    for (const reason of reasons) {
      const row = document.createElement("tr");
      const name = document.createElement("td");
      name.textContent = reason.replace(/_/g, " ");
      name.dataset.reason = reason;
      const count = document.createElement("td");
      count.textContent = String(refused[reason]);
      row.append(name, count);
      body.append(row);
    }
    $("refusals-table").hidden = reasons.length === 0;
    $("refusals-none").hidden = reasons.length !== 0;
    return refused;
  }

  async function render() {
    const mine = ++generation;
    const current = view();
    const metric =
      metrics.find((m) => String(m.metric_id) === current.metricId) || metrics[0] || null;
    renderList(metric ? String(metric.metric_id) : null);
    if (!metric) {
      $("metric-view").hidden = true;
      showMessage("The collector has no metrics registered.");
      publish({});
      setState("ready");
      return;
    }
    setState("loading");
    try {
      const numeric = numericMechanisms.has(metric.mechanism);
      // The series of a frequency metric is asked for the charted value
      // only (values=): its value is chosen from the estimate, so it comes
      // after it; a year of a wide domain is otherwise millions of numbers.
      const [estimate, listed, numericSeries] = await Promise.all([
        BlurApi.estimate(metric.metric_id, current.normsub && !numeric ? "norm-sub" : null),
        BlurApi.metrics(), // the refusal counts, fresh
        numeric ? BlurApi.series(metric.metric_id, current.bucket) : null,
      ]);
      if (mine !== generation) return;
      metrics = listed.metrics;
      const fresh = metrics.find((m) => m.metric_id === metric.metric_id) || metric;
      showMessage("");
      $("metric-view").hidden = false;
      $("metric-title").textContent = "metric " + metric.metric_id;
      renderFacts(metric, estimate);
      $("frequency-current").hidden = numeric;
      $("numeric-current").hidden = !numeric;
      $("value-label").hidden = numeric;
      const plotted = {
        metric_id: metric.metric_id,
        mechanism: metric.mechanism,
        n: estimate.n,
        refused_batches: renderRefusals(fresh),
      };
      if (estimate.n === 0) {
        showMessage("No reports for metric " + metric.metric_id + " yet.");
        $("frequency-current").hidden = $("numeric-current").hidden = true;
        $("series-block").hidden = true;
        publish(plotted);
        setState("ready");
        return;
      }
      $("series-block").hidden = false;
      if (numeric) {
        Object.assign(plotted, renderNumeric(metric, estimate));
        plotted.series = renderSeries(numericSeries, true, null, current.bucket);
      } else {
        plotted.current = renderFrequency(metric, estimate, current);
        const value = fillValueChoice(estimate, current.value);
        const series = await BlurApi.series(metric.metric_id, current.bucket, value);
        if (mine !== generation) return;
        plotted.series = renderSeries(series, false, value, current.bucket);
      }
      publish(plotted);
      setState("ready");
    } catch (error) {
      if (mine === generation) showError(error);
    }
  }

  async function load() {
    setState("loading");
    showMessage("");
    try {
      metrics = (await BlurApi.metrics()).metrics;
    } catch (error) {
      metrics = [];
      renderList(null);
      $("metric-view").hidden = true;
      showError(error);
      return;
    }
    await render();
  }

  window.addEventListener("error", (event) => {
    setState("error");
    showMessage("The dashboard failed: " + event.message);
  });
  window.addEventListener("unhandledrejection", (event) => {
    setState("error");
    showMessage("The dashboard failed: " + String(event.reason));
  });

  BlurApi.adoptFragmentToken();
  showTokenState();
  wireControls();
  load();
})();
