//! The live page: one self-contained HTML file (inline CSS and JS, SVG drawn by the script, no
//! request but to `/data` on the same server) that redraws every 0.5 s. Every text from the
//! run (names, labels, failure sentences) goes in through `textContent`, never as markup; the
//! run's name in the title is escaped as report.html escapes (`html::report_page::esc`).

/// The page for the run `run`.
pub(crate) fn html(run: &str) -> String {
    PAGE.replace("{{TITLE}}", &crate::html::report_page::esc(run))
}

const PAGE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>perflab live: {{TITLE}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222;background:#fff}
h1{font-size:1.3em;margin:.2em 0}
#figs{display:flex;flex-wrap:wrap;gap:.4em 1.6em;margin:.6em 0;font-variant-numeric:tabular-nums}
#figs div b{display:block;font-size:1.5em}
.chart{margin:.2em 0}
.chart h2{font-size:1em;margin:.6em 0 0}
svg{background:#fafafa;border:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
td.l,th.l{text-align:left}
.pass{background:#d9f2d9}.fail{background:#f8d0d0}.transient{background:#fbeec2}
#knee{font-weight:bold;color:#a00;margin:.6em 0}
#report{font-size:1.2em;margin:.8em 0}
.note{color:#666}
.legend span{margin-right:1em;white-space:nowrap}
</style></head>
<body>
<h1>perflab live: <span id="run"></span></h1>
<div id="status"></div>
<div id="report"></div>
<div id="figs"></div>
<div id="knee"></div>
<div id="charts"></div>
<table id="steps"><thead><tr><th>step</th><th>target</th><th>verdict</th><th>sent/s</th><th>ok/s</th><th>p50 ms</th><th>p95 ms</th><th class="l">failed criteria</th></tr></thead><tbody></tbody></table>
<div id="notes" class="note"></div>
<p class="note">Client figures from k6's REST API (polled by perflab's progress line), server figures from the samplers' files in the run directory: nothing is sampled twice. A step's verdict is the report's criteria on k6's per-step figures once its window closed; report.html judges every request after the run.</p>
<script>
"use strict";
const NS = "http://www.w3.org/2000/svg";
const W = 900, H = 150, L = 50, R = 10, T = 8, B = 20;
const COLORS = ["#1f77b4","#d62728","#2ca02c","#ff7f0e","#9467bd","#8c564b","#e377c2","#17becf"];
function el(tag, attrs, parent, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function fmt(v, d) { return v === null || v === undefined ? "-" : Number(v).toFixed(d === undefined ? 0 : d); }
function chart(parent, title, lines, d) {
  const box = el("div", {class: "chart"}, parent);
  el("h2", {}, box, title);
  const svg = el("svg:svg", {width: W, height: H, viewBox: `0 0 ${W} ${H}`}, box);
  const tmax = Math.max(d.total_s, d.now_s, 1);
  let ymax = 0;
  for (const l of lines) for (const p of l.points) ymax = Math.max(ymax, p[1]);
  for (const l of lines) if (l.ceiling) ymax = Math.max(ymax, l.ceiling);
  ymax = ymax > 0 ? ymax * 1.1 : 1;
  const x = t => L + (W - L - R) * Math.max(0, t) / tmax;
  const y = v => H - B - (H - B - T) * v / ymax;
  for (const s of d.steps) {
    const cls = s.verdict || "";
    const c = cls === "pass" ? "#d9f2d9" : cls === "fail" ? "#f8d0d0" : cls === "transient" ? "#fbeec2" : "#eef";
    el("svg:rect", {x: x(s.hold_start_s), y: T, width: Math.max(1, x(s.hold_end_s) - x(s.hold_start_s)), height: H - B - T, fill: c, opacity: 0.6}, svg);
    el("svg:line", {x1: x(s.start_s), x2: x(s.start_s), y1: T, y2: H - B, stroke: "#999", "stroke-dasharray": "2,2"}, svg);
  }
  el("svg:line", {x1: x(d.now_s), x2: x(d.now_s), y1: T, y2: H - B, stroke: "#000"}, svg);
  el("svg:line", {x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#555"}, svg);
  el("svg:text", {x: 2, y: T + 10, "font-size": 10}, svg, fmt(ymax, ymax < 10 ? 2 : 0));
  el("svg:text", {x: 2, y: H - B, "font-size": 10}, svg, "0");
  el("svg:text", {x: W - R - 40, y: H - 4, "font-size": 10}, svg, fmt(tmax) + " s");
  const legend = el("div", {class: "legend"}, box);
  lines.forEach((l, i) => {
    const color = COLORS[i % COLORS.length];
    if (l.points.length) {
      const poly = l.points.map(p => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
      el("svg:polyline", {points: poly, fill: "none", stroke: color, "stroke-width": 1.5}, svg);
    }
    if (l.ceiling) el("svg:line", {x1: L, x2: W - R, y1: y(l.ceiling), y2: y(l.ceiling), stroke: color, "stroke-dasharray": "6,3"}, svg);
    const last = l.points.length ? l.points[l.points.length - 1][1] : null;
    el("span", {style: `color:${color}`}, legend, `\u25A0 ${l.label}: ${fmt(last, 2)}` + (l.ceiling ? ` (ceiling ${fmt(l.ceiling, 1)})` : ""));
  });
}
function pts(d, key) { return d.client.filter(p => p[key] !== null && p[key] !== undefined).map(p => [p.t, p[key]]); }
function server(d, chartName) {
  return d.server.filter(s => s.chart === chartName).map(s => ({label: s.name.startsWith(s.role + "_") ? s.name.replace(/_/g, " ") : `${s.role} ${s.name.replace(/_/g, " ")}`, points: s.points, ceiling: s.ceiling}));
}
function draw(d) {
  document.getElementById("run").textContent = d.run + (d.experiment ? ` (${d.experiment})` : "");
  document.getElementById("status").textContent = `${d.status}: ${d.phase}, step ${d.step}/${d.steps.length}, t = ${fmt(d.now_s)} s of ${fmt(d.total_s)} s`;
  const last = d.client.length ? d.client[d.client.length - 1] : {};
  const figs = document.getElementById("figs");
  figs.replaceChildren();
  for (const [k, v] of [[`offered ${d.unit}`, fmt(last.offered)], ["sent/s", fmt(last.sent_per_s)], ["ok/s", fmt(last.ok_per_s)],
      ["mean ms", fmt(last.mean_ms, 1)], ["step p50 ms", fmt(last.p50_ms, 1)], ["step p95 ms", fmt(last.p95_ms, 1)],
      ["failed", fmt(last.failed)], ["dropped", fmt(last.dropped)], ["VUs", fmt(last.vus)]]) {
    const div = el("div", {}, figs);
    el("b", {}, div, v);
    el("span", {}, div, k);
  }
  document.getElementById("knee").textContent = d.knee ? d.knee.why : "";
  const charts = document.getElementById("charts");
  charts.replaceChildren();
  chart(charts, d.unit === "rps" ? "load (requests/s)" : `load (requests/s; offered: ${d.unit})`, [{label: "offered", points: pts(d, "offered")}, {label: "sent/s", points: pts(d, "sent_per_s")}, {label: "ok/s", points: pts(d, "ok_per_s")}, {label: "failed/s", points: pts(d, "failed_per_s")}], d);
  chart(charts, "latency (ms)", [{label: "mean of the last poll", points: pts(d, "mean_ms")}, {label: "step p50 so far", points: pts(d, "p50_ms")}, {label: "step p95 so far", points: pts(d, "p95_ms")}], d);
  chart(charts, "k6", [{label: "VUs", points: pts(d, "vus")}, {label: "dropped", points: pts(d, "dropped")}], d);
  for (const [c, title] of [["cpu", "containers' CPU (cores; dashed: the slot's cores)"], ["fpm", "php-fpm"], ["pg", "PostgreSQL connections"], ["host", "the app's CPUs (share)"]]) {
    const lines = server(d, c);
    if (lines.length) chart(charts, title, lines, d);
  }
  const tb = document.querySelector("#steps tbody");
  tb.replaceChildren();
  for (const s of d.steps) {
    const tr = el("tr", {class: s.verdict || ""}, tb);
    for (const v of [s.step, s.target, s.verdict || "", fmt(s.sent_per_s, 1), fmt(s.ok_per_s, 1), fmt(s.p50_ms, 1), fmt(s.p95_ms, 1)]) el("td", {}, tr, v);
    el("td", {class: "l"}, tr, s.failures.join("; "));
  }
  const notes = document.getElementById("notes");
  notes.replaceChildren();
  for (const n of d.notes) el("div", {}, notes, n);
  const rep = document.getElementById("report");
  rep.replaceChildren();
  if (d.report) el("a", {href: d.report + location.search, id: "report-link"}, rep, "report.html");
  else if (d.status === "finished") rep.textContent = "the run ended without a report";
}
// the first answer is the whole state; then only what each second adds (`since`), merged here
function merge(old, d) {
  if (d.since === null || !old) return d;
  const byKey = new Map(old.server.map(s => [s.name + "/" + s.role, s]));
  for (const s of d.server) {
    const have = byKey.get(s.name + "/" + s.role);
    if (!have) { old.server.push(s); continue; }
    const last = have.points.length ? have.points[have.points.length - 1][0] : -Infinity;
    for (const p of s.points) if (p[0] > last) have.points.push(p);
    have.ceiling = s.ceiling;
  }
  d.server = old.server;
  d.client = old.client.concat(d.client);
  return d;
}
let done = false, state = null;
async function tick() {
  try {
    const q = new URLSearchParams(location.search);
    if (state) q.set("since", state.client.length ? state.client[state.client.length - 1].t : -1e9);
    const r = await fetch("data?" + q.toString(), {cache: "no-store"});
    if (r.ok) {
      const d = await r.json();
      if (state && d.since !== null && d.run !== state.run) state = null; // a new round: all again
      else { state = merge(state, d); draw(state); done = state.status === "finished"; }
    }
  } catch (e) { document.getElementById("status").textContent = "the run's server stopped (the run ended)"; done = true; }
  // every 0.5 s: a sampler line (read on k6's next poll, at most 1 s later) is on screen within 2 s
  if (!done) setTimeout(tick, 500);
}
tick();
</script>
</body></html>
"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_escapes_a_hostile_run_name_and_the_page_loads_nothing_from_elsewhere() {
        let h = html("<script>alert('x')</script>&\"");
        assert!(h.contains(
            "perflab live: &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;</title>"
        ));
        assert!(!h.contains("<script>alert"));
        // self-contained: the only URLs are the SVG namespace and the page's own /data
        for proto in ["http://", "https://", "//cdn", "src=\""] {
            let n = h.matches(proto).count();
            let allowed = usize::from(proto == "http://");
            assert_eq!(n, allowed, "{proto} appears {n} times");
        }
        assert!(h.contains("http://www.w3.org/2000/svg"));
        assert!(!h.contains("innerHTML"));
    }
}
