"""Two runs of one small dataset whose flips are known, and a run of another dataset, for ``sonar view``'s
comparison tests (tests/core/test_view_compare.py, tests/test_view_browser.py).

Twelve test cases (``tc00`` .. ``tc11``, or ``HOSTILE_CASE`` in place of ``tc03`` with ``hostile``) x two
models, scored by text_matching (a row passes when its answer says "refund"):

- run A: m1 passes every case but tc11; m2 passes every case;
- run B: m1 passes every case but tc00 (tc00 pass -> fail, tc11 fail -> pass); m2 passes only tc10 and tc11
  (tc00 .. tc09 pass -> fail, ten of them).
"""

from __future__ import annotations

import json
from pathlib import Path

import sonar_core

HOSTILE_CASE = '<img src=x onerror="window.pwned = 4">tc03'
CASES = [f"tc{t:02d}" for t in range(12)]


def case_keys(hostile: bool) -> list[str]:
    return [HOSTILE_CASE if hostile and t == 3 else key for t, key in enumerate(CASES)]


def _passes(run: str, model: str, t: int) -> bool:
    if run == "a":
        return t != 11 if model == "m1" else True
    return t != 0 if model == "m1" else t >= 10


def _rows(run: str, hostile: bool) -> list[dict]:
    return [{"test_case_key": key, "model_key": model, "input": f"question {t}",
             "actual_output": f"a refund for {t}" if _passes(run, model, t) else f"sorry, no {t}",
             "output_condition": '"refund"', "categories": ["billing"]}
            for t, key in enumerate(case_keys(hostile)) for model in ("m1", "m2")]


def write_pair(root: Path, hostile: bool = False, other: bool = True) -> Path:
    """Runs ``ra`` and ``rb`` (and, with ``other``, ``rc``: three cases of another dataset) under
    ``root/reports``; the reports folder."""
    reports = root / "reports"
    data = {"a": _rows("a", hostile), "b": _rows("b", hostile)}
    if other:
        data["c"] = [{"test_case_key": f"x{t}", "model_key": "m1", "input": f"other {t}", "actual_output": "refund",
                      "output_condition": '"refund"'} for t in range(3)]
    for name, rows in data.items():
        path = root / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        result = sonar_core.run({"dataset": str(path), "evaluators": ["text_matching"], "output_dir": str(reports),
                                 "run_id": f"r{name}"})
        assert result.status == "success", result.message
    return reports
