"""``sonar compare`` names the Holm correction beside every p-value it changed: in comparison.json
(``correction``, ``family_size`` beside ``p_value`` and ``p_adjusted``), in comparison.md and
comparison.html (the adjusted cell and a note under each evaluator's table), and in the regression
problem. The runs are tests/compare_runs.py's; the figures are worked out by hand.
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sonar_core import names
from sonar_core.cli import cli

sys.path.insert(0, str(Path(__file__).parent.parent))
from compare_runs import build_runs  # noqa: E402

NOTE = ("p (Holm): Holm's step-down correction across the 6 tests of this evaluator that could reject (every "
        "metric and model with a differing pair; a test whose pairs all agree keeps p = 1 and stays out). Each "
        "p-value the correction changed names it beside the figure; p is the raw one.")


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    before, after = build_runs(tmp_path_factory.mktemp("holm"))
    out = tmp_path_factory.mktemp("cmp")
    result = CliRunner().invoke(cli, ["compare", str(before), str(after), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out, json.loads((out / names.COMPARISON_JSON).read_text(encoding="utf-8"))


def _test(data, metric, model):
    (ev,) = data["evaluators"]
    (entry,) = [e for e in ev["metrics"] if e["metric"] == metric and e["model"] == model]
    return entry["test"]


def test_the_json_names_the_correction_and_its_family(compared):
    _, data = compared
    # m1's model_passes: McNemar b = 0, c = 8, raw p = 2 / 2^8 = 0.0078125; the family holds the six tests
    # with a differing pair (passes, failures and generation failures of m1 and m2): Holm gives 6p.
    m1 = _test(data, "model_passes", "m1")
    assert (m1["p_value"], m1["p_adjusted"], m1["correction"], m1["family_size"]) == (0.0078125, 0.046875, "holm", 6)
    # m2: one discordant pair, p = 1; Holm leaves it at 1 (it stays named: it is in the family).
    m2 = _test(data, "model_passes", "m2")
    assert (m2["p_value"], m2["p_adjusted"], m2["correction"], m2["family_size"]) == (1.0, 1.0, "holm", 6)
    # Parse failures never differ: out of the family, no correction, p = 1 as it is.
    parse = _test(data, "model_parse_failures", "m1")
    assert (parse["p_value"], parse["p_adjusted"], parse["correction"], parse["family_size"]) == (1.0, 1.0, None, 6)
    problem = data["problems"][0]
    assert (problem["problem_attrs"]["correction"], problem["problem_attrs"]["family_size"]) == ("holm", 6)
    assert "(Holm-adjusted over the evaluator's 6 tests: 0.04688, below 0.05)" in problem["description"]


def test_the_report_says_so_beside_each_changed_figure(compared):
    out, _ = compared
    summary = (out / names.COMPARISON_MD).read_text(encoding="utf-8").splitlines()
    row = next(line for line in summary if line.startswith("| Model passes | m1 |"))
    assert row.endswith("| mcnemar-exact | 0.007812 | 0.04688 (Holm, 6 tests) | 8 | 0 |")
    # An unchanged p-value carries no note.
    row = next(line for line in summary if line.startswith("| Model passes | m2 |"))
    assert row.endswith("| mcnemar-exact | 1 | 1 | 0 | 1 |")
    assert NOTE in summary
    page = (out / names.COMPARISON_HTML).read_text(encoding="utf-8")
    assert "<td>0.007812</td><td>0.04688 (Holm, 6 tests)</td>" in page
    assert f'<p class="note holm">{html.escape(NOTE)}</p>' in page
