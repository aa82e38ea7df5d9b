"""Every written item's quality, measured before it is kept; the scores are stored on the item.

==================  ==========  ===============================================================
score               how         what it says
==================  ==========  ===============================================================
``groundedness``    judge       1 when the judge says every claim of the reference answer is in
                                the cited passages, 0 when not, None without a readable verdict
                                (not asked for unanswerable items)
``answerability``   judge       1 when the question can be answered from its passages alone; for
                                an unanswerable item 1 when the documents' closest chunks do
                                *not* answer it
``self_contained``  rule        0 when the question points at a text the asker cannot see
                                ("according to the passage", "im obigen Text"), else 1
``language_match``  detector    1 when question and answer are in the item's chunk language
                                (py3langid; a question under four words is not checked)
``near_duplicate``  embedding   cosine similarity of the question to the closest other item's
==================  ==========  ===============================================================

An item *passes* a check with a score of 1 (``near_duplicate``: below ``max_similarity``, the later
of two near-identical items failing). Its ``score`` is the share of counted checks it passes; the
judge's checks count only when the judge is trusted or uncalibrated (:mod:`sonar_core.findings.
judge_trust`), so an untrusted judge's verdicts are stored, marked, and drop nothing.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

import numpy as np

from ..findings.judge_trust import JudgeTrust
from .language import UNDETERMINED, detect
from .quality_judges import QUALITY_CHECKS, judge_rows
from .records import CheckedItem, ItemQuality, ItemText, RuleScores

__all__ = ["rule_scores", "judge_checks", "calibrate_checks", "combine", "SELF_REFERENCE", "RULE_CHECKS"]

RULE_CHECKS = ("self_contained", "language_match", "near_duplicate")
SELF_REFERENCE = re.compile(
    r"\b(?:according to (?:the|this) (?:text|passage|document|context|excerpt|section)"
    r"|(?:the|this) (?:above|following|given) (?:text|passage|excerpt|section|context)"
    r"|in (?:the|this) (?:passage|excerpt|context|text above)|the passages?\b|mentioned above|described above"
    r"|laut (?:dem|diesem) (?:text|abschnitt|dokument)|im (?:obigen|vorliegenden|genannten) (?:text|abschnitt)"
    r"|(?:dieser|diesem|obigen) (?:text|abschnitt)|oben genannt)", re.IGNORECASE)


def _language_ok(text: str, language: str, min_words: int) -> bool:
    if len(text.split()) < min_words:
        return True
    found = detect(text)
    return found in (language, UNDETERMINED)


def rule_scores(items: Sequence[ItemText], embed: Callable[[list[str]], np.ndarray],
                max_similarity: float) -> list[RuleScores]:
    """Rule and embedding scores of ``items`` (``{"key", "question", "answer", "language"}`` each, in plan
    order): self-containedness, language match, near-duplicate similarity (and ``duplicate_of``)."""
    scores: list[RuleScores] = []
    vectors = embed([i["question"] for i in items]) if items else np.zeros((0, 1), dtype=np.float32)
    sims = vectors @ vectors.T if len(items) else np.zeros((0, 0))
    kept: list[int] = []
    for row, item in enumerate(items):
        match = SELF_REFERENCE.search(item["question"])
        others = np.delete(sims[row], row) if len(items) > 1 else np.zeros(0)
        closest = float(others.max()) if len(others) else 0.0
        earlier = [(float(sims[row, j]), j) for j in kept if sims[row, j] >= max_similarity]
        record: RuleScores = {
            "self_contained": 0 if match else 1,
            "language_match": int(_language_ok(item["question"], item["language"], 4)
                                  and _language_ok(item["answer"], item["language"], 3)),
            "near_duplicate": round(max(0.0, min(1.0, closest)), 4),
        }
        if match:
            record["self_reference"] = match.group(0)
        if earlier:
            record["duplicate_of"] = items[max(earlier)[1]]["key"]
        else:
            kept.append(row)
        scores.append(record)
    return scores


def calibrate_checks(service, judge_key: str, batch_size: int, enabled: bool,
                     min_kappa: float = 0.4, max_items: int | None = None) -> dict[str, JudgeTrust]:
    """Each judged check's trust: measured on its calibration set (cached), or uncalibrated."""
    from ..llm.calibration import cache_for, calibrate

    trust: dict[str, JudgeTrust] = {}
    for name, cls in QUALITY_CHECKS.items():
        if not enabled:
            trust[name] = JudgeTrust.uncalibrated(judge_key, "calibration turned off (--no-calibrate)")
            continue
        result = calibrate(cls, {"batch_size": batch_size}, service, judge_key, cache=cache_for(service),
                           max_items=max_items)
        trust[name] = JudgeTrust.measured(result.as_dict(), min_kappa)
    return trust


def judge_checks(service, judge_key: str, batch_size: int, grounded: Sequence[CheckedItem],
                 answerable: Sequence[CheckedItem]) -> dict[str, dict[str, tuple[int | None, str]]]:
    """check -> item key -> (1, 0 or None, the judge's reason); items as :func:`judge_rows` takes them."""
    from ..context import EvaluationContext
    from ..run_memo import RunMemo

    found: dict[str, dict[str, tuple[int | None, str]]] = {}
    for name, items in (("groundedness", grounded), ("answerability", answerable)):
        cls = QUALITY_CHECKS[name]
        params = cls.validate_params({"batch_size": batch_size, cls.judge_param: judge_key})
        check = cls(params, EvaluationContext(memo=RunMemo(), llm=service, label=cls.id))
        results = list(check.evaluate(judge_rows(items))) if items else []
        values: dict[str, tuple[int | None, str]] = {}
        pass_key = next(m.key for m in cls.metrics if m.role.name == "PASS")
        parse_key = next(m.key for m in cls.metrics if m.role.name == "PARSE_FAILURE")
        for item, result in zip(items, results):
            if result.values.get(parse_key) == 1.0:
                values[item["key"]] = (None, result.error_message or "no readable verdict")
            else:
                values[item["key"]] = (int(result.values.get(pass_key) == 1.0), result.error_message or "")
        found[name] = values
    return found


def combine(rules: RuleScores, judged: dict[str, tuple[int | None, str]], trust: dict[str, JudgeTrust],
            unanswerable: bool) -> ItemQuality:
    """One item's quality record: every score, which checks counted, which failed, and its ``score``."""
    quality: ItemQuality = {}
    counted: list[str] = []
    failed: list[str] = []
    for name in ("groundedness", "answerability"):
        if name not in judged:
            quality[name] = None
            continue
        verdict, reason = judged[name]
        value = verdict if verdict is None or not (unanswerable and name == "answerability") else 1 - verdict
        quality[name] = value
        if value is None:
            quality.setdefault("notes", []).append(f"{name}: {reason}")
        elif trust[name].counts:
            counted.append(name)
            if value == 0:
                failed.append(name)
    quality.update({k: v for k, v in rules.items()})
    for name in ("self_contained", "language_match"):
        counted.append(name)
        if rules[name] == 0:
            failed.append(name)
    counted.append("near_duplicate")
    if rules.get("duplicate_of"):
        failed.append("near_duplicate")
    quality["counted"] = counted
    quality["failed"] = failed
    quality["score"] = round((len(counted) - len(failed)) / len(counted), 4)
    quality["judge_trust"] = {name: t.status for name, t in sorted(trust.items())}
    return quality
