// The README's pictures: the decode matrix of a run page and the top (key findings) of the GLM vs Step
// comparison at 1440 px, light scheme, from a built site.
//
//   node tests/browser/readme-pictures.mjs SITE_DIR OUT_DIR [CHROMIUM]
//
// (after `npm ci --prefix tests/browser` and `sitegen build`).
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [site, out, executablePath = "/usr/bin/chromium"] = process.argv.slice(2);
const pages = [
  ["run-page.png", "runs/glm-5.3-flash-h200x4-vllm/index.html", "#decode"],
  ["glm-vs-step.png", "compare/glm-5.3-flash-h200x4-vllm--step-3.5-flash-h200x4-vllm-0.29.0/index.html", ""],
];
const browser = await chromium.launch({ executablePath, args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage({ viewport: { width: 1440, height: 960 }, colorScheme: "light" });
for (const [name, rel, anchor] of pages) {
  await page.goto(pathToFileURL(path.join(site, rel)).href + anchor, { waitUntil: "load" });
  await page.screenshot({ path: path.join(out, name) });
}
await browser.close();
