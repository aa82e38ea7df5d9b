"""Judge-aware scoring: a run calibrates its judges first, and an untrusted judge's verdicts become one
problem about the judge, not problems, insights or a ranking about the models.

The judge is the scripted server; the evaluator is the fixture plugin's ``toy_judge`` (its set:
tests/core/calibration/toy_judge.jsonl, three ``yes`` and three ``no`` items). Model ``good`` answers
``SHOULD-PASS ...`` and model ``bad`` answers ``should fail ...``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sonar_core
from sonar_core import names
from sonar_core.errors import EXIT_OK, EXIT_PROBLEMS, ConfigError

from judge_server import JudgeServer, write_llm_configs

HERE = Path(__file__).parent


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


def _run(monkeypatch, tmp_path, server, run_id, **settings):
    monkeypatch.syspath_prepend(str(HERE))
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
    return sonar_core.run(dataset=str(_dataset(tmp_path)), evaluators=["toy_judge"], plugins=["calibration_judge_plugin"],
                          llm_configs=str(configs), llm_cache=str(tmp_path / "cache.sqlite"),
                          output_dir=str(tmp_path / "out"), run_id=run_id, **settings)


def _folder(result) -> Path:
    (folder,) = [p for p in result.run_dir.iterdir() if p.name.startswith("explainer_")]
    return folder


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _board(folder: Path) -> dict:
    return _json(folder / names.BOOL_LEADERBOARD / "application_json" / "leaderboard_0.json")


def _summary(folder: Path) -> dict:
    return _json(folder / names.EVALUATOR_SUMMARY)


def _events(result, message):
    lines = (result.run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["message"] == message]


def _reply_right(prompt: str) -> str:
    return "yes" if "SHOULD-PASS" in prompt else "no"


def test_a_judge_that_passes_its_calibration_is_trusted_and_its_verdicts_count(monkeypatch, tmp_path):
    with JudgeServer(default=_reply_right) as server:
        result = _run(monkeypatch, tmp_path, server, "trusted")
    assert result.exit_code == EXIT_OK
    record = _json(result.run_dir / names.RUN_JSON)
    calibration = record["judge_calibration"]["toy_judge"]
    assert (calibration["status"], calibration["judge"], calibration["items"], calibration["kappa"],
            calibration["accuracy"], calibration["min_kappa"]) == ("trusted", "test-judge", 6, 1.0, 1.0, 0.4)
    assert calibration["calibration"]["confusion"] == {"yes": {"yes": 3, "no": 0}, "no": {"yes": 0, "no": 3}}
    (event,) = _events(result, "judge calibrated")
    assert (event["evaluator"], event["status"], event["kappa"], event["items"], event["cached"]) == (
        "toy_judge", "trusted", 1.0, 6, False)
    # The verdicts count: model bad fails every row, a HIGH threshold problem about it.
    assert [(p["problem_type"], p["severity"], p["problem_attrs"].get("model_name")) for p in result.problems] == [
        ("accuracy", "HIGH", "bad")]
    folder = _folder(result)
    board = _board(folder)
    assert board["ranking"] == ["good", "bad"]
    assert _summary(folder)["view"]["board"]["judge_trust"]["status"] == "trusted"
    index = (result.run_dir / names.INDEX_HTML).read_text(encoding="utf-8")
    assert 'data-judge-trust="trusted"' in index
    assert ("Judge test-judge: calibrated, kappa 1.00, accuracy 100% on 6 labelled items; trusted at kappa 0.4 or "
            "more.") in index
    page = (folder / names.HTML_FRAGMENT / "text_html" / "explanation.html").read_text(encoding="utf-8")
    assert '<span data-figure="kappa">1.00</span>' in page and '<span data-figure="items">6</span>' in page


def test_an_untrusted_judge_scored_anyway_raises_one_problem_and_ranks_no_model(monkeypatch, tmp_path):
    # Always "no": every row fails, which would make two HIGH problems about the models; the
    # judge's kappa is 0 (it always answers one label), so those verdicts are not counted.
    # score_untrusted: the rows are scored all the same (tests/core/test_untrusted_gate.py: the default).
    with JudgeServer(default="no") as server:
        result = _run(monkeypatch, tmp_path, server, "untrusted", thresholds={"fine": 0.9}, score_untrusted=True)
        gated = _run(monkeypatch, tmp_path, server, "gated", fail_on_problems="HIGH", score_untrusted=True)
    assert result.exit_code == EXIT_OK and result.status == "success"
    assert gated.exit_code == EXIT_PROBLEMS
    assert gated.message == "1 problem(s) at or above severity HIGH (--fail-on-problems)"
    (problem,) = result.problems
    assert (problem["problem_type"], problem["severity"]) == ("judge", "HIGH")
    assert problem["description"] == ("Judge test-judge failed calibration for Toy judge: kappa 0.00, accuracy 50% "
                                      "on 6 items; its verdicts are not counted.")
    assert result.insights == []  # no best / worst model, no hardest test case
    folder = _folder(result)
    board = _board(folder)
    assert board["ranking"] == [] and board["models"]["bad"]["rank"] is None
    markdown = (folder / names.BOOL_LEADERBOARD / "text_markdown" / "explanation.md").read_text(encoding="utf-8")
    assert "Untrusted judge: models are not ranked. Judge test-judge is untrusted: kappa 0.00" in markdown
    assert "Ranked by" not in markdown
    # The verdicts are still written, each row marked.
    rows = _json(folder / names.EVAL_RESULTS / "application_json" / "explanation.json")
    assert {r["judge_trust"] for r in rows["results"]} == {"untrusted"} and len(rows["results"]) == 6
    assert rows["judge_trust"]["status"] == "untrusted"
    record = _json(result.run_dir / names.RUN_JSON)
    assert record["result"]["overall_result"]["best_model"] is None
    assert record["judge_calibration"]["toy_judge"]["status"] == "untrusted"
    index = (result.run_dir / names.INDEX_HTML).read_text(encoding="utf-8")
    assert 'data-judge-trust="untrusted"' in index and "(untrusted judge: not counted)" in index
    # The chart says so in its caption, and is drawn faded.
    assert '<figure class="chart-card untrusted"><figcaption><a href="#ev-toy_judge">Toy judge</a> ' \
           '<span class="judge-trust untrusted">untrusted judge: verdicts not counted</span>' in index


def test_a_second_run_calibrates_from_the_cache(monkeypatch, tmp_path):
    with JudgeServer(default=_reply_right) as server:
        _run(monkeypatch, tmp_path, server, "first")
        calls = server.calls
        second = _run(monkeypatch, tmp_path, server, "second")
        assert server.calls == calls  # calibration and verdicts both cached
    (event,) = _events(second, "judge calibrated")
    assert event["cached"] is True and event["kappa"] == 1.0


def test_without_calibration_the_judge_is_uncalibrated_and_its_verdicts_count(monkeypatch, tmp_path):
    with JudgeServer(default="no") as server:
        result = _run(monkeypatch, tmp_path, server, "off", calibrate=False)
        assert server.calls == 6  # the six rows; no calibration item
    (event,) = _events(result, "judge uncalibrated")
    assert event["reason"] == "calibration turned off (calibrate: false, --no-calibrate)"
    assert sorted(p["problem_attrs"].get("model_name") for p in result.problems) == ["bad", "good"]
    record = _json(result.run_dir / names.RUN_JSON)
    assert record["judge_calibration"]["toy_judge"]["status"] == "uncalibrated"
    assert "Judge test-judge: uncalibrated (calibration turned off" in (result.run_dir / names.INDEX_HTML).read_text(
        encoding="utf-8")


def test_a_faulty_calibration_set_stops_the_run_before_it_starts(monkeypatch, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"calibration_set": "byop", "version": 1, "labels": ["true", "false"]}\n', encoding="utf-8")
    with JudgeServer() as server:
        with pytest.raises(ConfigError) as caught:
            sonar_core.run(dataset=str(_dataset(tmp_path)), output_dir=str(tmp_path / "out"), run_id="bad",
                           llm_configs=str(write_llm_configs(tmp_path / "llm.yaml", server.base_url)),
                           evaluators=[{"id": "byop", "params": {"calibration_set": str(bad)}}])
        assert server.calls == 0
    assert str(caught.value) == f"evaluator 'byop': calibration set {bad}:2: (line): the set has no items"
    assert not (tmp_path / "out" / "bad").exists()
