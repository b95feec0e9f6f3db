// The browser comparison's arithmetic and arrangement, run in node without a
// browser: static/compare.js's pure functions over the runs' data.js and
// compare/definitions.js of a built site. tests/browser_conformance.rs holds
// the output to what the pre-rendered comparison page shows.
//
//   node conformance.mjs INPUT.json   (prints the result as JSON)
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import vm from "node:vm";

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const require = createRequire(import.meta.url);
const c = require(input.compare_js);

const window = {};
vm.runInNewContext(readFileSync(`${input.site}/compare/definitions.js`, "utf8"), { window });
const d = window.sitegenDefinitions;

const runs = {};
const sitegenRun = (run) => { runs[run.id] = run; };
for (const id of input.runs) {
  vm.runInNewContext(readFileSync(`${input.site}/runs/${id}/data.js`, "utf8"), { sitegenRun });
}

const set = input.runs.map((id) => runs[id]);
// As the page's script does before anything else: runs of one model named apart.
c.distinctNames(set).forEach((name, i) => { set[i].model = name; });
const views = (perGpu) => ({
  decode: Object.fromEntries(c.sharedContextGroups(d, set).map((g) => [c.groupTokens(g), c.decodeRows(d, set, g, perGpu)])),
  ratios: set.slice(1).map((b) => ({ b: b.id, ...c.ratioMatrix(d, set[0], b, perGpu ? "per_gpu" : "total") })),
});
const runId = new RegExp(d.run_id_pattern);
const out = {
  numbers: {
    ticks: input.numbers.ticks.map(c.tickLabel),
    counts: input.numbers.counts.map(c.countTick),
    ratios: input.numbers.ratios.map(c.ratioText),
    steps: input.numbers.steps.map((r) => c.ratioStep(d, r)),
    ids: input.numbers.ids.map((id) => runId.test(id)),
  },
  setup: c.setupRows(d, set),
  prefill: c.prefillRows(d, set),
  total: views(false),
  per_gpu: views(true),
  // Every figure beyond the headline: its matrices and each run's source.
  figures: Object.fromEntries(d.figures.map((f) => [f.key, {
    matrices: set.slice(1).map((b) => ({ b: b.id, ...c.ratioMatrix(d, set[0], b, f.key) })),
    notes: set.map((r) => c.sourcesNote(f, r)),
  }])),
  names: set.map((r) => r.model),
};
process.stdout.write(JSON.stringify(out));
