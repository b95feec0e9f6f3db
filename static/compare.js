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

function tokPerS(v) {
  return v.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
}

// A cell's throughput if it can be compared, else the words for why not.
function validTotal(cell) {
  if (!cell) return { why: "not measured" };
  const [, , , status, words, total] = cell;
  if (status === "valid") return total === null || total === undefined ? { why: "not measured" } : { total };
  return { why: words };
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

function prefillSection(runs) {
  const contexts = sorted(runs.flatMap((r) => r.prefill.map((p) => p[1])));
  if (contexts.length === 0) return null;
  const s = section("prefill", "Prefill", "Prompt tok/s (and TTFT) of each run by context length, side by side.");
  const label = (ctx) => runs.flatMap((r) => r.prefill).find((p) => p[1] === ctx)[0];
  const head = el("tr", {}, el("th", { scope: "col", text: "Context" }), ...runs.map((r) => el("th", { scope: "col", text: r.model })));
  const body = el("tbody", {}, ...contexts.map((ctx) => el("tr", {}, el("td", { "data-sort": String(ctx), text: label(ctx) }),
    ...runs.map((r) => {
      const p = r.prefill.find((q) => q[1] === ctx);
      return p ? el("td", { "data-sort": String(p[2]), text: `${tokPerS(p[2])} (${Math.round(p[3]).toLocaleString("en-US")} ms TTFT)` })
        : el("td", { text: DASH });
    }))));
  const wrap = scrollRegion("prefill-caption");
  wrap.appendChild(el("table", { class: "data sortable" }, el("thead", {}, head), body));
  s.appendChild(wrap);
  return s;
}

function decodeSection(runs) {
  const contexts = sorted(runs.flatMap((r) => r.decode.map((c) => c[0])));
  if (contexts.length === 0) return null;
  const s = section("decode", "Sustained decode by concurrency", "Total tok/s of each run at each context, by requests at once; a status where a run has no valid figure.");
  contexts.forEach((ctx) => {
    const label = runs.flatMap((r) => r.decode).find((c) => c[0] === ctx)[1];
    const levels = sorted(runs.flatMap((r) => r.decode.filter((c) => c[0] === ctx).map((c) => c[2])));
    const id = `decode-${ctx}`;
    const sub = el("section", { id, "aria-labelledby": `${id}-h` }, el("h3", { id: `${id}-h`, text: `${label} context` }));
    const head = el("tr", {}, el("th", { scope: "col", text: "Requests at once" }), ...runs.map((r) => el("th", { scope: "col", text: r.model })));
    const body = el("tbody", {}, ...levels.map((n) => el("tr", {}, el("td", { text: String(n) }),
      ...runs.map((r) => {
        const v = validTotal(cellOf(r, ctx, n));
        return v.why === undefined ? el("td", { "data-sort": String(v.total), text: tokPerS(v.total) }) : el("td", { text: v.why });
      }))));
    const wrap = scrollRegion(`${id}-h`);
    wrap.appendChild(el("table", { class: "data" }, el("thead", {}, head), body));
    sub.appendChild(wrap);
    s.appendChild(sub);
  });
  return s;
}

function ratioSection(runs) {
  const s = section("ratios", "Ratios", "Total tok/s of a run divided by the first run's, cell by cell. Above 1 (blue) the run is faster, below 1 (orange) slower. A dash means at least one side has no valid figure, and the cell says why.");
  const a = runs[0];
  runs.slice(1).forEach((b) => {
    const id = `ratio-${b.id}`;
    const contexts = sorted([a, b].flatMap((r) => r.decode.map((c) => c[0])));
    const levels = sorted([a, b].flatMap((r) => r.decode.map((c) => c[2])));
    const label = (ctx) => [a, b].flatMap((r) => r.decode).find((c) => c[0] === ctx)[1];
    const sub = el("section", { id, "aria-labelledby": `${id}-h` }, el("h3", { id: `${id}-h`, text: `${b.model} / ${a.model}` }));
    const head = el("tr", {}, el("th", { scope: "col", text: "Context" }), ...levels.map((n) => el("th", { scope: "col", text: String(n) })));
    const body = el("tbody", {}, ...contexts.map((ctx) => el("tr", {}, el("th", { scope: "row", text: label(ctx) }),
      ...levels.map((n) => {
        const r = ratio(a, b, ctx, n);
        if (r.why !== undefined) {
          return el("td", { class: "r none" }, el("span", { class: "ratio-value", text: DASH }), el("span", { class: "why", text: r.why }));
        }
        return el("td", { class: "r", style: `background-color:${ratioColour(r.value)};color:#000000` },
          el("span", { class: "ratio-value", text: `${r.value.toFixed(2)}×` }));
      }))));
    const wrap = scrollRegion(`${id}-h`);
    wrap.appendChild(el("table", { class: "matrix ratio" }, el("thead", {}, head), body));
    sub.appendChild(wrap);
    s.appendChild(sub);
  });
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
  runs.forEach((r, i) => {
    status.appendChild(el("a", { href: `../runs/${r.id}/index.html`, text: r.model }));
    status.appendChild(document.createTextNode(` ${r.hardware}${i < runs.length - 1 ? " · " : ""}`));
  });
  [setupSection(runs), prefillSection(runs), decodeSection(runs), ratioSection(runs)]
    .filter((s) => s !== null)
    .forEach((s) => result.appendChild(s));
  result.dataset.ready = "true";
  if (window.sitegenSortable) result.querySelectorAll("table.sortable").forEach(window.sitegenSortable);
}

main();
