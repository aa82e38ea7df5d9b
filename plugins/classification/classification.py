"""Classification: compare predicted labels (actual answers) with true labels (expected answers).

Per model, the rows form a confusion matrix from which accuracy, precision, recall and F1 follow.
A binary task (the dataset's expected labels are at most two classes) uses the catalogue's
formulas on its positive label (TP / (TP + FP), ...); a multi-class task macro-averages them over
the classes. The core aggregates per-row values by their mean per model, so:

* ``accuracy`` is per row 1.0 (label matches) or 0.0; its mean is the model's accuracy;
* ``precision``, ``recall`` and ``f1`` are properties of the model's whole set of rows; every row
  of a model carries the model-level value, so the mean per model is exactly that value.

That is why the evaluator sets ``needs_all_rows``: the core must hand it all rows of the
dataset in one :meth:`ClassificationEvaluator.evaluate` call (metrics are computed per call).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Sequence

from sonar_core import Difference, Evaluator, Input, Metric, Param, Row, RowResult, Table

__all__ = ["ClassificationEvaluator", "ModelScores", "confusion_matrix", "normalize_label", "positive_label_of",
           "score_binary", "score_labels", "KNOWN_PAIRS"]

NORMALIZATIONS = ("none", "strip", "strip_lower")
#: How an empty predicted label is shown in the confusion matrix.
EMPTY_LABEL = "(empty)"
#: (affirmative, negative) label pairs whose affirmative is a binary task's positive label by default
#: (compared ignoring case).
KNOWN_PAIRS = (("yes", "no"), ("true", "false"), ("1", "0"), ("positive", "negative"))


def normalize_label(label: str, mode: str) -> str:
    """Normalise one label.

    ``none`` keeps it as is; ``strip`` trims it and collapses every internal whitespace run
    (spaces, tabs, newlines) to one space; ``strip_lower`` does that and lower-cases it.
    """
    if mode == "none":
        return label
    collapsed = " ".join(label.split())
    return collapsed.lower() if mode == "strip_lower" else collapsed


@dataclass
class ModelScores:
    """One model's confusion matrix and metrics.

    Attributes:
        labels: the classes averaged over: labels seen among the expected answers, sorted.
        extra_predicted: predicted labels that are no expected label (sorted), e.g. "maybe".
        confusion: (expected label, predicted label) -> number of rows.
        accuracy, precision, recall, f1: fractions in [0, 1]; precision/recall/F1 are macro
            averages over ``labels`` (:func:`score_labels`) or the positive label's
            (:func:`score_binary`).
        per_label: label -> (precision, recall, f1), each in [0, 1].
    """

    labels: list[str]
    extra_predicted: list[str]
    confusion: Counter
    accuracy: float
    precision: float
    recall: float
    f1: float
    per_label: dict[str, tuple[float, float, float]]


def confusion_matrix(pairs: Sequence[tuple[str, str]]) -> tuple[list[str], list[str], Counter]:
    """(classes, extra predicted labels, counts) of (expected, predicted) label pairs.

    The classes are the expected labels, sorted; the extra predicted labels are the predicted
    labels that are no class, sorted; counts maps (expected, predicted) -> number of rows.
    """
    labels = sorted({e for e, _ in pairs})
    extra = sorted({p for _, p in pairs} - set(labels))
    return labels, extra, Counter(pairs)


def score_labels(pairs: Sequence[tuple[str, str]]) -> ModelScores:
    """Confusion matrix and macro metrics of (expected, predicted) label pairs of one model.

    For every label L among the expected labels: TP = rows expected L and predicted L,
    FP = predicted L but expected another, FN = expected L but predicted another;
    precision_L = TP / (TP + FP), 0 when L was never predicted (sklearn's zero_division=0);
    recall_L = TP / (TP + FN); F1_L = 2 P R / (P + R), 0 when P + R = 0. The model's
    precision, recall and F1 are the unweighted means of those over the labels (macro).
    A predicted label that is no expected label is a wrong prediction: it lowers the recall
    of the true label but is not averaged over as a class of its own.
    """
    labels, extra, confusion = confusion_matrix(pairs)
    predicted_count: Counter = Counter(p for _, p in pairs)
    expected_count: Counter = Counter(e for e, _ in pairs)
    per_label: dict[str, tuple[float, float, float]] = {}
    for label in labels:
        tp = confusion[(label, label)]
        precision = tp / predicted_count[label] if predicted_count[label] else 0.0
        recall = tp / expected_count[label]
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_label[label] = (precision, recall, f1)
    n = len(labels)
    correct = sum(confusion[(label, label)] for label in labels)
    return ModelScores(
        labels=labels,
        extra_predicted=extra,
        confusion=confusion,
        accuracy=correct / len(pairs) if pairs else 0.0,
        precision=sum(v[0] for v in per_label.values()) / n if n else 0.0,
        recall=sum(v[1] for v in per_label.values()) / n if n else 0.0,
        f1=sum(v[2] for v in per_label.values()) / n if n else 0.0,
        per_label=per_label,
    )


def positive_label_of(classes: Sequence[str], given: str | None) -> str:
    """The positive label of a binary task whose expected labels are ``classes`` (one or two).

    ``given`` (the ``positive_label`` parameter, normalised) wins and must be one of the classes
    unless they are a known pair's (e.g. ``no`` alone, positive ``yes``); else the affirmative of a
    known pair (:data:`KNOWN_PAIRS`, ignoring case) that holds every class; else the only class of a
    one-class task. Anything else raises ValueError asking for the parameter.
    """
    shown = ", ".join(repr(c) for c in classes)
    pair = next((p for p in KNOWN_PAIRS if {c.casefold() for c in classes} <= set(p)), None)
    if given is not None:
        if given in classes or (pair is not None and given.casefold() in pair):
            return given
        raise ValueError(f"classification: positive_label {given!r} is none of the expected labels {shown}")
    if pair is not None:
        return next((c for c in classes if c.casefold() == pair[0]), pair[0])
    if len(classes) == 1:
        return classes[0]
    raise ValueError(f"classification: the expected labels {shown} form a binary task with no known positive "
                     f"label; set the parameter positive_label to one of them")


def score_binary(pairs: Sequence[tuple[str, str]], positive: str) -> ModelScores:
    """Confusion matrix and the catalogue's metrics of one model's label pairs on a binary task.

    TP = rows expected ``positive`` and predicted it, FP = predicted ``positive`` but expected the
    other label, FN = expected ``positive`` but predicted anything else; precision = TP / (TP + FP)
    (0 when ``positive`` was never predicted), recall = TP / (TP + FN) (0 when it is never expected),
    F1 = 2 P R / (P + R) (0 when P + R = 0); accuracy = share of rows predicted right (TP + TN).
    """
    scores = score_labels(pairs)
    tp = scores.confusion[(positive, positive)]
    predicted = sum(1 for _, p in pairs if p == positive)
    expected = sum(1 for e, _ in pairs if e == positive)
    precision = tp / predicted if predicted else 0.0
    recall = tp / expected if expected else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    scores.precision, scores.recall, scores.f1 = precision, recall, f1
    return scores


class ClassificationEvaluator(Evaluator):
    """Accuracy, precision, recall and F1 of predicted versus true labels, per model: of the positive
    label on a binary task, macro-averaged on a multi-class one."""

    id = "classification"
    display_name: ClassVar[str] = "Classification"
    tagline: ClassVar[str] = "Accuracy, precision, recall and F1 of predicted labels."
    description: ClassVar[str] = (
        "For models used as binary or multiclass classifiers: the expected answer is the true "
        "label and the actual answer the predicted label. Labels are compared after "
        "normalisation (by default surrounding whitespace trimmed, inner whitespace collapsed "
        "and case ignored). Per model the evaluator builds a confusion matrix and reports:\n\n"
        "- **Accuracy** (primary): share of rows whose predicted label equals the true label.\n"
        "- **Precision**, **Recall**, **F1**: TP / (TP + FP), TP / (TP + FN), 2PR / (P + R). On a "
        "**binary** task (the dataset's expected labels are at most two classes) they are the "
        "catalogue's, of the **positive label**: the parameter `positive_label`, else the "
        "affirmative of a known pair (yes/no, true/false, 1/0, positive/negative, ignoring case), "
        "else the only class of a one-class task; two other labels stop the evaluator with a one-line "
        "error asking for `positive_label`. On a **multi-class** task they are computed per class "
        "and **macro-averaged**, i.e. the unweighted mean over the classes that occur among that "
        "model's expected answers (a class the model never predicts has precision 0).\n\n"
        "Precision, recall and F1 describe a model's whole set of answers, so every row of a "
        "model carries the model's value; the per-row column of interest is accuracy (1 when "
        "the label is right, 0 when wrong)."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    category: ClassVar[str] = "Classification"
    #: The core must pass all rows of the dataset in one ``evaluate`` call: precision, recall
    #: and F1 are computed from each model's whole set of rows within that call.
    needs_all_rows: ClassVar[bool] = True
    parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "label_normalization",
            str,
            "strip_lower",
            "How labels are normalised before comparison: `none` (compared as given), `strip` "
            "(trim and collapse whitespace) or `strip_lower` (also ignore case).",
            choices=NORMALIZATIONS,
        ),
        Param(
            "positive_label",
            str,
            None,
            "The positive label of a binary task (normalised like the labels). Empty: the affirmative of "
            "a known pair (yes/no, true/false, 1/0, positive/negative, ignoring case); a multi-class task "
            "ignores it (macro average).",
        ),
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "accuracy",
            "Accuracy",
            "Share of rows whose predicted label equals the true label: (TP + TN) / all "
            "predictions. Per row 1 (correct) or 0 (wrong).",
            threshold=0.75,
            is_primary=True,
        ),
        Metric(
            "precision",
            "Precision",
            "Precision TP / (TP + FP) of the positive label on a binary task (0 when it is never "
            "predicted); on a multi-class task the macro average over the classes of the expected "
            "answers. A model-level value, repeated on each of the model's rows.",
            threshold=0.75,
            model_level=True,
        ),
        Metric(
            "recall",
            "Recall",
            "Recall TP / (TP + FN) of the positive label on a binary task; on a multi-class task "
            "the macro average over the classes of the expected answers. A model-level value, "
            "repeated on each of the model's rows.",
            threshold=0.75,
            model_level=True,
        ),
        Metric(
            "f1",
            "F1",
            "F1, 2 * precision * recall / (precision + recall), of the positive label on a binary "
            "task; on a multi-class task the macro average of the classes' F1. A model-level value, "
            "repeated on each of the model's rows.",
            threshold=0.75,
            model_level=True,
        ),
    )
    differences: ClassVar[tuple[Difference, ...]] = (
        Difference(
            "precision, recall and F1 of a multi-class task: the catalogue gives the binary formulas "
            "only; Sonar macro-averages them over the classes of the expected answers",
            "a multi-class task has no single positive label for TP / (TP + FP) to count",
            "compare multi-class precision, recall and F1 with H2O Sonar's knowing they are macro averages",
            field="formula",
        ),
        Difference(
            "labels are compared after normalisation (label_normalization, default strip_lower: surrounding "
            "whitespace trimmed, inner whitespace collapsed, case ignored); the catalogue compares them as given",
            "labels a model writes differ in case and spacing from the expected ones",
            "set label_normalization: none to compare labels exactly as given",
            field="formula",
        ),
    )

    def __init__(self, params: dict[str, Any], ctx) -> None:
        super().__init__(params, ctx)
        self._mode: str = self.params["label_normalization"]

    def _normalize(self, label: str | None) -> str:
        return normalize_label(label or "", self._mode)

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        # (true label, predicted label) of each row, normalised once and reused for the values.
        pairs = [(self._normalize(row.expected_output), self._normalize(row.actual_output)) for row in rows]
        classes = sorted({expected for expected, _ in pairs})
        by_model = _by_model(rows, pairs)
        positive: str | None = None
        if len(classes) <= 2 and classes:
            given = self.params.get("positive_label")
            positive = positive_label_of(classes, None if given is None else self._normalize(given))
            scores = {model: score_binary(model_pairs, positive) for model, model_pairs in by_model.items()}
        else:
            scores = {model: score_labels(model_pairs) for model, model_pairs in by_model.items()}
        results: list[RowResult] = []
        for row, (expected, predicted) in zip(rows, pairs):
            model = scores[row.model_key]
            correct = expected == predicted
            results.append(
                RowResult(
                    values={
                        "accuracy": 1.0 if correct else 0.0,
                        "precision": model.precision,
                        "recall": model.recall,
                        "f1": model.f1,
                    },
                    details={"expected_label": expected, "predicted_label": predicted,
                             **({} if positive is None else {"positive_label": positive})},
                    error_message=None if correct else f"predicted {predicted!r}, expected {expected!r}",
                )
            )
        return results

    def tables(self, scored: Sequence[tuple[Row, RowResult]]) -> list[Table]:
        """One confusion matrix per model (sorted by model key); cells count rows.

        Built from the normalised labels that :meth:`evaluate` put in each row's details, so
        no label is normalised twice. The core turns the table name into a safe file name.
        """
        pairs = [(result.details["expected_label"], result.details["predicted_label"]) for _, result in scored]
        by_model = _by_model([row for row, _ in scored], pairs)
        tables: list[Table] = []
        for model in sorted(by_model):
            labels, extra, counts = confusion_matrix(by_model[model])
            predicted_order = labels + extra
            tables.append(
                Table(
                    name=f"confusion_matrix_{model}",
                    title=f"Confusion matrix of {model} (rows: expected label, columns: predicted label)",
                    columns=["expected \\ predicted"] + [_shown(p) for p in predicted_order],
                    rows=[[_shown(e)] + [counts[(e, p)] for p in predicted_order] for e in labels],
                    model_key=model,
                )
            )
        return tables


def _by_model(rows: Sequence[Row], pairs: Sequence[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """Label pairs grouped by the model key of their row (``pairs[i]`` belongs to ``rows[i]``)."""
    grouped: dict[str, list[tuple[str, str]]] = {}
    for row, pair in zip(rows, pairs):
        grouped.setdefault(row.model_key, []).append(pair)
    return grouped


def _shown(label: str) -> str:
    return label if label else EMPTY_LABEL
