// Checks pages in a real headless Chromium, driven by playwright-core.
//
//   node check.mjs CONFIG.json
//
// CONFIG: {
//   "chromium": "/usr/bin/chromium",
//   "pages": [{"url": "http://127.0.0.1:PORT/prefix/", "name": "index"}, ...],
//   "checks": ["load", "axe", "phone", "sort", "copy"],
//   ("all-runs" and "filter" too, on pages that have them),
//   "screenshots": "/path/to/folder" (optional)
// }
// Prints one JSON object: { "pages": [{ "url", "problems": [..], "checked": [..] }] }.
// A problem is a string starting with its check's name ("load: ...", "axe: ...").
// The Rust test (tests/browser.rs) runs this and asserts on the report.

import { readFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { chromium } from "playwright-core";

const require = createRequire(import.meta.url);
const AXE_PATH = require.resolve("axe-core/axe.min.js");

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const checks = new Set(config.checks);

// The flags this machine needs: no background traffic to hosts it cannot reach.
const browser = await chromium.launch({
  executablePath: config.chromium,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

function sameOrigin(pageUrl, requestUrl) {
  const page = new URL(pageUrl);
  const req = new URL(requestUrl);
  if (req.protocol === "data:" || req.protocol === "about:" || req.protocol === "blob:") return true;
  if (page.protocol === "file:") return req.protocol === "file:";
  return req.origin === page.origin;
}

function screenshotName(name, variant) {
  return `${name.replace(/[^a-z0-9._-]/gi, "_")}-${variant}.png`;
}

// Opens `url` in a fresh context and records everything that went wrong while loading.
async function openPage(url, contextOptions, problems) {
  const context = await browser.newContext(contextOptions);
  // Generous limits: on a busy machine a local page can take seconds, and a
  // limit here only stops a hang; nothing is judged by how long it took.
  context.setDefaultTimeout(120_000);
  context.setDefaultNavigationTimeout(120_000);
  const page = await context.newPage();
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`load: console error: ${msg.text()}`);
  });
  page.on("pageerror", (err) => problems.push(`load: uncaught exception: ${err.message}`));
  page.on("request", (req) => {
    if (!sameOrigin(url, req.url())) problems.push(`load: request leaves the page's origin: ${req.url()}`);
  });
  page.on("requestfailed", (req) => problems.push(`load: failed request: ${req.url()} (${req.failure()?.errorText})`));
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`load: HTTP ${res.status()} for ${res.url()}`);
  });
  const response = await page.goto(url, { waitUntil: "load" });
  if (response && !response.ok()) problems.push(`load: HTTP ${response.status()} for the page itself`);
  // Let deferred scripts run and late requests show up.
  await page.waitForLoadState("networkidle").catch(() => {});
  // A comparison built in the browser is checked once it is built.
  if (url.includes("compare/index.html?runs=")) await page.waitForSelector("#pick-result[data-ready=true]");
  return { context, page };
}

async function runAxe(page, scheme, problems) {
  await page.emulateMedia({ colorScheme: scheme });
  await page.addScriptTag({ path: AXE_PATH });
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")),
    }));
  });
  for (const v of result) {
    if (v.impact === "serious" || v.impact === "critical") {
      problems.push(`axe: ${scheme}: ${v.impact} ${v.id}: ${v.help} at ${v.targets.join(", ")}`);
    }
  }
}

async function checkSort(page, problems) {
  const tables = await page.$$("table.sortable");
  for (const [t, table] of tables.entries()) {
    const buttons = await table.$$("thead th button.sort");
    const headers = await table.$$("thead th");
    if (buttons.length !== headers.length) {
      problems.push(`sort: table ${t} has ${headers.length} headers but ${buttons.length} sort buttons`);
      continue;
    }
    // Sort by every numeric column (all data-sort values numbers), both ways.
    const numericColumns = await table.evaluate((el) => {
      const rows = Array.from(el.tBodies[0].rows);
      const width = rows.length ? rows[0].cells.length : 0;
      return Array.from({ length: width }, (_, i) => {
        const keys = rows.map((r) => r.cells[i].dataset.sort).filter((k) => k !== undefined && k !== "");
        return [i, keys.length > 0 && keys.every((k) => Number.isFinite(Number(k)))];
      });
    });
    for (const [column, numeric] of numericColumns) {
      if (!numeric) continue;
      for (const direction of ["ascending", "descending"]) {
        await buttons[column].click();
        // An index that loads every run on the first sort: wait for it.
        await table.evaluate((el) => el.sitegenAllRuns || null);
        const state = await table.evaluate(
          (el, column) => ({
            aria: el.tHead.rows[0].cells[column].getAttribute("aria-sort"),
            keys: Array.from(el.tBodies[0].rows).map((r) => {
              const v = r.cells[column].dataset.sort;
              return v === undefined || v === "" ? null : Number(v);
            }),
          }),
          column,
        );
        if (state.aria !== direction) {
          problems.push(`sort: table ${t} column ${column}: aria-sort is ${state.aria} after a ${direction} click`);
        }
        const values = state.keys.filter((k) => k !== null);
        const blanksLast = state.keys.slice(values.length).every((k) => k === null);
        const ordered = values.every((v, i) => i === 0 || (direction === "ascending" ? values[i - 1] <= v : values[i - 1] >= v));
        if (!ordered || !blanksLast) {
          problems.push(`sort: table ${t} column ${column} is not ${direction} after clicking its header`);
        }
      }
    }
  }
}

// Filters: picking a value keeps exactly the rows with that value.
async function checkFilters(page, problems) {
  for (const form of await page.$$("form[data-filters]")) {
    if (!(await form.isVisible())) {
      problems.push("filter: the filter form is hidden (site.js did not run)");
      continue;
    }
    for (const select of await form.$$("select[data-filter]")) {
      const key = await select.getAttribute("data-filter");
      const values = await select.$$eval("option", (os) => os.map((o) => o.value).filter((v) => v !== ""));
      for (const value of values) {
        await select.selectOption(value);
        await page.$eval(`#${await form.getAttribute("data-filters")}`, (el) => el.sitegenAllRuns || null);
        const rows = await page.$$eval(`#${await form.getAttribute("data-filters")} tbody tr`, (trs, key) =>
          trs.map((tr) => ({ hidden: tr.hidden, value: tr.dataset[key] })), key);
        const wrong = rows.filter((r) => r.hidden === (r.value === value));
        if (wrong.length > 0 || rows.every((r) => r.hidden)) {
          problems.push(`filter: ${key} = ${value} shows the wrong rows`);
        }
      }
      await select.selectOption("");
    }
  }
}

// The index that lists only its newest runs (data-all-runs): the rows
// site.js builds from Rust's script of every run are, for the runs the page
// lists, the rows the page itself writes; and every run comes in.
async function checkAllRuns(page, problems) {
  const table = await page.$("table[data-all-runs]");
  if (!table) {
    problems.push("all-runs: no table that loads every run");
    return;
  }
  const result = await table.evaluate(async (el) => {
    // The pick checkbox and its space are the script's, on both kinds of row.
    const clean = (tr) => {
      const copy = tr.cloneNode(true);
      for (const box of copy.querySelectorAll("input")) {
        if (box.nextSibling && box.nextSibling.nodeType === Node.TEXT_NODE) box.nextSibling.remove();
        box.remove();
      }
      return copy.outerHTML;
    };
    const written = Array.from(el.tBodies[0].rows).map((tr) => [tr.dataset.run, clean(tr)]);
    await allRuns(el);
    const built = new Map(Array.from(el.tBodies[0].rows).map((tr) => [tr.dataset.run, clean(tr)]));
    return {
      written,
      built: Object.fromEntries(built),
      rows: el.tBodies[0].rows.length,
      runs: window.sitegenAllRuns.length,
    };
  });
  if (result.rows !== result.runs || result.rows <= result.written.length) {
    problems.push(`all-runs: ${result.rows} rows after loading ${result.runs} runs (the page listed ${result.written.length})`);
  }
  for (const [id, html] of result.written) {
    if (result.built[id] !== html) {
      problems.push(`all-runs: run ${id}: the page writes ${html} but the script builds ${result.built[id]}`);
    }
  }
}

// The per-GPU toggle. Run and series pages: every figure with a
// data-per-gpu text (Rust's) shows it, then its total again; the button says
// its data-showing words while pressed. Comparison pages: the per-GPU view
// (charts, ratios) replaces the totals, passes axe while shown, and goes back.
async function checkPerGpu(page, problems) {
  const button = await page.$("[data-per-gpu-toggle]");
  if (!button) return;
  if (!(await button.isVisible())) {
    problems.push("toggle: the per-GPU button stays hidden");
    return;
  }
  const read = () => page.$$eval("[data-per-gpu]", (els) => els.map((e) => [e.dataset.perGpu, e.textContent]));
  const shown = () => page.$$eval("[data-gpu-view]", (els) => els.map((e) => `${e.dataset.gpuView}:${e.hidden ? "hidden" : "shown"}`));
  const before = await read();
  const viewsBefore = await shown();
  const words = await button.getAttribute("data-showing");
  await button.click();
  const notSwapped = (await read()).filter(([perGpu, text]) => perGpu !== text);
  if (notSwapped.length > 0) problems.push(`toggle: ${notSwapped.length} figures do not show their per-GPU text, e.g. ${notSwapped[0][1]}`);
  if (!words || (await button.textContent()) !== words) problems.push(`toggle: the pressed button says ${await button.textContent()}, not its data-showing words`);
  const viewsAfter = await shown();
  const wrong = viewsAfter.filter((v) => v !== "per-gpu:shown" && v !== "total:hidden");
  if (viewsBefore.some((v) => v !== "total:shown" && v !== "per-gpu:hidden") || wrong.length > 0) {
    problems.push(`toggle: views before ${viewsBefore.join(" ")}, after ${viewsAfter.join(" ")}`);
  }
  if (viewsAfter.length > 0 && checks.has("axe")) {
    const perGpu = [];
    await runAxe(page, "light", perGpu);
    await runAxe(page, "dark", perGpu);
    perGpu.forEach((p) => problems.push(`per GPU: ${p}`));
  }
  await button.click();
  const after = await read();
  if (JSON.stringify(after) !== JSON.stringify(before)) problems.push("toggle: the totals did not come back");
  if (JSON.stringify(await shown()) !== JSON.stringify(viewsBefore)) problems.push("toggle: the total views did not come back");
}

// What a reader needs, as issue 19 states it. At 1440×900: a comparison
// shows a ratio on its first screen; no setup row is flagged as differing
// because a run does not state it; no Requests-queued matrix cell is
// brighter than the brightest Valid one; every cell's reason is in the
// visible text (not only a tooltip); every ratio-matrix row has a ratio;
// the runs and measurement tables do not scroll sideways. At 390 px
// (checkReadingPhone): chart text at least 11 CSS px.
async function checkReading(page, problems) {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.evaluate(() => window.scrollTo(0, 0));
  const r = await page.evaluate(() => {
    const out = [];
    const visible = (e) => e.getClientRects().length > 0;
    // Comparison pages, pre-rendered (#findings) or built here (#pick-result).
    if (document.querySelector("#findings, #pick-result table.ratio")) {
      const figures = Array.from(document.querySelectorAll(".finding-figure, td.r:not(.none)")).filter(visible);
      const first = figures.map((e) => e.getBoundingClientRect().bottom).sort((a, b) => a - b)[0];
      if (!(first <= 900)) out.push(`no ratio figure on the first 1440×900 screen (the first ends at ${first} px)`);
    }
    const dash = "—";
    for (const tr of document.querySelectorAll("table.setup tr.differs")) {
      const values = Array.from(tr.querySelectorAll("td")).slice(1).map((td) => td.textContent.trim());
      const stated = values.filter((v) => v !== dash);
      if (!stated.some((v) => v !== stated[0])) out.push(`setup row "${tr.querySelector("th").textContent.trim()}" is flagged as differing, but only a missing value differs`);
    }
    const luminance = (e) => {
      const m = getComputedStyle(e).backgroundColor.match(/[\d.]+/g).map(Number);
      const [r, g, b] = m.slice(0, 3).map((c) => { c /= 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const valid = Array.from(document.querySelectorAll("td.m.valid")).map(luminance);
    const brightest = Math.max(...valid);
    for (const td of document.querySelectorAll("td.m.requests-queued")) {
      if (valid.length && luminance(td) > brightest + 1e-6) out.push(`a Requests-queued cell (${td.title}) is brighter than every Valid cell`);
    }
    const text = document.body.innerText;
    for (const td of document.querySelectorAll("td.m[data-reason]")) {
      if (!text.includes(td.dataset.reason)) out.push(`the reason "${td.dataset.reason}" is only in a tooltip`);
    }
    for (const tr of document.querySelectorAll("table.ratio tbody tr")) {
      if (!tr.querySelector("td.r:not(.none)")) out.push(`ratio-matrix row ${tr.querySelector("th").textContent} has no ratio`);
    }
    for (const t of document.querySelectorAll("table.runs, table.measurements")) {
      const box = t.closest(".scroll") || t;
      if (box.scrollWidth > box.clientWidth + 1) out.push(`table.${t.classList[t.classList.length - 1]} scrolls sideways at 1440 px (${box.scrollWidth} > ${box.clientWidth})`);
    }
    return out;
  });
  r.forEach((p) => problems.push(`reading: ${p}`));
}

async function checkReadingPhone(page, problems) {
  const small = await page.evaluate(() => {
    const out = [];
    for (const svg of document.querySelectorAll("svg.chart")) {
      if (svg.getClientRects().length === 0) continue;
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      for (const t of svg.querySelectorAll("text")) {
        const px = parseFloat(getComputedStyle(t).fontSize) * scale;
        if (t.textContent.trim() && px < 11) out.push(`"${t.textContent.trim()}" is ${px.toFixed(1)} px in "${svg.getAttribute("aria-label")}"`);
      }
    }
    return out;
  });
  if (small.length) problems.push(`reading: ${small.length} chart labels under 11 px at 390 px, e.g. ${small.slice(0, 3).join("; ")}`);
}

async function checkCopy(url, problems) {
  const context = await browser.newContext();
  const origin = new URL(url).origin;
  if (origin !== "null") await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  const page = await context.newPage();
  await page.goto(url, { waitUntil: "load" });
  for (const button of await page.$$("button[data-copy]")) {
    if (!(await button.isVisible())) {
      problems.push("copy: the copy button is hidden (site.js did not run)");
      continue;
    }
    const expected = await button.evaluate((b) => document.getElementById(b.dataset.copy).textContent);
    await button.click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    if (copied !== expected) problems.push(`copy: clipboard holds ${JSON.stringify(copied.slice(0, 60))}, expected the launch command`);
    const label = await button.textContent();
    if (label !== "Copied") problems.push(`copy: the button says ${JSON.stringify(label)} after copying`);
  }
  await context.close();
}

async function checkPage({ url, name }) {
  const problems = [];
  const checked = [];
  if (checks.has("load") || checks.has("axe") || checks.has("sort")) {
    const { context, page } = await openPage(url, { viewport: { width: 1280, height: 900 } }, problems);
    checked.push("load");
    if (config.screenshots) {
      await page.emulateMedia({ colorScheme: "light" });
      await page.screenshot({ path: path.join(config.screenshots, screenshotName(name, "light")), fullPage: true });
      await page.emulateMedia({ colorScheme: "dark" });
      await page.screenshot({ path: path.join(config.screenshots, screenshotName(name, "dark")), fullPage: true });
    }
    if (checks.has("axe")) {
      await runAxe(page, "light", problems);
      await runAxe(page, "dark", problems);
      checked.push("axe");
    }
    if (checks.has("all-runs")) {
      await checkAllRuns(page, problems);
      checked.push("all-runs");
    }
    if (checks.has("sort")) {
      await checkSort(page, problems);
      checked.push("sort");
    }
    if (checks.has("filter")) {
      await checkFilters(page, problems);
      checked.push("filter");
    }
    if (checks.has("toggle")) {
      await checkPerGpu(page, problems);
      checked.push("toggle");
    }
    if (checks.has("reading")) {
      await checkReading(page, problems);
      if (config.screenshots) {
        for (const scheme of ["light", "dark"]) {
          await page.emulateMedia({ colorScheme: scheme });
          await page.screenshot({ path: path.join(config.screenshots, screenshotName(name, `1440-${scheme}`)), fullPage: true });
        }
      }
    }
    await context.close();
  }
  if (checks.has("phone")) {
    const { context, page } = await openPage(url, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }, []);
    const overflow = await page.evaluate(() => {
      const doc = document.scrollingElement;
      return { scroll: doc.scrollWidth, client: doc.clientWidth };
    });
    if (overflow.scroll > overflow.client) {
      problems.push(`phone: the page scrolls sideways at 390 px (${overflow.scroll} px wide)`);
    }
    // The answer first: a run page's key figure, the index's first run's
    // peak tok/s, is inside the first screen, unscrolled, where a page has one.
    const first = await page.evaluate(() => {
      const figure = document.querySelector(".key-figures strong, #runs-table tbody tr td:nth-child(2)");
      if (!figure) return null;
      const box = figure.getBoundingClientRect();
      return { text: figure.textContent, bottom: box.bottom, right: box.right, height: window.innerHeight, width: window.innerWidth };
    });
    if (first && (first.bottom > first.height || first.right > first.width)) {
      problems.push(`phone: the first tok/s figure (${first.text}) is off the first screen (ends at ${Math.round(first.right)}×${Math.round(first.bottom)} px of ${first.width}×${first.height})`);
    }
    if (checks.has("reading")) {
      await checkReadingPhone(page, problems);
      checked.push("reading");
    }
    if (config.screenshots) {
      await page.screenshot({ path: path.join(config.screenshots, screenshotName(name, "phone")), fullPage: true });
      await page.emulateMedia({ colorScheme: "dark" });
      await page.screenshot({ path: path.join(config.screenshots, screenshotName(name, "phone-dark")), fullPage: true });
    }
    checked.push("phone");
    await context.close();
  }
  if (checks.has("copy")) {
    await checkCopy(url, problems);
    checked.push("copy");
  }
  return { url, problems, checked };
}

// Selects runs on the index by their checkboxes, in order, follows the
// "Compare selected runs" button and reads the comparison built in the
// browser: each ratio matrix's heading and its cells ("1.23×|" or "—|why"),
// the title of each prefill and decode chart, and the rows of their numbers.
async function selectAndCompare({ index, runs }) {
  const problems = [];
  const { context, page } = await openPage(index, {}, problems);
  for (const id of runs) await page.check(`input[data-select-run="${id}"]`);
  await Promise.all([page.waitForNavigation(), page.click("#compare-selected")]);
  await page.waitForSelector("#pick-result[data-ready=true]");
  const url = page.url();
  const matrices = await page.$$eval("#ratios section", (sections) => sections.map((s) => ({
    heading: s.querySelector("h3").textContent,
    cells: Array.from(s.querySelectorAll("td.r")).map((td) => {
      const why = td.querySelector(".why");
      return `${td.querySelector(".ratio-value").textContent}|${why ? why.textContent : ""}`;
    }),
  })));
  const charts = await page.$$eval("#prefill svg.chart.wide title, #decode svg.chart.wide title", (ts) => ts.map((t) => t.textContent));
  const numbers = await page.$$eval("#prefill details.numbers tbody tr, #decode details.numbers tbody tr",
    (rows) => rows.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.textContent).join("|")));
  await context.close();
  return { url, problems, matrices, charts, numbers };
}

if (config.screenshots) mkdirSync(config.screenshots, { recursive: true });
const report = { pages: [] };
try {
  for (const page of config.pages) report.pages.push(await checkPage(page));
  if (config.select) report.selection = await selectAndCompare(config.select);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(report, null, 2) + "\n");
