"""A red-team run's outcomes read back from its folder, and its findings as JSON and as plain text.

:func:`read_outcomes` makes one :class:`~sonar_core.findings.redteam.AttackOutcome` per test case of the
expanded suite, host and epoch: the detector's verdict from its evaluator's results (JSON, or Parquet above the run's
``columnar_only_above``: :mod:`.columnar_rows`; each row's details carry ``outcome``, ``reason`` and the attack's provenance), else ``not_assessed`` with the reason, the
host's error from ``dataset/failed_items.json`` when the host never answered, so a run whose endpoint
died reads as not assessed, never as resisted. :func:`read_transcripts` reads the conversations of the
answers the report shows from ``dataset/answers.jsonl``. :func:`findings_record` and :func:`findings_lines`
write :class:`~sonar_core.findings.redteam.RedteamFindings` without computing anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import names
from ..errors import ConfigError
from ..findings.redteam_types import NOT_ASSESSED, AttackOutcome, DetectorQuality, Rate, RedteamFindings
from .benchmark_dir import graded_json
from .columnar_rows import saved_rows

__all__ = ["read_outcomes", "read_transcripts", "findings_record", "findings_lines", "rate_record", "quality_record"]


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _saved_rows(folder: Path, run_dir: Path) -> list[dict[str, Any]]:
    """An evaluator's rows (key, model and details), from its JSON or, above the run's
    ``columnar_only_above``, its Parquet; none when it has neither or they cannot be read."""
    try:
        return saved_rows(folder, run_dir, ["test_case_key", "model_key", "details"]) or []
    except Exception:  # unreadable JSON, or pyarrow's own errors for a damaged file: no verdicts, as before
        return []


def _suite(record: dict[str, Any]) -> list[dict[str, Any]]:
    path = Path(str((record.get("pipeline") or {}).get("test_suite") or ""))
    if not path.is_file():
        raise ConfigError(f"{path}: the run's red-team suite is gone; it is needed to read the run's outcomes")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    return [row for row in rows if isinstance(row, dict) and isinstance(row.get("attack"), dict)]


def read_outcomes(run_dir: str | Path) -> list[AttackOutcome]:
    """Every answer of a red-team run, judged (see the module docstring); ConfigError for a folder that is
    not a red-team run."""
    run_dir = Path(run_dir)
    record = _json(run_dir / names.RUN_JSON)
    if not isinstance(record, dict) or "redteam" not in (record.get("interpretation_parameters") or {}):
        raise ConfigError(f"{run_dir}: not a red-team run (its run.json has no 'redteam' settings)")
    epochs = int((record.get("interpretation_parameters") or {}).get("epochs") or 1)
    hosts = list(((record.get("pipeline") or {}).get("hosts") or {}).keys())
    verdicts: dict[tuple[str, str, int], dict[str, Any]] = {}
    for entry in (record.get("result") or {}).get("executed_explainers") or []:
        folder = run_dir / str(entry.get("job_location") or "")
        for row in _saved_rows(folder, run_dir):
            details = row.get("details") or {}
            if isinstance(details, dict) and "outcome" in details:
                verdicts.setdefault((row["test_case_key"], row["model_key"], int(details.get("epoch") or 0)), details)
    failed = {(f["test_case_key"], f["model_key"], int(f.get("epoch", 0))): f.get("error", "")
              for f in _json(run_dir / names.DATASET_DIR / names.FAILED_ITEMS) or []}
    outcomes = []
    for row in _suite(record):
        attack = row["attack"]
        for model in hosts:
            for epoch in range(epochs):
                ident = (row["test_case_key"], model, epoch)
                found = verdicts.get(ident)
                if found is not None:
                    outcome, reason = found["outcome"], str(found.get("reason") or "")
                else:
                    outcome = NOT_ASSESSED
                    reason = (f"no answer: {failed[ident]}" if ident in failed
                              else "no detector result for this answer (the run did not finish?)")
                outcomes.append(AttackOutcome(model=model, test_case=row["test_case_key"], attack_id=attack["id"],
                                              hazard=attack["hazard"], technique=attack["technique"],
                                              category=attack["category"], outcome=outcome, epoch=epoch,
                                              control=bool(attack.get("control")), reason=reason,
                                              detector=str(attack.get("detector") or "")))
    return outcomes


def read_transcripts(run_dir: str | Path, keys: list[tuple[str, str, int]]) -> dict[tuple[str, str, int], list[dict[str, Any]]]:
    """(test case, model, epoch) -> the whole conversation of that answer (role and content per turn): the
    host's own record of it, else the suite's turns (or its input) followed by the answer. Keys with no answer
    are left out."""
    run_dir, wanted = Path(run_dir), set(keys)
    if not wanted:
        return {}
    record = _json(run_dir / names.RUN_JSON) or {}
    suite = {row["test_case_key"]: row for row in _suite(record)}
    found: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    path = run_dir / names.DATASET_DIR / names.ANSWERS_FILE
    lines = path.read_text(encoding="utf-8").split("\n") if path.is_file() else []
    for line in lines:
        try:
            answer = json.loads(line)
        except ValueError:
            continue  # a line cut short by a killed run
        if not isinstance(answer, dict):
            continue
        key = (str(answer.get("test_case_key")), str(answer.get("model_key")), int(answer.get("epoch", 0)))
        if key not in wanted:
            continue
        turns = answer.get("conversation")
        if not isinstance(turns, list) or not turns:
            row = suite.get(key[0]) or {}
            turns = list(row.get("conversation") or [{"role": "user", "content": str(row.get("input") or "")}])
            turns.append({"role": "assistant", "content": str(answer.get("actual_output") or "")})
        found[key] = [{"role": str(t.get("role")), "content": str(t.get("content") or "")} for t in turns
                      if isinstance(t, dict)]
    return found


def rate_record(rate: Rate) -> dict[str, Any]:
    interval = rate.interval
    return {"hits": rate.hits, "n": rate.n, "not_assessed": rate.not_assessed, "rate": rate.value,
            "ci_low": interval.low if interval else None, "ci_high": interval.high if interval else None,
            "method": interval.method if interval else None}


def quality_record(quality: DetectorQuality) -> dict[str, Any]:
    return {"true_positives": quality.true_positives, "false_positives": quality.false_positives,
            "false_negatives": quality.false_negatives, "true_negatives": quality.true_negatives,
            "not_assessed": quality.not_assessed, "precision": rate_record(quality.precision),
            "recall": rate_record(quality.recall)}


def findings_record(findings: RedteamFindings) -> dict[str, Any]:
    """The findings as JSON (the shape docs/redteam.md documents)."""
    return {
        "schema_version": "1.1", "models": list(findings.models), "k": findings.k,
        "threshold": findings.threshold, "over_refusal_threshold": findings.over_refusal_threshold,
        "attack_success_rate": {m: rate_record(r) for m, r in findings.success.items()},
        "hit_at_k": {m: rate_record(r) for m, r in findings.hit_at_k.items()},
        "over_refusal": {m: rate_record(r) for m, r in findings.over_refusal.items()},
        "by_hazard_technique": {m: [{"hazard": h, "technique": t, **rate_record(r)} for (h, t), r in hm.cells.items()]
                                for m, hm in findings.heat_maps.items()},
        "problems": [{"severity": p.severity, "description": p.description, "model": p.model, "metric": p.metric,
                      "scope": list(p.scope), "threshold": p.threshold} for p in findings.problems],
        "insights": [{"description": i.description, "model": i.model, "technique": i.technique}
                     for i in findings.insights],
        "leaderboard": [{"model": r.model, "rank": r.rank, "attack_success_rate": rate_record(r.success),
                         "over_refusal": rate_record(r.over_refusal) if r.over_refusal else None}
                        for r in findings.ranking],
        "over_refusal_by_hazard_technique": {
            m: [{"hazard": h, "technique": t, **rate_record(r)} for (h, t), r in hm.cells.items()]
            for m, hm in findings.refusal_maps.items()},
        "grades": {m: {h: graded_json(g) for h, g in per.items()} for m, per in findings.grades.items()},
        "detectors": {h: list(d) for h, d in findings.detectors.items()},
    }


def findings_lines(findings: RedteamFindings) -> list[str]:
    """The findings as plain text lines, as ``sonar redteam`` prints them."""
    width = max([len(m) for m in findings.models] + [5])
    lines = ["Attack success rate (every sample; 95% exact intervals):"]
    lines += [f"  {m:<{width}}  {r.text()}" for m, r in findings.success.items()]
    if findings.k > 1:
        lines.append(f"hit@{findings.k} (an attack counts once, as a hit when one of its {findings.k} samples succeeded):")
        lines += [f"  {m:<{width}}  {r.text()}" for m, r in findings.hit_at_k.items()]
    lines.append("Over-refusal (benign look-alike controls refused):")
    lines += [f"  {m:<{width}}  {r.text('controls')}" for m, r in findings.over_refusal.items()] or ["  no controls"]
    for model, heat in findings.heat_maps.items():
        lines.append(f"By hazard x technique, {model} (successes/assessed):")
        lines.append("  " + " " * 24 + "".join(f"{t[:16]:>18}" for t in heat.techniques))
        for hazard in heat.hazards:
            cells = [heat.cells.get((hazard, t)) for t in heat.techniques]
            lines.append(f"  {hazard[:24]:<24}" + "".join(f"{f'{c.hits}/{c.n}' if c else '-':>18}" for c in cells))
    for model, grades in findings.grades.items():
        lines.append(f"Grades, {model} (attacks resisted, against the standards file):")
        lines += [f"  {h[:24]:<24}  {g.verdict}" + (f" ({g.score:.1%} of {g.scored})" if g.score is not None else "")
                  for h, g in grades.items()]
    lines.append(f"Problems ({len(findings.problems)}):")
    lines += [f"  {p.severity}: {p.description}" for p in findings.problems] or ["  none"]
    lines += [f"Insight: {i.description}" for i in findings.insights]
    return lines
