"""What ``sonar replay`` compares (sonar_core/artifacts/folder_diff.py), on hand-made folders: every
difference below is one a replay may see without anything being wrong, and each is paired with one it
must report."""

from __future__ import annotations

import json
from pathlib import Path

from sonar_core import names
from sonar_core.artifacts.folder_diff import compare_folders


def _folder(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _journal(*events: dict) -> str:
    return "".join(json.dumps({"timestamp": "2026-01-01T00:00:00+00:00", "class": "X", "method": "y", **e}) + "\n"
                   for e in events)


ANSWER = {"message": "fetched annotator response", "annotator": "j", "evaluator": "e", "test_case_key": "t1",
          "request": {"messages": ["q1"]}, "response": "absent", "run_time": 0.2, "attempts": 2}


def test_run_json_is_compared_field_by_field_after_the_exclusions(tmp_path):
    used = {"config": {"key": "j", "model": "m"}, "requests": 9, "cached": 0, "fetched": 9, "failed": 0, "retries": 3,
            "shared_calls": 2, "concurrency_limit": {"min": 1, "max": 8}, "call_seconds": 4.5}
    before = {"run_id": "r", "status": "success", "llm": {"used": {"j": used}},
              "result": {"executed_explainers": [{"name": "e", "duration": 3.0, "resumed": True}]}}
    after = {"run_id": "r", "status": "success", "llm": {"used": {"j": {"config": {"key": "j", "model": "m"},
                                                                         "requests": 9, "cached": 9, "failed": 0}}},
             "result": {"executed_explainers": [{"name": "e", "duration": 0.1}]}}
    # Written differently too: one indented, one not (`"failed": 0,` against `"failed": 0`).
    a = _folder(tmp_path / "a", {names.RUN_JSON: json.dumps(before, indent=1)})
    b = _folder(tmp_path / "b", {names.RUN_JSON: json.dumps(after)})
    assert compare_folders(a, b) == {}
    after["result"]["executed_explainers"][0]["name"] = "other"
    after["status"] = "failed"
    (b / names.RUN_JSON).write_text(json.dumps(after), encoding="utf-8")
    assert compare_folders(a, b) == {names.RUN_JSON: ['status: "success" != "failed"',
                                                      'result.executed_explainers[0].name: "e" != "other"']}


def test_the_journal_is_a_multiset_per_process_without_how_events(tmp_path):
    """The pack's journal: a first process killed after two answers, then a resumed one that answers both
    again (from the cache) and a third; retries, limit changes and logprob support in between."""
    second = {**ANSWER, "test_case_key": "t2", "request": {"messages": ["q2"]}}
    third = {**ANSWER, "test_case_key": "t3", "request": {"messages": ["q3"]}, "response": "present"}
    killed = _journal({"message": "starting journal", "pid": 1}, {"message": "starting run", "run_id": "r"},
                      {"message": "retrying annotator request", "attempt": 1},
                      {"message": "judge gives no logprobs"}, second, ANSWER,
                      {"message": "concurrency limit changed", "from": 8, "to": 4})
    resumed = _journal({"message": "starting journal", "pid": 2}, {"message": "resuming run", "run_id": "r"},
                       {**ANSWER, "message": "using cached annotator response"}, third,
                       {**second, "message": "using cached annotator response"}, {"message": "cache info", "hits": 2},
                       {"message": "finished run"})
    replay = _journal({"message": "starting journal", "pid": 3}, {"message": "starting run", "run_id": "r"},
                      *({**e, "message": "using cached annotator response"} for e in (ANSWER, second, third)),
                      {"message": "finished run"})
    a = _folder(tmp_path / "a", {names.JOURNAL: killed + resumed})
    b = _folder(tmp_path / "b", {names.JOURNAL: replay})
    assert compare_folders(a, b) == {}
    # An answer the replay gives twice where each part of the run gave it once is a difference; so is
    # another answer.
    (b / names.JOURNAL).write_text(replay + _journal({**ANSWER, "message": "using cached annotator response"}))
    (diff,) = compare_folders(a, b)[names.JOURNAL]
    assert diff.startswith("1x only in the replay: ") and '"t1"' in diff
    (b / names.JOURNAL).write_text(replay.replace('"present"', '"absent"'))
    assert len(compare_folders(a, b)[names.JOURNAL]) == 2


def test_index_html_leaves_out_the_concurrency_and_costs_sections_only(tmp_path):
    page = ('<h1>Run</h1>\n<h2 id="costs">Costs</h2>\n<table><tr><td>9 calls</td></tr></table>\n'
            '<h2 id="concurrency">Adaptive concurrency</h2>\n<p>halved</p><table><tr><td>1</td><td>8</td></tr></table>\n'
            '<h2 id="problems">Problems</h2>\n<p>2 problems</p>\n')
    a = _folder(tmp_path / "a", {names.INDEX_HTML: page})
    b = _folder(tmp_path / "b", {names.INDEX_HTML: '<h1>Run</h1>\n<h2 id="problems">Problems</h2>\n<p>2 problems</p>\n'})
    assert compare_folders(a, b) == {}
    (b / names.INDEX_HTML).write_text('<h1>Run</h1>\n<h2 id="problems">Problems</h2>\n<p>3 problems</p>\n')
    assert compare_folders(a, b) == {names.INDEX_HTML: ["line 3: '<p>2 problems</p>' != '<p>3 problems</p>'"]}
