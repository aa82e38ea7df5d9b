"""Judge calibration: how often a judge's verdicts agree with a labelled set, beyond chance.

:func:`calibrate` runs a judge evaluator itself over its calibration set
(:mod:`.calibration_sets`), the items as rows and the given judge as the evaluator's judge, so
the real prompt, labels and parser are what is measured. Each item's predicted label is the
evaluator's ``calibration_labels`` of its verdict (pass / fail), or ``unreadable`` for a parse
failure. The figures (:func:`agreement_figures`):

* accuracy: the share of items whose predicted label is the set's;
* Cohen's kappa, ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the accuracy and
  ``p_e = sum_k (n_true_k / N) (n_pred_k / N)`` the agreement expected by chance from the two
  label frequencies. 1 is perfect agreement, 0 no better than chance (a judge that always
  answers one label scores exactly 0), below 0 worse than chance. When ``p_e`` is 1 (the set
  and the judge each use a single label) agreement beyond chance cannot be measured and kappa
  is defined as 0;
* per-label recall (of the items labelled k, the share predicted k) and the confusion matrix
  (true label -> predicted label -> count, ``unreadable`` as one more column).

Results are cached in ``judge-calibration.json`` next to the LLM response cache, keyed by the
judge's identity and sampling, the evaluator's prompt template, labels and parameters, and the
set file's SHA-256: asking again makes no call.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence, TypedDict

from ..errors import ConfigError
from ..params import ParamValues
from .configs import LLMIdentity
from .calibration_sets import CalibrationSet, CalibrationSetError, balanced_subset, load_calibration_set

__all__ = ["CalibrationRecord", "CalibrationResult", "CalibrationCache", "agreement_figures", "calibrate",
           "calibration_set_path", "load_evaluator_set", "cache_for", "UNREADABLE", "CACHE_FILE", "RESULT_VERSION"]

#: The predicted label of an item the judge gave no readable verdict on.
UNREADABLE = "unreadable"
#: The calibration cache's file name, in the response cache's folder.
CACHE_FILE = "judge-calibration.json"
#: Part of every cache key: a change in how results are computed starts afresh.
RESULT_VERSION = 1
#: Parameters that do not change a judge's verdicts (which judge is the cache key's own part).
_NEUTRAL_PARAMS = {"custom_eval_judge_config_key", "calibration_set", "judge_repeats", "max_rows", "min_judge_kappa"}


class CalibrationRecord(TypedDict):
    """A :class:`CalibrationResult` as JSON: run.json's and the calibration cache's entry."""
    evaluator_id: str
    judge: str
    set_path: str
    set_sha256: str
    labels: list[str]
    items: int
    accuracy: float
    kappa: float
    recall: dict[str, float | None]
    confusion: dict[str, dict[str, int]]
    unreadable: int
    mean_confidence: float | None
    seconds: float
    cached: bool
    set_items: int
    judge_identity: LLMIdentity


@dataclass
class CalibrationResult:
    """One judge measured on one evaluator's calibration set (what ``run.json`` may record)."""

    evaluator_id: str
    judge: str
    set_path: str
    set_sha256: str
    labels: list[str]
    items: int
    accuracy: float
    kappa: float
    recall: dict[str, float | None]
    confusion: dict[str, dict[str, int]]
    unreadable: int
    mean_confidence: float | None
    seconds: float = 0.0
    cached: bool = False
    #: How many items the whole set has (``items`` is fewer when a run calibrated on a subset).
    set_items: int = 0
    judge_identity: LLMIdentity = field(default_factory=LLMIdentity)

    def as_dict(self) -> CalibrationRecord:
        return asdict(self)  # type: ignore[return-value]  # asdict gives exactly the fields


def agreement_figures(truth: Sequence[str], predicted: Sequence[str],
                      labels: Sequence[str]) -> tuple[float, float, dict[str, float | None], dict[str, dict[str, int]]]:
    """Accuracy, Cohen's kappa, per-label recall and the confusion matrix (see the module docstring).

    ``predicted`` may hold labels outside ``labels`` (``unreadable``): they count as disagreements
    and as one more column of the matrix.
    """
    n = len(truth)
    if n == 0 or n != len(predicted):
        raise ValueError("truth and predicted must be non-empty and of equal length")
    columns = list(labels) + sorted({p for p in predicted if p not in labels})
    confusion = {t: {p: 0 for p in columns} for t in labels}
    for t, p in zip(truth, predicted):
        confusion[t][p] += 1
    agree = sum(confusion[k][k] for k in labels)
    p_o = agree / n
    true_counts = {k: sum(confusion[k].values()) for k in labels}
    pred_counts = {p: sum(confusion[t][p] for t in labels) for p in columns}
    p_e = sum(true_counts[k] * pred_counts[k] for k in labels) / (n * n)
    kappa = 0.0 if p_e >= 1.0 else (p_o - p_e) / (1.0 - p_e)
    recall = {k: (confusion[k][k] / true_counts[k] if true_counts[k] else None) for k in labels}
    return p_o, kappa, recall, confusion


def calibration_set_path(cls: type, params: ParamValues) -> Path | None:
    """The set of evaluator class ``cls``: the file its ``calibration_param`` names (BYOP), else
    ``calibration/<id>.jsonl`` next to its module; None when it has none."""
    param = getattr(cls, "calibration_param", None)
    if param:
        given = params.get(param)
        return Path(given).expanduser() if given else None
    try:
        module_file = inspect.getfile(cls)
    except (TypeError, OSError):
        return None
    path = Path(module_file).parent / "calibration" / f"{cls.id}.jsonl"
    return path if path.is_file() else None


def load_evaluator_set(cls: type, path: Path) -> CalibrationSet:
    """``cls``'s calibration set at ``path``, checked against the evaluator: its labels must be the
    evaluator's ``calibration_labels``, and a shipped set must name the evaluator (a user's set, given
    through ``calibration_param`` as BYOP's is, may name anything)."""
    wanted = tuple(dict.fromkeys(cls.calibration_labels.values()))
    return load_calibration_set(path, None if getattr(cls, "calibration_param", None) else cls.id, wanted)


def _template_hash(cls: type, evaluator: Any, params: ParamValues) -> str:
    """What of the evaluator decides its verdicts: id, prompt, labels, their meaning and parameters."""
    decisive = {k: v for k, v in params.items() if k not in _NEUTRAL_PARAMS}
    payload = {"evaluator": cls.id, "template": evaluator.template(), "labels": list(cls.labels),
               "calibration_labels": {str(k): v for k, v in cls.calibration_labels.items()},
               "answer_max_tokens": cls.answer_max_tokens, "params": decisive}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


class CalibrationCache:
    """Calibration results in one small JSON file (``{key: result}``), written whole and atomically."""

    def __init__(self, path: Path, read: bool = True) -> None:
        self.path = Path(path)
        self.read = read
        #: False in a dry run: results measured on placeholder answers are never kept.
        self.write = True
        self._lock = threading.Lock()

    def _load(self) -> dict[str, CalibrationRecord]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # absent or damaged: results are measured again
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> CalibrationRecord | None:
        if not self.read:
            return None
        with self._lock:
            entry = self._load().get(key)
        return entry if isinstance(entry, dict) else None

    def put(self, key: str, result: CalibrationRecord) -> None:
        if not self.write:
            return
        with self._lock:
            data = self._load()
            data[key] = result
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            # Key order kept: a result lists its labels in the set's order.
            temporary.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
            os.replace(temporary, self.path)


def _rows(calibration: CalibrationSet):
    from ..dataset import Row

    return [Row(key=item.id, input=item.input, expected_output=item.expected_output, context=list(item.context),
                actual_output=item.actual_output, model_key="calibration", test_case_key=item.id,
                conversation=list(item.conversation), expected_outcome=item.expected_outcome)
            for item in calibration.items]


def _check_inputs(cls: type, params: ParamValues, calibration: CalibrationSet) -> None:
    from ..contract import Input

    fields = {Input.QUESTION: "input", Input.EXPECTED_ANSWER: "expected_output",
              Input.RETRIEVED_CONTEXT: "context", Input.ACTUAL_ANSWER: "actual_output",
              Input.CONVERSATION: "conversation", Input.EXPECTED_OUTCOME: "expected_outcome"}
    for needed in cls.inputs_for(params):
        if needed not in fields:
            continue
        for item in calibration.items:
            value = getattr(item, fields[needed])
            if not (value.strip() if isinstance(value, str) else any(c if isinstance(c, dict) else c.strip()
                                                                     for c in value)):
                raise CalibrationSetError(f"calibration set {calibration.path}:{item.line}: {fields[needed]}: "
                                          f"empty, and {cls.id} needs it")


def calibrate(cls: type, params: ParamValues | None, service, judge_key: str | None = None, *,
              cache: CalibrationCache | None = None, set_path: Path | None = None,
              max_items: int | None = None) -> CalibrationResult:
    """Measure the judge ``judge_key`` (None: the service's default) on ``cls``'s calibration set.

    Args:
        cls: a judge evaluator class (``labels`` and ``calibration_labels`` declared).
        params: the evaluator's parameters (validated here); they may change its verdicts.
        service: the :class:`~sonar_core.llm.LLMService` whose client asks the judge.
        cache: where results are kept; None keeps none.
        set_path: the set to use instead of the evaluator's own.
        max_items: measure on a balanced subset of at most this many items
            (:func:`~.calibration_sets.balanced_subset`); None: the whole set.

    Raises:
        ConfigError: the evaluator has no calibration set, or the set is faulty
            (:class:`~.calibration_sets.CalibrationSetError`).
    """
    from ..contract import MetricRole
    from ..context import EvaluationContext
    from ..run_memo import RunMemo

    params = cls.validate_params(params or {})
    path = set_path or calibration_set_path(cls, params)
    if path is None:
        hint = (f" (give one with the parameter {cls.calibration_param})" if getattr(cls, "calibration_param", None)
                else "")
        raise ConfigError(f"evaluator {cls.id} has no calibration set{hint}")
    if not cls.calibration_labels:
        raise ConfigError(f"evaluator {cls.id} declares no calibration_labels")
    whole = load_evaluator_set(cls, path)
    calibration = balanced_subset(whole, max_items)
    _check_inputs(cls, params, calibration)
    key = service.judge_key(judge_key)
    client = service.client(key)
    evaluator = cls(params, EvaluationContext(memo=RunMemo(), llm=service, label=f"calibrate {cls.id}"))
    identity: LLMIdentity = {**client.identity, "temperature": client.config.temperature}
    cache_key = hashlib.sha256(json.dumps({"version": RESULT_VERSION, "judge": identity,
                                           "template": _template_hash(cls, evaluator, params),
                                           "set": calibration.sha256, "items": len(calibration.items)},
                                          sort_keys=True).encode()).hexdigest()
    if cache is not None:
        stored = cache.get(cache_key)
        if stored is not None:
            try:
                # The set is keyed by its content: the path is where this run read it, not the first run.
                return CalibrationResult(**{**stored, "judge": key, "cached": True, "set_path": str(path)})
            except TypeError:
                pass  # written by another version: measure again
    started = time.perf_counter()
    # The judge key travels as the evaluator's own parameter, as in a run.
    evaluator.params = {**params, cls.judge_param: key} if cls.judge_param else params
    results = list(evaluator.evaluate(_rows(calibration)))
    pass_key = next(m.key for m in cls.metrics if m.role is MetricRole.PASS)
    parse_key = next(m.key for m in cls.metrics if m.role is MetricRole.PARSE_FAILURE)
    predicted = []
    confidences = []
    for result in results:
        if result.values.get(parse_key) == 1.0:
            predicted.append(UNREADABLE)
        else:
            predicted.append(cls.calibration_labels[result.values.get(pass_key) == 1.0])
        confidence = result.values.get("judge_confidence")
        if confidence is not None:
            confidences.append(confidence)
    truth = [item.label for item in calibration.items]
    accuracy, kappa, recall, confusion = agreement_figures(truth, predicted, calibration.labels)
    result = CalibrationResult(
        evaluator_id=cls.id, judge=key, set_path=str(path), set_sha256=calibration.sha256,
        labels=list(calibration.labels), items=len(truth), accuracy=accuracy, kappa=kappa, recall=recall,
        confusion=confusion, unreadable=predicted.count(UNREADABLE),
        mean_confidence=sum(confidences) / len(confidences) if confidences else None,
        seconds=round(time.perf_counter() - started, 3), judge_identity=identity, set_items=len(whole.items))
    if cache is not None and not getattr(getattr(service, "ledger", None), "stopped", None):
        cache.put(cache_key, result.as_dict())  # (never a measurement the budget cut short: --max-cost)
    return result


def cache_for(service) -> CalibrationCache | None:
    """The calibration cache next to ``service``'s response cache (None when its cache is off)."""
    if service.cache_mode == "off":
        return None
    cache = CalibrationCache(Path(service.cache_path).parent / CACHE_FILE, read=service.cache_mode == "use")
    cache.write = not getattr(getattr(service, "ledger", None), "dry", False)  # a dry run writes nothing
    return cache
