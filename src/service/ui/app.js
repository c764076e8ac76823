// crucible's dashboard: polls GET /v1/stats (the figures of /metrics, as JSON) and, with a
// task library, its routes; draws with Chart.js when the build embedded it. Text from the
// server (failure messages, task ids) is only ever set as textContent, never as markup.
"use strict";

const params = new URLSearchParams(location.search);
const INTERVAL_MS = Math.max(200, Number(params.get("interval")) || 1000);
const TOKEN_KEY = "crucible-token:" + location.host;
const HISTORY = 120; // throughput points kept for the chart

let token = localStorage.getItem(TOKEN_KEY) || "";
let seen = []; // recent polls: {at, done}, for the throughput over RATE_WINDOW_MS
const RATE_WINDOW_MS = 5000;
let charts = {};
let libraryLoaded = false;
let polls = 0;

const $ = (id) => document.getElementById(id);

function setText(id, v) {
  const el = $(id);
  if (el) el.textContent = v;
}

async function api(path) {
  const headers = token ? { Authorization: "Bearer " + token } : {};
  const r = await fetch(path, { headers, cache: "no-store" });
  if (r.status === 401) {
    const e = new Error("unauthorized");
    e.status = 401;
    throw e;
  }
  if (!r.ok) throw new Error(path + ": HTTP " + r.status);
  return r.json();
}

// ---- the figures of one /v1/stats answer ------------------------------------------------

function family(stats, name) {
  return stats.metrics["crucible_" + name] || { series: [] };
}

function total(stats, name, match) {
  let s = 0;
  for (const x of family(stats, name).series)
    if (!match || Object.entries(match).every(([k, v]) => x.labels[k] === v)) s += x.value;
  return s;
}

function has(stats, name) {
  return ("crucible_" + name) in stats.metrics;
}

// quantile(stats, name, q) — as Prometheus' histogram_quantile: the bucket holding the q-th
// observation, interpolated linearly inside it; the series of all labels merged.
function quantile(stats, name, q) {
  const merged = new Map();
  let count = 0;
  for (const s of family(stats, name).series) {
    count += s.count;
    for (const [le, c] of s.buckets) {
      const k = le === null ? Infinity : le;
      merged.set(k, (merged.get(k) || 0) + c);
    }
  }
  if (!count) return null;
  const bounds = [...merged.keys()].sort((a, b) => a - b);
  const rank = q * count;
  let lo = 0, below = 0;
  for (const le of bounds) {
    const c = merged.get(le);
    if (c >= rank) {
      if (le === Infinity) return lo;
      return lo + (le - lo) * ((rank - below) / Math.max(1, c - below));
    }
    lo = le;
    below = c;
  }
  return lo;
}

function seconds(s) {
  if (s === null || s === undefined) return "–";
  if (s < 1e-3) return (s * 1e6).toFixed(0) + " µs";
  if (s < 1) return (s * 1e3).toFixed(1) + " ms";
  return s.toFixed(2) + " s";
}

function percent(num, den) {
  return den > 0 ? ((100 * num) / den).toFixed(1) + "%" : "–";
}

function fmt(n) {
  return Number.isFinite(n) ? String(Math.round(n)) : "–";
}

// ---- drawing ----------------------------------------------------------------------------

function lineChart(id, label) {
  if (!window.Chart) return null;
  return new Chart($(id), {
    type: "line",
    data: { labels: [], datasets: [{ label, data: [], borderColor: "#2b6cb0", pointRadius: 0, tension: 0.2 }] },
    options: { animation: false, responsive: true, maintainAspectRatio: false, plugins: { legend: { display: false } },
               scales: { y: { beginAtZero: true } } },
  });
}

function barChart(id, label) {
  if (!window.Chart) return null;
  return new Chart($(id), {
    type: "bar",
    data: { labels: [], datasets: [{ label, data: [], backgroundColor: "#4a90c2" }] },
    options: { animation: false, responsive: true, maintainAspectRatio: false, plugins: { legend: { display: false } },
               scales: { y: { beginAtZero: true } } },
  });
}

function setBars(chart, labels, values) {
  if (!chart) return;
  chart.data.labels = labels;
  chart.data.datasets[0].data = values;
  chart.update();
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const c of cells) {
    const td = document.createElement("td");
    td.textContent = c;
    tr.appendChild(td);
  }
  return tr;
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows.map(row));
}

// ---- the service view -------------------------------------------------------------------

function showService(stats) {
  const now = performance.now();
  const completed = total(stats, "jobs_completed_total");
  const answered = total(stats, "cluster_answered_total");
  const queued = { high: 0, normal: 0, low: 0 };
  for (const p of Object.keys(queued)) queued[p] = total(stats, "queue_depth", { priority: p });

  setText("role", stats.role);
  setText("version", "v" + stats.version + " · up " + seconds(stats.uptime_s));
  setText("m-running", fmt(total(stats, "jobs_running")));
  setText("m-slots", fmt(total(stats, "slots")));
  setText("m-queued", fmt(queued.high + queued.normal + queued.low));
  for (const p of Object.keys(queued)) setText("m-queue-" + p, fmt(queued[p]));
  setText("m-completed", fmt(completed));
  setText("m-p50", seconds(quantile(stats, "job_seconds", 0.5)));
  setText("m-p99", seconds(quantile(stats, "job_seconds", 0.99)));
  const infra = total(stats, "infra_errors_total");
  setText("m-infra", fmt(infra));
  setText("m-infra-rate", percent(infra, completed));
  const hits = total(stats, "pool_hits_total"), misses = total(stats, "pool_misses_total");
  setText("m-pool-rate", has(stats, "pool_hits_total") ? percent(hits, hits + misses) : "no pool");
  setText("m-pool-ready", fmt(total(stats, "pool_ready")));
  setText("m-sessions", fmt(total(stats, "sessions")));
  let http = 0, h4 = 0, h5 = 0;
  for (const s of family(stats, "http_requests_total").series) {
    http += s.value;
    if (s.labels.code && s.labels.code[0] === "4") h4 += s.value;
    if (s.labels.code && s.labels.code[0] === "5") h5 += s.value;
  }
  setText("m-http", fmt(http));
  setText("m-http-4xx", fmt(h4));
  setText("m-http-5xx", fmt(h5));

  const cluster = stats.role === "gateway";
  $("cluster").hidden = !cluster;
  if (cluster) {
    setText("c-workers", fmt(total(stats, "cluster_workers")));
    setText("c-slots", fmt(total(stats, "cluster_slots")));
    setText("c-broker", total(stats, "cluster_broker_up") ? "up" : "down");
    setText("c-inflight", fmt(total(stats, "cluster_inflight")));
    setText("c-answered", fmt(answered));
    setText("c-admitted", fmt(total(stats, "cluster_admitted_total")));
    for (const p of ["high", "normal", "low"])
      setText("c-depth-" + p, fmt(total(stats, "cluster_stream_depth", { priority: p })));
    setText("c-dead", fmt(total(stats, "cluster_dead_letters")));
    setText("c-resent", fmt(total(stats, "cluster_resent_total")));
  }

  // Throughput: jobs finished (a gateway: answered) over the last few seconds of polls.
  const done = cluster ? answered : completed;
  seen.push({ at: now, done });
  while (seen.length > 2 && now - seen[1].at >= RATE_WINDOW_MS) seen.shift();
  if (seen.length > 1) {
    const first = seen[0];
    const rate = Math.max(0, (done - first.done) / ((now - first.at) / 1000));
    setText(cluster ? "c-throughput" : "m-throughput", rate.toFixed(1));
    if (charts.throughput) {
      const d = charts.throughput.data;
      d.labels.push(new Date().toLocaleTimeString());
      d.datasets[0].data.push(rate);
      if (d.labels.length > HISTORY) {
        d.labels.shift();
        d.datasets[0].data.shift();
      }
      charts.throughput.update();
    }
  }

  const mix = family(stats, "jobs_completed_total").series
    .map((s) => [s.labels.kind || "", s.labels.status || "", s.value])
    .sort((a, b) => b[2] - a[2]);
  fill(document.querySelector("#status-table tbody"), mix.map(([k, st, v]) => [k, st, fmt(v)]));
  const byStatus = new Map();
  for (const [, st, v] of mix) byStatus.set(st, (byStatus.get(st) || 0) + v);
  setBars(charts.status, [...byStatus.keys()], [...byStatus.values()]);

  const failures = stats.recent_failures || [];
  $("failures-none").hidden = failures.length > 0;
  fill(document.querySelector("#failures tbody"), failures.map((f) => [
    new Date(f.time * 1000).toLocaleTimeString(), f.route, f.status || "job", f.code, f.message]));
}

// ---- the task-library view --------------------------------------------------------------

function libQuery(extra) {
  const q = new URLSearchParams(extra || {});
  const model = $("lib-model").value;
  if (model) q.set("model", model);
  const s = q.toString();
  return s ? "?" + s : "";
}

async function loadModels() {
  const { models } = await api("/v1/tasks/models");
  const sel = $("lib-model");
  const keep = sel.value;
  sel.replaceChildren(new Option("all models", ""));
  for (const m of models) sel.appendChild(new Option(m.model + " (" + m.attempts + " attempts)", m.model));
  sel.value = keep;
}

async function loadLibrary() {
  const st = await api("/v1/tasks/stats" + libQuery());
  setText("lib-summary", st.tasks + " tasks · " + st.attempts + " attempts · " + st.accepted + " accepted");
  for (const [b, n] of Object.entries(st.buckets)) setText("lib-bucket-" + b, fmt(n));
  fill(document.querySelector("#lib-status tbody"), Object.entries(st.status).map(([k, v]) => [k, fmt(v)]));
  setBars(charts.hist, st.histogram.map((h) => h.lo.toFixed(1) + "–" + h.hi.toFixed(1)),
          st.histogram.map((h) => h.tasks));
  await loadTasks();
}

async function loadTasks() {
  const prefix = $("lib-search").value.trim();
  const extra = { limit: "200" };
  if (prefix) extra.id_prefix = prefix;
  const { tasks } = await api("/v1/tasks" + libQuery(extra));
  const tbody = document.querySelector("#lib-tasks tbody");
  tbody.replaceChildren(...tasks.map((t) => {
    const tr = row([t.id, t.status, t.bucket, t.pass_rate.toFixed(2), fmt(t.attempts), t.language, (t.tags || []).join(", ")]);
    tr.className = "link";
    tr.addEventListener("click", () => showTask(t.id).catch(report));
    return tr;
  }));
}

async function showTask(id) {
  const t = await api("/v1/tasks/" + id.split("/").map(encodeURIComponent).join("/"));
  setText("lib-task-id", id);
  const rows = [];
  for (const v of t.version_history || []) {
    const models = Object.entries(v.models || {});
    if (!models.length) rows.push([v.version + (v.current ? " (current)" : ""), v.status, "–", "0", "0", "–", "untried"]);
    for (const [m, s] of models)
      rows.push([v.version + (v.current ? " (current)" : ""), v.status, m, fmt(s.attempts), fmt(s.accepted),
                 s.pass_rate.toFixed(2), s.bucket]);
  }
  fill(document.querySelector("#lib-versions tbody"), rows);
  $("lib-task").hidden = false;
}

// ---- the loop ---------------------------------------------------------------------------

function report(e) {
  if (e.status === 401) {
    $("auth").hidden = false;
    setText("auth-error", token ? "that token was refused" : "");
    setText("live", "needs the token");
    return;
  }
  setText("live", "error: " + e.message);
}

let timer = null;

// poll() — one look at the server, then the next in INTERVAL_MS; while the server refuses the
// token the page waits for a new one instead of asking again.
async function poll() {
  clearTimeout(timer);
  try {
    const stats = await api("/v1/stats");
    $("auth").hidden = true;
    showService(stats);
    $("tab-library").hidden = !stats.library;
    if (stats.library && !libraryLoaded) {
      libraryLoaded = true;
      await loadModels();
      await loadLibrary();
    }
    polls++;
    setText("live", "live · updated " + new Date().toLocaleTimeString());
    document.body.dataset.polls = String(polls);
  } catch (e) {
    report(e);
    if (e.status === 401) return;
  }
  timer = setTimeout(poll, INTERVAL_MS);
}

function showView(name) {
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("on", b.dataset.view === name);
  $("view-service").hidden = name !== "service";
  $("view-library").hidden = name !== "library";
  if (name === "library") loadModels().then(loadLibrary).catch(report);
}

document.addEventListener("DOMContentLoaded", () => {
  charts.throughput = lineChart("chart-throughput", "jobs/s");
  charts.status = barChart("chart-status", "jobs");
  charts.hist = barChart("chart-hist", "tasks");
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => showView(b.dataset.view));
  $("auth").addEventListener("submit", (ev) => {
    ev.preventDefault();
    token = $("auth-token").value.trim();
    localStorage.setItem(TOKEN_KEY, token);
    setText("auth-error", "");
    poll();
  });
  $("lib-model").addEventListener("change", () => loadLibrary().catch(report));
  let typing = null;
  $("lib-search").addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => loadTasks().catch(report), 250);
  });
  if (params.get("view") === "library") showView("library");
  poll();
});
