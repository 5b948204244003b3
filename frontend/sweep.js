/* Sweep page: progress over children, a parallel-coordinates plot and a table of summary metrics vs
 * parameters, refreshed every 2 s from /api/sweeps/<id>/ while children run. */
(function () {
  "use strict";
  const S = window.PAPERLAB_SWEEP;
  const TERMINAL = ["succeeded", "failed", "cancelled"];
  const metricSel = document.getElementById("sweep-metric");
  let last = null;

  function numericKeys(objs) {
    const keys = new Set();
    for (const o of objs) for (const [k, v] of Object.entries(o || {})) if (typeof v === "number" || typeof v === "boolean") keys.add(k);
    return Array.from(keys).sort();
  }
  function esc(s) { return String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c])); }
  const fmt = (v) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toPrecision(4)) : (v === undefined || v === null ? "–" : Array.isArray(v) ? v.join(", ") : String(v)));

  function render(sw) {
    last = sw;
    const runs = sw.runs, c = sw.counts;
    const done = c.succeeded + c.failed + c.cancelled;
    document.getElementById("sweep-progress").value = c.total ? done / c.total : 0;
    document.getElementById("sweep-counts").textContent = `${done}/${c.total} finished · ${c.running} running · ${c.queued} queued · ${c.failed} failed`;
    const varying = S.params.filter((p) => new Set(runs.map((r) => JSON.stringify(r.config[p]))).size > 1);
    const seeds = new Set(runs.map((r) => r.seed)).size > 1;
    const metrics = numericKeys(runs.filter((r) => r.status === "succeeded").map((r) => r.summary));
    if (metricSel.options.length !== metrics.length) {
      const cur = metricSel.value;
      metricSel.innerHTML = metrics.map((m) => `<option ${m === cur ? "selected" : ""}>${esc(m)}</option>`).join("");
    }
    const metric = metricSel.value;
    const ok = runs.filter((r) => r.status === "succeeded" && metric && typeof r.summary[metric] === "number");
    const dims = varying.filter((p) => typeof runs[0].config[p] === "number").map((p) => ({label: p, values: ok.map((r) => r.config[p])}));
    if (seeds) dims.push({label: "seed", values: ok.map((r) => r.seed)});
    if (metric) dims.push({label: metric, values: ok.map((r) => r.summary[metric])});
    if (ok.length && dims.length > 1) {
      Plotly.react("sweep-parcoords", [{type: "parcoords", line: {color: ok.map((r) => r.summary[metric]), colorscale: "Viridis", showscale: true}, dimensions: dims}],
        {height: 380, margin: {l: 60, r: 60, t: 40, b: 20}}, {responsive: true, displaylogo: false});
    }
    const cols = varying.concat(seeds ? ["seed"] : []);
    let html = "<table class='runs'><thead><tr><th>run</th><th>status</th>" + cols.map((p) => `<th>${esc(p)}</th>`).join("") + metrics.map((m) => `<th>${esc(m)}</th>`).join("") + "</tr></thead><tbody>";
    for (const r of runs) {
      html += `<tr><td><a href="/runs/${r.id}/">${r.id}</a></td><td><span class="status s-${r.status}">${r.status}</span></td>` +
        cols.map((p) => `<td>${esc(fmt(p === "seed" ? r.seed : r.config[p]))}</td>`).join("") + metrics.map((m) => `<td>${esc(fmt(r.summary[m]))}</td>`).join("") + "</tr>";
    }
    document.getElementById("sweep-table").innerHTML = html + "</tbody></table>";
    return runs.every((r) => TERMINAL.includes(r.status));
  }
  async function poll() {
    try {
      const sw = await (await fetch(`/api/sweeps/${S.id}/`)).json();
      if (render(sw)) return;
    } catch (e) { /* transient */ }
    setTimeout(poll, 2000);
  }
  metricSel.addEventListener("change", () => last && render(last));
  const cancel = document.getElementById("sweep-cancel");
  if (cancel) cancel.addEventListener("click", () => fetch(`/api/sweeps/${S.id}/cancel/`, {method: "POST", headers: {"X-CSRFToken": S.csrf}}).then(poll));
  poll();
})();
