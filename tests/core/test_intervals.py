"""Intervals, paired tests and the significance of the lead, through real runs, computed by hand.

Pass/fail (``toy_passfail`` passes an answer containing "ok"), ten test cases t1..t10:

- A passes t1..t9 (9/10), B passes t1..t4 and t10 (5/10), C passes t1..t3 (3/10).
- Discordant pairs: A vs B: A alone t5..t9 (5), B alone t10 (1): p = 2 * P(X <= 1), X ~ Bin(6, 1/2)
  = 2 * 7/64 = 0.21875. A vs C: 6 and 0: p = 2/64 = 0.03125. B vs C: 2 and 0: p = 2/4 = 0.5.
- Holm over the three: 3 * 0.03125 = 0.09375 (A-C), max(0.09375, 2 * 0.21875) = 0.4375 (A-B),
  max(0.4375, 0.5) = 0.5 (B-C). At 95% none is significant; at 90% A-C is (0.09375 < 0.10).
- Wilson 95% of 9/10: centre (0.9 + 1.96^2/20) / (1 + 1.96^2/10) = 0.78899, half-width 0.19314:
  [0.5958, 0.9821] (the textbook figure).

Scores (``toy_score`` scores each answer with its number): A answers t1..t6, B t1..t5.
A - B on the shared five: 0.4, 0.2, 0, 0.2, 0.3: four nonzero differences, 16 sign patterns, and
only all-plus and all-minus reach |sum| = 1.1: p = 2/16 = 0.125 (exact enumeration).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from sonar_core import names
from sonar_core.cli import cli
from sonar_core.config import build_config
from sonar_core.execution import execute_run

PASSES = {"A": set(range(1, 10)), "B": {1, 2, 3, 4, 10}, "C": {1, 2, 3}}
SCORES = {"A": [0.9, 0.8, 0.7, 0.6, 0.5, 0.9], "B": [0.5, 0.6, 0.7, 0.4, 0.2]}


def _passfail_rows() -> list[dict]:
    return [{"test_case_key": f"t{i}", "model_key": model, "input": f"q{i}",
             "actual_output": "ok" if i in passed else "nope"}
            for model, passed in PASSES.items() for i in range(1, 11)]


def _score_rows() -> list[dict]:
    return [{"test_case_key": f"t{i}", "model_key": model, "input": f"q{i}", "actual_output": str(value),
             "expected_output": "0.1"}
            for model, values in SCORES.items() for i, value in enumerate(values, start=1)]


def _run(tmp_path: Path, plugins, rows: list[dict], evaluator: str, run_id: str, **settings):
    dataset = tmp_path / f"{run_id}.json"
    dataset.write_text(json.dumps(rows), encoding="utf-8")
    config = build_config({"dataset": str(dataset), "evaluators": [evaluator], "output_dir": str(tmp_path),
                           "run_id": run_id, **settings})
    result = execute_run(config, plugins=plugins)
    assert result.status == "success", result.message
    return result.run_dir, next(result.run_dir.glob("explainer_*"))


def _board(folder: Path, kind: str) -> tuple[dict, dict, str]:
    board_dir = folder / (names.BOOL_LEADERBOARD if kind == "bool" else names.HEATMAP_LEADERBOARD)
    full = json.loads((board_dir / "application_json" / "leaderboard_0.json").read_text(encoding="utf-8"))
    index = json.loads((board_dir / "application_json" / "explanation.json").read_text(encoding="utf-8"))
    markdown = (board_dir / "text_markdown" / "explanation.md").read_text(encoding="utf-8")
    return full, index, markdown


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def _num(x: float) -> str:
    """An SVG coordinate as the charts write it: two decimals, no trailing zeros."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _insight(folder: Path) -> dict:
    insights = json.loads((folder / names.INSIGHTS_DIR / names.INSIGHTS_FILE).read_text(encoding="utf-8"))
    return next(i for i in insights if i["insight_type"] == "accuracy" and i["insight_attrs"]["rank"] == "best")


def test_pass_fail_intervals_mcnemar_holm_and_the_lead(tmp_path, toy_plugins):
    run_dir, folder = _run(tmp_path, toy_plugins, _passfail_rows(), "toy_passfail", "pf")
    full, index, markdown = _board(folder, "bool")
    assert full["ranking"] == ["A", "B", "C"] and full["confidence_level"] == 0.95
    a = full["intervals"]["A"]["passes"]
    assert (round(a["ci_low"], 4), round(a["ci_high"], 4), a["n"], a["method"]) == (0.5958, 0.9821, 10, "wilson")
    for model, passed in PASSES.items():
        low, high = _wilson(len(passed), 10, 1.959963984540054)
        entry = full["intervals"][model]["passes"]
        assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((low, high), abs=1e-12)
        assert full["data"][model]["passes"] == len(passed) / 10
    # 0 of 10 (C's retrieval failures: no context, so none): Wilson's lower bound is 0.
    assert full["intervals"]["C"]["failures"]["ci_high"] == pytest.approx(_wilson(7, 10, 1.959963984540054)[1])
    pairs = {(p["model_a"], p["model_b"]): p for p in full["pairwise"]}
    assert list(pairs) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert index["pairwise"] == full["pairwise"]
    expected = {("A", "B"): (14 / 64, 0.4375, 5, 1, 0.4), ("A", "C"): (2 / 64, 0.09375, 6, 0, 0.6),
                ("B", "C"): (0.5, 0.5, 2, 0, 0.2)}
    for pair, (p, adjusted, only_a, only_b, delta) in expected.items():
        got = pairs[pair]
        assert (got["test"], got["n"], got["metric"]) == ("mcnemar-exact", 10, "passes")
        assert got["p_value"] == pytest.approx(p) and got["p_adjusted"] == pytest.approx(adjusted)
        assert got["discordant"] == {"a_only": only_a, "b_only": only_b}
        assert got["delta"] == pytest.approx(delta) and got["significant"] is False
    assert [full["models"][m]["tied_with_best"] for m in ("A", "B", "C")] == [False, True, True]
    insight = _insight(folder)
    assert insight["description"] == ("A is the best model by Passes (0.9000). A leads, but not significantly: "
                                      "p = 0.44 against B over 10 test cases.")
    assert insight["insight_attrs"]["significant_lead"] is False
    assert insight["insight_attrs"]["p_value"] == pytest.approx(0.4375)
    table = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert table[0] == ("| Rank | LLM | Pass | Fail | Passes | Retrieval failures | Parse failures | Vs. best "
                        "| Time (s) | Cost (USD) |")
    assert table[1].startswith("| 1 | A | 9 | 1 | 0.9000 [0.5958, 0.9821] | ")
    assert table[1].endswith(" |  |  |  |") and "| tie (p = 0.44) |" in table[2] and "| tie (p = 0.094) |" in table[3]
    assert "Not significantly different from A (paired test, Holm-adjusted): B, C." in markdown
    page = (run_dir / "index.html").read_text(encoding="utf-8")
    assert page.count('title="not significantly different from the leader">≈</span>') == 2
    # The chart's error bar of A's pass rate: from 160 + 240 * 0.5958... to 160 + 240 * 0.9821...
    low, high = _wilson(9, 10, 1.959963984540054)
    assert (f'<title>A: pass rate interval {low:.4f} to {high:.4f}</title><line x1="{_num(160 + 240 * low)}" '
            f'y1="17" x2="{_num(160 + 240 * high)}"') in page
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert record["statistics"]["confidence_level"] == 0.95 and record["statistics"]["seed"] == 0
    assert record["statistics"]["bootstrap_resamples"] == 2000
    assert record["interpretation_parameters"]["confidence_level"] == 0.95


def test_a_lower_confidence_level_makes_a_c_significant(tmp_path, toy_plugins):
    run_dir, folder = _run(tmp_path, toy_plugins, _passfail_rows(), "toy_passfail", "pf90", confidence_level=0.9)
    full, _, markdown = _board(folder, "bool")
    assert full["confidence_level"] == 0.9
    low, high = _wilson(9, 10, 1.6448536269514722)
    assert (full["intervals"]["A"]["passes"]["ci_low"], full["intervals"]["A"]["passes"]["ci_high"]) == \
        pytest.approx((low, high), abs=1e-12)
    significant = {(p["model_a"], p["model_b"]): p["significant"] for p in full["pairwise"]}
    assert significant == {("A", "B"): False, ("A", "C"): True, ("B", "C"): False}
    assert [full["models"][m]["tied_with_best"] for m in ("A", "B", "C")] == [False, True, False]
    assert "| behind (p = 0.094) |" in markdown
    assert "Values are means with their 90% interval in brackets" in markdown
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert record["statistics"]["confidence_level"] == 0.9


def test_scores_bootstrap_and_exact_permutation_over_shared_cases(tmp_path, toy_plugins):
    run_dir, folder = _run(tmp_path, toy_plugins, _score_rows(), "toy_score", "sc", bootstrap_resamples=500)
    full, _, markdown = _board(folder, "heatmap")
    assert full["ranking"] == ["A", "B"]
    for model, values in SCORES.items():
        # Independent of Sonar's code: the documented draws, seed 0, 500 replicates in one chunk.
        rng = np.random.default_rng(0)
        idx = rng.integers(0, len(values), size=(500, len(values)))
        low, high = np.quantile(np.array(values)[idx].mean(axis=1), [0.025, 0.975])
        entry = full["intervals"][model]["score"]
        assert (entry["ci_low"], entry["ci_high"], entry["n"], entry["method"]) == (low, high, len(values), "bootstrap")
        # Every error rate is 0.1: a zero-width interval.
        assert (full["intervals"][model]["error_rate"]["ci_low"], full["intervals"][model]["error_rate"]["ci_high"]) \
            == (0.1, 0.1)
    [pair] = full["pairwise"]
    assert (pair["model_a"], pair["model_b"], pair["test"], pair["n"]) == ("A", "B", "paired-permutation", 5)
    assert pair["p_value"] == pytest.approx(2 / 16) and pair["p_adjusted"] == pytest.approx(2 / 16)
    assert pair["delta"] == pytest.approx(1.1 / 5) and pair["significant"] is False
    assert _insight(folder)["description"] == (
        "A is the best model by Score (0.7333). A leads, but not significantly: p = 0.12 against B over 5 test cases.")
    a = full["intervals"]["A"]["score"]
    assert f"| 1 | A | 0.7333 [{a['ci_low']:.4f}, {a['ci_high']:.4f}] | 0.1000 [0.1000, 0.1000] |  |" in markdown
    # The score chart draws the interval across A's bar, on the metric's range [0, 1].
    page = (run_dir / "index.html").read_text(encoding="utf-8")
    assert (f'<title>A: interval {a["ci_low"]:.4f} to {a["ci_high"]:.4f}</title><line x1="{_num(160 + 240 * a["ci_low"])}" '
            f'y1="17" x2="{_num(160 + 240 * a["ci_high"])}"') in page
    summary = json.loads((folder / names.EVALUATOR_SUMMARY).read_text(encoding="utf-8"))
    assert summary["view"]["board"]["pairwise"] == full["pairwise"]
    assert summary["view"]["board"]["rows"][0]["intervals"]["score"] == a
    assert json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))["statistics"]["bootstrap_resamples"] == 500


@pytest.mark.parametrize("flag, message", [
    (["--confidence-level", "1.5"], "error: <command line>: configuration key 'confidence_level': Input should be less than 1"),
    (["--bootstrap-resamples", "10"],
     "error: <command line>: configuration key 'bootstrap_resamples': Input should be greater than or equal to 100"),
])
def test_bad_settings_are_one_line_errors(flag, message):
    result = CliRunner().invoke(cli, ["run", "-d", "demo", *flag])
    assert result.exit_code == 2
    assert result.output.strip() == message


def test_api_checks_the_settings(tmp_path):
    import sonar_core

    with pytest.raises(sonar_core.ConfigError, match="^<command line>: configuration key 'confidence_level': "
                                                     "Input should be greater than 0$"):
        sonar_core.run(dataset="demo", output_dir=str(tmp_path), confidence_level=0)
