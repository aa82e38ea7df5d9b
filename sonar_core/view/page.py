"""The one page of ``sonar view``: the runs, then a run's test cases a page at a time, searched and
filtered through the JSON API. Every value is put on the page with ``textContent`` (never as HTML)."""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sonar view</title>
<style>body{font:14px sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;
padding:4px 6px;vertical-align:top;max-width:40em}th{background:#f3f3f3}button{margin:0 .3em}</style></head>
<body><h1>Sonar runs</h1><table id="runs"><thead><tr><th>Run</th><th>Created</th><th>Status</th><th>Dataset</th>
<th>Rows</th><th>Models</th><th>Best model</th><th>HIGH problems</th></tr></thead><tbody></tbody></table>
<section id="run" hidden><h2 id="title"></h2>
<input id="q" placeholder="search questions and answers"> <select id="model"><option value="">all models</option></select>
<select id="evaluator"><option value="">no evaluator filter</option></select>
<label><input type="checkbox" id="failing"> failing only</label> <button id="go">Search</button>
<p id="count"></p><table id="cases"><thead><tr><th>Key</th><th>Model</th><th>Question</th><th>Expected</th>
<th>Answer</th></tr></thead><tbody></tbody></table>
<p><button id="prev">Previous</button><span id="pageno"></span><button id="next">Next</button></p></section>
<script>
"use strict";
let current = null, page = 1;
function cell(row, text) { const td = document.createElement("td"); td.textContent = text == null ? "" : String(text); row.appendChild(td); }
async function getJSON(url) { const r = await fetch(url); const data = await r.json(); if (!r.ok) throw new Error(data.error); return data; }
async function loadRuns() {
  const data = await getJSON("/api/runs"), body = document.querySelector("#runs tbody");
  for (const run of data.runs) {
    const tr = document.createElement("tr"), td = document.createElement("td"), a = document.createElement("a");
    a.href = "#"; a.textContent = run.id; a.addEventListener("click", e => { e.preventDefault(); openRun(run); });
    td.appendChild(a); tr.appendChild(td);
    for (const v of [run.created, run.status, run.dataset, run.rows, run.models.join(", "), run.best_model, run.high_severity_problems]) cell(tr, v);
    body.appendChild(tr);
  }
}
function openRun(run) {
  current = run; page = 1;
  document.getElementById("run").hidden = false;
  document.getElementById("title").textContent = run.id;
  const model = document.getElementById("model"); model.length = 1;
  for (const m of run.models) { const o = document.createElement("option"); o.value = m; o.textContent = m; model.appendChild(o); }
  const ev = document.getElementById("evaluator"); ev.length = 1;
  for (const m of run.evaluators) { const o = document.createElement("option"); o.value = m; o.textContent = m; ev.appendChild(o); }
  loadCases();
}
async function loadCases() {
  const p = new URLSearchParams({q: document.getElementById("q").value, page: String(page),
    model: document.getElementById("model").value, evaluator: document.getElementById("evaluator").value,
    failing: document.getElementById("failing").checked ? "1" : "0"});
  const body = document.querySelector("#cases tbody"), count = document.getElementById("count");
  body.replaceChildren();
  try {
    const data = await getJSON("/api/runs/" + encodeURIComponent(current.id) + "/cases?" + p);
    count.textContent = data.total + " rows";
    document.getElementById("pageno").textContent = "page " + data.page + " of " + Math.max(1, Math.ceil(data.total / data.page_size));
    for (const r of data.rows) { const tr = document.createElement("tr");
      for (const v of [r.key, r.model_key, r.input, r.expected_output, r.actual_output]) cell(tr, v); body.appendChild(tr); }
  } catch (e) { count.textContent = e.message; }
}
document.getElementById("go").addEventListener("click", () => { page = 1; loadCases(); });
document.getElementById("prev").addEventListener("click", () => { if (page > 1) { page--; loadCases(); } });
document.getElementById("next").addEventListener("click", () => { page++; loadCases(); });
loadRuns();
</script></body></html>
"""
