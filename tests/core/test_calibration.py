"""Judge calibration: the agreement figures by hand, the set loader's errors, and `sonar judges calibrate`
against the scripted judge server (a perfect judge, a one-label judge, the cache, BYOP's own set)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from sonar_core.cli import cli
from sonar_core.llm.calibration import agreement_figures
from sonar_core.llm.calibration_sets import CalibrationSetError, load_calibration_set

from judge_server import JudgeServer, write_llm_configs

HERE = Path(__file__).parent
TOY_SET = HERE / "calibration" / "toy_judge.jsonl"
BYOP_SET = HERE / "calibration" / "byop_fixture.jsonl"


# -- the figures ---------------------------------------------------------------------------------

def test_accuracy_kappa_recall_and_confusion_by_hand():
    truth = ["p"] * 4 + ["a"] * 6
    predicted = ["p", "p", "p", "a"] + ["a"] * 5 + ["p"]
    accuracy, kappa, recall, confusion = agreement_figures(truth, predicted, ["p", "a"])
    # p_o = 8/10; p_e = (4*4 + 6*6) / 100 = 0.52; kappa = 0.28 / 0.48.
    assert accuracy == 0.8
    assert kappa == pytest.approx(0.28 / 0.48, abs=1e-12)
    assert recall == {"p": 0.75, "a": 5 / 6}
    assert confusion == {"p": {"p": 3, "a": 1}, "a": {"p": 1, "a": 5}}


def test_an_unreadable_verdict_is_a_disagreement_and_a_column():
    accuracy, kappa, recall, confusion = agreement_figures(["p", "p", "a", "a"], ["p", "unreadable", "a", "p"],
                                                           ["p", "a"])
    # p_o = 2/4; p_e = (2*2 + 2*1) / 16 = 0.375; kappa = 0.125 / 0.625 = 0.2.
    assert (accuracy, recall) == (0.5, {"p": 0.5, "a": 0.5})
    assert kappa == pytest.approx(0.2, abs=1e-12)
    assert confusion == {"p": {"p": 1, "a": 0, "unreadable": 1}, "a": {"p": 1, "a": 1, "unreadable": 0}}


def test_a_judge_that_always_answers_one_label_has_kappa_zero():
    accuracy, kappa, recall, _ = agreement_figures(["p", "p", "a", "a", "a"], ["a"] * 5, ["p", "a"])
    assert (accuracy, kappa, recall) == (0.6, 0.0, {"p": 0.0, "a": 1.0})


def test_kappa_is_zero_when_chance_agreement_is_certain():
    accuracy, kappa, recall, _ = agreement_figures(["a"] * 3, ["a"] * 3, ["p", "a"])
    assert (accuracy, kappa, recall) == (1.0, 0.0, {"p": None, "a": 1.0})


# -- the loader ----------------------------------------------------------------------------------

def test_the_fixture_set_loads():
    loaded = load_calibration_set(TOY_SET, "toy_judge", ("no", "yes"))
    assert [i.id for i in loaded.items] == [f"toy_judge-00{n}" for n in range(1, 7)]
    assert [i.line for i in loaded.items] == [2, 3, 4, 5, 6, 8]
    assert loaded.items[2].context == ("c",) and loaded.items[4].expected_output == "e"
    assert loaded.labels == ("yes", "no") and loaded.licence == "Apache-2.0" and len(loaded.sha256) == 64


HEADER = '{"calibration_set": "toy_judge", "version": 1, "labels": ["yes", "no"]}'
ITEM = '{"id": "x-1", "label": "yes", "input": "q", "actual_output": "a"}'


@pytest.mark.parametrize("lines, message", [
    ([HEADER, ITEM, '{"id": "x-2", "label": "maybe", "input": "q", "actual_output": "a"}'],
     "3: label: 'maybe' is not one of the header's labels ['yes', 'no']"),
    ([HEADER, '{"id": "x-1", "label": "yes", "input": "q"}'], "2: actual_output: missing"),
    ([HEADER, ITEM, '{"id": "x-1", "label": "no", "input": "q", "actual_output": "a"}'], "3: id: 'x-1' is used twice"),
    ([HEADER, '{"id": "x-1", "label": "yes", "input": 3, "actual_output": "a"}'], "2: input: expected text, got int"),
    ([HEADER, '{"id": "x-1", "label": "yes", "input": "q", "actual_output": "a", "contexts": []}'],
     "2: contexts: unknown field (expected actual_output, context, conversation, expected_outcome, expected_output, "
     "id, input, label, note)"),
    ([HEADER, '{"id": "x-1", "label": "yes", "input": "q", "actual_output": "a", "context": "c"}'],
     "2: context: expected a list of texts"),
    ([HEADER, "{not json"], "2: (line): not JSON (Expecting property name enclosed in double quotes at column 2)"),
    ([HEADER], "2: (line): the set has no items"),
    (['{"calibration_set": "other", "version": 1, "labels": ["yes", "no"]}', ITEM],
     "1: calibration_set: names 'other', expected 'toy_judge'"),
    (['{"calibration_set": "toy_judge", "version": 1, "labels": ["yes", "maybe"]}', ITEM],
     "1: labels: ['yes', 'maybe'] differ from the evaluator's ['yes', 'no']"),
    (['{"calibration_set": "toy_judge", "version": "1", "labels": ["yes", "no"]}', ITEM], "1: version: expected a whole number"),
])
def test_a_bad_set_is_one_line_naming_file_line_and_field(tmp_path, lines, message):
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CalibrationSetError) as caught:
        load_calibration_set(path, "toy_judge", ("yes", "no"))
    assert str(caught.value) == f"calibration set {path}:{message}"


def test_a_missing_set_file_is_named(tmp_path):
    with pytest.raises(CalibrationSetError) as caught:
        load_calibration_set(tmp_path / "nope.jsonl")
    assert str(caught.value) == f"calibration set {tmp_path / 'nope.jsonl'}: cannot be read (No such file or directory)"


# -- the command ---------------------------------------------------------------------------------

def _toy_reply(prompt: str) -> str:
    return "yes" if "SHOULD-PASS" in prompt else "no"


def _calibrate(monkeypatch, tmp_path, server, *args: str):
    monkeypatch.syspath_prepend(str(HERE))
    configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
    result = CliRunner().invoke(cli, ["judges", "calibrate", "-p", "calibration_judge_plugin", "--llm-configs",
                                      str(configs), "--llm-cache", str(tmp_path / "cache.sqlite"), *args])
    return result


def test_a_judge_that_answers_every_item_right_has_kappa_one_and_a_second_ask_makes_no_call(monkeypatch, tmp_path):
    with JudgeServer(default=_toy_reply) as server:
        first = _calibrate(monkeypatch, tmp_path, server, "-e", "toy_judge", "--json")
        assert first.exit_code == 0, first.output
        calls = server.calls
        assert calls == 6 and all(c.logprobs for c in server.requests)
        data = json.loads(first.output)
        assert data["schema_version"] == "1.0" and data["judge"] == "test-judge" and data["skipped"] == []
        (result,) = data["results"]
        assert (result["evaluator_id"], result["items"], result["accuracy"], result["kappa"]) == ("toy_judge", 6, 1.0, 1.0)
        assert result["recall"] == {"yes": 1.0, "no": 1.0}
        assert result["confusion"] == {"yes": {"yes": 3, "no": 0}, "no": {"yes": 0, "no": 3}}
        assert (result["unreadable"], result["mean_confidence"], result["cached"]) == (0, 1.0, False)
        assert (result["trusted"], result["min_judge_kappa"]) == (True, 0.4)  # what a run would make of it
        assert result["set_path"] == str(TOY_SET)
        again = _calibrate(monkeypatch, tmp_path, server, "-e", "toy_judge")
        assert again.exit_code == 0, again.output
        assert server.calls == calls  # answered from the calibration cache
    assert ("Toy judge (toy_judge) judged by test-judge: 6 items, accuracy 100.0%, kappa 1.000 trusted, unreadable 0, "
            "mean confidence 1.00 (cached)") in again.output
    assert (tmp_path / "judge-calibration.json").is_file()


def test_a_judge_that_always_answers_one_label_has_kappa_zero(monkeypatch, tmp_path):
    with JudgeServer(default="yes") as server:
        result = _calibrate(monkeypatch, tmp_path, server, "-e", "toy_judge", "--json")
        shown = _calibrate(monkeypatch, tmp_path, server, "-e", "toy_judge")
        # A bar of the user's: -0.5 is cleared by kappa 0 (min_judge_kappa, as a run would use it).
        lenient = _calibrate(monkeypatch, tmp_path, server, "-e", "toy_judge", "--param", "toy_judge.min_judge_kappa=-0.5",
                             "--json")
    assert result.exit_code == 0, result.output
    (figures,) = json.loads(result.output)["results"]
    assert (figures["accuracy"], figures["kappa"]) == (0.5, 0.0)
    assert (figures["trusted"], figures["min_judge_kappa"]) == (False, 0.4)
    assert ("Toy judge (toy_judge) judged by test-judge: 6 items, accuracy 50.0%, kappa 0.000 untrusted (needs κ ≥ "
            "0.40), unreadable 0, mean confidence 1.00 (cached)") in shown.output
    (relaxed,) = json.loads(lenient.output)["results"]
    assert (relaxed["kappa"], relaxed["trusted"], relaxed["min_judge_kappa"]) == (0.0, True, -0.5)
    assert figures["recall"] == {"yes": 1.0, "no": 0.0}
    assert figures["confusion"] == {"yes": {"yes": 3, "no": 0}, "no": {"yes": 3, "no": 0}}


def test_unreadable_answers_from_a_server_without_logprobs_count_against_the_judge(monkeypatch, tmp_path):
    replies = lambda prompt: "yes" if "one" in prompt else "no" if "two" in prompt else "I cannot say"  # noqa: E731
    with JudgeServer(default=replies, ignore_logprobs=True) as server:
        result = _calibrate(monkeypatch, tmp_path, server, "-e", "toy_judge", "--json")
        asked = [c.logprobs for c in sorted(server.requests, key=lambda c: c.n)]
    (figures,) = json.loads(result.output)["results"]
    # Items 1 and 2 right, four unreadable: p_o = 2/6, p_e = (3*1 + 3*1) / 36.
    assert figures["unreadable"] == 4 and figures["mean_confidence"] is None
    assert figures["kappa"] == pytest.approx((2 / 6 - 6 / 36) / (1 - 6 / 36), abs=1e-12)
    assert figures["confusion"]["yes"] == {"yes": 1, "no": 0, "unreadable": 2}


def test_byop_is_calibrated_on_the_users_set_and_skipped_without_one(monkeypatch, tmp_path):
    with JudgeServer(default=lambda p: "true" if "POLITE" in p else "false") as server:
        given = _calibrate(monkeypatch, tmp_path, server, "-e", "byop", "--param",
                           f"byop.calibration_set={BYOP_SET}", "--json")
        assert given.exit_code == 0, given.output
        (figures,) = json.loads(given.output)["results"]
        assert (figures["evaluator_id"], figures["items"], figures["kappa"]) == ("byop", 4, 1.0)
        missing = _calibrate(monkeypatch, tmp_path, server, "-e", "byop")
        assert missing.exit_code == 2
        assert missing.output.strip() == ("error: evaluator byop has no calibration set "
                                          "(give one with the parameter calibration_set)")


def test_an_unknown_evaluator_and_a_bad_set_are_one_line_errors(monkeypatch, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"calibration_set": "byop", "version": 1, "labels": ["true", "false"]}\n'
                   '{"id": "b-1", "label": "yes", "input": "q", "actual_output": "a"}\n', encoding="utf-8")
    with JudgeServer() as server:
        unknown = _calibrate(monkeypatch, tmp_path, server, "-e", "nope")
        faulty = _calibrate(monkeypatch, tmp_path, server, "-e", "byop", "--param", f"byop.calibration_set={bad}")
        assert server.calls == 0
    assert unknown.exit_code == 2 and unknown.output.startswith(
        "error: 'nope' is not a judge evaluator with constrained verdicts (those are: byop, contact_information,")
    assert faulty.exit_code == 2
    assert faulty.output.strip() == (f"error: calibration set {bad}:2: label: 'yes' is not one of the header's "
                                     "labels ['true', 'false']")


def test_without_evaluator_ids_every_judge_with_a_set_is_calibrated(monkeypatch, tmp_path):
    with JudgeServer(default=_toy_reply) as server:
        result = _calibrate(monkeypatch, tmp_path, server, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    measured = {r["evaluator_id"] for r in data["results"]}
    assert "toy_judge" in measured and "byop" not in measured
    assert {"evaluator_id": "byop", "reason": "no calibration set (give one with --param byop.calibration_set=FILE)"} \
        in data["skipped"]
    assert not math.isnan(next(r for r in data["results"] if r["evaluator_id"] == "toy_judge")["kappa"])
