// The dashboard's two kinds of chart, on Chart.js 3 (Debian's
// libjs-chart.js, served by the collector itself):
//   bars with 95% interval whiskers (estimates per value, histograms);
//   a line over time with its 95% interval drawn as a band.
// Animation is off: a chart is drawn once, fully, when its data arrive.
"use strict";

const BlurCharts = (() => {
  const blue = "#2e6fd8";
  const bandFill = "rgba(46, 111, 216, 0.18)";
  const whiskerColor = "#1d2330";
  const live = new Map(); // canvas id -> Chart, replaced on every redraw

  // Draws dataset.intervals[i] = [lo, hi] as a whisker through element i.
  // Chart.js 3 has no error bars of its own.
  const whiskers = {
    id: "blurWhiskers",
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx;
      chart.data.datasets.forEach((dataset, index) => {
        const meta = chart.getDatasetMeta(index);
        if (!dataset.intervals || meta.hidden) return;
        ctx.save();
        ctx.strokeStyle = whiskerColor;
        ctx.lineWidth = 1.5;
        meta.data.forEach((element, i) => {
          const interval = dataset.intervals[i];
          if (!interval) return;
          const low = meta.yScale.getPixelForValue(interval[0]);
          const high = meta.yScale.getPixelForValue(interval[1]);
          const cap = Math.max(2, Math.min(8, (element.width || 16) / 4));
          ctx.beginPath();
          ctx.moveTo(element.x, low);
          ctx.lineTo(element.x, high);
          ctx.moveTo(element.x - cap, low);
          ctx.lineTo(element.x + cap, low);
          ctx.moveTo(element.x - cap, high);
          ctx.lineTo(element.x + cap, high);
          ctx.stroke();
        });
        ctx.restore();
      });
    },
  };

  // The y range that shows every point and whisker end (and `also`).
  function yRange(values, intervals, also) {
    const ends = values.concat(...intervals.filter(Boolean), also);
    return { suggestedMin: Math.min(...ends), suggestedMax: Math.max(...ends) };
  }

  function draw(canvasId, config) {
    if (live.has(canvasId)) live.get(canvasId).destroy();
    const chart = new Chart(document.getElementById(canvasId), config);
    live.set(canvasId, chart);
    return chart;
  }

  const baseOptions = (yTitle, xTitle) => ({
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    scales: {
      x: { title: { display: true, text: xTitle } },
      y: { title: { display: true, text: yTitle } },
    },
  });

  // labels[i], values[i], intervals[i] = [lo, hi] or null (no whisker).
  function bars(canvasId, { labels, values, intervals, label, xTitle, yTitle }) {
    const options = baseOptions(yTitle, xTitle);
    Object.assign(options.scales.y, yRange(values, intervals, [0]));
    options.plugins = { legend: { display: false } };
    return draw(canvasId, {
      type: "bar",
      data: {
        labels,
        datasets: [{ label, data: values, intervals, backgroundColor: blue }],
      },
      options,
      plugins: [whiskers],
    });
  }

  // One point per bucket: the estimate as a line, [lo, hi] as a band. A
  // single bucket has no band to draw, so its interval is a whisker.
  function band(canvasId, { labels, values, intervals, label, xTitle, yTitle }) {
    const options = baseOptions(yTitle, xTitle);
    Object.assign(options.scales.y, yRange(values, intervals, []));
    options.scales.x.offset = true; // a lone bucket in the middle, not on the axis
    options.plugins = {
      legend: { labels: { filter: (item) => item.text !== "" } },
    };
    const edge = { borderWidth: 0, pointRadius: 0, pointHitRadius: 0 };
    return draw(canvasId, {
      type: "line",
      data: {
        labels,
        datasets: [
          { ...edge, label: "", data: intervals.map((i) => i[0]), fill: false },
          {
            ...edge,
            label: "95% interval",
            data: intervals.map((i) => i[1]),
            fill: "-1",
            backgroundColor: bandFill,
          },
          {
            label,
            data: values,
            borderColor: blue,
            backgroundColor: blue,
            pointRadius: 3,
            intervals: values.length === 1 ? intervals : undefined,
          },
        ],
      },
      options,
      plugins: [whiskers],
    });
  }

  function clear(canvasId) {
    if (live.has(canvasId)) live.get(canvasId).destroy();
    live.delete(canvasId);
  }

  return { bars, band, clear };
})();
