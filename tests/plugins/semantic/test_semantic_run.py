"""The six semantic evaluators in one run: one embedding per unique text, a local-folder model,
a missing model, and their place in `sonar models`."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sonar_core
from sonar_core import names
from sonar_core.testing import make_context
from sonar_core.models.embeddings import _PROCESS_CACHE
from sonar_core.models import ModelMissingError, get_store
from sonar_core.plugins import PluginManager

from semantic_helpers import TOLERANCE, evaluator, row
from sonar_plugins.semantic.answer_similarity import AnswerSemanticSimilarityEvaluator
from sonar_plugins.semantic.groundedness import GroundednessSemanticSimilarityEvaluator

SIX = ["answer_semantic_similarity", "answer_semantic_sentence_similarity", "answer_relevancy_sentence_similarity",
       "groundedness_semantic_similarity", "context_relevancy_soft_recall_precision", "step_alignment_completeness"]
QUESTION, EXPECTED = "How do I reset my password?", "Click Forgot password."
CONTEXT = [EXPECTED, "The link expires after 30 minutes."]
ROWS = [
    {"test_case_key": "reset", "model_key": "m1", "input": QUESTION, "expected_output": EXPECTED,
     "context": CONTEXT, "actual_output": EXPECTED},
    {"test_case_key": "reset", "model_key": "m2", "input": QUESTION, "expected_output": EXPECTED,
     "context": CONTEXT, "actual_output": "Open Settings. Choose Security."},
]
# Every text the six embed, by hand: the question, the expected answer (= context chunk 1 = m1's answer and
# its only sentence and step), context sentence 2, m2's whole answer (answer similarity) and its two
# sentences (sentence similarity, relevancy, groundedness; its steps by the sentence fallback).
UNIQUE = {QUESTION, EXPECTED, "The link expires after 30 minutes.", "Open Settings. Choose Security.",
          "Open Settings.", "Choose Security."}
# Unique texts each evaluator asks for in its one request (the batch holds both rows):
# similarity {E, m2}, sentences {E, S1, S2}, relevancy {Q, E, S1, S2}, groundedness {E, C2, S1, S2},
# context relevancy {Q, E, C2}, steps {E, C2, S1, S2}.
REQUESTED = 2 + 3 + 4 + 4 + 3 + 4


def _run(tmp_path, run_id: str, evaluators=None):
    dataset = tmp_path / "rows.json"
    dataset.write_text(json.dumps(ROWS), encoding="utf-8")
    return sonar_core.run(dataset=str(dataset), evaluators=evaluators or SIX, output_dir=str(tmp_path),
                          run_id=run_id)


def _minilm_texts() -> set[str]:
    folder = str(get_store().resolve("all-MiniLM-L6-v2").resolve())
    return {text for (model, text) in _PROCESS_CACHE._data if model == folder}


def test_six_evaluators_encode_each_unique_text_once_and_a_second_run_reuses_them(tmp_path):
    _PROCESS_CACHE.clear()
    first = _run(tmp_path, "first")
    assert first.status == "success", first.message
    assert [e["evaluator_id"] for e in first.executed] == SIX
    services = json.loads((first.run_dir / names.RUN_JSON).read_text())["services"]["embeddings"]
    assert services["models"]["all-MiniLM-L6-v2"] | {"seconds": 0} == {
        "requested": REQUESTED, "unique_encoded": len(UNIQUE), "cache_hits": REQUESTED - len(UNIQUE),
        "calls": 6, "seconds": 0}
    assert _minilm_texts() == UNIQUE

    second = _run(tmp_path, "second")
    again = json.loads((second.run_dir / names.RUN_JSON).read_text())["services"]["embeddings"]
    assert again["models"]["all-MiniLM-L6-v2"] | {"seconds": 0} == {
        "requested": REQUESTED, "unique_encoded": 0, "cache_hits": REQUESTED, "calls": 6, "seconds": 0}
    assert again["model_loads"] == []


def test_every_evaluator_folder_is_complete_and_scores_identical_texts_as_one(tmp_path):
    result = _run(tmp_path, "complete")
    values = {}
    for entry in result.executed:
        folder = result.run_dir / entry["job_location"]
        assert (folder / names.DONE_MARKER).is_file(), entry
        records = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
        values[entry["evaluator_id"]] = {r["model_key"]: r for r in records["results"]}
    # m1 answers with the expected answer, which is also the first context chunk, word for word.
    m1 = {evaluator_id: rows["m1"] for evaluator_id, rows in values.items()}
    for key, evaluator_id in (("answer_similarity", SIX[0]), ("mean_answer_similarity", SIX[1]),
                              ("min_answer_similarity", SIX[1]), ("groundedness", SIX[3])):
        assert m1[evaluator_id][key] == pytest.approx(1.0, abs=TOLERANCE), key
    # Context steps (sentence fallback): the two context sentences; m1 gives the first of them only.
    steps = m1["step_alignment_completeness"]
    assert (steps["edits"], steps["insertions"], steps["retrieved_context_steps"], steps["actual_answer_steps"]) == (
        1.0, 1.0, 2.0, 1.0)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A tiny sentence-transformers model saved to a folder: random BERT weights, a WordPiece
    tokenizer trained on a few sentences, mean pooling."""
    from sentence_transformers import SentenceTransformer, models
    from tiny_models import tiny_bert_folder

    root = tmp_path_factory.mktemp("tiny_model")
    corpus = ["Paris is the capital of France.", "The cat sat on the mat.", "Click forgot password.",
              "Claims are paid within ten days.", "Upload photos of the damage."]
    hf_folder = tiny_bert_folder(root / "hf", corpus)
    word = models.Transformer(str(hf_folder), max_seq_length=32)
    encoder = SentenceTransformer(modules=[word, models.Pooling(16, "mean")])
    folder = root / "tiny-st"
    encoder.save(str(folder))
    return folder


def test_a_local_folder_model_is_loaded_and_used(tiny_model):
    from sentence_transformers import SentenceTransformer

    ctx = make_context(device="cpu")
    rows = [row("m1", expected_output="The cat sat on the mat.", actual_output="The cat sat on the mat."),
            row("m2", expected_output="The cat sat on the mat.", actual_output="Paris is the capital of France.")]
    same, other = evaluator(AnswerSemanticSimilarityEvaluator, ctx, embedding_model=str(tiny_model)).evaluate(rows)
    assert same.values["answer_similarity"] == pytest.approx(1.0, abs=TOLERANCE)
    # Computed here from the folder loaded on its own, normalised by hand (the model has no Normalize module).
    direct = SentenceTransformer(str(tiny_model), device="cpu").encode(
        ["The cat sat on the mat.", "Paris is the capital of France."], convert_to_numpy=True)
    assert direct.shape == (2, 16)
    unit = direct / np.linalg.norm(direct, axis=1, keepdims=True)
    assert other.values["answer_similarity"] == pytest.approx(max(0.0, float(unit[0] @ unit[1])), abs=TOLERANCE)
    assert ctx.embeddings.stats[str(tiny_model)]["unique_encoded"] == 2


def test_a_missing_model_is_one_line_naming_it(tmp_path):
    missing = tmp_path / "no-such-model"
    ctx = make_context(device="cpu")
    ev = evaluator(GroundednessSemanticSimilarityEvaluator, ctx, embedding_model=str(missing))
    with pytest.raises(ModelMissingError) as error:
        list(ev.evaluate([row(context=["Paris."], actual_output="Paris.")]))
    assert str(error.value) == f"model '{missing}': no such folder (give the folder of a saved model)"
    # In a run, the check comes before any row is scored.
    with pytest.raises(ModelMissingError) as error:
        _run(tmp_path, "missing", [{"id": "step_alignment_completeness", "params": {"embedding_model": str(missing)}}])
    assert str(error.value) == (f"evaluator 'step_alignment_completeness': model '{missing}': no such folder "
                                f"(give the folder of a saved model)")
    assert not (tmp_path / "missing").exists()


def test_all_six_declare_the_embedding_model_so_the_core_can_check_and_list_it():
    plugins = PluginManager(autoload=True).load()
    for evaluator_id in SIX:
        cls = plugins.evaluators[evaluator_id]
        assert cls.model_params == {"embedding_model": "embedding"}, evaluator_id
        assert cls.validate_params({})["embedding_model"] == "all-MiniLM-L6-v2", evaluator_id
        assert cls.offline and not cls.requires_judge and cls.supports_gpu, evaluator_id
        assert cls.__module__.startswith("sonar_plugins.semantic."), evaluator_id
