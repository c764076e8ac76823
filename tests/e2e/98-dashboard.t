#!/usr/bin/env node
// The dashboard in a real browser: Debian's chromium driven by puppeteer-core (both installed
// by scripts/install-deps; skipped with the reason when either is missing). It starts
// `crucible serve --db --token-file`, checks that the page asks for the token and refuses a
// wrong one, that its figures match /metrics and the task library's routes once the server is
// idle, that it updates while a batch runs, that a failure shows with its message, and that
// the page logs no error of its own. CRUCIBLE_SCREENSHOTS=DIR saves the pictures docs/ shows.
"use strict";

const { spawn, execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { createRequire } = require("module");

const ROOT = path.resolve(__dirname, "..", "..");
const CRUCIBLE = process.env.CRUCIBLE || path.join(ROOT, "build", "crucible");
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find((p) => fs.existsSync(p));

let puppeteer = null;
try {
  puppeteer = createRequire(path.join(ROOT, "tests", "browser", "package.json"))("puppeteer-core");
} catch (e) {
  puppeteer = null;
}
if (!CHROMIUM || !puppeteer) {
  console.log("1..0 # SKIP " + (!CHROMIUM ? "chromium is not installed" : "puppeteer-core is not installed in tests/browser") +
              " (scripts/install-deps installs both)");
  process.exit(0);
}

let n = 0, failed = 0;
function ok(cond, name, diag) {
  n++;
  if (!cond) failed++;
  console.log((cond ? "ok " : "not ok ") + n + " - " + name);
  if (!cond && diag !== undefined)
    for (const line of JSON.stringify(diag, null, 1).slice(0, 3000).split("\n")) console.log("# " + line);
}

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "crucible-dashboard-"));
const TOKEN = "dash-" + Math.random().toString(36).slice(2);
const children = [];
let browser = null;

function cleanup() {
  for (const c of children) try { c.kill("SIGTERM"); } catch (e) { /* gone */ }
  fs.rmSync(TMP, { recursive: true, force: true });
}
process.on("exit", cleanup);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(cond, ms) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v || Date.now() > end) return v;
    await sleep(100);
  }
}

async function startServer() {
  execFileSync(CRUCIBLE, ["tasks", "import", "--db", path.join(TMP, "lib.db"), path.join(ROOT, "examples", "tasks.jsonl")],
               { stdio: "ignore" });
  fs.writeFileSync(path.join(TMP, "token"), TOKEN + "\n");
  const portFile = path.join(TMP, "port");
  const log = fs.openSync(path.join(TMP, "serve.log"), "w");
  const p = spawn(CRUCIBLE, ["serve", "--listen", "127.0.0.1:0", "--port-file", portFile, "--db", path.join(TMP, "lib.db"),
                             "--token-file", path.join(TMP, "token"), "--slots", "2", "--quiet"],
                  { stdio: ["ignore", log, log] });
  children.push(p);
  const port = await waitFor(() => fs.existsSync(portFile) && fs.readFileSync(portFile, "utf8").trim(), 20000);
  if (!port) {
    console.log("Bail out! crucible serve did not start: " + fs.readFileSync(path.join(TMP, "serve.log"), "utf8").slice(0, 2000));
    process.exit(255);
  }
  return "http://127.0.0.1:" + port;
}

async function call(base, method, p, body) {
  const r = await fetch(base + p, {
    method,
    headers: { Authorization: "Bearer " + TOKEN, "Content-Type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, text };
}

// metrics(base) — /metrics parsed: {name: [{labels, value}]}.
async function metrics(base) {
  const { text } = await call(base, "GET", "/metrics");
  const out = {};
  for (const line of text.split("\n")) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[2] || "").matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    (out[m[1]] = out[m[1]] || []).push({ labels, value: Number(m[3]) });
  }
  return out;
}

const sum = (fam, match) => (fam || []).filter((s) => !match || Object.entries(match).every(([k, v]) => s.labels[k] === v))
  .reduce((a, s) => a + s.value, 0);

async function text(page, id) {
  return page.$eval("#" + id, (el) => el.textContent.trim());
}

async function polls(page) {
  return Number(await page.$eval("body", (b) => b.dataset.polls || "0"));
}

// settle(page) — two more polls of the page after this moment: its figures are the server's now.
async function settle(page) {
  const p0 = await polls(page);
  return waitFor(async () => (await polls(page)) >= p0 + 2, 10000);
}

(async () => {
  const base = await startServer();
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1000 });
  const problems = [];
  page.on("console", (m) => {
    // The browser itself logs each refused fetch; 401s before the token is given are expected.
    if (m.type() === "error" && !/status of 401/.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));

  // ---- the token ---------------------------------------------------------------------
  await page.goto(base + "/?interval=300", { waitUntil: "load" });
  ok(await waitFor(() => page.$eval("#auth", (f) => !f.hidden), 5000), "the page asks for the token (--token-file)");
  await page.type("#auth-token", "wrong-token");
  await page.click("#auth button");
  ok(await waitFor(async () => /refused/.test(await text(page, "auth-error")), 5000), "a wrong token is refused, said on the page",
     await text(page, "auth-error"));
  await page.$eval("#auth-token", (i) => { i.value = ""; });
  await page.type("#auth-token", TOKEN);
  await page.click("#auth button");
  ok(await waitFor(() => page.$eval("#auth", (f) => f.hidden), 5000), "the right token is taken: the prompt goes away");
  ok(await waitFor(async () => (await text(page, "role")) === "node", 5000), "the page shows the server's role (node)");

  // ---- a batch, then the figures against /metrics ------------------------------------
  const sols = fs.readFileSync(path.join(ROOT, "examples", "solutions.jsonl"), "utf8").trim().split("\n").map(JSON.parse);
  const items = sols.map((s) => {
    const it = { kind: "verify", task_id: s.task_id, model: "dash-model" };
    for (const k of ["solution", "completion", "response"]) if (k in s) it[k] = s[k];
    return it;
  });
  items.push({ kind: "verify", task_id: "demo/py-add", model: "other-model", solution: "def add(a, b):\n    return a + b\n" },
             { kind: "run", command: ["/bin/sh", "-c", "exit 3"] }, { kind: "run", command: ["/bin/echo", "hi"] });
  let r = await call(base, "POST", "/v1/batch", { items });
  ok(r.status === 200 && r.text.trim().split("\n").length === items.length, "a batch of " + items.length + " items answered",
     r.text.slice(0, 500));
  r = await call(base, "POST", "/v1/run", "{not json");
  ok(r.status === 400, "a malformed request is answered 400", r.text);

  await settle(page);
  const mt = await metrics(base);
  const completed = sum(mt.crucible_jobs_completed_total);
  ok(completed === items.length && (await text(page, "m-completed")) === String(completed),
     "completed jobs on the page match /metrics (" + completed + ")", [await text(page, "m-completed"), completed]);
  ok((await text(page, "m-slots")) === String(sum(mt.crucible_slots)), "slots match /metrics");
  ok((await text(page, "m-running")) === "0" && (await text(page, "m-queued")) === "0", "idle: nothing running or queued");
  ok((await text(page, "m-infra")) === String(sum(mt.crucible_infra_errors_total)), "infra errors match /metrics");
  const rows = await page.$$eval("#status-table tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const want = (mt.crucible_jobs_completed_total || []).map((s) => [s.labels.kind, s.labels.status, String(s.value)]);
  const key = (x) => x.join("|");
  ok(rows.length === want.length && want.every((w) => rows.some((g) => key(g) === key(w))),
     "the verdict and status mix matches /metrics, row by row", { page: rows, metrics: want });
  const fails = await page.$$eval("#failures tbody tr", (trs) => trs.map((tr) => tr.textContent));
  ok(fails.some((f) => f.includes("/v1/run") && f.includes("400") && /JSON|json/.test(f)),
     "the malformed request is among the recent failures, with its message", fails);

  // ---- live: the page moves while a slow batch runs ----------------------------------
  const before = Number(await text(page, "m-completed"));
  const slow = call(base, "POST", "/v1/batch", { items: Array.from({ length: 6 }, () => ({ kind: "run", command: ["/bin/sleep", "0.7"] })) });
  const sawRunning = await waitFor(async () => Number(await text(page, "m-running")) > 0, 5000);
  const sawProgress = await waitFor(async () => {
    const c = Number(await text(page, "m-completed"));
    return c > before && c < before + 6;
  }, 8000);
  await slow;
  ok(sawRunning && sawProgress, "while a batch runs the page shows jobs running and the count moving before it ends",
     { sawRunning, sawProgress });
  if (process.env.CRUCIBLE_SCREENSHOTS) await settle(page);
  if (process.env.CRUCIBLE_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.CRUCIBLE_SCREENSHOTS, "dashboard.png"), fullPage: true });

  // ---- the task library view ---------------------------------------------------------
  ok(await waitFor(() => page.$eval("#tab-library", (b) => !b.hidden), 5000), "with --db the task-library tab is shown");
  await page.click("#tab-library");
  const stats = JSON.parse((await call(base, "GET", "/v1/tasks/stats")).text);
  const buckets = async () => {
    const got = {};
    for (const b of Object.keys(stats.buckets)) got[b] = await text(page, "lib-bucket-" + b);
    return got;
  };
  ok(await waitFor(async () => Object.entries(await buckets()).every(([b, v]) => v === String(stats.buckets[b])), 5000),
     "bucket counts match GET /v1/tasks/stats", { page: await buckets(), api: stats.buckets });
  ok(await waitFor(() => page.$$eval("#lib-model option", (os) => ["dash-model", "other-model"].every((m) => os.some((o) => o.value === m))), 5000),
     "the models the batch recorded are offered");
  await page.select("#lib-model", "other-model");
  const mstats = JSON.parse((await call(base, "GET", "/v1/tasks/stats?model=other-model")).text);
  ok(JSON.stringify(mstats.buckets) !== JSON.stringify(stats.buckets) &&
     await waitFor(async () => Object.entries(await buckets()).every(([b, v]) => v === String(mstats.buckets[b])), 5000),
     "per model: the buckets match GET /v1/tasks/stats?model=other-model (" + JSON.stringify(mstats.buckets) + ")",
     { page: await buckets(), api: mstats.buckets, all: stats.buckets });
  await page.type("#lib-search", "demo/py-a");
  ok(await waitFor(async () => {
    const ids = await page.$$eval("#lib-tasks tbody tr td:first-child", (tds) => tds.map((t) => t.textContent));
    return ids.length > 0 && ids.every((i) => i.startsWith("demo/py-a"));
  }, 5000), "the task search narrows the list to the ids it starts with");
  await page.select("#lib-model", "");
  // the list is drawn again when the model changes: click the row once it is there
  await waitFor(() => page.evaluate(() => {
    const tr = [...document.querySelectorAll("#lib-tasks tbody tr")].find((t) => t.firstChild.textContent === "demo/py-add");
    if (tr) tr.click();
    return document.getElementById("lib-task-id").textContent === "demo/py-add";
  }), 5000);
  const task = JSON.parse((await call(base, "GET", "/v1/tasks/demo/py-add")).text);
  const attempts = task.version_history[0].models["dash-model"].attempts;
  ok(await waitFor(async () => {
    const v = await page.$$eval("#lib-versions tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    return v.some((c) => c[2] === "dash-model" && c[3] === String(attempts));
  }, 5000), "a task's history shows its attempts per model (" + attempts + " for demo/py-add)");
  if (process.env.CRUCIBLE_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.CRUCIBLE_SCREENSHOTS, "dashboard-library.png"), fullPage: true });

  // ---- the Grafana dashboard beside it queries only what crucible exports ---------------
  const grafana = JSON.parse(fs.readFileSync(path.join(ROOT, "deploy", "grafana", "crucible.json"), "utf8"));
  const exprs = grafana.panels.flatMap((p) => p.targets.map((t) => t.expr));
  const names = [...new Set(exprs.flatMap((e) => e.match(/crucible_[a-z_]+/g) || []))]
    .map((x) => x.replace(/_(bucket|sum|count)$/, ""));
  const exported = new Set(Object.keys(await metrics(base)).map((x) => x.replace(/_(bucket|sum|count)$/, "")));
  // A gateway's families (cluster_*) are checked against the source that defines them.
  const api = fs.readFileSync(path.join(ROOT, "src", "service", "api.c"), "utf8");
  const missing = names.filter((x) => !(exported.has(x) || (x.startsWith("crucible_cluster_") && api.includes('"' + x.slice(9) + '"'))));
  ok(exprs.length >= 10 && missing.length === 0, "deploy/grafana/crucible.json queries only families crucible exports (" +
     names.length + " of them)", missing);

  ok(problems.length === 0, "the page logged no error of its own", problems);

  // ---- an eval report, opened from its file --------------------------------------------
  const report = path.join(TMP, "report.html");
  execFileSync(CRUCIBLE, ["eval", "--tasks", path.join(ROOT, "examples", "tasks.jsonl"), "--solutions",
                          path.join(ROOT, "examples", "solutions.jsonl"), "-j", "2", "--out", path.join(TMP, "r.jsonl"),
                          "--report", report], { stdio: "ignore" });
  const rpage = await browser.newPage();
  const rproblems = [];
  rpage.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") rproblems.push(m.text()); });
  rpage.on("pageerror", (e) => rproblems.push(String(e)));
  rpage.on("requestfailed", (q) => rproblems.push("request " + q.url()));
  await rpage.setViewport({ width: 1100, height: 900 });
  await rpage.goto("file://" + report, { waitUntil: "load" });
  const records = fs.readFileSync(path.join(TMP, "r.jsonl"), "utf8").trim().split("\n").length;
  ok((await rpage.$eval("#records", (e) => e.textContent)) === String(records) &&
     (await rpage.$$eval("#verdicts tr", (t) => t.length)) > 2,
     "the eval report opens in the browser: " + records + " records, the verdict table");
  ok(rproblems.length === 0, "... with no console error or warning, nothing requested", rproblems);
  if (process.env.CRUCIBLE_SCREENSHOTS) await rpage.screenshot({ path: path.join(process.env.CRUCIBLE_SCREENSHOTS, "report.png"), fullPage: true });
  await browser.close();
  console.log("1.." + n);
  process.exit(failed ? 1 : 0);
})().catch(async (e) => {
  console.log("Bail out! " + (e && e.stack ? e.stack.split("\n").slice(0, 4).join(" | ") : e));
  if (browser) await browser.close().catch(() => {});
  process.exit(255);
});
