"""Summarization completeness pinned by value through the evaluator (not only its geometry helpers).

The run's embedding service is replaced by a table of hand-chosen sentence vectors, so the value the
evaluator writes for a row is known: 1/3 by hand on a text of three sentences (no reduction), and on a
text of eight sentences the value of UMAP as documented (fitted on the text's sentences, min(5, n - 2)
dimensions, min(15, n - 1) neighbours, random_state 0, one thread) followed by the snapping and the
three segment distance, both written out again here.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from sonar_core.models import EmbeddingService
from sonar_core.testing import make_context, make_row
from sonar_plugins.consistency.summac import PERCENTILE_BINS
from sonar_plugins.consistency.summarization_faithfulness import SummarizationFaithfulnessEvaluator
from tiny_models import classifier_folder


class TableEmbeddings(EmbeddingService):
    """The run's embedding service, whose vector for each sentence is given instead of computed."""

    def __init__(self, vectors: dict[str, list[float]]):
        super().__init__(device="cpu")
        self.vectors = vectors
        self.asked: list[list[str]] = []

    def embed(self, texts: list[str], model: str | None = None) -> np.ndarray:
        self.asked.append(list(texts))
        return np.array([self.vectors[t] for t in texts], dtype=np.float64)


@pytest.fixture(scope="module")
def nli_and_conv(tmp_path_factory):
    folder = classifier_folder(tmp_path_factory.mktemp("nli"), ["entailment", "neutral", "contradiction"])
    weights = tmp_path_factory.mktemp("conv") / "conv.bin"
    torch.save({"mlp.weight": torch.full((1, len(PERCENTILE_BINS) - 1), 0.5), "mlp.bias": torch.zeros(1),
                "layer_final.weight": torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]),
                "layer_final.bias": torch.zeros(2)}, weights)
    return folder, weights


def _completeness(nli_and_conv, vectors: dict[str, list[float]], text: list[str], summary: list[str]) -> float:
    folder, weights = nli_and_conv
    embeddings = TableEmbeddings(vectors)
    params = SummarizationFaithfulnessEvaluator.validate_params({"nli_model": str(folder),
                                                                 "summac_conv_model": str(weights)})
    evaluator = SummarizationFaithfulnessEvaluator(params, make_context(embeddings=embeddings))
    [result] = evaluator.evaluate([make_row(test_case_key="t", model_key="m", input=" ".join(text),
                                            actual_output=" ".join(summary))])
    assert embeddings.asked == [text + summary]  # the sentences as the evaluator split them, text first
    return result.values["completeness"]


def test_completeness_by_hand_on_three_sentences(nli_and_conv):
    text = ["The storm reached the coast at night.", "Many homes in the state were damaged.",
            "Customers can file a claim online."]
    summary = ["A storm hit the coast.", "Nobody knows what happened next.", "Homes were damaged badly."]
    vectors = dict(zip(text, [[0.0, 0.0], [4.0, 0.0], [0.0, 3.0]]))
    vectors.update(zip(summary, [[0.5, 0.0], [10.0, 10.0], [3.9, 0.2]]))
    # Three text sentences: no reduction. Text distances 4, 3, 5: median 4. (0.5, 0) snaps to (0, 0) at 0.5;
    # (10, 10) is 11.7 from (4, 0), its nearest: dropped; (3.9, 0.2) snaps to (4, 0) at 0.22.
    # Three segment distance of the text: longest 5 ((4,0)-(0,3)), from its ends the longest further
    # segments 4 and 3: 12. Of the kept points (0,0), (4,0): 4, no other point. 4 / 12 = 1/3.
    assert _completeness(nli_and_conv, vectors, text, summary) == pytest.approx(1 / 3, abs=1e-12)


def _three_segment(points: list[np.ndarray]) -> float:
    if len(points) < 2:
        return 0.0
    d = {(i, j): float(np.linalg.norm(points[i] - points[j])) for i, j in itertools.combinations(range(len(points)), 2)}
    (a, b), longest = max(d.items(), key=lambda item: item[1])
    others = [i for i in range(len(points)) if i not in (a, b)]
    if not others:
        return longest
    far = lambda end: max(float(np.linalg.norm(points[end] - points[i])) for i in others)  # noqa: E731
    return longest + far(a) + far(b)


def _by_definition(context: np.ndarray, summary: np.ndarray) -> float:
    """Snap each summary point to its nearest context point within the median context distance; kept
    points' three segment distance over the context's, at most 1."""
    pairs = [float(np.linalg.norm(context[i] - context[j])) for i, j in itertools.combinations(range(len(context)), 2)]
    limit = float(np.median(pairs))
    kept = set()
    for point in summary:
        distances = [float(np.linalg.norm(point - c)) for c in context]
        nearest = int(np.argmin(distances))
        if distances[nearest] <= limit:
            kept.add(nearest)
    if not kept:
        return 0.0
    return min(1.0, _three_segment([context[i] for i in sorted(kept)]) / _three_segment(list(context)))


def test_completeness_with_the_umap_reduction(nli_and_conv):
    import umap

    words = ["one", "two", "three", "four", "five", "six", "seven", "eight"]
    text = [f"This is sentence {w} of the text." for w in words]
    summary = ["It restates sentence one.", "It restates sentence four.", "It restates sentence six.",
               "It says something else entirely."]
    rng = np.random.default_rng(3)
    context = rng.normal(size=(8, 6))
    # Three summary sentences with the vectors of text sentences 0, 3 and 5, one far from every text sentence.
    summary_vectors = np.stack([context[0], context[3], context[5], np.full(6, 25.0)])
    vectors = dict(zip(text, context.tolist()))
    vectors.update(zip(summary, summary_vectors.tolist()))
    value = _completeness(nli_and_conv, vectors, text, summary)

    # The documented reduction, fitted here on the text's 8 sentences: 5 dimensions, 7 neighbours.
    reducer = umap.UMAP(n_components=min(5, 8 - 2), n_neighbors=min(15, 8 - 1), random_state=0, n_jobs=1)
    reduced = reducer.fit_transform(context)
    expected = _by_definition(reduced, reducer.transform(summary_vectors))
    assert value == pytest.approx(expected, abs=1e-6)  # UMAP's layout is float32
    # The case tells the reduction apart from none (0.775 reduced, 0.563 not), and the value from its
    # complement.
    assert expected == pytest.approx(0.7752, abs=1e-4)
    assert _by_definition(context, summary_vectors) == pytest.approx(0.5632, abs=1e-4)
