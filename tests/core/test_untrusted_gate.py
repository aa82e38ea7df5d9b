"""Calibrate first, then score only with a judge you may believe (issue 34).

An evaluator whose judge fails its calibration is not scored by default: the judge is asked the
calibration items and nothing else, and every eligible row is written as not scored, with the reason.
``score_untrusted`` (run setting, evaluator entry, ``--score-untrusted``, the API keyword) scores it
anyway; its verdicts stay marked untrusted and count nowhere.

The judge is the scripted server, the evaluator the fixture plugin's ``toy_judge`` (its set:
tests/core/calibration/toy_judge.jsonl, items ``SHOULD-PASS one`` ... ``should fail six``). The
dataset's answers are ``SHOULD-PASS answer c1`` ... and ``should fail answer c1`` ..., so a scoring
prompt is told from a calibration prompt by the word ``answer``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import sonar_core
from sonar_core import names
from sonar_core.cli import cli
from sonar_core.errors import EXIT_OK, ConfigError
from sonar_core.results import open_run

from judge_server import JudgeServer, write_llm_configs

HERE = Path(__file__).parent
REASON = "not scored: judge test-judge is untrusted (κ = 0.00, needs κ ≥ 0.40)"


def _dataset(tmp_path: Path) -> Path:
    rows = []
    for case in ("c1", "c2", "c3"):
        rows.append({"test_case_key": case, "model_key": "good", "input": f"question {case}",
                     "actual_output": f"SHOULD-PASS answer {case}"})
        rows.append({"test_case_key": case, "model_key": "bad", "input": f"question {case}",
                     "actual_output": f"should fail answer {case}"})
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _settings(tmp_path: Path, server: JudgeServer) -> dict:
    return {"dataset": str(_dataset(tmp_path)), "plugins": ["calibration_judge_plugin"],
            "llm_configs": str(write_llm_configs(tmp_path / "llm.yaml", server.base_url)),
            "llm_cache": str(tmp_path / "cache.sqlite"), "output_dir": str(tmp_path / "out")}


def _scoring_prompts(server: JudgeServer) -> list[str]:
    return [p for p in server.answered if "answer c" in p]


def _calibration_prompts(server: JudgeServer) -> list[str]:
    return [p for p in server.answered if "answer c" not in p]


def _folder(run_dir: Path) -> Path:
    """The run's judge evaluator's folder."""
    (folder,) = [p for p in run_dir.iterdir() if p.name.startswith("explainer_") and "looping" not in p.name]
    return folder


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _rows(run_dir: Path) -> list[dict]:
    return _json(_folder(run_dir) / names.EVAL_RESULTS / "application_json" / "explanation.json")["results"]


def test_an_untrusted_judges_evaluator_is_not_scored_by_default(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(HERE))
    with JudgeServer(default="no") as server:  # always one label: kappa 0, untrusted
        result = sonar_core.run(evaluators=["toy_judge"], run_id="default", **_settings(tmp_path, server))
        # Only the six calibration items were asked; not one row.
        assert len(_calibration_prompts(server)) == 6 and server.calls == 6
        assert _scoring_prompts(server) == []
    assert result.exit_code == EXIT_OK and result.status == "success"
    # One HIGH judge problem, as for a judge scored anyway; its description says the rows were not scored.
    (problem,) = result.problems
    assert (problem["problem_type"], problem["severity"]) == ("judge", "HIGH")
    assert problem["description"] == ("Judge test-judge failed calibration for Toy judge: kappa 0.00, accuracy 50% "
                                      "on 6 items; its rows were not scored.")
    assert problem["problem_attrs"]["scored"] is False
    assert "--score-untrusted" in problem["actions_description"]
    assert result.insights == []
    # Every eligible row is in the results, not scored, with the reason.
    rows = _rows(result.run_dir)
    assert [(r["test_case_key"], r["model_key"]) for r in rows] == [
        ("c1", "good"), ("c1", "bad"), ("c2", "good"), ("c2", "bad"), ("c3", "good"), ("c3", "bad")]
    for row in rows:
        assert (row["fine"], row["not_fine"], row["pf"], row["judge_confidence"]) == (None, None, None, None)
        assert row["result_error_message"] == REASON
        assert row["details"] == {"not_scored": REASON}
        assert row["judge_trust"] == "untrusted"
    folder = _folder(result.run_dir)
    board = _json(folder / names.BOOL_LEADERBOARD / "application_json" / "leaderboard_0.json")
    assert board["ranking"] == [] and board["models"]["good"]["rank"] is None
    assert board["models"]["good"]["counts"]["pass"] == 0 and board["models"]["good"]["counts"]["fail"] == 0
    assert board["judge_trust"]["scored"] is False
    assert board["judge_trust"]["summary"] == (
        "Judge test-judge is untrusted: kappa 0.00, accuracy 50% on 6 labelled items; trusted at kappa 0.4 or "
        "more. Its rows were not scored (score_untrusted: true scores them anyway, not counted).")
    markdown = (folder / names.BOOL_LEADERBOARD / "text_markdown" / "explanation.md").read_text(encoding="utf-8")
    assert "Untrusted judge: models are not ranked." in markdown
    record = _json(result.run_dir / names.RUN_JSON)
    assert record["judge_calibration"]["toy_judge"]["scored"] is False
    assert record["judge_calibration"]["toy_judge"]["status"] == "untrusted"
    assert record["result"]["overall_result"]["best_model"] is None
    events = [json.loads(line) for line in (result.run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]
    (calibrated,) = [e for e in events if e["message"] == "judge calibrated"]
    assert (calibrated["status"], calibrated["scored"]) == ("untrusted", False)
    (skipped,) = [e for e in events if e["message"] == "rows not scored"]
    assert (skipped["evaluator"], skipped["rows"], skipped["reason"]) == ("toy_judge", 6, REASON)
    # The descriptor is written as for any evaluator.
    descriptor = _json(folder / names.RESULT_DESCRIPTOR)
    assert (descriptor["key"], descriptor["requires_judge"]) == ("toy_judge", True)
    assert (folder / names.DONE_MARKER).is_file()
    # The reports say so: the chart's caption, the evaluator page's "Weakest answers", the drill-down.
    index = (result.run_dir / names.INDEX_HTML).read_text(encoding="utf-8")
    assert ('<a href="#ev-toy_judge">Toy judge</a> <span class="judge-trust untrusted">not scored: untrusted '
            'judge</span>') in index
    assert "full evaluator report</a> · 0 rows scored, 6 not scored (untrusted judge)</p>" in index
    page = (folder / names.HTML_FRAGMENT / "text_html" / "explanation.html").read_text(encoding="utf-8")
    assert "0 rows scored · 6 not scored (untrusted judge) · 0 skipped" in page
    assert ("<p class=\"judge-trust untrusted\" data-not-counted>Not scored: judge test-judge is untrusted (κ = 0.00, "
            "needs κ ≥ 0.40), so no row was scored (score_untrusted: true scores them anyway, not counted).</p>") in page
    matrix = (result.run_dir / names.TEST_CASES_HTML).read_text(encoding="utf-8")
    assert matrix.count('class="not-scored"') == 6 and matrix.count("<b>not scored (untrusted judge)</b>") == 6
    assert 'class="fail"' not in matrix and "✗ fail" not in matrix
    # open_run reads the folder: the rows are there, without values, with the reason.
    opened = open_run(result.run_dir)
    frame = opened.rows("toy_judge")
    assert len(frame) == 6 and set(frame["result_error_message"]) == {REASON}
    assert frame["fine"].isna().all()


def test_the_cli_flag_scores_an_untrusted_judges_evaluator(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(HERE))
    with JudgeServer(default="no") as server:
        s = _settings(tmp_path, server)
        outcome = CliRunner().invoke(cli, ["run", "-d", s["dataset"], "-e", "toy_judge", "-p", "calibration_judge_plugin",
                                           "--llm-configs", s["llm_configs"], "--llm-cache", s["llm_cache"],
                                           "-o", s["output_dir"], "--run-id", "flag", "--no-progress",
                                           "--score-untrusted"])
        assert outcome.exit_code == 0, outcome.output
        assert len(_calibration_prompts(server)) == 6 and len(_scoring_prompts(server)) == 6
    run_dir = Path(s["output_dir"]) / "flag"
    rows = _rows(run_dir)
    # Scored, each verdict kept and marked: the judge said "no", a failing row, for both models.
    assert [(r["fine"], r["not_fine"], r["result_error_message"] == REASON, r["judge_trust"]) for r in rows] == [
        (0.0, 1.0, False, "untrusted")] * 6
    record = _json(run_dir / names.RUN_JSON)
    assert record["interpretation_parameters"]["score_untrusted"] is True
    assert record["judge_calibration"]["toy_judge"]["scored"] is True
    (problem,) = record["result"]["problems"]
    assert problem["description"].endswith("; its verdicts are not counted.")


@pytest.mark.parametrize(("run_setting", "entry_setting", "scored"), [
    (True, None, True),     # the run's key
    (False, True, True),    # the evaluator's entry
    (True, False, False),   # the entry wins over the run
])
def test_the_configuration_keys_decide_whether_an_untrusted_judge_scores(monkeypatch, tmp_path, run_setting,
                                                                       entry_setting, scored):
    monkeypatch.syspath_prepend(str(HERE))
    entry = {"id": "toy_judge", **({"score_untrusted": entry_setting} if entry_setting is not None else {})}
    with JudgeServer(default="no") as server:
        config = {**_settings(tmp_path, server), "name": "keys", "run_id": "keys", "evaluators": [entry],
                  "score_untrusted": run_setting}
        path = tmp_path / "run.yaml"
        path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
        result = sonar_core.run(path)
        assert len(_scoring_prompts(server)) == (6 if scored else 0)
    rows = _rows(result.run_dir)
    assert len(rows) == 6
    assert all((r["result_error_message"] == REASON) is (not scored) for r in rows)
    record = _json(result.run_dir / names.RUN_JSON)
    (written,) = record["interpretation_parameters"]["evaluators"]
    assert written.get("score_untrusted", "absent") == ("absent" if entry_setting is None else entry_setting)
    assert record["interpretation_parameters"]["score_untrusted"] is run_setting


def test_score_untrusted_on_an_evaluator_without_a_judge_is_a_configuration_error(tmp_path):
    with pytest.raises(ConfigError) as caught:
        sonar_core.run(dataset="demo", output_dir=str(tmp_path / "out"), run_id="bad",
                       evaluators=[{"id": "text_matching", "score_untrusted": True}])
    assert str(caught.value) == ("evaluator 'text_matching': score_untrusted: text_matching asks no judge "
                                 "(the setting is for judge evaluators)")
    assert not (tmp_path / "out" / "bad").exists()


def test_a_dry_run_says_which_scoring_calls_depend_on_the_calibration(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(HERE))
    with JudgeServer(default="no") as server:
        s = _settings(tmp_path, server)
        args = ["run", "-d", s["dataset"], "-e", "toy_judge", "-p", "calibration_judge_plugin", "--llm-configs",
                s["llm_configs"], "--llm-cache", s["llm_cache"], "-o", s["output_dir"], "--dry-run"]
        # Not calibrated yet: the six scoring calls are counted, and said to depend on the calibration.
        fresh = CliRunner().invoke(cli, [*args, "--json"])
        assert fresh.exit_code == 0, fresh.output
        estimate = json.loads(fresh.output)
        assert estimate["calls"]["test-judge"] == 12  # six calibration items, six rows
        assert estimate["conditional"] == [{"evaluator": "toy_judge", "judge": "test-judge", "min_kappa": 0.4,
                                            "calls": 6}]
        assert estimate["not_scored"] == []
        table = CliRunner().invoke(cli, args)
        assert ("'toy_judge': its 6 scoring call(s) (in the counts above) are made only if judge test-judge passes "
                "calibration (kappa >= 0.40), which a dry run cannot measure; an untrusted judge's rows are not "
                "scored (--score-untrusted scores them).") in table.output.splitlines()
        # --score-untrusted: the calls are made whatever the calibration says.
        anyway = json.loads(CliRunner().invoke(cli, [*args, "--json", "--score-untrusted"]).output)
        assert anyway["conditional"] == [] and anyway["calls"]["test-judge"] == 12
        assert server.calls == 0  # a dry run asks nothing
        # A real run calibrates (cached): the judge is known to be untrusted, and a dry run counts no scoring call.
        assert sonar_core.run(evaluators=["toy_judge"], run_id="real", **s).exit_code == EXIT_OK
        assert server.calls == 6
        known = json.loads(CliRunner().invoke(cli, [*args, "--json"]).output)
        assert known["calls"] == {"total": 0} and known["conditional"] == []
        assert known["not_scored"] == [{"evaluator": "toy_judge", "reason": REASON}]
        lines = CliRunner().invoke(cli, args).output.splitlines()
        assert (f"'toy_judge' will not be scored ({REASON}, as calibrated before); --score-untrusted scores it "
                "anyway.") in lines


def test_a_run_whose_untrusted_judge_scored_nothing_replays_and_resumes(monkeypatch, tmp_path):
    """Its folder is complete: its evidence pack replays to the same files, and a resume keeps it. (A built-in
    judge on the demo dataset: a replay loads no plugin module.)"""
    with JudgeServer(default="absent") as server:  # one label always: kappa 0
        s = {**_settings(tmp_path, server), "dataset": "demo", "plugins": [], "calibration_items": 4}
        result = sonar_core.run(evaluators=[{"id": "contact_information", "categories": ["privacy"]},
                                            "looping_detection"], run_id="packed", **s)
        assert result.exit_code == EXIT_OK and server.calls == 4  # the four calibration items, no row
        rows = _rows(result.run_dir)
        assert rows and {r["result_error_message"] for r in rows} == {REASON}
        pack = tmp_path / "packed.zip"
        packed = CliRunner().invoke(cli, ["pack", str(result.run_dir), "-o", str(pack)])
        assert packed.exit_code == 0, packed.output
        # A resume finds every folder done and asks nothing (the calibration comes from its cache).
        resumed = sonar_core.resume(result.run_dir)
        assert resumed.exit_code == EXIT_OK and server.calls == 4
    events = [json.loads(line) for line in (result.run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]
    assert [e["evaluator"] for e in events if e["message"] == "skipping finished evaluator"] == [
        "contact_information", "looping_detection"]
    assert _rows(result.run_dir) == rows
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("SONAR_HOME", str(home))
    replayed = CliRunner().invoke(cli, ["replay", str(pack), "-o", str(tmp_path / "replay")])  # the server is gone
    assert replayed.exit_code == 0, replayed.output
    rebuilt = tmp_path / "replay" / "packed"
    assert replayed.stdout == (f"Replayed into {rebuilt}: every file identical to the pack apart from timestamps, "
                               "durations, paths and how answers were obtained\n")
    assert _rows(rebuilt) == rows
