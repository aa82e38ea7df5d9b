"""Two runs of text matching, BLEU and ROUGE built to differ on known rows, for the compare tests.

Run A ("before"): model m1 answers every one of ten test cases right; m2 answers tc0-tc4 right and
tc5-tc9 wrong. Run B ("after"): m1 now answers tc0-tc7 wrong (8 rows pass -> fail) and tc8, tc9
right; m2 also answers tc5 right (1 row fail -> pass). A has a test case ``only-a`` that B lacks,
B has ``only-b`` and a third model m3; ROUGE runs in A only, and BLEU with ``lowercase`` differing
runs in both (so neither BLEU matches: parameters differ).
"""

from __future__ import annotations

import json
from pathlib import Path

import sonar_core

CASES = [f"tc{i}" for i in range(10)]
RIGHT, WRONG = "It is Paris.", "It is Lyon."


def _row(case: str, model: str, right: bool) -> dict:
    return {"test_case_key": case, "model_key": model, "input": f"Capital of France ({case})?",
            "expected_output": "It is Paris.", "output_condition": '"Paris"',
            "actual_output": RIGHT if right else WRONG}


def rows_a() -> list[dict]:
    rows = []
    for i, case in enumerate(CASES + ["only-a"]):
        rows.append(_row(case, "m1", True))
        rows.append(_row(case, "m2", i < 5))
    return rows


def rows_b() -> list[dict]:
    rows = []
    for i, case in enumerate(CASES + ["only-b"]):
        rows.append(_row(case, "m1", i >= 8))
        rows.append(_row(case, "m2", i < 6))
        rows.append(_row(case, "m3", True))
    return rows


def build_runs(folder: Path) -> tuple[Path, Path]:
    """Run A and run B (real runs) under ``folder``; returns their run folders."""
    out = []
    for name, rows, evaluators in (
            ("before", rows_a(), ["text_matching", {"id": "bleu"}, "rouge"]),
            ("after", rows_b(), ["text_matching", {"id": "bleu", "params": {"lowercase": True}}])):
        dataset = folder / f"{name}.json"
        dataset.write_text(json.dumps(rows), encoding="utf-8")
        result = sonar_core.run(dataset=str(dataset), evaluators=evaluators, output_dir=str(folder / "reports"),
                                run_id=name)
        assert result.status == "success", result.message
        out.append(result.run_dir)
    return out[0], out[1]

