"""The one page of ``sonar view``: the runs, then a run's test cases a page at a time, searched, filtered
(model, category, an evaluator's failing rows or a metric range) and sorted (a column or a metric) through
the JSON API, and a case with its transcript and every evaluator's values; or two runs picked in the list
compared (``sonar compare``'s figures per metric and model, the flipped rows paged and filtered, each opening
its case in either run). What is shown is kept in the address's ``#`` part (a run with its search, filters,
sort and page, or the two runs compared), so a reload or a shared link shows it again. Every value is put on
the page with ``textContent`` (never as HTML). Each table says ``data-ready="1"`` once its answer is shown."""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sonar view</title>
<style>body{font:14px sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;
padding:4px 6px;vertical-align:top;max-width:40em;white-space:pre-wrap}th{background:#f3f3f3}button{margin:0 .3em}
input.n{width:5em}#case dt{font-weight:bold;margin-top:.6em}#case dd{margin-left:1em;white-space:pre-wrap}
.turn{border-left:3px solid #ccc;padding-left:.5em;margin:.3em 0}.err{color:#82071e}.worse{background:#ffebe9}
.better{background:#dafbe1}</style></head>
<body><h1>Sonar runs</h1><table id="runs" data-ready="0"><thead><tr><th>Compare</th><th>Run</th><th>Created</th><th>Status</th>
<th>Dataset</th><th>Rows</th><th>Models</th><th>Best model</th><th>HIGH problems</th></tr></thead><tbody></tbody></table>
<p><button id="compare">Compare the two runs ticked</button> <span id="pickmsg"></span></p>
<section id="cmp" hidden data-ready="0"><h2 id="cmptitle"></h2><p id="cmpmsg" class="err"></p><p id="cmpsummary"></p>
<table id="metrics"><thead><tr><th>Evaluator</th><th>Metric</th><th>Model</th><th>A [interval] n</th><th>B [interval] n</th>
<th>Difference B &minus; A</th><th>Paired test, p (adjusted)</th><th>Verdict</th><th>pass &rarr; fail</th><th>fail &rarr; pass</th>
</tr></thead><tbody></tbody></table>
<h3>Rows that flipped</h3><p><select id="fevaluator"><option value="">all evaluators</option></select>
<select id="fmetric"><option value="">all metrics</option></select> <select id="fmodel"><option value="">all models</option></select>
<select id="fdirection"><option value="">both ways</option><option value="pass_to_fail">pass &rarr; fail</option>
<option value="fail_to_pass">fail &rarr; pass</option></select> <button id="fgo">Filter</button></p>
<p id="fcount"></p><table id="flips" data-ready="0"><thead><tr><th>Evaluator</th><th>Metric</th><th>Model</th><th>Flip</th>
<th>Test case</th><th>Case in A</th><th>Case in B</th></tr></thead><tbody></tbody></table>
<p><button id="fprev">Previous</button><span id="fpageno"></span><button id="fnext">Next</button></p></section>
<section id="run" hidden><h2 id="title"></h2>
<p><input id="q" placeholder="search questions and answers"> <select id="model"><option value="">all models</option></select>
<select id="category"><option value="">all categories</option></select></p>
<p><select id="evaluator"><option value="">no evaluator filter</option></select>
<label><input type="checkbox" id="failing"> failing only</label>
<select id="metric"><option value="">no metric range</option></select>
<input id="min" class="n" placeholder="min"> to <input id="max" class="n" placeholder="max">
<select id="sort"><option value="key">sort by key</option></select>
<select id="order"><option value="asc">ascending</option><option value="desc">descending</option></select>
<button id="go">Search</button></p>
<p id="count"></p><table id="cases" data-ready="0"><thead><tr><th>Key</th><th>Model</th><th>Question</th><th>Expected</th>
<th>Answer</th><th>Sort value</th></tr></thead><tbody></tbody></table>
<p><button id="prev">Previous</button><span id="pageno"></span><button id="next">Next</button></p></section>
<section id="case" hidden data-ready="0"><h2 id="casekey"></h2><p id="casemsg"></p><dl id="fields"></dl>
<h3>Conversation</h3><div id="turns"></div><h3>Evaluators</h3><table id="scores"><thead><tr><th>Evaluator</th>
<th>Values</th><th>Error</th><th>Details</th></tr></thead><tbody></tbody></table></section>
<script>
"use strict";
let current = null, page = 1, metrics = {}, runsById = {}, pair = null, fpage = 1;
const FIELDS = ["q", "model", "category", "evaluator", "metric", "min", "max", "sort", "order"];
const $ = id => document.getElementById(id);
function text(v) { return v == null ? "" : (typeof v === "object" ? JSON.stringify(v, null, 1) : String(v)); }
function cell(row, v) { const td = document.createElement("td"); td.textContent = text(v); row.appendChild(td); return td; }
function option(select, value, label) { const o = document.createElement("option"); o.value = value; o.textContent = label || value; select.appendChild(o); }
function ensure(select, value) { if (value && !Array.from(select.options).some(o => o.value === value)) option(select, value); }
function link(td, label, cls, onClick) {
  const a = document.createElement("a"); a.href = "#"; a.textContent = label; a.className = cls;
  a.addEventListener("click", e => { e.preventDefault(); onClick(); }); td.appendChild(a); return a;
}
function num(v, digits) { return v == null ? "\u2013" : Number(v).toFixed(digits == null ? 4 : digits); }
async function getJSON(url) { const r = await fetch(url); const data = await r.json(); if (!r.ok) throw new Error(data.error); return data; }
function api(path, params, run) { return "/api/runs/" + encodeURIComponent((run || current).id) + "/" + path + "?" + new URLSearchParams(params); }
function remember(params) {  // what is shown, in the address's # part (empty values left out)
  const kept = Object.entries(params).filter(([, v]) => v !== "" && v != null);
  history.replaceState(null, "", "#" + new URLSearchParams(kept));
}
async function loadRuns() {
  const data = await getJSON("/api/runs"), body = document.querySelector("#runs tbody");
  for (const run of data.runs) {
    runsById[run.id] = run;
    const tr = document.createElement("tr"), pick = document.createElement("td"), box = document.createElement("input");
    box.type = "checkbox"; box.className = "pick"; box.value = run.id; pick.appendChild(box); tr.appendChild(pick);
    link(tr.appendChild(document.createElement("td")), run.id, "run", () => openRun(run));
    for (const v of [run.created, run.status, run.dataset, run.rows, run.models.join(", "), run.best_model, run.high_severity_problems]) cell(tr, v);
    body.appendChild(tr);
  }
  $("runs").dataset.ready = "1";
  const shown = new URLSearchParams(location.hash.slice(1));
  if (runsById[shown.get("a")] && runsById[shown.get("b")]) openCompare(runsById[shown.get("a")], runsById[shown.get("b")]);
  else if (runsById[shown.get("run")]) openRun(runsById[shown.get("run")], Object.fromEntries(shown));
}
async function openRun(run, restore) {
  restore = restore || {};
  current = run; page = Math.max(1, parseInt(restore.page, 10) || 1);
  $("run").hidden = false; $("case").hidden = true; $("cmp").hidden = true;
  $("title").textContent = run.id;
  $("model").length = 1; for (const m of run.models) option($("model"), m);
  for (const id of ["evaluator", "category", "metric", "sort"]) $(id).length = 1;
  metrics = {};
  for (const id of FIELDS) {
    const el = $(id), v = restore[id] || (id === "sort" ? "key" : id === "order" ? "asc" : "");
    if (el.tagName === "SELECT") ensure(el, v);
    el.value = v;
  }
  $("failing").checked = restore.failing === "1";
  loadCases();
  try {
    const f = await getJSON(api("filters", {}));
    metrics = f.evaluators;
    for (const e of Object.keys(metrics)) { ensure($("evaluator"), e); for (const m of metrics[e]) ensure($("sort"), e + "." + m); }
    for (const m of metrics[$("evaluator").value] || []) ensure($("metric"), m);
    for (const c of f.categories) ensure($("category"), c);
  } catch (e) { $("count").textContent = e.message; }
}
function pickEvaluator() { $("metric").length = 1; for (const m of metrics[$("evaluator").value] || []) option($("metric"), m); }
async function loadCases() {
  const p = {q: $("q").value, page: String(page), model: $("model").value, category: $("category").value,
    evaluator: $("evaluator").value, failing: $("failing").checked ? "1" : "0", metric: $("metric").value,
    min: $("min").value, max: $("max").value, sort: $("sort").value, order: $("order").value};
  const table = $("cases"), body = table.querySelector("tbody"), count = $("count");
  table.dataset.ready = "0"; body.replaceChildren();
  try {
    const data = await getJSON(api("cases", p));
    remember({run: current.id, ...p, failing: p.failing === "1" ? "1" : "", page: page > 1 ? p.page : ""});
    count.textContent = data.total + " rows";
    $("pageno").textContent = "page " + data.page + " of " + Math.max(1, Math.ceil(data.total / data.page_size));
    for (const r of data.rows) {
      const tr = document.createElement("tr");
      link(tr.appendChild(document.createElement("td")), r.key, "case", () => openCase(r.key));
      for (const v of [r.model_key, r.input, r.expected_output, r.actual_output, r.sort_value]) cell(tr, v);
      body.appendChild(tr);
    }
  } catch (e) { count.textContent = e.message; }
  table.dataset.ready = "1";
}
async function openCase(key, run) {
  run = run || current;
  const box = $("case"); box.hidden = false; box.dataset.ready = "0";
  $("casekey").textContent = run.id + ": " + key; $("casemsg").textContent = "";
  $("fields").replaceChildren(); $("turns").replaceChildren(); document.querySelector("#scores tbody").replaceChildren();
  try {
    const data = await getJSON(api("case", {key: key}, run));
    const labels = {input: "Question", actual_output: "Answer", expected_output: "Expected answer", context: "Retrieved context"};
    for (const [name, v] of Object.entries(data.row)) {
      if (v == null || v === "" || (Array.isArray(v) && !v.length)) continue;
      const dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = labels[name] || name; dd.textContent = Array.isArray(v) ? v.map(text).join("\\n\\n") : text(v);
      dd.dataset.field = name; $("fields").append(dt, dd);
    }
    for (const turn of data.conversation || []) {
      const div = document.createElement("div"); div.className = "turn";
      div.textContent = text(turn.role) + ": " + text(turn.content != null ? turn.content : turn); $("turns").appendChild(div);
    }
    if (!(data.conversation || []).length) $("turns").textContent = "(one turn)";
    for (const e of data.evaluators) {
      const tr = document.createElement("tr"); cell(tr, e.evaluator);
      cell(tr, Object.entries(e.values).map(([k, v]) => k + " = " + text(v)).join("\\n"));
      cell(tr, e.error).className = "err"; cell(tr, e.details);
      document.querySelector("#scores tbody").appendChild(tr);
    }
  } catch (e) { $("casemsg").textContent = e.message; }
  box.dataset.ready = "1"; box.scrollIntoView();
}
function compareTicked() {
  const ticked = Array.from(document.querySelectorAll("#runs input.pick:checked")).map(b => runsById[b.value]);
  if (ticked.length !== 2) { $("pickmsg").textContent = "tick two runs (" + ticked.length + " ticked)"; return; }
  $("pickmsg").textContent = "";
  ticked.sort((x, y) => (x.created < y.created ? -1 : x.created > y.created ? 1 : 0));  // A: the older run
  openCompare(ticked[0], ticked[1]);
}
function side(s) { return s.value == null ? "\u2013" : num(s.value) + " [" + num(s.ci_low) + ", " + num(s.ci_high) + "] n=" + s.n; }
async function openCompare(a, b) {
  pair = {a: a.id, b: b.id}; fpage = 1;
  const box = $("cmp"); box.hidden = false; box.dataset.ready = "0"; $("run").hidden = true; $("case").hidden = true;
  $("cmptitle").textContent = a.id + " (A) \u2192 " + b.id + " (B)"; $("cmpmsg").textContent = ""; $("cmpsummary").textContent = "";
  const body = document.querySelector("#metrics tbody"); body.replaceChildren();
  for (const id of ["fevaluator", "fmetric", "fmodel"]) $(id).length = 1;
  $("fdirection").value = ""; document.querySelector("#flips tbody").replaceChildren(); $("fcount").textContent = "";
  remember(pair);
  $("cmpsummary").textContent = "comparing (the first time reads both runs: seconds, or minutes for a million rows)";
  try {
    const c = await getJSON("/api/compare?" + new URLSearchParams(pair));
    $("cmpsummary").textContent = c.regressions + " significant regression(s) at confidence " + c.confidence_level +
      "; " + c.test_cases_shared + " test cases in both runs, " + c.test_cases_only_a.count + " only in A, " +
      c.test_cases_only_b.count + " only in B; " + c.flips + " flipped row(s) over all metrics";
    for (const m of c.metrics) {
      const tr = document.createElement("tr"); tr.className = m.verdict;
      const t = m.test;
      for (const v of [m.evaluator, m.metric_name, m.model, side(m.a), side(m.b), m.delta == null ? "\u2013" : (m.delta >= 0 ? "+" : "") + num(m.delta),
        t ? t.test + ", n=" + t.n + ", p=" + num(t.p_value, 4) + " (" + num(t.p_adjusted, 4) + (t.correction ? " " + t.correction : "") + ")" : "\u2013",
        m.verdict, m.pass_to_fail, m.fail_to_pass]) cell(tr, v);
      body.appendChild(tr);
      ensure($("fevaluator"), m.evaluator); ensure($("fmetric"), m.metric); ensure($("fmodel"), m.model);
    }
    await loadFlips();
  } catch (e) { $("cmpmsg").textContent = e.message; }
  box.dataset.ready = "1";
}
async function loadFlips() {
  const p = {...pair, evaluator: $("fevaluator").value, metric: $("fmetric").value, model: $("fmodel").value,
    direction: $("fdirection").value, page: String(fpage)};
  const table = $("flips"), body = table.querySelector("tbody");
  table.dataset.ready = "0"; body.replaceChildren();
  try {
    const data = await getJSON("/api/compare/flips?" + new URLSearchParams(p));
    $("fcount").textContent = data.total + " flipped rows";
    $("fpageno").textContent = "page " + data.page + " of " + Math.max(1, Math.ceil(data.total / data.page_size));
    for (const f of data.flips) {
      const tr = document.createElement("tr");
      for (const v of [f.evaluator, f.metric, f.model, f.direction === "pass_to_fail" ? "pass \u2192 fail" : "fail \u2192 pass", f.test_case_key]) cell(tr, v);
      for (const [key, run, cls] of [[f.key_a, pair.a, "case-a"], [f.key_b, pair.b, "case-b"]]) {
        const td = tr.appendChild(document.createElement("td"));
        if (key != null) link(td, key, cls, () => openCase(key, runsById[run]));
      }
      body.appendChild(tr);
    }
  } catch (e) { $("fcount").textContent = e.message; }
  table.dataset.ready = "1";
}
$("go").addEventListener("click", () => { page = 1; loadCases(); });
$("q").addEventListener("keydown", e => { if (e.key === "Enter") { page = 1; loadCases(); } });
$("evaluator").addEventListener("change", pickEvaluator);
$("prev").addEventListener("click", () => { if (page > 1) { page--; loadCases(); } });
$("next").addEventListener("click", () => { page++; loadCases(); });
$("compare").addEventListener("click", compareTicked);
$("fgo").addEventListener("click", () => { fpage = 1; loadFlips(); });
$("fprev").addEventListener("click", () => { if (fpage > 1) { fpage--; loadFlips(); } });
$("fnext").addEventListener("click", () => { fpage++; loadFlips(); });
loadRuns();
</script></body></html>
"""
