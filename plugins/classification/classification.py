"""Classification: compare predicted labels (actual answers) with true labels (expected answers).

Per model, the rows form a confusion matrix from which accuracy and macro-averaged precision,
recall and F1 follow. The core aggregates per-row values by their mean per model, so:

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

from sonar_core import Difference, Evaluator, Input, Metric, Param, RowResult, Table
from sonar_core.dataset import Row

__all__ = ["ClassificationEvaluator", "ModelScores", "confusion_matrix", "normalize_label", "score_labels"]

NORMALIZATIONS = ("none", "strip", "strip_lower")
#: How an empty predicted label is shown in the confusion matrix.
EMPTY_LABEL = "(empty)"


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
            averages over ``labels``.
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


class ClassificationEvaluator(Evaluator):
    """Accuracy and macro precision / recall / F1 of predicted versus true labels, per model."""

    id: ClassVar[str] = "classification"
    display_name: ClassVar[str] = "Classification"
    tagline: ClassVar[str] = "Accuracy, precision, recall and F1 of predicted labels."
    description: ClassVar[str] = (
        "For models used as binary or multiclass classifiers: the expected answer is the true "
        "label and the actual answer the predicted label. Labels are compared after "
        "normalisation (by default surrounding whitespace trimmed, inner whitespace collapsed "
        "and case ignored). Per model the evaluator builds a confusion matrix and reports:\n\n"
        "- **Accuracy** (primary): share of rows whose predicted label equals the true label.\n"
        "- **Precision**, **Recall**, **F1**: computed per class (TP / (TP + FP), "
        "TP / (TP + FN), 2PR / (P + R)) and then **macro-averaged**, i.e. the unweighted mean "
        "over the classes that occur among that model's expected answers. A class the model "
        "never predicts has precision 0. Binary tasks use the same macro formula over both "
        "classes, not the precision of a single positive class.\n\n"
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
            "Macro precision: per class TP / (TP + FP) (0 for a class never predicted), "
            "averaged over the classes of the expected answers. A model-level value, repeated "
            "on each of the model's rows.",
            threshold=0.75,
            model_level=True,
        ),
        Metric(
            "recall",
            "Recall",
            "Macro recall: per class TP / (TP + FN), averaged over the classes of the expected "
            "answers. A model-level value, repeated on each of the model's rows.",
            threshold=0.75,
            model_level=True,
        ),
        Metric(
            "f1",
            "F1",
            "Macro F1: per class 2 * precision * recall / (precision + recall), averaged over "
            "the classes of the expected answers. A model-level value, repeated on each of the "
            "model's rows.",
            threshold=0.75,
            model_level=True,
        ),
    )
    differences: ClassVar[tuple[Difference, ...]] = (
        Difference(
            what="precision, recall and F1: the catalogue's TP/(TP+FP) formulas; Sonar macro-averages them over "
                 "the labels, even for a yes/no task",
            why="one formula for binary and multi-class label sets",
            action="on a binary task Sonar's precision, recall and F1 are not the catalogue's: expected yes, yes, "
                   "no, no and predicted yes, no, no, no give 1.0, 0.5, 0.667 there and 0.833, 0.75, 0.733 here",
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
        scores = {model: score_labels(model_pairs) for model, model_pairs in _by_model(rows, pairs).items()}
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
                    details={"expected_label": expected, "predicted_label": predicted},
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
