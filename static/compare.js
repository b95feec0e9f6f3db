// sitegen: the comparison of any runs, built in the browser from each run's
// runs/<id>/data.js (script tags, so it works from file:// and offline, and
// only the chosen runs are loaded). Every figure, word, colour and label
// comes from Rust: the runs' data.js carry their figures already written,
// compare/definitions.js the words, palette, ratio colour scale and limits.
// This script only arranges them; the one thing it computes is the ratio of
// two runs chosen here, written by the one rounding rule (`grouped` below).
"use strict";

const loaded = {};
// compare/definitions.js, which the page loads before this script.
const defs = typeof window !== "undefined" ? window.sitegenDefinitions : null;
if (typeof window !== "undefined") {
  window.sitegenRun = (run) => { loaded[run.id] = run; };
}

// ------------------------------------------------------------ pure parts
// (exported for tests/browser/conformance.mjs, which holds them to what the
// pre-rendered pages show)

// `template` with each {slot} replaced, as src/render/compare_words.rs fills it.
function fill(template, slots) {
  return Object.entries(slots).reduce((text, [k, v]) => text.split(`{${k}}`).join(String(v)), template);
}

// The one rounding rule of every figure (src/model/format.rs `grouped`, operation
// for operation): v × 10^decimals rounded to the nearest integer, halves away
// from zero, with thousands separators: grouped(1412.44, 1) is "1,412.4".
function grouped(v, decimals) {
  const scaled = Math.round(Math.abs(v) * 10 ** decimals);
  const digits = String(scaled).padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const sign = v < 0 && scaled > 0 ? "-" : "";
  return decimals > 0 ? `${sign}${whole}.${digits.slice(digits.length - decimals)}` : `${sign}${whole}`;
}

// "1.13×" (src/model/format.rs `ratio`).
function ratioText(r) {
  return `${grouped(r, 2)}×`;
}

// The step of the ratio colour scale (src/render/colour.rs `ratio_step`).
function ratioStep(d, r) {
  const t = Math.max(-1, Math.min(1, Math.log2(r)));
  return Math.round((t + 1) * d.ratio_steps);
}

// Chart tick labels of throughput (src/model/format.rs `tok_per_s_short`):
// "4,764" below ten thousand, "18.9K" from it.
function tickLabel(v) {
  if (Math.round(Math.abs(v)) >= 10000) return `${grouped(v / 1000, 1).replace(/\.0$/, "")}K`;
  return grouped(v, 0);
}

// A ratio cell's shade (src/render/colour.rs `ratio_shade`): its direction
// as a class and its strength as --shade; static/style.css colours it.
function ratioShade(d, r) {
  const step = ratioStep(d, r) - d.ratio_steps;
  return { class: step > 0 ? "faster" : step < 0 ? "slower" : "even", style: `--shade:${grouped(Math.abs(step) / d.ratio_steps, 2)}` };
}

function cellOf(run, tokens, n) {
  return run.decode.find((c) => c.tokens === tokens && c.concurrency === n);
}

function basisOf(perGpu) {
  return perGpu ? "per_gpu" : "total";
}

// b's figure over a's at one cell, or why there is none, worded as
// src/render/compare_words.rs `no_ratio` words it. `figure` is "total" or
// "per_gpu" (the headline throughput) or the key of another figure in
// `d.figures` (src/model/figure.rs: "energy").
function ratioCell(d, a, b, tokensA, tokensB, n, figure) {
  const w = d.words;
  const other = d.figures.find((f) => f.key === figure);
  const ca = tokensA === null ? undefined : cellOf(a, tokensA, n);
  const cb = tokensB === null ? undefined : cellOf(b, tokensB, n);
  // As src/compare/ratio.rs `valid`: a cell that is not Valid says why; a
  // Valid one without another figure lacks it as the figure's definition says.
  const why = (c) => {
    if (!c) return w.not_measured;
    if (!other || c.why_not !== null) return c.why_not;
    return (c.values || {})[figure] !== undefined ? null : other.not_recorded;
  };
  const [x, y] = [why(ca), why(cb)];
  if (x === null && y === null) {
    if (other) {
      const r = cb.values[figure] / ca.values[figure];
      // Better takes the colour of faster (src/render/compare_page/ratios.rs).
      return { text: ratioText(r), ...ratioShade(d, other.lower_is_better ? 1 / r : r) };
    }
    if (!(ca.comparable.total > 0)) return { why: fill(w.no_ratio_zero_base, { a: a.model }), zeroBase: true };
    const total = cb.comparable.total / ca.comparable.total;
    // As src/compare/ratio.rs `Basis::ratio`, operation for operation.
    const r = figure === "per_gpu" ? (total / Math.max(b.gpu_count, 1)) / (1 / Math.max(a.gpu_count, 1)) : total;
    // Within the noise of both cells (src/compare/ratio.rs `verdict`): its 95%
    // interval, from each cell's (data.js `noise`), includes 1.
    if (ca.noise !== undefined && cb.noise !== undefined
      && Math.abs(Math.log(total)) <= Math.sqrt(ca.noise ** 2 + cb.noise ** 2)) {
      return { text: ratioText(r), class: "even", style: null, noise: w.within_noise };
    }
    return { text: ratioText(r), ...ratioShade(d, r) };
  }
  const sides = [x, y];
  if (x !== null && y !== null) {
    return { why: x === y ? fill(w.no_ratio_both, { x }) : fill(w.no_ratio_each, { a: a.model, x, b: b.model, y }), sides };
  }
  return { why: x !== null ? fill(w.no_ratio_one, { name: a.model, x }) : fill(w.no_ratio_one, { name: b.model, x: y }), sides };
}

// Each run's name on the page (src/model/labels.rs `distinct_names`): its model,
// and where runs share a model, the first of their traits (data.js
// `traits`: engine, quantization, hardware, date, id) that differs between
// all of them.
function distinctNames(runs) {
  const byModel = new Map();
  runs.forEach((r, i) => byModel.set(r.model, [...(byModel.get(r.model) || []), i]));
  const names = runs.map((r) => r.model);
  byModel.forEach((same) => {
    if (same.length < 2) return;
    const tell = runs[same[0]].traits.findIndex((_, t) => new Set(same.map((i) => runs[i].traits[t])).size === same.length);
    same.forEach((i) => {
      const value = tell >= 0 ? runs[i].traits[tell] : "";
      names[i] = `${runs[i].model} (${value !== "" ? value : runs[i].id})`;
    });
  });
  return names;
}

function sorted(values) {
  return Array.from(new Set(values)).sort((p, q) => p - q);
}

// Every (card, field) any run has, card by card in order of appearance, with
// each run's value and whether they differ (src/render/compare_page/setup.rs).
function setupRows(d, runs) {
  const cards = [];
  runs.forEach((r) => r.setup.forEach((v) => { if (!cards.includes(v.card)) cards.push(v.card); }));
  const keys = [];
  cards.forEach((card) => runs.forEach((r) => r.setup.filter((v) => v.card === card).forEach((v) => {
    if (!keys.some(([c, f]) => c === v.card && f === v.field)) keys.push([v.card, v.field]);
  })));
  return keys.map(([card, field]) => {
    const values = runs.map((r) => (r.setup.find((v) => v.card === card && v.field === field) || { value: d.dash }).value);
    // Three states (src/render/compare_page/setup.rs `SetupState`): a run that does
    // not state a value is no difference.
    const stated = values.filter((v) => v !== d.dash);
    const state = stated.some((v) => v !== stated[0]) ? "differs" : stated.length < values.length ? "not_stated" : "same";
    return { card, field, values, state };
  });
}

// Decode contexts at least two of the runs measured, near ones grouped
// (src/compare/grid.rs `shared_context_groups`): run by run, each context joins
// a group of the same context first, else the nearest group within
// d.near_context without one of that run's. Each group: every run's context
// there or null, in order of the smallest.
function sharedContextGroups(d, runs) {
  const groups = [];
  runs.forEach((r, i) => {
    const left = [];
    sorted(r.decode.map((c) => c.tokens)).forEach((t) => {
      const same = groups.find((g) => g.anchor === t && g.members[i] === null);
      if (same) same.members[i] = t; else left.push(t);
    });
    left.forEach((t) => {
      const gap = (anchor) => Math.abs(anchor - t) / Math.max(anchor, t);
      const near = groups.filter((g) => g.members[i] === null && gap(g.anchor) <= d.near_context)
        .sort((p, q) => gap(p.anchor) - gap(q.anchor))[0];
      if (near) { near.members[i] = t; return; }
      const members = runs.map(() => null);
      members[i] = t;
      groups.push({ anchor: t, members });
    });
  });
  const tokens = (m) => Math.min(...m.filter((t) => t !== null));
  return groups.map((g) => g.members).filter((m) => m.filter((t) => t !== null).length >= 2)
    .sort((p, q) => tokens(p) - tokens(q));
}

// A group's smallest context (its order and id), and its label: "8K", or
// "256K / 251K" where the runs' contexts differ (in run order).
function groupTokens(group) {
  return Math.min(...group.filter((t) => t !== null));
}

function groupLabel(runs, group) {
  return Array.from(new Set(group.filter((t) => t !== null))).map((t) => contextLabelOf(runs, t)).join(" / ");
}

function contextLabelOf(runs, tokens) {
  for (const r of runs) {
    const c = r.decode.find((x) => x.tokens === tokens) || r.prefill.find((x) => x.tokens === tokens);
    if (c) return c.context;
  }
  return String(tokens);
}

// The rows of a decode chart's table: each level, each run's figure as
// written, at the run's own context of the group.
function decodeRows(d, runs, group, perGpu) {
  const levels = sorted(runs.flatMap((r, i) => r.decode.filter((c) => c.tokens === group[i]).map((c) => c.concurrency)));
  return levels.map((n) => [String(n), ...runs.map((r, i) => {
    const c = group[i] === null ? undefined : cellOf(r, group[i], n);
    return c ? c.shown[basisOf(perGpu)] : d.dash;
  })]);
}

function prefillRows(d, runs) {
  const contexts = sorted(runs.flatMap((r) => r.prefill.map((p) => p.tokens)));
  return contexts.map((t) => [contextLabelOf(runs, t), ...runs.map((r) => {
    const p = r.prefill.find((q) => q.tokens === t);
    return p ? p.shown : d.dash;
  })]);
}

// Pairs two runs' contexts as src/compare/grid.rs `pair_contexts`: equal ones,
// then each left over of a with the nearest left over of b within
// d.near_context; the rest alone. In order of the smaller context.
function pairContexts(d, as, bs) {
  const pairs = [];
  let leftB = bs.filter((y) => !as.includes(y));
  as.forEach((x) => {
    if (bs.includes(x)) { pairs.push({ a: x, b: x }); return; }
    const gap = (y) => Math.abs(x - y) / Math.max(x, y);
    const near = leftB.filter((y) => gap(y) <= d.near_context).sort((p, q) => gap(p) - gap(q))[0];
    if (near !== undefined) leftB = leftB.filter((z) => z !== near);
    pairs.push({ a: x, b: near === undefined ? null : near });
  });
  leftB.forEach((y) => pairs.push({ a: null, b: y }));
  const tokens = (p) => (p.a !== null && p.b !== null ? Math.min(p.a, p.b) : p.a !== null ? p.a : p.b);
  return pairs.sort((p, q) => tokens(p) - tokens(q));
}

function pairLabel(runs, p) {
  if (p.a !== null && p.b !== null && p.a !== p.b) return `${contextLabelOf(runs, p.a)} / ${contextLabelOf(runs, p.b)}`;
  return contextLabelOf(runs, p.a !== null ? p.a : p.b);
}

// Why a row or column of a matrix has no ratio, per run and cell by cell
// where that differs (src/compare/grid.rs `side_states`, src/render/compare_page/ratios.rs
// `side_notes`): "GLM valid at 1–4 requests, over capacity at 8–128
// requests; Step not measured". `cells` are [grid position, cell], `labels`
// name the positions for each run (its own contexts), `at` is the template
// of one state.
function sideReasons(d, a, b, cells, labels, at) {
  const w = d.words;
  const word = (c, i) => {
    if (c.why === undefined) return w.valid;
    if (c.zeroBase) return i === 0 ? w.zero_tok_per_s : w.valid;
    return c.sides[i] === null ? w.valid : c.sides[i];
  };
  const sides = [[], []];
  cells.forEach(([pos, c]) => {
    // A cell neither run measured says nothing about either.
    if (c.sides && c.sides[0] === w.not_measured && c.sides[1] === w.not_measured) return;
    sides.forEach((states, i) => {
      const x = word(c, i);
      const found = states.find((s) => s.word === x);
      if (!found) { states.push({ word: x, stretches: [[pos, pos]] }); return; }
      const last = found.stretches[found.stretches.length - 1];
      if (last[1] + 1 === pos) last[1] = pos; else found.stretches.push([pos, pos]);
    });
  });
  return [a.model, b.model].map((name, i) => {
    const states = sides[i];
    if (!states.length) return null;
    const own = labels[i];
    const stretch = ([first, last]) => (last === first ? own[first]
      : last - first === 1 ? `${own[first]}, ${own[last]}` : `${own[first]}–${own[last]}`);
    const words = states.length === 1 ? states[0].word : states.map((s) => {
      const list = s.stretches.map(stretch).join(", ");
      return fill(at, { state: s.word, cells: list, requests: list === "1" ? w.request : w.requests });
    }).join(", ");
    return fill(w.side_states, { name, states: words });
  }).filter((x) => x !== null).join("; ");
}

// A ratio matrix of b against a (src/render/compare_page/ratios.rs
// `ratio_matrix_between`) of `figure` ("total", "per_gpu" or another's key):
// contexts paired within 2%, every level either measured; rows and columns
// without a ratio left out and said in a line.
function ratioMatrix(d, a, b, figure) {
  const contexts = (r) => sorted(r.decode.map((c) => c.tokens));
  const pairs = pairContexts(d, contexts(a), contexts(b));
  const allLevels = sorted([a, b].flatMap((r) => r.decode.map((c) => c.concurrency)));
  const grid = pairs.map((p) => allLevels.map((n) => ratioCell(d, a, b, p.a, p.b, n, figure)));
  const keep = allLevels.map((_, l) => grid.some((row) => row[l].why === undefined));
  const leftOut = [];
  const rows = [];
  // Each run's rows by its own contexts: GLM's "256K" is Step's "251K".
  const own = (p, t) => (t === null ? pairLabel([a, b], p) : contextLabelOf([a, b], t));
  const rowLabels = [pairs.map((p) => own(p, p.a)), pairs.map((p) => own(p, p.b))];
  const levelLabels = [allLevels.map(String), allLevels.map(String)];
  const rowHasRatio = grid.map((row) => row.some((c) => c.why === undefined));
  pairs.forEach((p, r) => {
    const label = pairLabel([a, b], p);
    if (!rowHasRatio[r]) {
      const reasons = sideReasons(d, a, b, grid[r].map((c, l) => [l, c]), levelLabels, d.words.state_at_levels);
      leftOut.push(fill(d.words.no_ratio_at_row, { context: label, reasons }));
      return;
    }
    rows.push({ context: label, cells: grid[r].filter((_, l) => keep[l]) });
  });
  allLevels.forEach((n, l) => {
    if (keep[l]) return;
    // The rows drawn: a row left out has a note of its own.
    const cells = grid.map((row, r) => [r, row[l]]).filter(([r]) => rowHasRatio[r]);
    const reasons = sideReasons(d, a, b, cells, rowLabels, d.words.state_at_contexts) || d.words.neither_at_rows_shown;
    leftOut.push(fill(d.words.no_ratio_at_level, { n, reasons }));
  });
  const near = pairs.filter((p) => p.a !== null && p.b !== null && p.a !== p.b).map((p) => pairLabel([a, b], p));
  // Nothing to compare anywhere: one line, not one per row and level.
  const none = rows.length === 0;
  return {
    levels: allLevels.filter((_, l) => keep[l]),
    rows,
    left_out: none ? [fill((d.figures.find((f) => f.key === figure) || d.words).no_ratio_anywhere, { a: a.model, b: b.model })] : leftOut,
    near_note: near.length && !none ? fill(d.words.near_contexts, { rows: near.join(", "), a: a.model, b: b.model }) : null,
  };
}

// -------------------------------------------------------------- the page

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

// The setup as the pre-rendered page shows it: the rows that differ, then
// the rest folded away.
function setupSection(runs) {
  const w = defs.words;
  const s = section("setup", w.setup, w.setup_differs_caption);
  const table = (rows) => {
    const head = el("tr", {}, el("th", { scope: "col", text: w.card }), el("th", { scope: "col", text: w.field }),
      ...runs.map((r) => el("th", { scope: "col", text: r.model })));
    const body = el("tbody", {}, ...rows.map(({ card, field, values, state }) => {
      const th = el("th", { scope: "row", text: field });
      const differs = state === "differs";
      if (differs) th.append(" ", el("span", { class: "differs-mark", text: w.differs }));
      if (state === "not_stated") th.append(" ", el("span", { class: "muted not-stated", text: w.not_stated }));
      return el("tr", differs ? { class: "differs" } : {}, el("td", { text: card }), th, ...values.map((v) => el("td", { text: v })));
    }));
    return el("table", { class: "data setup" }, el("thead", {}, head), body);
  };
  const rows = setupRows(defs, runs);
  const differing = rows.filter((r) => r.state === "differs");
  const rest = rows.filter((r) => r.state !== "differs");
  if (differing.length > 0) {
    const wrap = scrollRegion("setup-caption");
    wrap.appendChild(table(differing));
    s.appendChild(wrap);
  }
  if (rest.length > 0) {
    const wrap = el("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": w.setup }, table(rest));
    s.appendChild(el("details", { class: "numbers setup-rest" }, el("summary", { text: fill(w.setup_same, { n: rest.length }) }), wrap));
  }
  return s;
}

const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, String(v)));
  children.forEach((c) => e.appendChild(typeof c === "string" ? document.createTextNode(c) : c));
  return e;
}

function marker(style, x, y) {
  const colour = defs.palette[style % defs.palette.length];
  const filled = { fill: colour };
  switch (defs.markers[style % defs.markers.length]) {
    case "circle": return svgEl("circle", { cx: x, cy: y, r: 4, ...filled });
    case "triangle": return svgEl("polygon", { points: `${x},${y - 5} ${x + 5},${y + 4} ${x - 5},${y + 4}`, ...filled });
    case "square": return svgEl("rect", { x: x - 4, y: y - 4, width: 8, height: 8, ...filled });
    case "diamond": return svgEl("polygon", { points: `${x},${y - 5} ${x + 5},${y} ${x},${y + 5} ${x - 5},${y}`, ...filled });
    case "cross": return svgEl("path", { d: `M${x - 4} ${y - 4}L${x + 4} ${y + 4}M${x - 4} ${y + 4}L${x + 4} ${y - 4}`, stroke: colour, "stroke-width": 2 });
    default: return svgEl("circle", { cx: x, cy: y, r: 4, fill: "none", stroke: colour, "stroke-width": 2 });
  }
}

// Requests at once on an axis: whole numbers only, as src/model/format.rs
// `count_tick` (a lone level's axis reaches 0.5 request, which is unlabelled).
function countTick(v) {
  return Number.isInteger(v) ? String(v) : "";
}

// A step of 1, 2 or 5 times a power of ten giving about `count` ticks to `max`.
function niceStep(max, count) {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= raw);
}

// The pre-rendered pages' overlaid chart, drawn here: one line with markers
// per run (style = run order), x on a log2 scale labelled at whole powers of
// two (`xLabel` names a tick), y linear from 0 to `yTop` when charts share
// their y-axis, else to the series' largest value. Drawn wide and narrow
// (sizes from Rust), as the pre-rendered pages draw every chart; the page
// shows the one that fits the screen.
function lineChart(title, size, x, yLabel, series, yTop) {
  return [[size.wide, "chart wide", 12], [size.narrow, "chart narrow", 6]]
    .map(([frame, cls, maxTicks]) => drawLines(title, frame, cls, maxTicks, x, yLabel, series, yTop));
}

function drawLines(title, [width, height], cls, maxTicks, x, yLabel, series, yTop) {
  const points = series.flatMap((s) => s.points);
  const logs = points.map(([px]) => Math.log2(px));
  let [x0, x1] = [Math.min(...logs), Math.max(...logs)];
  if (x1 - x0 < 1e-9) { x0 -= 1; x1 += 1; }
  const xPad = (x1 - x0) * 0.06;
  [x0, x1] = [x0 - xPad, x1 + xPad];
  const yMax = (yTop || Math.max(...points.map(([, py]) => py), 1e-9)) * 1.06;
  const step = niceStep(yMax, 5);
  const box = { left: 64, right: width - 12, top: 12, bottom: height - 52 };
  const sx = (v) => box.left + ((Math.log2(v) - x0) / (x1 - x0)) * (box.right - box.left);
  const sy = (v) => box.bottom - (v / yMax) * (box.bottom - box.top);
  const text = (attrs, words) => svgEl("text", { "font-family": "sans-serif", "font-size": defs.font_size, fill: "#000000", ...attrs }, words);
  const grid = (attrs) => svgEl("line", { stroke: "#000000", opacity: 0.12, "stroke-width": 1, ...attrs });
  const root = svgEl("svg", { class: cls, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": title },
    svgEl("title", {}, title));
  const [first, last] = [Math.ceil(x0), Math.floor(x1)];
  const every = Math.ceil((last - first + 1) / maxTicks);
  for (let k = first; k <= last; k += 1) {
    const px = sx(2 ** k);
    root.appendChild(grid({ x1: px, y1: box.bottom, x2: px, y2: box.top }));
    if ((k - first) % every === 0) root.appendChild(text({ x: px, y: box.bottom + 18, "text-anchor": "middle" }, x.tick(2 ** k)));
  }
  // A label that rounds to the one below it is left out: no axis repeats
  // a label (src/render/charts/mod.rs `distinct_tick_count`).
  let below = null;
  for (let v = 0; v <= yMax; v += step) {
    root.appendChild(grid({ x1: box.left, y1: sy(v), x2: box.right, y2: sy(v) }));
    const label = tickLabel(v);
    if (label !== below) root.appendChild(text({ x: box.left - 6, y: sy(v) + 5, "text-anchor": "end" }, label));
    below = label;
  }
  root.appendChild(text({ x: (box.left + box.right) / 2, y: height - 8, "text-anchor": "middle" }, x.label));
  root.appendChild(text({ x: 16, y: (box.top + box.bottom) / 2, "text-anchor": "middle", transform: `rotate(270, 16, ${(box.top + box.bottom) / 2})` }, yLabel));
  series.forEach((s) => {
    const xy = s.points.map(([px, py]) => [sx(px), sy(py)]);
    if (xy.length > 1) {
      root.appendChild(svgEl("polyline", { points: xy.map((p) => p.join(",")).join(" "), fill: "none", stroke: defs.palette[s.style % defs.palette.length], "stroke-width": 3 }));
    }
    xy.forEach(([px, py]) => root.appendChild(marker(s.style, px, py)));
  });
  return root;
}

// A chart with its caption and, folded under it, the table of its numbers.
function chartKey(runs) {
  return el("ul", { class: "legend-list chart-key", "aria-label": defs.words.chart_key }, ...runs.map((r, i) => el("li", {},
    el("span", { class: `swatch marker-${defs.markers[i % defs.markers.length]}`, style: `color:${defs.palette[i % defs.palette.length]}`, "aria-hidden": "true" }),
    r.model)));
}

function chartBlock(id, heading, svgs, caption, columns, rows, runs) {
  const w = defs.words;
  const figure = el("figure", { class: "chart-box", "aria-labelledby": `${id}-caption` }, chartKey(runs), ...svgs,
    el("figcaption", { id: `${id}-caption`, text: caption }));
  const wrap = el("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": fill(w.numbers_label, { heading }) },
    el("table", { class: "data" },
      el("thead", {}, el("tr", {}, ...columns.map((c) => el("th", { scope: "col", text: c })))),
      el("tbody", {}, ...rows.map((row) => el("tr", {}, ...row.map((v) => el("td", { text: v })))))));
  return [figure, el("details", { class: "numbers" }, el("summary", { text: w.numbers }), wrap)];
}

function contextTick(t) {
  const known = defs.context_ticks.find(([tokens]) => tokens === t);
  return known ? known[1] : String(t);
}

function prefillSection(runs) {
  const w = defs.words;
  const rows = prefillRows(defs, runs);
  if (rows.length === 0) return null;
  const s = section("prefill", w.prefill);
  const svg = lineChart(w.prefill_title, defs.prefill_size, { label: w.prefill_x, tick: contextTick }, w.prefill_y,
    runs.map((r, style) => ({ style, points: r.prefill.map((p) => [p.tokens, p.tok_per_s]) })));
  s.append(...chartBlock("prefill-chart", w.prefill, svg, w.prefill_caption, [w.context, ...runs.map((r) => r.model)], rows, runs));
  return s;
}

function decodeView(runs, perGpu) {
  const w = defs.words;
  const basis = basisOf(perGpu);
  const figure = perGpu ? w.figure_per_gpu : w.figure_total;
  const view = el("div", { "data-gpu-view": perGpu ? "per-gpu" : "total" },
    el("p", { class: "caption", text: perGpu ? w.decode_caption_per_gpu : w.decode_caption_total }));
  const groups = sharedContextGroups(defs, runs);
  // One y-axis for every context, as on the pre-rendered pages.
  const pointsAt = (r, tokens) => (tokens === null ? [] : r.decode.filter((c) => c.tokens === tokens && c.comparable !== null).map((c) => [c.concurrency, c.comparable[basis]]));
  const yTop = Math.max(...groups.flatMap((g) => runs.flatMap((r, i) => pointsAt(r, g[i]).map(([, y]) => y))), 1e-9);
  groups.forEach((group) => {
    const tokens = groupTokens(group);
    const context = groupLabel(runs, group);
    const id = `decode-${tokens}${perGpu ? "-per-gpu" : ""}`;
    const heading = fill(w.decode_heading, { context });
    const svg = lineChart(fill(w.decode_title, { context, figure }), defs.decode_size,
      { label: w.decode_x, tick: countTick }, figure,
      runs.map((r, style) => ({ style, points: pointsAt(r, group[style]) })), yTop);
    const sub = el("section", { id, "aria-labelledby": `${id}-h`, class: "small-multiple" },
      el("h3", { id: `${id}-h`, text: heading }));
    sub.append(...chartBlock(`${id}-chart`, heading, svg,
      fill(perGpu ? w.decode_chart_caption_per_gpu : w.decode_chart_caption_total, { context }),
      [w.requests_at_once, ...runs.map((r) => r.model)], decodeRows(defs, runs, group, perGpu), runs));
    view.appendChild(sub);
  });
  return view;
}

function decodeSection(runs, perGpuView) {
  if (sharedContextGroups(defs, runs).length === 0) return null;
  const w = defs.words;
  const s = section("decode", w.decode);
  s.classList.add("multiples");
  s.appendChild(decodeView(runs, false));
  if (perGpuView) s.appendChild(decodeView(runs, true));
  return s;
}

// One ratio matrix as the pre-rendered templates/ratio_matrix.html draws it.
function matrixSection(id, heading, m, key) {
  const w = defs.words;
  const sub = el("section", { id, "aria-labelledby": `${id}-h` }, el("h3", { id: `${id}-h`, text: heading }));
  const head = el("tr", {}, el("th", { scope: "col", text: w.context }), ...m.levels.map((n) => el("th", { scope: "col", text: String(n) })));
  const body = el("tbody", {}, ...m.rows.map((row) => el("tr", {}, el("th", { scope: "row", text: row.context }),
    ...row.cells.map((c) => (c.why !== undefined
      ? el("td", { class: "r none" }, el("span", { class: "ratio-value", text: defs.dash }), el("span", { class: "why", text: c.why }))
      : el("td", c.style ? { class: `r ${c.class}`, style: c.style } : { class: `r ${c.class}` }, el("span", { class: "ratio-value", text: c.text }),
        ...(c.noise ? [el("span", { class: "noise-note", text: c.noise })] : [])))))));
  if (m.rows.length > 0) {
    const wrap = scrollRegion(`${id}-h`);
    wrap.classList.add("fit");
    wrap.appendChild(el("table", { class: "matrix ratio" }, el("thead", {}, head), body));
    sub.appendChild(wrap);
    sub.appendChild(el("p", { class: "ratio-key" }, el("span", { text: key[0] }),
      el("span", { class: "bar", "aria-hidden": "true" }), el("span", { text: key[1] }), el("span", { class: "muted", text: key[2] })));
  }
  if (m.near_note) sub.appendChild(el("p", { class: "note", text: m.near_note }));
  m.left_out.forEach((line) => sub.appendChild(el("p", { class: "note", text: line })));
  return sub;
}

function ratioView(runs, perGpu) {
  const w = defs.words;
  const view = el("div", { "data-gpu-view": perGpu ? "per-gpu" : "total" },
    el("p", { class: "caption", text: perGpu ? w.ratios_caption_per_gpu : w.ratios_caption_total }));
  const a = runs[0];
  if (!perGpu && a.gpu_count > 1 && runs.every((r) => r.gpu_count === a.gpu_count)) {
    view.appendChild(el("p", { class: "note", text: fill(w.shared_gpus, { n: a.gpu_count }) }));
  }
  runs.slice(1).forEach((b) => {
    const id = `ratio-${b.id}${perGpu ? "-per-gpu" : ""}`;
    const heading = fill(perGpu ? w.ratio_heading_per_gpu : w.ratio_heading, { a: a.model, b: b.model });
    view.appendChild(matrixSection(id, heading, ratioMatrix(defs, a, b, basisOf(perGpu)), defs.ratio_key));
  });
  return view;
}

function ratioSection(runs, perGpuView) {
  const w = defs.words;
  const s = section("ratios", w.ratios);
  s.appendChild(ratioView(runs, false));
  if (perGpuView) s.appendChild(ratioView(runs, true));
  return s;
}

// Where a run's readings of `figure` came from, or that it has none
// (src/render/compare_words.rs `sources_note`).
function sourcesNote(figure, r) {
  const source = (r.sources || {})[figure.key];
  return source !== undefined
    ? fill(figure.sources_line, { name: r.model, sources: source })
    : fill(figure.no_sources_line, { name: r.model });
}

// A figure beyond the headline, each run against the first, when any run
// has it (src/render/compare_page/ratios.rs `figure_section`).
function figureSection(runs, figure) {
  if (!runs.some((r) => (r.has || []).includes(figure.key))) return null;
  const s = section(figure.key, figure.heading, figure.caption);
  const a = runs[0];
  runs.slice(1).forEach((b) => {
    s.appendChild(matrixSection(`${figure.key}-${b.id}`, fill(figure.ratio_heading, { a: a.model, b: b.model }),
      ratioMatrix(defs, a, b, figure.key), figure.key_words));
  });
  runs.forEach((r) => s.appendChild(el("p", { class: "note", text: sourcesNote(figure, r) })));
  return s;
}

async function main() {
  const w = defs.words;
  const status = document.getElementById("pick-status");
  const result = document.getElementById("pick-result");
  const asked = (new URLSearchParams(location.search).get("runs") || "").split(",").filter((id) => id !== "");
  const ids = Array.from(new Set(asked));
  if (ids.length < defs.min_runs || ids.length > defs.max_runs) return; // the page already says how
  const runIdPattern = new RegExp(defs.run_id_pattern);
  const bad = ids.filter((id) => !runIdPattern.test(id));
  // A wrong id: say which, and lead to the runs there are.
  const fail = (words) => status.replaceChildren(`${words} `, el("a", { href: "../index.html#runs", text: w.pick_from_index }), ".");
  if (bad.length > 0) {
    fail(fill(w.pick_not_run_id, { ids: bad.join(", ") }));
    return;
  }
  const runs = await Promise.all(ids.map(loadRun));
  const missing = ids.filter((id, i) => runs[i] === null);
  if (missing.length > 0) {
    fail(fill(w.pick_no_run, { ids: missing.join(", ") }));
    return;
  }
  // Runs of one model told apart in every sentence, heading and column.
  distinctNames(runs).forEach((name, i) => { runs[i].model = name; });
  const title = runs.map((r) => r.model).join(w.title_join);
  document.getElementById("pick-title").textContent = title;
  document.title = fill(w.page_title, { title });
  status.replaceWith(el("ul", { class: "legend-list", id: "pick-status", "aria-label": w.runs_compared },
    ...runs.map((r, i) => el("li", {},
      el("span", { class: `swatch marker-${defs.markers[i % defs.markers.length]}`, style: `color:${defs.palette[i % defs.palette.length]}`, "aria-hidden": "true" }),
      el("a", { href: `../runs/${r.id}/index.html`, text: r.model }), " ",
      el("span", { class: "muted", text: r.hardware })))));
  // The same runs, baseline first, have a pre-rendered page: say so first.
  const built = defs.built.find(([set]) => set.length === ids.length && set.every((id, i) => id === ids[i]));
  if (built) {
    result.appendChild(el("p", { class: "banner", role: "note" }, `${w.pick_built} `,
      el("a", { href: built[1], text: title }), "."));
  }
  // Per GPU changes the comparison only when the runs' GPU counts differ.
  const perGpuView = runs.some((r) => r.gpu_count !== runs[0].gpu_count);
  const toggle = el("button", { type: "button", class: "per-gpu", "data-per-gpu-toggle": "", "data-showing": w.per_gpu_showing_each, "aria-pressed": "false", hidden: "" }, w.per_gpu_button);
  if (perGpuView) result.appendChild(el("p", {}, toggle));
  // The answer first: the ratios, then the setup and the charts.
  [ratioSection(runs, perGpuView), ...defs.figures.map((f) => figureSection(runs, f)), setupSection(runs), prefillSection(runs), decodeSection(runs, perGpuView)]
    .filter((s) => s !== null)
    .forEach((s) => result.appendChild(s));
  result.querySelectorAll("[data-gpu-view=per-gpu]").forEach((v) => { v.hidden = true; });
  if (perGpuView && window.sitegenPerGpu) window.sitegenPerGpu(toggle);
  result.dataset.ready = "true";
  if (window.sitegenSortable) result.querySelectorAll("table.sortable").forEach(window.sitegenSortable);
}

if (typeof module !== "undefined") {
  module.exports = { countTick, distinctNames, sourcesNote, fill, grouped, ratioText, ratioStep, tickLabel, ratioCell, ratioMatrix, setupRows, decodeRows, prefillRows, sharedContextGroups, groupTokens };
} else {
  main();
}
