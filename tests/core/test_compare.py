"""``sonar compare`` on two real runs built to differ on known rows (tests/compare_runs.py).

Every figure is computed here by hand: McNemar's p from the binomial distribution, Holm's
adjustment over the evaluator's family, Wilson's bounds from the closed form.
"""

from __future__ import annotations

import html
import json
import math
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sonar_core import names
from sonar_core.cli import cli

sys.path.insert(0, str(Path(__file__).parent.parent))
from compare_runs import CASES, build_runs  # noqa: E402


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return build_runs(tmp_path_factory.mktemp("compare"))


def _compare(*args):
    return CliRunner().invoke(cli, ["compare", *map(str, args)])


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def _entry(data, metric, model):
    (ev,) = [e for e in data["evaluators"] if e["evaluator_id"] == "text_matching"]
    (entry,) = [e for e in ev["metrics"] if e["metric"] == metric and e["model"] == model]
    return entry


def test_compare_reports_the_known_flips_deltas_and_tests(runs, tmp_path):
    before, after = runs
    out = tmp_path / "cmp"
    result = _compare(before, after, "-o", out, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads((out / names.COMPARISON_JSON).read_text(encoding="utf-8"))
    assert data["schema_version"] == names.COMPARISON_SCHEMA_VERSION == "1.0"
    assert json.loads(result.stdout) == data
    # Nothing in one run only is dropped.
    assert data["models"] == ["m1", "m2"] and data["models_only_a"] == [] and data["models_only_b"] == ["m3"]
    assert data["test_cases_only_a"] == ["only-a"] and data["test_cases_only_b"] == ["only-b"]
    assert data["test_cases_shared"] == 10
    assert [(e["label"], e["reason"]) for e in data["evaluators_only_a"]] == [
        ("bleu", "parameters differ"), ("rouge", "not run in the other run")]
    assert [(e["label"], e["reason"]) for e in data["evaluators_only_b"]] == [("bleu", "parameters differ")]
    assert [e["evaluator_id"] for e in data["evaluators"]] == ["text_matching"]

    # m1: 8 rows pass -> fail (tc0-tc7), none back. Means over each run's own 11 rows.
    m1 = _entry(data, "model_passes", "m1")
    assert m1["flips"] == {"pass_to_fail": CASES[:8], "fail_to_pass": []}
    assert m1["a"]["value"] == 1.0 and m1["b"]["value"] == pytest.approx(3 / 11)
    assert m1["delta"] == pytest.approx(3 / 11 - 1)
    low, high = _wilson(3, 11)
    assert (m1["b"]["ci_low"], m1["b"]["ci_high"], m1["b"]["n"]) == (pytest.approx(low), pytest.approx(high), 11)
    assert m1["a"]["ci_low"] == pytest.approx(_wilson(11, 11)[0]) and m1["a"]["method"] == "wilson"
    # McNemar over the 10 shared test cases: b = 0 (B passes where A fails), c = 8.
    p = 2 * sum(math.comb(8, i) for i in range(0 + 1)) / 2 ** 8
    assert p == 0.0078125
    test = m1["test"]
    assert (test["test"], test["n"], test["b"], test["c"]) == ("mcnemar-exact", 10, 0, 8)
    assert test["p_value"] == pytest.approx(p) and test["delta"] == pytest.approx(2 / 10 - 1)
    # Holm's family: the six tests with a differing pair (pass, failures and generation failures of
    # m1 and m2); retrieval and parse failures never differ, so they cannot reject and stay out.
    assert test["p_adjusted"] == pytest.approx(6 * p)
    assert m1["significant"] and m1["regression"]
    # m2: one row fail -> pass (tc5): McNemar b = 1, c = 0, p = 2 * P(X <= 0 | n = 1) = 1.
    m2 = _entry(data, "model_passes", "m2")
    assert m2["flips"] == {"pass_to_fail": [], "fail_to_pass": ["tc5"]}
    assert m2["test"]["p_value"] == 1.0 and m2["test"]["p_adjusted"] == 1.0 and not m2["regression"]
    assert m2["delta"] == pytest.approx(6 / 11 - 5 / 11)
    # A lower-is-better mirror goes up: a regression too; an unchanged metric has p = 1, unadjusted.
    assert _entry(data, "model_failures", "m1")["regression"]
    parse = _entry(data, "model_parse_failures", "m1")
    assert parse["test"]["p_value"] == parse["test"]["p_adjusted"] == 1.0 and parse["flips"]["pass_to_fail"] == []

    # The regressions are problems of type `regression`, naming the rows that failed.
    assert data["regressions"] == 3
    assert [(p["problem_type"], p["problem_attrs"]["metric"], p["problem_attrs"]["model_name"], p["severity"])
            for p in data["problems"]] == [("regression", "model_passes", "m1", "HIGH"),
                                           ("regression", "model_failures", "m1", "HIGH"),
                                           ("regression", "model_generation_failures", "m1", "HIGH")]
    assert data["problems"][0]["problem_attrs"]["test_case_keys"] == CASES[:8]
    # The file's problems are in H2O's shape: the HTML twin of the description sits beside it (written by
    # artifacts/, the comparison's findings hold plain text only).
    first = data["problems"][0]
    assert list(first)[:4] == ["schema_version", "description", "description_html", "actions_description"]
    assert first["description_html"] == html.escape(first["description"]) and "&gt;" not in first["description"]
    summary = (out / names.COMPARISON_MD).read_text(encoding="utf-8")
    assert "3 significant regression(s)" in summary and "Test cases only in B: only-b" in summary
    assert "| Model passes | m1 | 1.0000 [0.7412, 1.0000] n=11 | 0.2727 [0.0975, 0.5656] n=11 | -0.7273 **regression** |" in summary


def test_the_regression_gate_and_its_exit_codes(runs, tmp_path):
    before, after = runs
    gated = _compare(before, after, "-o", tmp_path / "g", "--fail-on-regression")
    assert gated.exit_code == 1
    assert gated.stderr.strip().splitlines()[-1] == "error: 3 significant regression(s) (--fail-on-regression)"
    # Swapped, B -> A is an improvement for m1: no regression, the gate passes.
    swapped = _compare(after, before, "-o", tmp_path / "s", "--fail-on-regression")
    assert swapped.exit_code == 0, swapped.output
    data = json.loads((tmp_path / "s" / names.COMPARISON_JSON).read_text(encoding="utf-8"))
    assert data["regressions"] == 0 and _entry(data, "model_passes", "m1")["flips"]["fail_to_pass"] == CASES[:8]


def test_runs_of_another_version_or_schema_are_refused_in_one_line(runs, tmp_path):
    before, after = runs
    other = tmp_path / "other"
    shutil.copytree(after, other)
    record = json.loads((other / names.RUN_JSON).read_text(encoding="utf-8"))
    record["versions"]["sonar"] = "0.0.1"
    (other / names.RUN_JSON).write_text(json.dumps(record), encoding="utf-8")
    result = _compare(before, other, "-o", tmp_path / "x")
    assert result.exit_code == 3
    assert result.stderr == "error: the runs come from different Sonar versions (0.1.0 and 0.0.1); compare runs of one version\n"
    record["schema_version"] = "9.9"
    (other / names.RUN_JSON).write_text(json.dumps(record), encoding="utf-8")
    result = _compare(before, other, "-o", tmp_path / "x")
    assert result.exit_code == 3
    assert result.stderr == f"error: {other / names.RUN_JSON}: schema_version '9.9', this Sonar reads '1.0'\n"
    result = _compare(before, tmp_path / "nowhere")
    assert result.exit_code == 3 and result.stderr == f"error: {tmp_path / 'nowhere'}: not a folder\n"
    assert not (tmp_path / "x").exists()


def test_the_page_escapes_and_links_each_flip_to_both_case_pages(runs, tmp_path):
    before, after = runs
    out = before.parent.parent / "page"  # beside reports/: the links climb one level
    assert _compare(before, after, "-o", out).exit_code == 0
    page = (out / names.COMPARISON_HTML).read_text(encoding="utf-8")
    for side, run in (("a", "before"), ("b", "after")):
        href = f"../reports/{run}/cases/{names.case_page_name('tc0')}"
        assert f'<a class="case-{side}" href="{href}">{side.upper()}</a>' in page
        assert (out / href).is_file()
    assert page.count('class="flip pass-to-fail"') == 3 * 8 and page.count('class="flip fail-to-pass"') == 3
    assert "default-src &#x27;none&#x27;" in page and "<script" not in page


def test_every_text_of_the_runs_is_escaped_on_the_page(tmp_path):
    from sonar_core.artifacts.comparison_dir import comparison_html
    from sonar_core.findings.comparison_types import (Comparison, EvaluatorComparison, Flips, MetricComparison,
                                                      OneRunOnly, RunRef, SideMean)

    hostile = '<script>window.__pwned=1</script>"><img src=x onerror=alert(1)>'
    side = SideMean(1.0, 0.5, 1.0, 3, "wilson")
    entry = MetricComparison(metric=hostile, metric_name=hostile, model=hostile, higher_is_better=True, primary=True,
                             threshold_a=0.5, threshold_b=0.5, a=side, b=SideMean(0.0, 0.5, 1.0, 3, "wilson"),
                             delta=-1.0, test=None, flips=Flips(pass_to_fail=(hostile,)), significant=False,
                             regression=False)
    evaluator = EvaluatorComparison(label_a=hostile, label_b=hostile, evaluator_id="x", parameters={}, folder_a="",
                                    folder_b="", shared_rows=1, rows_only_a=0, rows_only_b=0, test_cases_only_a=(),
                                    test_cases_only_b=(), metrics=(entry,))
    data = Comparison(sonar_version="0", confidence_level=0.95, bootstrap_resamples=10,
                      run_a=RunRef(hostile, str(tmp_path)), run_b=RunRef(hostile, str(tmp_path)), models=(),
                      models_only_a=(hostile,), models_only_b=(), test_cases_shared=1, test_cases_only_a=(hostile,),
                      test_cases_only_b=(), evaluators_only_a=(OneRunOnly(hostile, None, None, "not run in the other run"),),
                      evaluators_only_b=(), evaluators=(evaluator,), problems=(), partial={}, not_comparable=())
    page = comparison_html(data, tmp_path)
    assert "<script" not in page and "<img" not in page and "onerror=alert" in page  # as text only
    assert page.count("&lt;script&gt;window.__pwned=1&lt;/script&gt;&quot;&gt;&lt;img") == page.count("__pwned")
    assert "href" not in page  # no case page exists under tmp_path: no link is written



@pytest.fixture(scope="module")
def scored_runs(tmp_path_factory):
    """Two runs of BLEU (scores, not 0/1) whose answers vary by test case."""
    import sonar_core

    folder = tmp_path_factory.mktemp("scored")
    words = "the capital of france is paris and it lies on the seine".split()
    out = []
    for name, cut in (("before", 0), ("after", 2)):
        rows = [{"test_case_key": case, "model_key": model, "input": f"Where is Paris ({case})?",
                 "expected_output": " ".join(words),
                 "actual_output": " ".join(words[: 4 + (i + cut + offset) % 8])}
                for i, case in enumerate(CASES) for offset, model in enumerate(("m1", "m2"))]
        dataset = folder / f"{name}.json"
        dataset.write_text(json.dumps(rows), encoding="utf-8")
        result = sonar_core.run(dataset=str(dataset), evaluators=["bleu"], output_dir=str(folder / "reports"),
                                run_id=name)
        assert result.status == "success", result.message
        out.append(result.run_dir)
    return out[0], out[1]


def test_intervals_the_runs_stored_are_reused_and_equal_the_computed_ones(scored_runs, monkeypatch):
    """A run's leaderboard intervals are reused (no bootstrap draw) when its statistics settings are the
    comparison's; they are exactly the ones the comparison computes when it cannot reuse them."""
    from sonar_core.artifacts.run_reader import read_run
    from sonar_core.findings import comparison

    before, after = scored_runs
    a, b = read_run(before), read_run(after)
    stored = {key: entry for ev in a.evaluators for key, entry in ev.stored_intervals.items()}
    assert stored and a.statistics["bootstrap_resamples"] == 2000 and a.statistics["seed"] == 0
    computed = comparison.compare_runs(a, b)  # reuses
    draws = []
    real = comparison.bootstrap_mean_intervals
    monkeypatch.setattr(comparison, "bootstrap_mean_intervals", lambda *args: draws.append(args) or real(*args))
    comparison.compare_runs(a, b)
    assert draws == []  # every scored interval came from the runs' leaderboards
    for run in (a, b):
        for ev in run.evaluators:
            ev.stored_intervals.clear()
    fresh = comparison.compare_runs(a, b)
    assert draws  # now drawn: the same numbers
    assert fresh == computed
    # Another resample count is not the runs' setting: drawn again, not reused.
    draws.clear()
    a2, b2 = read_run(before), read_run(after)
    comparison.compare_runs(a2, b2, resamples=500)
    assert draws
