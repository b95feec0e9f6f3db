// sitegen: progressive enhancement only. Every page is complete without this script.
"use strict";

// An index that lists only the newest runs names a script with every run's
// row (data-all-runs, written by Rust): the first filter or sort loads it and
// builds the rows as the page writes them, so both act on every run. Other
// tables resolve at once.
function allRuns(table) {
  if (!table.dataset.allRuns) return Promise.resolve();
  if (!table.sitegenAllRuns) {
    table.sitegenAllRuns = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = table.dataset.allRuns;
      script.onload = () => {
        const tbody = table.tBodies[0];
        const rows = window.sitegenAllRuns.map(runRow);
        tbody.replaceChildren(...rows);
        if (table.sitegenOnRows) table.sitegenOnRows(rows);
        table.dataset.allLoaded = "true";
        resolve();
      };
      script.onerror = () => reject(new Error(`cannot load ${script.src}`));
      document.head.appendChild(script);
    });
  }
  return table.sitegenAllRuns;
}

// A row of the runs table from [id, link, model, gpu, engine, quantization,
// name, cells], a cell [text, sort key, holds words], as
// templates/runs_table.html writes it.
function runRow([id, href, model, gpu, engine, quantization, name, cells]) {
  const row = document.createElement("tr");
  Object.assign(row.dataset, { run: id, model, gpu, engine, quantization });
  const first = document.createElement("td");
  const link = document.createElement("a");
  link.href = href;
  link.textContent = name;
  first.appendChild(link);
  row.appendChild(first);
  for (const [text, sort, words] of cells) {
    const cell = document.createElement("td");
    if (words) cell.className = "words";
    if (sort !== "") cell.dataset.sort = sort;
    cell.textContent = text;
    row.appendChild(cell);
  }
  return row;
}

// Sortable tables: a button in each header; cells sort by data-sort (numbers)
// or by their text. Empty cells ("—") always go last.
function makeSortable(table) {
  const headers = Array.from(table.tHead.rows[0].cells);
  headers.forEach((th, column) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "sort";
    button.textContent = th.textContent;
    th.textContent = "";
    th.appendChild(button);
    th.setAttribute("aria-sort", "none");
    button.addEventListener("click", () => {
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      allRuns(table).then(() => {
        headers.forEach((h) => h.setAttribute("aria-sort", "none"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        sortRows(table.tBodies[0], column, ascending);
      });
    });
  });
}

function sortKey(cell) {
  const raw = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
  if (raw === "" || raw === "—") return null;
  const number = Number(raw);
  return Number.isFinite(number) ? number : raw.toLowerCase();
}

function sortRows(tbody, column, ascending) {
  const rows = Array.from(tbody.rows).map((row, index) => ({ row, index, key: sortKey(row.cells[column]) }));
  rows.sort((a, b) => {
    if (a.key === null || b.key === null) {
      if (a.key === b.key) return a.index - b.index;
      return a.key === null ? 1 : -1;
    }
    let order;
    if (typeof a.key === "number" && typeof b.key === "number") order = a.key - b.key;
    else order = String(a.key).localeCompare(String(b.key));
    if (order === 0) return a.index - b.index; // stable
    return ascending ? order : -order;
  });
  rows.forEach(({ row }) => tbody.appendChild(row));
}

// Copy buttons: copy the text of the element named by data-copy.
function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    return navigator.clipboard.writeText(text);
  }
  // file:// and plain-HTTP hosts: fall back to a selection and execCommand.
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  const ok = document.execCommand("copy");
  area.remove();
  return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
}

function setUpCopy(button) {
  const target = document.getElementById(button.dataset.copy);
  if (!target) return;
  button.hidden = false;
  button.addEventListener("click", () => {
    copyText(target.textContent).then(
      () => { button.textContent = "Copied"; },
      () => { button.textContent = "Select and copy"; }
    );
    setTimeout(() => { button.textContent = "Copy"; }, 2000);
  });
}

document.querySelectorAll("table.sortable").forEach(makeSortable);
window.sitegenSortable = makeSortable;
document.querySelectorAll("button[data-copy]").forEach(setUpCopy);

// Filters of a table: each select keeps the rows whose data-<key> equals its value.
function setUpFilters(form) {
  const table = document.getElementById(form.dataset.filters);
  if (!table) return;
  const selects = Array.from(form.querySelectorAll("select[data-filter]"));
  const count = form.querySelector("[data-filter-count]");
  const apply = () => {
    let shown = 0;
    Array.from(table.tBodies[0].rows).forEach((row) => {
      const keep = selects.every((s) => s.value === "" || row.dataset[s.dataset.filter] === s.value);
      row.hidden = !keep;
      if (keep) shown += 1;
    });
    // Before every run is loaded, the total is the script's, not the page's.
    const total = table.dataset.allCount && !table.dataset.allLoaded ? table.dataset.allCount : table.tBodies[0].rows.length;
    if (count) count.textContent = `${shown} of ${total} runs`;
  };
  selects.forEach((s) => s.addEventListener("change", () => allRuns(table).then(apply)));
  form.hidden = false;
  apply();
}

document.querySelectorAll("form[data-filters]").forEach(setUpFilters);

// Selecting runs on the index for a comparison built in the browser: a
// checkbox per run, and a button that opens compare/index.html?runs=a,b (an
// address that can be shared). The button says its state in the words beside
// it (its description): how many are ticked and what is still needed.
function setUpPick(bar) {
  const table = document.getElementById("runs-table");
  const button = bar.querySelector("#compare-selected");
  const state = bar.querySelector("[data-pick-count]");
  // The limits and words are Rust's (src/render/compare_words.rs), on the bar.
  const [min, max] = [Number(bar.dataset.min), Number(bar.dataset.max)];
  const fill = (template, slots) => Object.entries(slots).reduce((t, [k, v]) => t.split(`{${k}}`).join(String(v)), template);
  const chosen = [];
  const ok = () => chosen.length >= min && chosen.length <= max;
  const update = () => {
    const n = chosen.length;
    button.setAttribute("aria-disabled", ok() ? "false" : "true");
    const words = n === 0 ? bar.dataset.none : n < min ? bar.dataset.tooFew : n > max ? bar.dataset.tooMany : bar.dataset.selected;
    state.textContent = fill(words, { n, more: min - n });
  };
  button.addEventListener("click", () => {
    if (ok()) window.location.href = `${bar.dataset.href}?runs=${chosen.join(",")}`;
  });
  const addBox = (row) => {
    const id = row.dataset.run;
    const box = document.createElement("input");
    box.type = "checkbox";
    box.checked = chosen.includes(id);
    box.dataset.selectRun = id;
    box.setAttribute("aria-label", fill(bar.dataset.checkbox, { model: row.dataset.model, id }));
    box.addEventListener("change", () => {
      const at = chosen.indexOf(id);
      if (box.checked && at < 0) chosen.push(id);
      if (!box.checked && at >= 0) chosen.splice(at, 1);
      update();
    });
    row.cells[0].prepend(box, " ");
  };
  Array.from(table.tBodies[0].rows).forEach(addBox);
  // Rows that come in later (every run, loaded on demand) get boxes too.
  table.sitegenOnRows = (rows) => rows.forEach(addBox);
  bar.hidden = false;
  update();
}

document.querySelectorAll("[data-pick]").forEach(setUpPick);

// Total tok/s or tok/s per GPU. On a run or series page, figures carry their
// per-GPU text (data-per-gpu, written by Rust) and swap to it and back;
// sorting keeps using data-sort, which orders the same either way. On a
// comparison page, where each run has its own count, the page holds both
// views (data-gpu-view, charts included) and the toggle shows one of them.
// The button's words are on it: its text, and data-showing once pressed.
function setUpPerGpu(button) {
  const figures = Array.from(document.querySelectorAll("[data-per-gpu]"));
  const views = Array.from(document.querySelectorAll("[data-gpu-view]"));
  if (figures.length === 0 && views.length === 0) return;
  figures.forEach((f) => { f.dataset.total = f.textContent; });
  const words = { off: button.textContent, on: button.dataset.showing };
  button.hidden = false;
  button.addEventListener("click", () => {
    const perGpu = button.getAttribute("aria-pressed") !== "true";
    figures.forEach((f) => { f.textContent = perGpu ? f.dataset.perGpu : f.dataset.total; });
    views.forEach((v) => { v.hidden = (v.dataset.gpuView === "per-gpu") !== perGpu; });
    button.setAttribute("aria-pressed", perGpu ? "true" : "false");
    button.textContent = perGpu ? words.on : words.off;
  });
}

document.querySelectorAll("[data-per-gpu-toggle]").forEach(setUpPerGpu);
window.sitegenPerGpu = setUpPerGpu;

// A table wider than its box says so above it, in Rust's words
// (data-scroll-hint on the body): a phone shows a few of its columns, and
// nothing else would tell that the rest are a swipe away.
function markScrollable() {
  const words = document.body.dataset.scrollHint;
  if (!words) return;
  document.querySelectorAll(".scroll").forEach((box) => {
    const wide = box.scrollWidth > box.clientWidth + 1;
    let hint = box.previousElementSibling;
    if (!hint || !hint.classList.contains("scroll-hint")) {
      if (!wide) return;
      hint = document.createElement("p");
      hint.className = "scroll-hint";
      hint.textContent = words;
      box.before(hint);
    }
    hint.hidden = !wide;
  });
}

markScrollable();
window.addEventListener("resize", markScrollable);
document.addEventListener("toggle", markScrollable, true);
