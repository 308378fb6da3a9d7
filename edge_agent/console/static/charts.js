// The console's charts, drawn with the vendored uPlot from the data-* attributes the page's template writes
// (no inline script: the Content-Security-Policy forbids it). Three kinds:
//   data-chart="trend"  data-t (epoch seconds) and data-v (values) of one tag
//   data-chart="rate"   data-counts per data-step seconds from data-start, against data-benchmark(-max)
//   data-chart="bars"   data-labels and data-values (bad actors), as a stepped series over their ranks
"use strict";

(function () {
  function read(el, name) {
    try { return JSON.parse(el.getAttribute(name)); } catch (e) { return null; }
  }

  function size(el) {
    return { width: Math.max(320, el.clientWidth || 640), height: 240 };
  }

  function trend(el) {
    var t = read(el, "data-t") || [], v = read(el, "data-v") || [];
    var opts = Object.assign(size(el), {
      series: [{}, { label: el.dataset.label, stroke: "#23395d", width: 1.5 }],
      legend: { show: true },
    });
    return new uPlot(opts, [t, v], el);
  }

  function rate(el) {
    var counts = read(el, "data-counts") || [], start = Number(el.dataset.start), step = Number(el.dataset.step);
    var x = counts.map(function (_, i) { return start + i * step; });
    var series = [{}, { label: el.dataset.label, stroke: "#23395d", fill: "rgba(35,57,93,0.15)",
      paths: uPlot.paths.stepped({ align: 1 }) }];
    var data = [x, counts];
    [["data-benchmark", "#1d6b2f"], ["data-benchmark-max", "#a00000"]].forEach(function (b) {
      var level = Number(el.getAttribute(b[0]));
      if (el.getAttribute(b[0]) !== "None" && !isNaN(level)) {
        series.push({ label: el.dataset.benchmarkLabel + " " + level, stroke: b[1], dash: [6, 4] });
        data.push(counts.map(function () { return level; }));
      }
    });
    return new uPlot(Object.assign(size(el), { series: series }), data, el);
  }

  function bars(el) {
    var labels = read(el, "data-labels") || [], values = read(el, "data-values") || [];
    var x = labels.map(function (_, i) { return i + 1; });
    var opts = Object.assign(size(el), {
      scales: { x: { time: false } },
      axes: [{ values: function (u, ticks) { return ticks.map(function (i) { return labels[i - 1] || ""; }); } }, {}],
      series: [{}, { label: el.dataset.label, stroke: "#23395d", fill: "rgba(35,57,93,0.3)",
        paths: uPlot.paths.bars({ size: [0.6] }) }],
    });
    return new uPlot(opts, [x, values], el);
  }

  var kinds = { trend: trend, rate: rate, bars: bars };
  document.addEventListener("DOMContentLoaded", function () {
    if (typeof uPlot === "undefined") return;
    document.querySelectorAll("[data-chart]").forEach(function (el) {
      var draw = kinds[el.dataset.chart];
      if (draw) draw(el);
    });
  });
})();
