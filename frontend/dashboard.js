/* paperlab run dashboard: snapshot + deltas over a WebSocket, drawn with Plotly.
 *
 * Protocol (apps/lab/events.py): the first message is {kind: "snapshot", seq, state, series, tables,
 * figures, logs, artifacts}; then deltas {kind: "points" | "table" | "figure" | "log" | "artifact" |
 * "progress" | "state"}. Every stored item has a sequence number; items with seq <= snapshot.seq are
 * already in the snapshot and are dropped.  Redraws are throttled to ~10/s; long series are drawn
 * downsampled (min/max per bucket) while the full data stays in memory.
 */
(function () {
  "use strict";
  const RUN = window.PAPERLAB_RUN;
  const MAX_DRAWN = 4000;          // points per trace drawn before we switch to downsampled redraws
  const FRAME_MS = 100;            // at most ~10 redraws per second
  const TERMINAL = ["succeeded", "failed", "cancelled"];

  const store = {series: {}, tables: {}, figures: {}, snapSeq: 0, seen: {}, status: null};
  const panels = [];               // {decl, div, kind, traces: {key: index}, drawn: {key: n}, dirty}
  let ws = null, retry = 0, frameQueued = false;

  const $ = (id) => document.getElementById(id);

  function matchKeys(patterns) {
    const keys = Object.keys(store.series).sort();
    const out = [];
    for (const p of patterns) {
      if (p.endsWith("*")) { for (const k of keys) if (k.startsWith(p.slice(0, -1)) && !out.includes(k)) out.push(k); }
      else if (store.series[p] && !out.includes(p)) out.push(p);
    }
    return out;
  }

  function downsample(xs, ys, n) {
    if (xs.length <= n) return [xs, ys];
    const buckets = Math.floor((n - 2) / 2), size = (xs.length - 2) / buckets;
    const ox = [xs[0]], oy = [ys[0]];
    for (let b = 0; b < buckets; b++) {
      const lo = 1 + Math.floor(b * size), hi = Math.min(xs.length - 1, 1 + Math.floor((b + 1) * size));
      let imin = -1, imax = -1;
      for (let i = lo; i < hi; i++) {
        if (ys[i] === null) continue;
        if (imin < 0 || ys[i] < ys[imin]) imin = i;
        if (imax < 0 || ys[i] > ys[imax]) imax = i;
      }
      if (imin < 0) continue;
      for (const i of (imin <= imax ? [imin, imax] : [imax, imin])) { if (ox.length && ox[ox.length - 1] === xs[i] && i !== imin) continue; ox.push(xs[i]); oy.push(ys[i]); }
    }
    ox.push(xs[xs.length - 1]); oy.push(ys[ys.length - 1]);
    return [ox, oy];
  }

  function layoutFor(d) {
    return {
      title: {text: d.title, font: {size: 14}}, margin: {l: 55, r: 15, t: 40, b: 45}, height: 320,
      xaxis: {title: {text: d.x_label || ""}, type: d.x_log ? "log" : "linear"},
      yaxis: {title: {text: d.y_label || ""}, type: d.y_log ? "log" : "linear"},
      legend: {orientation: "h", y: -0.25}, uirevision: "keep",
    };
  }
  const CONFIG = {responsive: true, displaylogo: false};

  function buildPanels() {
    const root = $("panels");
    root.innerHTML = "";
    panels.length = 0;
    for (const d of RUN.panels) {
      const box = document.createElement("div");
      box.className = "panel w" + (d.width || 6);
      const div = document.createElement("div");
      div.className = d.kind === "table" ? "table-panel" : "plot";
      if (d.kind === "table") { const h = document.createElement("h3"); h.textContent = d.title; box.appendChild(h); }
      if (d.help) { const p = document.createElement("p"); p.className = "muted small"; p.textContent = d.help; box.appendChild(p); }
      box.appendChild(div);
      root.appendChild(box);
      panels.push({decl: d, div: div, kind: d.kind, traces: {}, drawn: {}, dirty: true, created: false});
    }
  }

  function drawLine(p) {
    const keys = matchKeys(p.decl.keys);
    if (!p.created) {
      const traces = keys.map((k) => { const s = store.series[k]; const [x, y] = downsample(s.x, s.y, MAX_DRAWN); return {x: x, y: y, name: k, mode: p.decl.mode || "lines", type: "scattergl"}; });
      keys.forEach((k, i) => { p.traces[k] = i; p.drawn[k] = store.series[k].x.length; });
      Plotly.newPlot(p.div, traces, layoutFor(p.decl), CONFIG);
      p.created = true;
      return;
    }
    const ext = {x: [], y: []}, idx = [];
    let rebuild = false;
    for (const k of keys) {
      const s = store.series[k];
      if (!(k in p.traces)) {
        p.traces[k] = Object.keys(p.traces).length;
        p.drawn[k] = s.x.length;
        const [x, y] = downsample(s.x, s.y, MAX_DRAWN);
        Plotly.addTraces(p.div, {x: x, y: y, name: k, mode: p.decl.mode || "lines", type: "scattergl"});
        continue;
      }
      if (s.x.length > MAX_DRAWN) { rebuild = true; continue; }
      if (s.x.length > p.drawn[k]) {
        ext.x.push(s.x.slice(p.drawn[k])); ext.y.push(s.y.slice(p.drawn[k])); idx.push(p.traces[k]);
        p.drawn[k] = s.x.length;
      }
    }
    if (idx.length) Plotly.extendTraces(p.div, ext, idx);
    if (rebuild) {
      const now = Date.now();
      if (!p.lastRebuild || now - p.lastRebuild > 1000) {
        p.lastRebuild = now;
        const data = Object.keys(p.traces).sort((a, b) => p.traces[a] - p.traces[b]).map((k) => { const s = store.series[k]; const [x, y] = downsample(s.x, s.y, MAX_DRAWN); p.drawn[k] = s.x.length; return {x: x, y: y, name: k + (s.x.length > MAX_DRAWN ? " (min/max downsampled)" : ""), mode: p.decl.mode || "lines", type: "scattergl"}; });
        Plotly.react(p.div, data, layoutFor(p.decl), CONFIG);
      } else { p.dirty = true; scheduleFrame(); }
    }
  }

  function drawHistogram(p) {
    const data = matchKeys(p.decl.keys).map((k) => ({x: store.series[k].y, name: k, type: "histogram", opacity: 0.7, nbinsx: p.decl.nbins || 40}));
    Plotly.react(p.div, data, Object.assign(layoutFor(p.decl), {barmode: "overlay", xaxis: {title: {text: p.decl.x_label || ""}}}), CONFIG);
  }

  function drawTable(p) {
    const t = store.tables[p.decl.key];
    if (!t) { p.div.innerHTML = '<p class="muted">waiting for data…</p>'; return; }
    const fmt = (v) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toPrecision(4)) : (v === null ? "–" : String(v)));
    let html = "<table class='runs'><thead><tr>" + t.columns.map((c) => "<th>" + esc(c) + "</th>").join("") + "</tr></thead><tbody>";
    for (const r of t.rows) html += "<tr>" + t.columns.map((c) => "<td>" + esc(fmt(r[c])) + "</td>").join("") + "</tr>";
    p.div.innerHTML = html + "</tbody></table>";
  }

  function drawBar(p) {
    const t = store.tables[p.decl.table];
    if (!t) return;
    const data = p.decl.y.map((c) => ({type: "bar", name: c, x: t.rows.map((r) => String(r[p.decl.x])), y: t.rows.map((r) => r[c])}));
    Plotly.react(p.div, data, Object.assign(layoutFor(p.decl), {yaxis: {type: p.decl.y_log ? "log" : "linear"}}), CONFIG);
  }

  function drawFigure(p) {
    const f = store.figures[p.decl.key];
    if (!f) return;
    const layout = Object.assign({margin: {l: 55, r: 15, t: 40, b: 45}, height: 320}, f.layout || {});
    if (!layout.title || (typeof layout.title === "object" && !layout.title.text)) layout.title = {text: p.decl.title, font: {size: 14}};
    Plotly.react(p.div, f.data, layout, CONFIG);
  }

  function esc(s) { return String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c])); }

  function frame() {
    frameQueued = false;
    for (const p of panels) {
      if (!p.dirty) continue;
      p.dirty = false;
      try {
        if (p.kind === "line") drawLine(p);
        else if (p.kind === "histogram") drawHistogram(p);
        else if (p.kind === "table") drawTable(p);
        else if (p.kind === "bar") drawBar(p);
        else if (p.kind === "figure") drawFigure(p);
      } catch (e) { console.error("panel", p.decl.title, e); }
    }
  }
  function scheduleFrame() { if (!frameQueued) { frameQueued = true; setTimeout(() => requestAnimationFrame(frame), FRAME_MS); } }
  function markAll() { for (const p of panels) p.dirty = true; scheduleFrame(); }

  function setState(s) {
    store.status = s.status;
    const st = $("run-status"); st.textContent = s.status; st.className = "status s-" + s.status;
    $("run-progress").value = s.progress || 0;
    $("run-progress-text").textContent = s.progress_message || "";
    if (s.device) $("run-device").textContent = s.device;
    $("run-eta").textContent = s.eta_seconds && !TERMINAL.includes(s.status) ? "ETA " + Math.round(s.eta_seconds) + " s" : "";
    if (s.error) { $("run-error").hidden = false; $("run-error-text").textContent = s.error; $("run-traceback").textContent = s.traceback || ""; }
    if (s.summary && Object.keys(s.summary).length) $("run-summary").textContent = JSON.stringify(s.summary, null, 1);
    const cancel = document.querySelector("#cancel-form button");
    if (cancel && TERMINAL.includes(s.status)) cancel.disabled = true;
    document.body.dataset.runStatus = s.status;
  }
  function addLog(l) { const el = $("logs"); el.textContent += "[" + l.level + "] " + l.message + "\n"; }
  function addArtifact(a) {
    const li = document.createElement("li");
    li.innerHTML = '<a href="' + esc(a.url) + '">' + esc(a.name) + "</a> <span class='muted'>(" + a.size + " bytes)</span>";
    $("artifacts").appendChild(li);
  }

  function onMessage(msg) {
    if (msg.kind === "snapshot") {
      store.series = {}; store.seen = {};
      for (const [k, s] of Object.entries(msg.series)) store.series[k] = {x: s.x.slice(), y: s.y.slice()};
      store.tables = msg.tables; store.figures = msg.figures; store.snapSeq = msg.seq;
      $("logs").textContent = ""; msg.logs.forEach(addLog);
      $("artifacts").innerHTML = ""; msg.artifacts.forEach(addArtifact);
      setState(msg.state);
      buildPanels(); markAll();
      return;
    }
    if (msg.kind === "points") {
      for (const c of msg.data) {
        if (c.seq <= store.snapSeq) continue;
        const s = store.series[c.key] || (store.series[c.key] = {x: [], y: []});
        for (let i = 0; i < c.x.length; i++) { s.x.push(c.x[i]); s.y.push(c.y[i]); }
      }
      for (const p of panels) if (p.kind === "line" || p.kind === "histogram") p.dirty = true;
      scheduleFrame();
    } else if (msg.kind === "table") {
      if (msg.seq <= store.snapSeq) return;
      store.tables[msg.key] = msg.data;
      for (const p of panels) if ((p.kind === "table" && p.decl.key === msg.key) || (p.kind === "bar" && p.decl.table === msg.key)) p.dirty = true;
      scheduleFrame();
    } else if (msg.kind === "figure") {
      if (msg.seq <= store.snapSeq) return;
      store.figures[msg.key] = msg.data;
      for (const p of panels) if (p.kind === "figure" && p.decl.key === msg.key) p.dirty = true;
      scheduleFrame();
    } else if (msg.kind === "log") { if (msg.seq > store.snapSeq) addLog(msg.data); }
    else if (msg.kind === "artifact") { if (msg.seq > store.snapSeq) addArtifact(msg.data); }
    else if (msg.kind === "progress") { setState(Object.assign({status: store.status}, msg.data)); }
    else if (msg.kind === "state") { setState(msg.data); }
  }

  function connect() {
    const proto = location.protocol === "https:" ? "wss://" : "ws://";
    ws = new WebSocket(proto + location.host + "/ws/runs/" + RUN.id + "/");
    ws.onmessage = (e) => { retry = 0; onMessage(JSON.parse(e.data)); };
    ws.onclose = () => {
      if (TERMINAL.includes(store.status)) return;
      retry = Math.min(retry + 1, 6);
      setTimeout(connect, 500 * retry);   // a new connection brings a fresh snapshot
    };
  }
  buildPanels();
  connect();
})();
