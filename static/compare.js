// sitegen: the comparison of any runs, built in the browser from each run's
// runs/<id>/data.js (script tags, so it works from file:// and offline, and
// only the chosen runs are loaded). The same figures and words as the
// pre-rendered comparison pages (src/compare.rs defines them).
"use strict";

const loaded = {};
window.sitegenRun = (run) => { loaded[run.id] = run; };

const RUN_ID = /^[a-z0-9_][a-z0-9._-]*$/;
const DASH = "—";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  Object.entries(attrs || {}).forEach(([k, v]) => {
    if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  });
  children.forEach((c) => e.appendChild(typeof c === "string" ? document.createTextNode(c) : c));
  return e;
}

function loadRun(id) {
  return new Promise((resolve) => {
    const s = el("script", { src: `../runs/${id}/data.js` });
    s.onload = () => resolve(loaded[id] || null);
    s.onerror = () => resolve(null);
    document.head.appendChild(s);
  });
}

// Number formats of src/format.rs: "4,764.0" and "18.9K" (tables),
// "4,764" and "18.9K" (chart ticks), "8K" or "3,000" (contexts).
function grouped(v, decimals) {
  return v.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}
function compactThousands(v) {
  return `${grouped(v / 1000, 1).replace(/\.0$/, "")}K`;
}
function tokPerS(v) {
  return Math.abs(Math.round(v * 10) / 10) >= 10000 ? compactThousands(v) : grouped(v, 1);
}
function tokPerSShort(v) {
  return Math.abs(Math.round(v)) >= 10000 ? compactThousands(v) : grouped(v, 0);
}
function contextLabel(tokens) {
  if (tokens === 0) return "0 (no prompt)";
  return tokens >= 1024 && tokens % 1024 === 0 ? `${tokens / 1024}K` : grouped(tokens, 0);
}

// A cell's throughput if it can be compared, else the words for why not.
function validTotal(cell) {
  if (!cell) return { why: "not measured" };
  const [, , , status, words, total] = cell;
  if (status === "valid") return total === null || total === undefined ? { why: "not measured" } : { total };
  return { why: words };
}

// A decode cell in a chart's table, as src/render/compare_page.rs writes it:
// its tok/s, with the status when it is not Valid, or the status alone.
function decodeFigure(run, cell, perGpu) {
  if (!cell) return DASH;
  const [, , , status, , total, label] = cell;
  const shown = total === null || total === undefined ? null : tokPerS(onBasis(run, total, perGpu));
  if (status === "valid") return shown === null ? DASH : shown;
  return shown === null ? label : `${shown} (${label})`;
}

function cellOf(run, ctx, n) {
  return run.decode.find((c) => c[0] === ctx && c[2] === n);
}

// The ratio of b to a, or the reason there is none, as the pages word it.
function ratio(a, b, ctx, n) {
  const x = validTotal(cellOf(a, ctx, n));
  const y = validTotal(cellOf(b, ctx, n));
  if (x.why === undefined && y.why === undefined) {
    return x.total > 0 ? { value: y.total / x.total } : { why: `${a.model} measured 0 tok/s` };
  }
  if (x.why !== undefined && y.why !== undefined) {
    return { why: x.why === y.why ? `both ${x.why}` : `${a.model} ${x.why}, ${b.model} ${y.why}` };
  }
  return x.why !== undefined ? { why: `${a.model} ${x.why}` } : { why: `${b.model} ${y.why}` };
}

// Diverging colour of a ratio: orange below 1, blue above, white at parity.
function ratioColour(r) {
  const t = Math.max(-1, Math.min(1, Math.log2(r)));
  const [to, f] = t < 0 ? [[0xe6, 0x8a, 0x3c], -t] : [[0x3a, 0x86, 0xc8], t];
  const c = to.map((q) => Math.round(255 + (q - 255) * f));
  return `#${c.map((v) => v.toString(16).padStart(2, "0")).join("")}`;
}

function sorted(values) {
  return Array.from(new Set(values)).sort((p, q) => p - q);
}

// A scrollable region named by the element `labelId`, for a wide table.
function scrollRegion(labelId) {
  return el("div", { class: "scroll", tabindex: "0", role: "region", "aria-labelledby": labelId });
}

function section(id, heading, caption) {
  const s = el("section", { id, "aria-labelledby": `${id}-h` },
    el("h2", { id: `${id}-h`, text: heading }));
  if (caption) s.appendChild(el("p", { class: "caption", id: `${id}-caption`, text: caption }));
  return s;
}

function setupSection(runs) {
  const s = section("setup", "Setup", "The cards of each run side by side; rows where the runs differ are marked.");
  const keys = [];
  runs.forEach((r) => r.cards.forEach(([card, field]) => {
    if (!keys.some(([c, f]) => c === card && f === field)) keys.push([card, field]);
  }));
  const head = el("tr", {}, el("th", { scope: "col", text: "Card" }), el("th", { scope: "col", text: "Field" }),
    ...runs.map((r) => el("th", { scope: "col", text: r.model })));
  const body = el("tbody");
  keys.forEach(([card, field]) => {
    const values = runs.map((r) => (r.cards.find(([c, f]) => c === card && f === field) || [, , DASH])[2]);
    const differs = values.some((v) => v !== values[0]);
    const th = el("th", { scope: "row", text: field });
    if (differs) th.appendChild(el("span", { class: "differs-mark", text: " differs" }));
    body.appendChild(el("tr", differs ? { class: "differs" } : {}, el("td", { text: card }), th,
      ...values.map((v) => el("td", { text: v }))));
  });
  const wrap = scrollRegion("setup-caption");
  wrap.appendChild(el("table", { class: "data setup" }, el("thead", {}, head), body));
  s.appendChild(wrap);
  return s;
}

// Okabe–Ito colours and marker shapes in run order, as src/render/charts/lines.rs.
const PALETTE = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"];
const MARKERS = ["circle", "triangle", "square", "diamond", "cross", "ring"];
const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, String(v)));
  children.forEach((c) => e.appendChild(typeof c === "string" ? document.createTextNode(c) : c));
  return e;
}

function marker(style, x, y) {
  const colour = PALETTE[style % PALETTE.length];
  const filled = { fill: colour };
  switch (MARKERS[style % MARKERS.length]) {
    case "circle": return svgEl("circle", { cx: x, cy: y, r: 4, ...filled });
    case "triangle": return svgEl("polygon", { points: `${x},${y - 5} ${x + 5},${y + 4} ${x - 5},${y + 4}`, ...filled });
    case "square": return svgEl("rect", { x: x - 4, y: y - 4, width: 8, height: 8, ...filled });
    case "diamond": return svgEl("polygon", { points: `${x},${y - 5} ${x + 5},${y} ${x},${y + 5} ${x - 5},${y}`, ...filled });
    case "cross": return svgEl("path", { d: `M${x - 4} ${y - 4}L${x + 4} ${y + 4}M${x - 4} ${y + 4}L${x + 4} ${y - 4}`, stroke: colour, "stroke-width": 2 });
    default: return svgEl("circle", { cx: x, cy: y, r: 4, fill: "none", stroke: colour, "stroke-width": 2 });
  }
}

// A step of 1, 2 or 5 times a power of ten giving about `count` ticks to `max`.
function niceStep(max, count) {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= raw);
}

// The pre-rendered pages' overlaid chart, drawn here: one line with markers
// per run (style = run order), x on a log2 scale labelled at whole powers
// of two, y linear from 0.
function lineChart(title, [width, height], x, y, series) {
  const points = series.flatMap((s) => s.points);
  const logs = points.map(([px]) => Math.log2(px));
  let [x0, x1] = [Math.min(...logs), Math.max(...logs)];
  if (x1 - x0 < 1e-9) { x0 -= 1; x1 += 1; }
  const xPad = (x1 - x0) * 0.06;
  [x0, x1] = [x0 - xPad, x1 + xPad];
  const yMax = Math.max(...points.map(([, py]) => py), 1e-9) * 1.06;
  const step = niceStep(yMax, 5);
  const box = { left: 76, right: width - 12, top: 12, bottom: height - 52 };
  const sx = (v) => box.left + ((Math.log2(v) - x0) / (x1 - x0)) * (box.right - box.left);
  const sy = (v) => box.bottom - (v / yMax) * (box.bottom - box.top);
  const text = (attrs, words) => svgEl("text", { "font-family": "sans-serif", "font-size": 15, fill: "#000000", ...attrs }, words);
  const grid = (attrs) => svgEl("line", { stroke: "#000000", opacity: 0.12, "stroke-width": 1, ...attrs });
  const root = svgEl("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": title },
    svgEl("title", {}, title));
  for (let k = Math.ceil(x0); k <= Math.floor(x1); k += 1) {
    const px = sx(2 ** k);
    root.appendChild(grid({ x1: px, y1: box.bottom, x2: px, y2: box.top }));
    root.appendChild(text({ x: px, y: box.bottom + 18, "text-anchor": "middle" }, x.format(2 ** k)));
  }
  for (let v = 0; v <= yMax; v += step) {
    root.appendChild(grid({ x1: box.left, y1: sy(v), x2: box.right, y2: sy(v) }));
    root.appendChild(text({ x: box.left - 6, y: sy(v) + 5, "text-anchor": "end" }, tokPerSShort(v)));
  }
  root.appendChild(text({ x: (box.left + box.right) / 2, y: height - 8, "text-anchor": "middle" }, x.label));
  root.appendChild(text({ x: 16, y: (box.top + box.bottom) / 2, "text-anchor": "middle", transform: `rotate(270, 16, ${(box.top + box.bottom) / 2})` }, y.label));
  series.forEach((s) => {
    const xy = s.points.map(([px, py]) => [sx(px), sy(py)]);
    if (xy.length > 1) {
      root.appendChild(svgEl("polyline", { points: xy.map((p) => p.join(",")).join(" "), fill: "none", stroke: PALETTE[s.style % PALETTE.length], "stroke-width": 3 }));
    }
    xy.forEach(([px, py]) => root.appendChild(marker(s.style, px, py)));
  });
  return root;
}

// A chart with its caption and, folded under it, the table of its numbers.
function chartBlock(id, heading, svg, caption, columns, rows) {
  const figure = el("figure", { class: "chart-box", "aria-labelledby": `${id}-caption` }, svg,
    el("figcaption", { id: `${id}-caption`, text: caption }));
  const wrap = el("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": `${heading}: numbers` },
    el("table", { class: "data" },
      el("thead", {}, el("tr", {}, ...columns.map((c) => el("th", { scope: "col", text: c })))),
      el("tbody", {}, ...rows.map((row) => el("tr", {}, ...row.map((v) => el("td", { text: v })))))));
  return [figure, el("details", { class: "numbers" }, el("summary", { text: "Numbers" }), wrap)];
}

// Throughput on a basis: as measured, or per GPU of the run.
function onBasis(run, tokPerSecond, perGpu) {
  return perGpu ? tokPerSecond / Math.max(run.gpu_count, 1) : tokPerSecond;
}

function prefillSection(runs) {
  const contexts = sorted(runs.flatMap((r) => r.prefill.map((p) => p[1])));
  if (contexts.length === 0) return null;
  const s = section("prefill", "Prefill");
  const title = "Prefill: prompt tok/s by context length";
  const svg = lineChart(title, [900, 360], { label: "context length (tokens)", format: contextLabel }, { label: "prompt tok/s" },
    runs.map((r, style) => ({ style, points: r.prefill.map((p) => [p[1], p[2]]) })));
  const rows = contexts.map((ctx) => [contextLabel(ctx), ...runs.map((r) => {
    const p = r.prefill.find((q) => q[1] === ctx);
    return p ? `${tokPerS(p[2])} (${grouped(p[3], 0)} ms)` : DASH;
  })]);
  s.append(...chartBlock("prefill-chart", "Prefill", svg,
    "Prompt tok/s of one cold prompt at each context length; contexts are placed by token count. The table adds each TTFT.",
    ["Context", ...runs.map((r) => r.model)], rows));
  return s;
}

// Decode contexts at least two of the runs measured (src/compare.rs).
function sharedContexts(runs) {
  return sorted(runs.flatMap((r) => r.decode.map((c) => c[0])))
    .filter((ctx) => runs.filter((r) => r.decode.some((c) => c[0] === ctx)).length >= 2);
}

function decodeView(runs, perGpu) {
  const figure = perGpu ? "tok/s per GPU" : "total tok/s";
  const view = el("div", { "data-gpu-view": perGpu ? "per-gpu" : "total" },
    el("p", { class: "caption", text: perGpu
      ? "Tok/s per GPU (each run's total divided by its GPU count) against simultaneous requests, for each context at least two runs measured."
      : "Total tok/s against simultaneous requests, for each context at least two runs measured." }));
  sharedContexts(runs).forEach((ctx) => {
    const label = contextLabel(ctx);
    const id = `decode-${ctx}${perGpu ? "-per-gpu" : ""}`;
    const levels = sorted(runs.flatMap((r) => r.decode.filter((c) => c[0] === ctx).map((c) => c[2])));
    const svg = lineChart(`Sustained decode at ${label}: ${figure} by simultaneous requests`, [640, 300],
      { label: "simultaneous requests", format: (v) => String(v) }, { label: figure },
      runs.map((r, style) => ({
        style,
        points: r.decode.filter((c) => c[0] === ctx && validTotal(c).why === undefined).map((c) => [c[2], onBasis(r, c[5], perGpu)]),
      })));
    const rows = levels.map((n) => [String(n), ...runs.map((r) => decodeFigure(r, cellOf(r, ctx, n), perGpu))]);
    const sub = el("section", { id, "aria-labelledby": `${id}-h`, class: "small-multiple" },
      el("h3", { id: `${id}-h`, text: `${label} context` }));
    sub.append(...chartBlock(`${id}-chart`, `${label} context`, svg,
      `${perGpu ? "Tok/s per GPU" : "Total tok/s"} against simultaneous requests at ${label} context, valid cells only; the table also lists the other statuses.`,
      ["Requests at once", ...runs.map((r) => r.model)], rows));
    view.appendChild(sub);
  });
  return view;
}

function decodeSection(runs, perGpuView) {
  if (sharedContexts(runs).length === 0) return null;
  const s = section("decode", "Sustained decode");
  s.classList.add("multiples");
  s.appendChild(decodeView(runs, false));
  if (perGpuView) s.appendChild(decodeView(runs, true));
  return s;
}

function ratioView(runs, perGpu) {
  const view = el("div", { "data-gpu-view": perGpu ? "per-gpu" : "total" },
    el("p", { class: "caption", text: perGpu
      ? "Tok/s per GPU of a run divided by the first run's, cell by cell: the total ratio times the first run's GPU count over the run's. Above 1 (blue) the run makes more per GPU, below 1 (orange) less. A dash means at least one side has no valid figure, and the cell says why."
      : "Total tok/s of a run divided by the first run's, cell by cell. Above 1 (blue) the run is faster, below 1 (orange) slower. A dash means at least one side has no valid figure, and the cell says why." }));
  const a = runs[0];
  const shared = runs.every((r) => r.gpu_count === a.gpu_count) && a.gpu_count > 1;
  if (!perGpu && shared) {
    view.appendChild(el("p", { class: "note", text: `Every run here uses ${a.gpu_count} GPUs, so per GPU each figure is its total ÷ ${a.gpu_count} and every ratio stays as it is.` }));
  }
  runs.slice(1).forEach((b) => {
    const id = `ratio-${b.id}${perGpu ? "-per-gpu" : ""}`;
    const contexts = sorted([a, b].flatMap((r) => r.decode.map((c) => c[0])));
    const levels = sorted([a, b].flatMap((r) => r.decode.map((c) => c[2])));
    const sub = el("section", { id, "aria-labelledby": `${id}-h` },
      el("h3", { id: `${id}-h`, text: `${b.model} / ${a.model}${perGpu ? ", per GPU" : ""}` }));
    const head = el("tr", {}, el("th", { scope: "col", text: "Context" }), ...levels.map((n) => el("th", { scope: "col", text: String(n) })));
    const body = el("tbody", {}, ...contexts.map((ctx) => el("tr", {}, el("th", { scope: "row", text: contextLabel(ctx) }),
      ...levels.map((n) => {
        const r = ratio(a, b, ctx, n);
        if (r.why !== undefined) {
          return el("td", { class: "r none" }, el("span", { class: "ratio-value", text: DASH }), el("span", { class: "why", text: r.why }));
        }
        const value = perGpu ? (r.value * a.gpu_count) / b.gpu_count : r.value;
        return el("td", { class: "r", style: `background-color:${ratioColour(value)};color:#000000` },
          el("span", { class: "ratio-value", text: `${value.toFixed(2)}×` }));
      }))));
    const wrap = scrollRegion(`${id}-h`);
    wrap.appendChild(el("table", { class: "matrix ratio" }, el("thead", {}, head), body));
    sub.appendChild(wrap);
    view.appendChild(sub);
  });
  return view;
}

function ratioSection(runs, perGpuView) {
  const s = section("ratios", "Ratios");
  s.appendChild(ratioView(runs, false));
  if (perGpuView) s.appendChild(ratioView(runs, true));
  return s;
}

async function main() {
  const status = document.getElementById("pick-status");
  const result = document.getElementById("pick-result");
  const asked = (new URLSearchParams(location.search).get("runs") || "").split(",").filter((id) => id !== "");
  const ids = Array.from(new Set(asked));
  if (ids.length < 2 || ids.length > 6) {
    status.textContent = "Choose 2 to 6 runs on the index and open them here.";
    status.appendChild(document.createTextNode(" "));
    status.appendChild(el("a", { href: "../index.html", text: "Back to the index" }));
    return;
  }
  const bad = ids.filter((id) => !RUN_ID.test(id));
  if (bad.length > 0) {
    status.textContent = `Not a run id: ${bad.join(", ")}.`;
    return;
  }
  const runs = await Promise.all(ids.map(loadRun));
  const missing = ids.filter((id, i) => runs[i] === null);
  if (missing.length > 0) {
    status.textContent = `No run ${missing.join(", ")} on this site.`;
    return;
  }
  document.getElementById("pick-title").textContent = runs.map((r) => r.model).join(" vs ");
  document.title = `${runs.map((r) => r.model).join(" vs ")} · Comparison`;
  status.textContent = "";
  status.replaceWith(el("ul", { class: "legend-list", id: "pick-status", "aria-label": "Runs compared" },
    ...runs.map((r, i) => el("li", {},
      el("span", { class: `swatch marker-${MARKERS[i % MARKERS.length]}`, style: `color:${PALETTE[i % PALETTE.length]}`, "aria-hidden": "true" }),
      el("a", { href: `../runs/${r.id}/index.html`, text: r.model }), " ",
      el("span", { class: "muted", text: r.hardware })))));
  // Per GPU changes the comparison only when the runs' GPU counts differ.
  const perGpuView = runs.some((r) => r.gpu_count !== runs[0].gpu_count);
  const toggle = el("button", { type: "button", class: "per-gpu", "data-per-gpu-toggle": "", "aria-pressed": "false", hidden: "" }, "Show tok/s per GPU");
  if (perGpuView) result.appendChild(el("p", {}, toggle));
  [setupSection(runs), prefillSection(runs), decodeSection(runs, perGpuView), ratioSection(runs, perGpuView)]
    .filter((s) => s !== null)
    .forEach((s) => result.appendChild(s));
  result.querySelectorAll("[data-gpu-view=per-gpu]").forEach((v) => { v.hidden = true; });
  if (perGpuView && window.sitegenPerGpu) window.sitegenPerGpu(toggle);
  result.dataset.ready = "true";
  if (window.sitegenSortable) result.querySelectorAll("table.sortable").forEach(window.sitegenSortable);
}

main();
