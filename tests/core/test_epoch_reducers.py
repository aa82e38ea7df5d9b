"""Epoch reducers with missing epochs and any k (docs/epochs.md): each reducer by hand, Inspect's reducer
test cases, a ready dataset with a skipped and an absent epoch, and pass@2 / pass^2 end to end through
`sonar run` against a scripted host.

Inspect's cases are those of inspect_ai's tests/scorer/test_reducers.py (``_test_simple_reducers_impl``):
scores 6, 0, 0, 0, 8, 4 (and a NaN), pass when at least the threshold value.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from judge_server import JudgeServer
from sonar_core import api
from sonar_core.cli import cli
from sonar_core.contract import Metric
from sonar_core.errors import ConfigError
from sonar_core.findings.epoch_reducers import pass_at, pass_hat, reduce_values
from test_epochs import EVALUATOR_DIR, _board, _cycling

FLAG = Metric("f", "F", "a 0/1 verdict", threshold=0.5)
LOWER = Metric("l", "L", "a 0/1 failure flag", higher_is_better=False, threshold=0.5)
SCORE = Metric("s", "S", "a score out of 10", value_range=(0.0, 10.0), threshold=1.0)
UNGRADED = Metric("u", "U", "no threshold", threshold=math.inf)
MODEL_LEVEL = Metric("m", "M", "one value per model", model_level=True)
INSPECT = [6, 0, 0, 0, 8, 4]


def test_the_estimators_are_the_binomial_formulas():
    # pass@k = 1 - C(n - c, k) / C(n, k); pass^k = C(c, k) / C(n, k), exact and rounded once: 1 - 10/15 is
    # 1/3 (the float expression 1 - 10 / 15 rounds twice, to 0.33333333333333337).
    assert pass_at(6, 1, 2) == 1 / 3 == pytest.approx(1 - 10 / 15, abs=1e-15)
    assert pass_hat(4, 3, 2) == 3 / 6 == 0.5
    assert pass_at(5, 0, 2) == 0.0 and pass_hat(5, 0, 2) == 0.0        # c = 0
    assert pass_at(5, 4, 2) == 1.0                                     # n - c = 1 < k: every draw holds a pass
    assert pass_at(5, 5, 5) == 1.0 and pass_hat(5, 5, 5) == 1.0
    assert pass_at(5, 1, 1) == 0.2 and pass_hat(5, 1, 1) == 0.2        # k = 1: the pass rate


@pytest.mark.parametrize("with_nan", [False, True])
def test_inspects_reducer_test_cases(with_nan):
    values = INSPECT + ([float("nan")] if with_nan else [])  # a NaN epoch is left out, as in Inspect
    # correct = 3 at threshold 1 (6, 8, 4); also 3 at threshold 2.
    assert reduce_values(SCORE, values, "pass_at_2") == 0.8                      # 1 - C(3,2)/C(6,2) = 1 - 3/15
    assert reduce_values(SCORE, values, "pass_at_3", threshold=2.0) == 0.95      # 1 - C(3,3)/C(6,3) = 1 - 1/20
    assert reduce_values(SCORE, values, "pass_at_5") == 1.0                      # n - c = 3 < 5
    assert reduce_values(SCORE, values, "pass_at_5", threshold=2.0) == 1.0
    assert reduce_values(SCORE, values, "pass_hat_2") == 0.2                     # C(3,2)/C(6,2) = 3/15
    assert reduce_values(SCORE, values, "pass_hat_3", threshold=2.0) == 0.05     # C(3,3)/C(6,3) = 1/20
    assert reduce_values(SCORE, values, "pass_hat_5") == 0.0                     # c < k
    assert reduce_values(SCORE, values, "pass_hat_5", threshold=2.0) == 0.0


def test_no_value_where_fewer_epochs_were_scored_than_k():
    nan = float("nan")
    for reducer in ("pass_at_2", "pass_at_3", "pass_at_5", "pass_hat_2", "pass_hat_3", "pass_hat_5", "mean",
                    "majority", "pass_at_k", "pass_hat_k"):
        assert reduce_values(SCORE, [nan, nan, nan], reducer) is None, reducer   # all unscored
        assert reduce_values(SCORE, [], reducer, epochs=3) is None, reducer      # no row at all
    # k above the epochs that have a value: 2 of 4 epochs scored, pass_at_3 has no value.
    assert reduce_values(FLAG, [1, None], "pass_at_3", epochs=4) is None


def test_each_reducer_by_hand_with_missing_epochs():
    # Four epochs; "None" is a row without a value, a list shorter than 4 lacks rows (skipped, not answered).
    # mean: the mean of the values present.
    assert reduce_values(FLAG, [1, 0, None], "mean", epochs=4) == 0.5
    # majority: the lower median of the values present, worst first: [0, 1] -> 0, a tie fails;
    # [0, 1, 1] -> 1 (2 of 3 scored epochs pass).
    assert reduce_values(FLAG, [1, 0, None, None], "majority", epochs=4) == 0.0
    assert reduce_values(FLAG, [1, 1, 0, None], "majority", epochs=4) == 1.0
    assert reduce_values(FLAG, [1, 1], "majority", epochs=4) == 1.0
    # pass_hat_k / pass_at_k (k = 4): every epoch must be scored. 2 scored and passing is NOT a pass^k.
    assert reduce_values(FLAG, [1, 1, None, None], "pass_hat_k", epochs=4) is None
    assert reduce_values(FLAG, [1, 1], "pass_hat_k", epochs=4) is None
    assert reduce_values(FLAG, [0, 0, None], "pass_at_k", epochs=4) is None
    assert reduce_values(FLAG, [1, None, None, None], "pass_at_k", epochs=4) is None
    assert reduce_values(FLAG, [1, 1, 1, 1], "pass_hat_k", epochs=4) == 1.0
    assert reduce_values(FLAG, [1, 0, 1, 1], "pass_hat_k", epochs=4) == 0.0
    assert reduce_values(FLAG, [0, 0, 1, 0], "pass_at_k", epochs=4) == 1.0
    # pass_at_K / pass_hat_K (K < 4): over the m scored epochs, c passing, when m >= K.
    assert reduce_values(FLAG, [1, 0, 0, None], "pass_at_2", epochs=4) == pytest.approx(1 - 1 / 3)  # 1 - C(2,2)/C(3,2)
    assert reduce_values(FLAG, [1, 1, 0, None], "pass_hat_2", epochs=4) == pytest.approx(1 / 3)     # C(2,2)/C(3,2)
    assert reduce_values(FLAG, [1, 1], "pass_hat_2", epochs=4) == 1.0                               # C(2,2)/C(2,2)
    assert reduce_values(FLAG, [1, 0, None, None], "pass_at_3", epochs=4) is None                   # 2 < 3
    # K = the epochs is pass_at_k itself.
    assert reduce_values(FLAG, [0, 1, 0, 0], "pass_at_4", epochs=4) == 1.0
    assert reduce_values(FLAG, [1, 1, 1, None], "pass_hat_4", epochs=4) is None


def test_the_value_keeps_each_metrics_meaning():
    # A lower-is-better 0/1 flag (1 = fails): the value is the chance that a draw fails, 1 - p.
    # Epochs 0, 1, 1, 1: one passing epoch of 4. pass@2: p = 1 - C(3,2)/C(4,2) = 1/2; pass^2: p = 0.
    assert reduce_values(LOWER, [0, 1, 1, 1], "pass_at_2") == 0.5
    assert reduce_values(LOWER, [0, 1, 1, 1], "pass_hat_2") == 1.0
    assert reduce_values(LOWER, [0, 0, 0, 1], "pass_hat_2") == 0.5   # p = C(3,2)/C(4,2) = 1/2
    # K = epochs keeps a real epoch's value: the worst (pass^k) or the best (pass@k) on the metric's scale.
    assert reduce_values(SCORE, [6, 0.5, 8], "pass_hat_k") == 0.5
    assert reduce_values(SCORE, [6, 0.5, 8], "pass_at_3") == 8
    # No threshold (no verdict) and model-level metrics are averaged.
    assert reduce_values(UNGRADED, [0.2, 0.4, 0.9], "pass_at_2") == pytest.approx(0.5)
    assert reduce_values(MODEL_LEVEL, [0.7, 0.7, None], "pass_hat_k", epochs=3) == pytest.approx(0.7)


def _row(case: str, epoch: int, answer: str, expected: str = "Paris") -> dict:
    return {"key": f"{case}::a" + (f"::epoch{epoch}" if epoch else ""), "test_case_key": case, "model_key": "a",
            "epoch": epoch, "input": "Capital of France?", "expected_output": expected, "actual_output": answer}


def _missing_epochs_dataset(tmp_path: Path) -> Path:
    # tc1: epochs 0, 1 pass; epoch 2 is skipped (its expected answer is empty); epoch 3 has no row (never
    # answered). tc2: pass, fail, fail, pass: every epoch scored.
    rows = [_row("tc1", 0, "Paris."), _row("tc2", 0, "Paris."), _row("tc1", 1, "Paris."), _row("tc2", 1, "Lyon."),
            _row("tc1", 2, "Paris.", expected=""), _row("tc2", 2, "Lyon."), _row("tc2", 3, "Paris.")]
    path = tmp_path / "missing.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


# By hand, per reducer: tc1's value (None: unscored), tc2's, and the model's mean over the test cases with one.
BY_HAND = {
    "mean": (1.0, 0.5, 0.75),
    "majority": (1.0, 0.0, 0.5),          # tc1: 2 of 2 scored pass; tc2: 2 of 4, a tie fails
    "pass_at_k": (None, 1.0, 1.0),
    "pass_hat_k": (None, 0.0, 0.0),
    "pass_at_2": (1.0, 5 / 6, 11 / 12),   # tc1: 1 - C(0,2)/C(2,2) = 1; tc2: 1 - C(2,2)/C(4,2) = 5/6
    "pass_hat_2": (1.0, 1 / 6, 7 / 12),   # tc1: C(2,2)/C(2,2) = 1; tc2: C(2,2)/C(4,2) = 1/6
    "pass_at_3": (None, 1.0, 1.0),        # tc1: 2 scored < 3
    "pass_hat_3": (None, 0.0, 0.0),       # tc2: C(2,3)/C(4,3) = 0
}


@pytest.mark.parametrize("reducer", list(BY_HAND))
def test_a_ready_dataset_with_a_skipped_and_an_absent_epoch(tmp_path, reducer):
    tc1, tc2, model_value = BY_HAND[reducer]
    result = api.run(dataset=_missing_epochs_dataset(tmp_path), evaluators=["factual_knowledge"],
                     epoch_reducer=reducer, output_dir=tmp_path / "out", run_id="r", no_cache=True)
    assert result.exit_code == 0, result.message
    folder = next(result.run_dir.glob(EVALUATOR_DIR))
    board = _board(folder)
    assert board["data"]["a"]["factual_knowledge"] == pytest.approx(model_value, abs=1e-12)
    # The interval counts the test cases with a value: an unscored one is neither passed nor failed.
    assert board["intervals"]["a"]["factual_knowledge"]["n"] == 2 - (tc1 is None)
    index = json.loads((folder / "global_llm_heatmap_leaderboard" / "application_json" / "explanation.json")
                       .read_text(encoding="utf-8"))
    assert index["epochs"]["epochs"] == 4
    assert index["epochs"]["unscored_test_cases"] == ({"a": 1} if tc1 is None else {})
    unscored = folder / "work" / "epoch_unscored.json"
    if tc1 is not None:
        assert not unscored.exists()
        return
    label = {"pass_at_k": "pass@k", "pass_hat_k": "pass^k", "pass_at_3": "pass@3", "pass_hat_3": "pass^3"}[reducer]
    need = "all 4 epochs" if reducer.endswith("_k") else "at least 3 of the 4 epochs"
    reason = (f"{label} needs {need} scored; 2 were (epoch 2: skipped, empty 'expected_answer'; epoch 3: no row "
              "(not answered))")
    table = json.loads(unscored.read_text(encoding="utf-8"))
    assert table["columns"] == ["test_case_key", "model", "metric", "epochs_scored", "epochs", "reason"]
    assert table["rows"] == [["tc1", "a", "factual_knowledge", 2, 4, reason],
                             ["tc1", "a", "factual_knowledge_quasi_exact", 2, 4, reason]]
    # The note says it where the evaluator's notes are shown: its report.md, its HTML fragment, index.html.
    note = (f"1 test case(s) have no Factual knowledge value under {label}, neither passed nor failed "
            f"(work/epoch_unscored lists each): tc1 on a: {reason}.")
    assert f"> {note}" in (folder / "work" / "report.md").read_text(encoding="utf-8").splitlines()
    fragment = (folder / "global_html_fragment" / "text_html" / "explanation.html").read_text(encoding="utf-8")
    assert f'<p class="note">{note}</p>' in html.unescape(fragment)
    assert f'<p class="note">{note}</p>' in html.unescape((result.run_dir / "index.html").read_text(encoding="utf-8"))


def test_k_above_the_epochs_is_a_one_line_error_naming_the_setting(tmp_path):
    with pytest.raises(ConfigError) as error:
        api.run(dataset=_missing_epochs_dataset(tmp_path), evaluators=["factual_knowledge"], epoch_reducer="pass_at_5",
                output_dir=tmp_path / "out")
    path = tmp_path / "missing.json"
    assert str(error.value) == (f"{path}: 'epoch_reducer' pass_at_5: K = 5 is more than the 4 epoch(s) of the dataset "
                                "(its 'epoch' column); use a K from 1 to 4, or pass_at_k / pass_hat_k for all of them")
    assert not (tmp_path / "out").exists()
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps({"input": "q", "expected_output": "a"}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", "--test-suite", str(suite), "-e", "factual_knowledge", "--epochs", "3",
                                      "--epoch-reducer", "pass_hat_4", "-o", str(tmp_path / "o"),
                                      "--host", "{key: m, kind: openai_chat, model: m, base_url: 'http://127.0.0.1:9'}"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: <command line>: 'epoch_reducer' pass_hat_4: K = 4 is more than the 3 epoch(s) of the run ('epochs': 3); "
        "use a K from 1 to 3, or pass_at_k / pass_hat_k for all of them"]
    result = CliRunner().invoke(cli, ["run", "-d", "demo", "--epoch-reducer", "pass_at_0", "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: <command line>: configuration key 'epoch_reducer': unknown epoch reducer 'pass_at_0' (use mean, "
        "majority, pass_at_k, pass_hat_k, or pass_at_K / pass_hat_K with a whole number K from 1 to the number of "
        "epochs, e.g. pass_at_2)"]


@pytest.mark.parametrize("epochs, reducer, answers, expected", [
    # pass@2 of [1, 0, 0, 0, 0, 0]: 1 - C(5,2)/C(6,2) = 1 - 10/15.
    (6, "pass_at_2", ["Paris."] + ["Lyon."] * 5, 1 - math.comb(5, 2) / math.comb(6, 2)),
    # pass^2 of [1, 1, 1, 0]: C(3,2)/C(4,2) = 3/6 = 0.5.
    (4, "pass_hat_2", ["Paris."] * 3 + ["Lyon."], math.comb(3, 2) / math.comb(4, 2)),
])
def test_pass_at_and_hat_of_two_end_to_end_with_a_scripted_host(tmp_path, epochs, reducer, answers, expected):
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps({"test_case_key": "france", "input": "What is the capital of France?",
                                 "expected_output": "Paris"}) + "\n", encoding="utf-8")
    with JudgeServer(script=[("France", _cycling(*answers))], default="?") as host:
        result = CliRunner().invoke(cli, [
            "run", "--test-suite", str(suite), "-e", "factual_knowledge", "--epochs", str(epochs),
            "--epoch-reducer", reducer, "--no-cache", "--no-progress", "-o", str(tmp_path / "out"), "--run-id", "r",
            "--host", f"{{key: sampler, kind: openai_chat, model: m, base_url: '{host.base_url}', temperature: 0.7, "
                      f"max_concurrency: 1}}"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert host.calls == epochs
    run_dir = tmp_path / "out" / "r"
    rows = json.loads((run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [r["actual_output"] for r in sorted(rows, key=lambda r: r["epoch"])] == answers
    board = _board(next(run_dir.glob(EVALUATOR_DIR)))
    assert board["data"]["sampler"]["factual_knowledge"] == pytest.approx(expected, abs=1e-15)
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert run["interpretation_parameters"]["epoch_reducer"] == reducer


def test_a_last_epoch_the_host_never_answered_is_still_missing(tmp_path):
    """The run asked 3 epochs; the host failed the third (a 500, no retry), so no row of epoch 2 exists
    anywhere. The test case still has 3 epochs: under pass^k it is unscored, not a pass of 2 epochs."""
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps({"test_case_key": "france", "input": "What is the capital of France?",
                                 "expected_output": "Paris"}) + "\n", encoding="utf-8")
    with JudgeServer(script=[("France", "Paris.")], server_error_every=3) as host:
        result = api.run(test_suite=suite, evaluators=["factual_knowledge"], epochs=3, epoch_reducer="pass_hat_k",
                         no_cache=True, output_dir=tmp_path / "out", run_id="r",
                         hosts=[{"key": "sampler", "kind": "openai_chat", "model": "m", "base_url": host.base_url,
                                 "temperature": 0.7, "max_concurrency": 1, "retries": 0}])
        assert host.calls == 3
    rows = json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text(encoding="utf-8"))
    assert [r["epoch"] for r in rows] == [0, 1]
    folder = next(result.run_dir.glob(EVALUATOR_DIR))
    assert _board(folder)["data"]["sampler"]["factual_knowledge"] is None
    table = json.loads((folder / "work" / "epoch_unscored.json").read_text(encoding="utf-8"))
    assert table["rows"][0] == ["france", "sampler", "factual_knowledge", 2, 3,
                                "pass^k needs all 3 epochs scored; 2 were (epoch 2: no row (not answered))"]
