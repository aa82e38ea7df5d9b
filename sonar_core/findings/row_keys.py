"""The rows a problem lists: at most ``ROW_KEYS_LIMIT`` of them, with the total beside a cut list.

A threshold problem of a million-row run has ~100,000 failing rows per model; listed whole, they were
most of evaluator_summary.json, problems_and_actions.json and run.json (each written once per problem,
three times over: 187 MB, 79 MB and 98 MB at 1,000,000 rows x 5 evaluators) and of the run's peak
memory, and no reader can use a list of 100,000 keys in a JSON problem. Every row stays in the
evaluator's row results (JSON/CSV or Parquet, docs/result-directory.md says how to filter them), so a
problem lists the first ``ROW_KEYS_LIMIT`` rows, in the order it found them, and, only when it cut a
list, its length as ``dataset_row_keys_total`` (and ``test_case_keys_total``). A problem under the
limit is written exactly as before.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

__all__ = ["ROW_KEYS_LIMIT", "row_keys", "pair_keys", "cap_row_keys"]

#: 1,000 keys is ~30 KB of JSON per problem: enough to open and read every example a person
#: would (the report links 8 to 12 of them), small enough that 10 models x 5 evaluators of problems
#: stay a few MB in each of the three files that repeat them.
ROW_KEYS_LIMIT = 1000


def row_keys(rows: Sequence[Any]) -> dict[str, Any]:
    """A problem's ``dataset_row_keys`` (``[test_case_key, model_key]``) and ``test_case_keys`` of its
    ``rows`` (dataset rows, in the order found): at most ``ROW_KEYS_LIMIT`` of each, a cut list with its
    full length beside it (``..._total``). Only the listed rows are read."""
    return _attrs([[r.test_case_key, r.model_key] for r in rows[:ROW_KEYS_LIMIT]], len(rows))


def pair_keys(pairs: Iterable[tuple[str, str]], *, unique_cases: bool = False) -> dict[str, Any]:
    """:func:`row_keys` of ``(test_case_key, model_key)`` pairs, read once. ``unique_cases``: list each
    test case once (a benchmark grade names items, not rows)."""
    listed: list[list[str]] = []
    total = 0
    cases: dict[str, None] = {}
    for case, model in pairs:
        if total < ROW_KEYS_LIMIT:
            listed.append([case, model])
        total += 1
        if unique_cases:
            cases[case] = None
    return _attrs(listed, total, list(cases) if unique_cases else None)


def _attrs(listed: list[list[str]], total: int, cases: list[str] | None = None) -> dict[str, Any]:
    attrs: dict[str, Any] = {"dataset_row_keys": listed}
    if total > ROW_KEYS_LIMIT:
        attrs["dataset_row_keys_total"] = total
    if cases is None:
        attrs["test_case_keys"] = [case for case, _ in listed]
        if total > ROW_KEYS_LIMIT:
            attrs["test_case_keys_total"] = total
    else:
        attrs["test_case_keys"] = cases[:ROW_KEYS_LIMIT]
        if len(cases) > ROW_KEYS_LIMIT:
            attrs["test_case_keys_total"] = len(cases)
    return attrs


def cap_row_keys(attrs: dict[str, Any]) -> dict[str, Any]:
    """``attrs`` (an evaluator's own problem's) with its row lists cut as :func:`row_keys` cuts them.

    Attributes the plugin wrote stay in their order; a cut list gains its ``..._total`` after it.
    """
    if not any(isinstance(attrs.get(key), list) and len(attrs[key]) > ROW_KEYS_LIMIT
               for key in ("dataset_row_keys", "test_case_keys")):
        return attrs
    capped: dict[str, Any] = {}
    for key, value in attrs.items():
        capped[key] = value
        if key in ("dataset_row_keys", "test_case_keys") and isinstance(value, list) and len(value) > ROW_KEYS_LIMIT:
            capped[key] = value[:ROW_KEYS_LIMIT]
            capped[f"{key}_total"] = attrs.get(f"{key}_total", len(value))
    return capped
