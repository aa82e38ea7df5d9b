"""Context relevancy (judge): the catalogue's relevant context sentences / all context sentences, with the
sentences counted by Sonar's tokenizer and named, one labelled verdict each, by a scripted judge; ratios
worked out by hand."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

import sonar_core
from sonar_core import Input, names
from sonar_core.cli import cli
from sonar_plugins.judge.context_relevancy import ContextRelevancyJudgeEvaluator, context_sentences
from sonar_plugins.ragas.context_relevancy import RagasContextRelevanceEvaluator

from judge_server import JudgeServer, write_llm_configs

# Punkt splits each chunk: chunk 1 holds sentences 1-2, chunk 2 sentences 3-4.
EIFFEL = ["The Eiffel Tower is in Paris. It opened in 1889.", "The Louvre is a museum.  Paris has many bridges."]
HAMLET = ["William Shakespeare wrote Hamlet.", "Hamlet is a tragedy.", "Stratford is a market town."]
#: case -> (question, context, the sentences the scripted judge names relevant)
CASES = {
    "two_of_four": ("Where is the Eiffel Tower, and when did it open?", EIFFEL,
                    {"The Eiffel Tower is in Paris.", "It opened in 1889."}),
    "one_of_three": ("Who wrote Hamlet?", HAMLET, {"William Shakespeare wrote Hamlet."}),
    "none_of_three": ("What is the boiling point of water?", HAMLET, set()),
    "all_three": ("What kind of play is Hamlet, who wrote it, and where is Stratford?", HAMLET, set(HAMLET)),
    "three_of_four": ("Tell me about the Eiffel Tower and the Louvre.", EIFFEL,
                      {"The Eiffel Tower is in Paris.", "It opened in 1889.", "The Louvre is a museum."}),
    "unreadable": ("What is the Louvre?", EIFFEL, None),  # the judge answers "maybe" about sentence 3
}
#: case -> (relevant, all) by hand.
EXPECTED = {"two_of_four": (2, 4), "one_of_three": (1, 3), "none_of_three": (0, 3), "all_three": (3, 3),
            "three_of_four": (3, 4)}


def _asked(prompt: str) -> tuple[str, str]:
    """(question, the sentence asked about) of a prompt."""
    question = re.search(r"\[Question\]: (.*)\n", prompt).group(1)
    sentence = re.search(r"\[Sentence\]: \[\d+\] (.*)\n", prompt).group(1)
    return question, sentence


def _reply(prompt: str) -> str:
    question, sentence = _asked(prompt)
    case = next(c for c, (q, _, _) in CASES.items() if q == question)
    named = CASES[case][2]
    if named is None:
        return "maybe" if sentence == "The Louvre is a museum." else "yes"
    return "yes" if sentence in named else "no"


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("context_relevancy")
    rows = [{"test_case_key": case, "model_key": "rag", "input": question, "context": context,
             "actual_output": "an answer"} for case, (question, context, _) in CASES.items()]
    # a second model answering the first case: the same prompts, asked once and shared
    rows.append({**rows[0], "model_key": "other", "actual_output": "another answer"})
    dataset = tmp / "d.json"
    dataset.write_text(json.dumps(rows), encoding="utf-8")
    with JudgeServer(default=_reply) as server:
        result = sonar_core.run(dataset=str(dataset), evaluators=["context_relevancy"], output_dir=str(tmp / "out"),
                                run_id="r", llm_configs=str(write_llm_configs(tmp / "llm.yaml", server.base_url)),
                                llm_cache=str(tmp / "cache.sqlite"), calibrate=False)
        calls = list(server.requests)
    assert result.status == "success", result.message
    (folder,) = result.run_dir.glob("explainer_*")
    data = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
    other = next(r for r in data["results"] if r["model_key"] == "other")
    first = next(r for r in data["results"] if r["model_key"] == "rag" and r["test_case_key"] == other["test_case_key"])
    assert other["context_relevancy"] == first["context_relevancy"] == 0.5
    return {r["test_case_key"]: r for r in data["results"] if r["model_key"] == "rag"}, calls


def test_the_catalogue_id_is_the_judge_and_ragas_keeps_its_own():
    cls = ContextRelevancyJudgeEvaluator
    assert cls.id == "context_relevancy" and cls.requires_judge
    assert cls.required_inputs == (Input.QUESTION, Input.RETRIEVED_CONTEXT)
    assert cls.primary_metric().key == "context_relevancy" and cls.primary_metric().threshold == 0.75
    assert cls.labels == ("yes", "no")
    assert cls.calibration_labels == {True: "relevant", False: "irrelevant"}
    assert RagasContextRelevanceEvaluator.id == "ragas_context_relevance"


def test_one_labelled_question_per_sentence_with_the_context_numbered(judged):
    _, calls = judged
    # 4 + 3 + 3 + 3 + 4 + 4 sentences, each asked once (the second model's row of the first case shares its
    # prompts), each asking for log-probabilities (a labelled verdict)
    assert len(calls) == 21 and all(call.logprobs for call in calls)
    second = next(c.prompt for c in calls if _asked(c.prompt) == (CASES["two_of_four"][0], "It opened in 1889."))
    assert ("[Context]:\n[1] The Eiffel Tower is in Paris.\n[2] It opened in 1889.\n[3] The Louvre is a museum.\n"
            "[4] Paris has many bridges.\n************\n[Sentence]: [2] It opened in 1889.\n[END DATA]") in second


def test_scores_are_relevant_sentences_over_all_sentences(judged):
    rows, _ = judged
    for case, (relevant, total) in EXPECTED.items():
        assert rows[case]["context_relevancy"] == pytest.approx(relevant / total), case
        assert len(rows[case]["details"]["context_sentences"]) == total
    assert rows["two_of_four"]["details"]["relevant_sentences"] == [1, 2]
    assert rows["three_of_four"]["details"]["relevant_sentences"] == [1, 2, 3]
    assert rows["none_of_three"]["details"]["relevant_sentences"] == []
    # at or above 0.75 passes: 3 of 4 (exactly 0.75) and 3 of 3
    assert {case: rows[case]["context_relevancy_passes"] for case in EXPECTED} == \
        {"two_of_four": 0.0, "one_of_three": 0.0, "none_of_three": 0.0, "all_three": 1.0, "three_of_four": 1.0}
    assert rows["two_of_four"]["result_error_message"] == \
        "judge test-judge: relevant sentences 1, 2 of 4 (context relevancy 0.50)"
    assert rows["none_of_three"]["result_error_message"] == \
        "judge test-judge: relevant sentences none of 3 (context relevancy 0.00)"
    assert rows["all_three"]["judge_confidence"] == pytest.approx(1.0)


def test_a_sentence_without_a_readable_verdict_makes_the_row_a_parse_failure(judged):
    rows, _ = judged
    row = rows["unreadable"]
    assert row["context_relevancy"] is None and row["context_relevancy_parse_failures"] == 1.0
    assert row["result_error_message"] == ("judge test-judge: no readable verdict on sentence 3 of 4: expected "
                                           "'yes' or 'no', the answer holds none of them")
    assert row["details"]["judge_answers"][2] == ["maybe"]


def test_sentences_are_split_per_chunk_and_pieces_without_words_dropped():
    def split(text):
        return [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]

    assert context_sentences(["One.  Two\n words.", "...", "Three!"], split) == ["One.", "Two words.", "Three!"]


def test_calibration_on_its_set_with_a_judge_that_names_what_the_set_expects(tmp_path):
    """A judge that names every sentence of the set's relevant contexts and only the first of the irrelevant
    ones agrees with every label: kappa 1 on the shipped set (every irrelevant context has 3 or more
    sentences, so 1 named is below 0.75)."""
    from importlib import resources

    path = resources.files("sonar_plugins.judge") / "calibration" / "context_relevancy.jsonl"
    header, *items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    # every chunk of the set is one sentence, so the numbered sentences are the chunks
    label_of = {(item["input"], tuple(item["context"])): item["label"] for item in items}

    def reply(prompt: str) -> str:
        question, sentence = _asked(prompt)
        shown = tuple(re.findall(r"^\[\d+\] (.*)$", prompt, re.M))
        return "yes" if label_of[(question, shown)] == "relevant" or sentence == shown[0] else "no"

    with JudgeServer(default=reply) as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
        result = CliRunner().invoke(cli, ["judges", "calibrate", "-e", "context_relevancy", "--json",
                                          "--llm-configs", str(configs), "--llm-cache", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 0, result.output
    (measured,) = json.loads(result.output)["results"]
    assert (measured["items"], measured["accuracy"], measured["kappa"], measured["unreadable"]) == (40, 1.0, 1.0, 0)
    assert header["labels"] == ["relevant", "irrelevant"]
