"""One evaluator's verdict on one row of the drill-down, as the matrix and the case pages draw it.

``ev`` is the drill-down's view of an evaluator (:class:`~.drilldown._Evaluator`: its metrics, the
row cells from its summary, which of their values fail (concluded in
:mod:`sonar_core.findings.case_verdicts`), and whether its judge is untrusted). A verdict's ``status`` is its CSS
class: ``pass`` and ``fail`` (the primary metric's side of its threshold), ``na`` (no value), ``skip``
(an empty required input), and for an evaluator whose judge failed its calibration ``not-counted``
(scored with ``score_untrusted``: never drawn as a pass or a fail) or ``not-scored`` (its rows were not
scored).
"""

from __future__ import annotations

from typing import Any

from .views import VerdictView

__all__ = ["verdict", "NOT_COUNTED", "NOT_COUNTED_TEXT", "NOT_SCORED", "NOT_SCORED_TEXT"]

#: A verdict of an untrusted judge (scored with score_untrusted): its status (a CSS class) and its text.
NOT_COUNTED, NOT_COUNTED_TEXT = "not-counted", "not counted (untrusted judge)"
NOT_COUNTED_WHY = "not counted: the judge failed its calibration"
#: A row not scored because its evaluator's judge is untrusted.
NOT_SCORED, NOT_SCORED_TEXT = "not-scored", "not scored (untrusted judge)"


def verdict(ev: Any, row_key: str) -> VerdictView | None:
    """How one evaluator scored one row; None when the row was not routed to it."""
    cell = ev.cells.get(row_key)
    if cell is None:
        if row_key in ev.skipped:
            missing = ev.skipped[row_key].replace("_", " ")
            return {"ev": ev.index, "status": "skip", "text": "skipped", "value": None,
                    "why": f"skipped: empty {missing}", "metrics": [], "flags_answer": False, "flags_context": False}
        return None
    values, why = cell
    if ev.not_scored:  # nothing was asked of an untrusted judge: no verdict to show
        return {"ev": ev.index, "status": NOT_SCORED, "text": NOT_SCORED_TEXT, "value": None, "why": why or "",
                "metrics": [{"value": None, "status": "na"} for _ in ev.metrics], "flags_answer": False,
                "flags_context": False}
    metrics = []
    fails_answer = fails_any = False
    for value, fails, about_answer in zip(values, ev.fails[row_key], ev.answer_metrics):
        if value is None:
            metrics.append({"value": None, "status": "na"})
            continue
        metrics.append({"value": value, "status": "fail" if fails else "pass"})
        fails_any = fails_any or fails
        fails_answer = fails_answer or (fails and about_answer)
    primary = metrics[ev.primary_index] if ev.primary_index < len(metrics) else {"value": None, "status": "na"}
    value, status = primary["value"], primary["status"]
    confidence = ""
    if ev.confidence_index is not None and values[ev.confidence_index] is not None:
        confidence = f" · confidence {values[ev.confidence_index]:.2f}"
    if ev.untrusted and value is not None:
        # Scored with score_untrusted: the verdict is no evidence, so it is never drawn as a pass or a fail.
        # The message keeps what the judge said; the metrics keep their values, uncoloured.
        said = status if ev.boolean else format(value, ".2f")
        why = f"{NOT_COUNTED_WHY} (it said {said}{confidence})" + (f": {why}" if why else "")
        return {"ev": ev.index, "status": NOT_COUNTED, "text": NOT_COUNTED_TEXT, "value": value, "why": why,
                "metrics": [{**m, "status": "na" if m["value"] is None else NOT_COUNTED} for m in metrics],
                "flags_answer": False, "flags_context": False}
    if value is None:
        text = "n/a"
    elif ev.boolean:
        text = "✓ pass" if status == "pass" else "✗ fail"
    else:
        text = format(value, ".2f")
    text += confidence + (" (untrusted judge)" if ev.untrusted else "")
    # A leak found in the retrieved context withholds the context; any other failing metric
    # (the answer leaked, or could not be checked) withholds the answer and the context too,
    # since an answer's leak is often copied from its context.
    return {"ev": ev.index, "status": status, "text": text, "value": value, "why": why or "", "metrics": metrics,
            "flags_answer": ev.sensitive and fails_answer, "flags_context": ev.sensitive and fails_any}
