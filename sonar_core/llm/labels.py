"""Constrained verdicts: the probability of each answer label, from label scores or top tokens.

A labelled request (``LLMRequest.labels``) asks the judge to choose one of a few answers. A
backend that can see probabilities turns them into one distribution over the labels:

* the ``local`` backend scores each label as the continuation of the prompt (summed
  log-probability of its tokens): :func:`label_distribution` is the softmax of those scores;
* an OpenAI-compatible endpoint gives the first answer token's top alternatives with their
  log-probabilities: :func:`labels_from_top_tokens` adds each token's probability to the label it
  starts (case- and leading-space-insensitive) and normalises over the labels.

The chosen label is the most probable one; its probability among the labels is the row's
``judge_confidence``.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

__all__ = ["label_distribution", "labels_from_top_tokens", "token_label", "choose"]


def label_distribution(scores: dict[str, float], temperature: float = 1.0) -> dict[str, float]:
    """Softmax of ``scores`` (log-probabilities or logits), divided by ``temperature``, in the labels' order."""
    scaled = {label: score / temperature for label, score in scores.items()}
    top = max(scaled.values())
    weights = {label: math.exp(value - top) for label, value in scaled.items()}
    total = math.fsum(weights.values())
    return {label: weight / total for label, weight in weights.items()}


def _norm(text: str) -> str:
    return text.lstrip().lower()


def token_label(token: str, labels: Sequence[str]) -> str | None:
    """The label a first answer token stands for: the label it spells exactly, else the only label it
    begins (case and leading spaces ignored); None for a token that begins no label or several."""
    text = _norm(token)
    if not text:
        return None
    exact = [label for label in labels if _norm(label) == text]
    if exact:
        return exact[0]
    started = [label for label in labels if _norm(label).startswith(text)]
    return started[0] if len(started) == 1 else None


def labels_from_top_tokens(top: Iterable[tuple[str, float]], labels: Sequence[str]) -> dict[str, float] | None:
    """Each label's share of the probability the top tokens give the labels; None when no token is a label."""
    mass = {label: 0.0 for label in labels}
    seen = set()
    for token, logprob in top:
        if token in seen:  # an endpoint may repeat a token: count it once
            continue
        seen.add(token)
        label = token_label(token, labels)
        if label is not None and logprob is not None and math.isfinite(logprob):
            mass[label] += math.exp(logprob)
    total = math.fsum(mass.values())
    if total <= 0.0:
        return None
    return {label: value / total for label, value in mass.items()}


def choose(probabilities: dict[str, float], draw: float | None = None) -> str:
    """The most probable label (the first of equals, in the labels' order); with ``draw`` in [0, 1),
    the label whose cumulative probability first exceeds it (sampling)."""
    if draw is None:
        return max(probabilities, key=lambda label: probabilities[label])
    cumulative = 0.0
    for label, probability in probabilities.items():
        cumulative += probability
        if draw < cumulative:
            return label
    return next(reversed(probabilities))
