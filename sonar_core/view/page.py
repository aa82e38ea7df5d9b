"""The one page of ``sonar view``: the runs, then a run's test cases a page at a time, searched and
filtered (model, category, an evaluator's failing rows or a metric range) through the JSON API, and a
case with its transcript and every evaluator's values. Every value is put on the page with
``textContent`` (never as HTML). Each table says ``data-ready="1"`` once its answer is shown."""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sonar view</title>
<style>body{font:14px sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;
padding:4px 6px;vertical-align:top;max-width:40em;white-space:pre-wrap}th{background:#f3f3f3}button{margin:0 .3em}
input.n{width:5em}#case dt{font-weight:bold;margin-top:.6em}#case dd{margin-left:1em;white-space:pre-wrap}
.turn{border-left:3px solid #ccc;padding-left:.5em;margin:.3em 0}.err{color:#82071e}</style></head>
<body><h1>Sonar runs</h1><table id="runs" data-ready="0"><thead><tr><th>Run</th><th>Created</th><th>Status</th>
<th>Dataset</th><th>Rows</th><th>Models</th><th>Best model</th><th>HIGH problems</th></tr></thead><tbody></tbody></table>
<section id="run" hidden><h2 id="title"></h2>
<p><input id="q" placeholder="search questions and answers"> <select id="model"><option value="">all models</option></select>
<select id="category"><option value="">all categories</option></select></p>
<p><select id="evaluator"><option value="">no evaluator filter</option></select>
<label><input type="checkbox" id="failing"> failing only</label>
<select id="metric"><option value="">no metric range</option></select>
<input id="min" class="n" placeholder="min"> to <input id="max" class="n" placeholder="max">
<button id="go">Search</button></p>
<p id="count"></p><table id="cases" data-ready="0"><thead><tr><th>Key</th><th>Model</th><th>Question</th><th>Expected</th>
<th>Answer</th></tr></thead><tbody></tbody></table>
<p><button id="prev">Previous</button><span id="pageno"></span><button id="next">Next</button></p></section>
<section id="case" hidden data-ready="0"><h2 id="casekey"></h2><p id="casemsg"></p><dl id="fields"></dl>
<h3>Conversation</h3><div id="turns"></div><h3>Evaluators</h3><table id="scores"><thead><tr><th>Evaluator</th>
<th>Values</th><th>Error</th><th>Details</th></tr></thead><tbody></tbody></table></section>
<script>
"use strict";
let current = null, page = 1, metrics = {};
const $ = id => document.getElementById(id);
function text(v) { return v == null ? "" : (typeof v === "object" ? JSON.stringify(v, null, 1) : String(v)); }
function cell(row, v) { const td = document.createElement("td"); td.textContent = text(v); row.appendChild(td); return td; }
function option(select, value) { const o = document.createElement("option"); o.value = value; o.textContent = value; select.appendChild(o); }
async function getJSON(url) { const r = await fetch(url); const data = await r.json(); if (!r.ok) throw new Error(data.error); return data; }
function api(path, params) { return "/api/runs/" + encodeURIComponent(current.id) + "/" + path + "?" + new URLSearchParams(params); }
async function loadRuns() {
  const data = await getJSON("/api/runs"), body = document.querySelector("#runs tbody");
  for (const run of data.runs) {
    const tr = document.createElement("tr"), td = document.createElement("td"), a = document.createElement("a");
    a.href = "#"; a.textContent = run.id; a.className = "run"; a.addEventListener("click", e => { e.preventDefault(); openRun(run); });
    td.appendChild(a); tr.appendChild(td);
    for (const v of [run.created, run.status, run.dataset, run.rows, run.models.join(", "), run.best_model, run.high_severity_problems]) cell(tr, v);
    body.appendChild(tr);
  }
  $("runs").dataset.ready = "1";
}
async function openRun(run) {
  current = run; page = 1;
  $("run").hidden = false; $("case").hidden = true;
  $("title").textContent = run.id;
  $("model").length = 1; for (const m of run.models) option($("model"), m);
  $("evaluator").length = 1; $("category").length = 1; $("metric").length = 1; metrics = {};
  loadCases();
  try {
    const f = await getJSON(api("filters", {}));
    metrics = f.evaluators;
    for (const e of Object.keys(metrics)) option($("evaluator"), e);
    for (const c of f.categories) option($("category"), c);
  } catch (e) { $("count").textContent = e.message; }
}
function pickEvaluator() { $("metric").length = 1; for (const m of metrics[$("evaluator").value] || []) option($("metric"), m); }
async function loadCases() {
  const p = {q: $("q").value, page: String(page), model: $("model").value, category: $("category").value,
    evaluator: $("evaluator").value, failing: $("failing").checked ? "1" : "0", metric: $("metric").value,
    min: $("min").value, max: $("max").value};
  const table = $("cases"), body = table.querySelector("tbody"), count = $("count");
  table.dataset.ready = "0"; body.replaceChildren();
  try {
    const data = await getJSON(api("cases", p));
    count.textContent = data.total + " rows";
    $("pageno").textContent = "page " + data.page + " of " + Math.max(1, Math.ceil(data.total / data.page_size));
    for (const r of data.rows) {
      const tr = document.createElement("tr"), td = document.createElement("td"), a = document.createElement("a");
      a.href = "#"; a.textContent = r.key; a.className = "case"; a.addEventListener("click", e => { e.preventDefault(); openCase(r.key); });
      td.appendChild(a); tr.appendChild(td);
      for (const v of [r.model_key, r.input, r.expected_output, r.actual_output]) cell(tr, v);
      body.appendChild(tr);
    }
  } catch (e) { count.textContent = e.message; }
  table.dataset.ready = "1";
}
async function openCase(key) {
  const box = $("case"); box.hidden = false; box.dataset.ready = "0";
  $("casekey").textContent = key; $("casemsg").textContent = "";
  $("fields").replaceChildren(); $("turns").replaceChildren(); document.querySelector("#scores tbody").replaceChildren();
  try {
    const data = await getJSON(api("case", {key: key}));
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
$("go").addEventListener("click", () => { page = 1; loadCases(); });
$("q").addEventListener("keydown", e => { if (e.key === "Enter") { page = 1; loadCases(); } });
$("evaluator").addEventListener("change", pickEvaluator);
$("prev").addEventListener("click", () => { if (page > 1) { page--; loadCases(); } });
$("next").addEventListener("click", () => { page++; loadCases(); });
loadRuns();
</script></body></html>
"""
