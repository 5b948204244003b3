/* Compare page: overlay one series across runs (server-side downsampled). */
(function () {
  "use strict";
  const C = window.PAPERLAB_COMPARE;
  if (!C.key || !C.runs.length) return;
  Promise.all(C.runs.map((id) => fetch("/api/runs/" + id + "/series/?keys=" + encodeURIComponent(C.key) + "&max_points=4000").then((r) => r.json())))
    .then((all) => {
      const data = all.filter((r) => r.series && r.series[C.key]).map((r) => ({x: r.series[C.key].x, y: r.series[C.key].y, name: "run " + r.run, mode: "lines", type: "scattergl"}));
      Plotly.newPlot("compare-plot", data, {title: {text: C.key}, height: 420, margin: {l: 55, r: 15, t: 40, b: 45}}, {responsive: true, displaylogo: false});
    });
})();
