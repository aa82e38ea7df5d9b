"""The run's test-case drill-down: a test case x model matrix and one page per test case.

Two halves, so that a resumed run (whose finished evaluators are not in memory) draws the
same pages:

- :func:`evaluator_rows` runs when an evaluator's folder is written and keeps, in its
  ``evaluator_summary.json``, each row's metric values and message for the test cases the
  drill-down shows (chosen by :mod:`sonar_core.findings.case_rows`);
- :func:`build_casebook` and :func:`write_casebook` run once at the end, over the dataset
  and every evaluator's summary, and write ``test_cases.html`` and ``cases/<hash>.html``.

Which test cases: :func:`sonar_core.findings.case_rows.selected_case_keys` (all of them up to
:data:`CASE_LIMIT`, beyond that the first keys in alphabetical order). The pages say how many test
cases they leave out.

What the existing reports withhold stays withheld: when an evaluator with
``sensitive_outputs`` (PII, secrets) finds a row on the wrong side of one of its metrics,
that row's retrieved context is replaced by a note everywhere in the drill-down, and so is
its answer unless only the context failed (a retrieval-failure metric). The same texts on
other rows are withheld too, and so are the other evaluators' messages about a row whose
answer is withheld (they may quote it); the sensitive evaluators' own messages are masked
by them and are shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import names
from ..named_files import write_text
from ..findings.types import CASE_LIMIT, CaseFails, CaseRows, EvaluatorSummary
from ..dataset import Row
from .case_pages import case_html, matrix_html
from .formats import write_atomic
from .html import CELL_LIMIT, TEXT_LIMIT, clip
from .transcript import clip_conversation, expected_calls, turn_verdicts
from .record_shapes import DrilldownRowsJson
from .verdicts import verdict as _verdict
from .views import CaseView, ComparisonPairView, EvaluatorInfo, EvaluatorView, MetricView, PageRow, RunView

__all__ = [
    "CASE_LIMIT",
    "Casebook",
    "build_casebook",
    "evaluator_rows",
    "write_casebook",
]

#: Characters of an answer in a matrix cell's one-line preview, and in its expanded text.
PREVIEW_CHARS = 90
MATRIX_ANSWER_LIMIT = 600
#: Characters of a question in the matrix's first column.
QUESTION_PREVIEW = 240
#: Most retrieved-context chunks a case page lists per row.
CHUNK_LIMIT = 20

#: Shown instead of an answer or context that an evaluator with sensitive outputs flagged.
WITHHELD_ANSWER = "(answer withheld: a privacy or security evaluator flagged this row; see its masked message)"
WITHHELD_CONTEXT = "(retrieved context withheld: a privacy or security evaluator flagged this row)"
WITHHELD_MESSAGE = "(message withheld with the answer)"


def evaluator_rows(rows: CaseRows) -> DrilldownRowsJson:
    """One evaluator's rows of the drill-down's test cases (:func:`sonar_core.findings.case_rows.case_rows`),
    for ``evaluator_summary.json``.

    ``rows`` holds ``[row key, [value per metric, in the evaluator's metric order], message]``
    (message clipped, None when there is nothing to say), ``skipped`` holds ``[row key, missing input]``.
    """
    cells = [[row.key, list(row.values), clip(row.why, CELL_LIMIT) if row.why else None] for row in rows.rows]
    turns = {key: [list(turn) for turn in per_turn] for key, per_turn in rows.turns.items()}
    return {"schema_version": names.SCHEMA_VERSION, "case_limit": CASE_LIMIT, "test_cases": rows.test_cases,
            "rows": cells, "skipped": [list(s) for s in rows.skipped], **({"turns": turns} if turns else {})}


@dataclass
class _Evaluator:
    """One evaluator as the drill-down sees it (from its summary)."""

    index: int
    view: EvaluatorView
    cells: dict[str, tuple[list[float | None], str | None]]
    #: row key -> per metric, whether its value fails the threshold (None: no value), as the findings concluded.
    fails: dict[str, tuple[bool | None, ...]]
    skipped: dict[str, str]
    turns: dict[str, list] = field(default_factory=dict)  # row key -> [[turn, value], ...] (per_turn)
    #: row key -> per turn, whether its primary value fails (None: no value), as the findings concluded.
    turn_fails: Mapping[str, tuple[bool | None, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.metrics: list[MetricView] = self.view["metrics"]
        self.primary_index = next(i for i, m in enumerate(self.metrics) if m["is_primary"])
        self.sensitive = bool(self.view.get("sensitive_outputs"))
        self.boolean = self.view["board"]["kind"] == "bool"
        # Metrics whose failure withholds the answer: all but a retrieval failure.
        self.answer_metrics = [m.get("role") != "retrieval_failure" for m in self.metrics]
        # A judge's confidence in its verdict is shown beside the verdict (constrained verdicts).
        self.confidence_index = next((i for i, m in enumerate(self.metrics) if m.get("key") == "judge_confidence"),
                                     None)
        # A judge that failed its calibration: its verdicts are shown as not counted, or its rows as not scored.
        self.untrusted = bool(self.view.get("untrusted"))
        self.not_scored = bool(self.view.get("not_scored"))


@dataclass
class Casebook:
    """The drill-down: its evaluators, models, categories and test cases, ready to render."""

    evaluators: list[EvaluatorInfo]
    models: list[str]
    categories: list[str]
    cases: list[CaseView]
    total_cases: int
    limit: int
    links: dict[str, str] = field(default_factory=dict)
    #: Answers and context chunks a sensitive evaluator flagged: no page may quote them.
    hidden_texts: frozenset[str] = frozenset()

    def link(self, test_case_key: str) -> str | None:
        """``cases/<file>`` of a test case shown in the drill-down, relative to the run folder."""
        return self.links.get(test_case_key)


def _preview(text: str) -> str:
    """The start of ``text`` on one line, cut at :data:`PREVIEW_CHARS`."""
    line = " ".join(text[:PREVIEW_CHARS * 4].split())
    return line if len(line) <= PREVIEW_CHARS else line[:PREVIEW_CHARS - 1] + "…"


def build_casebook(rows: Sequence[Row], summaries: Sequence[EvaluatorSummary],
                   fails: Sequence[CaseFails], chosen: set[str]) -> Casebook:
    """The drill-down of a run from its dataset rows and its evaluators' summaries; ``fails`` (one per
    summary) says which of each row's values, and of its turns' primary values, fail their thresholds
    (:func:`sonar_core.findings.case_verdicts.case_fails`); ``chosen``: the test cases it shows
    (:func:`sonar_core.findings.case_rows.selected_case_keys` of the rows' test cases)."""
    evaluators = []
    for summary, failures in zip(summaries, fails, strict=True):
        data = summary.test_cases
        if not data:  # a summary written before the drill-down existed
            continue
        evaluators.append(_Evaluator(
            index=len(evaluators), view=dict(summary.view), fails=dict(failures.values),
            cells={key: (values, why) for key, values, why in data["rows"]},
            skipped={key: missing for key, missing in data["skipped"]}, turns=data.get("turns", {}),
            turn_fails=failures.turns,
        ))
    all_keys = {row.test_case_key for row in rows}
    models = sorted({row.model_key for row in rows})
    model_index = {m: i for i, m in enumerate(models)}

    by_case: dict[str, list[Row]] = {}
    for row in rows:
        if row.test_case_key in chosen:
            by_case.setdefault(row.test_case_key, []).append(row)
    links = {key: f"{names.CASES_DIR}/{names.case_page_name(key)}" for key in by_case}

    # Verdicts first: what a sensitive evaluator flagged decides what every page withholds.
    verdicts = {row.key: [_verdict(ev, row.key) for ev in evaluators] for rs in by_case.values() for row in rs}
    answer_flagged = {key for key, vs in verdicts.items() if any(v and v["flags_answer"] for v in vs)}
    context_flagged = {key for key, vs in verdicts.items() if any(v and v["flags_context"] for v in vs)}
    # The same text on another row is withheld there too.
    hidden_answers = {row.actual_output for rs in by_case.values() for row in rs if row.key in answer_flagged}
    hidden_contexts = {tuple(row.context) for rs in by_case.values() for row in rs if row.key in context_flagged}

    categories = sorted({c for rs in by_case.values() for row in rs for c in row.categories})
    category_index = {c: i for i, c in enumerate(categories)}
    variants: dict[str, list[str]] = {}
    for key, rs in by_case.items():
        original = rs[0].original_test_case_key
        if original and original != key:
            variants.setdefault(original, []).append(key)

    cases: list[CaseView] = []
    for key, rs in by_case.items():
        first = rs[0]
        case_rows: list[PageRow] = []
        for row in sorted(rs, key=lambda r: (model_index[r.model_key], r.key)):
            withheld = row.key in answer_flagged or (row.actual_output != "" and row.actual_output in hidden_answers)
            context_withheld = row.key in context_flagged or (bool(row.context) and tuple(row.context) in hidden_contexts)
            row_verdicts = verdicts[row.key]
            if withheld:
                row_verdicts = [v if v is None or evaluators[v["ev"]].sensitive or not v["why"]
                                else {**v, "why": WITHHELD_MESSAGE} for v in row_verdicts]
            answer = WITHHELD_ANSWER if withheld else row.actual_output
            case_rows.append({
                "key": row.key,
                "model": row.model_key,
                "model_index": model_index[row.model_key],
                "withheld": withheld,
                "answer": clip(answer, TEXT_LIMIT),
                "answer_cell": clip(answer, MATRIX_ANSWER_LIMIT),
                "answer_preview": _preview(answer),
                "answer_long": len(answer) > PREVIEW_CHARS or "\n" in answer,
                "context_withheld": context_withheld,
                "context": [] if context_withheld else [clip(c, TEXT_LIMIT) for c in row.context[:CHUNK_LIMIT]],
                "context_count": len(row.context),
                "duration": row.actual_duration,
                "cost": row.cost,
                "verdicts": row_verdicts,
                "failing": any(v and v["status"] == "fail" for v in row_verdicts),
                **({"conversation": clip_conversation(row.conversation, WITHHELD_ANSWER if withheld else None),
                    "turn_verdicts": turn_verdicts(evaluators, row.key)} if row.conversation else {}),
                **expected_calls(row.expected_tool_calls, row.conversation),
            })
        # One context for the whole case when every row retrieved the same chunks.
        contexts = {tuple(r.context) for r in rs}
        case_categories = sorted({c for r in rs for c in r.categories})
        original = first.original_test_case_key if first.original_test_case_key != key else ""
        cases.append({
            "key": key,
            "file": names.case_page_name(key),
            "question": clip(first.input, TEXT_LIMIT),
            "question_preview": clip(first.input, QUESTION_PREVIEW),
            "expected": clip(first.expected_output, TEXT_LIMIT),
            "condition": clip(first.output_condition, TEXT_LIMIT),
            "constraints": [clip(c, CELL_LIMIT) for c in first.output_constraints],
            "categories": case_categories,
            "category_ids": " ".join(str(category_index[c]) for c in case_categories),
            "perturbation": first.perturbation,
            "original": {"key": original, "file": names.case_page_name(original) if original in by_case else None}
            if original else None,
            "variants": [{"key": v, "file": names.case_page_name(v), "perturbation": by_case[v][0].perturbation}
                         for v in variants.get(key, [])],
            "rows": case_rows,
            "evaluator_ids": [ev.index for ev in evaluators if any(r["verdicts"][ev.index] for r in case_rows)],
            "evaluators_with_messages": [ev.index for ev in evaluators
                                         if any(r["verdicts"][ev.index] and r["verdicts"][ev.index]["why"]
                                                for r in case_rows)],
            "shared_context": len(contexts) == 1,
            "failing": any(r["failing"] for r in case_rows),
        })
    by_key = {case["key"]: case for case in cases}
    for case in cases:
        original = case["original"]
        case["comparison"] = []
        if original and original["file"]:
            original["question"] = by_key[original["key"]]["question"]
            case["comparison"] = _comparison(by_key[original["key"]], case)
    hidden = frozenset(t for t in hidden_answers if t.strip()) | frozenset(
        c for chunks in hidden_contexts for c in chunks if c.strip())
    # Another evaluator's message may quote a flagged answer or chunk (groundedness names the
    # closest context sentence): no cell, message or comparison repeats one.
    cases = redact(cases, hidden)
    return Casebook(
        evaluators=[_evaluator_info(ev) for ev in evaluators],
        models=models,
        categories=categories,
        cases=cases,
        total_cases=len(all_keys),
        limit=CASE_LIMIT,
        links=links,
        hidden_texts=hidden,
    )


WITHHELD_QUOTE = "(text withheld: a privacy or security evaluator flagged it)"


def redact(value: Any, hidden: frozenset[str]) -> Any:
    """``value`` (strings, lists and dicts of them) with every hidden text replaced by a note."""
    if not hidden:
        return value
    ordered = sorted(hidden, key=len, reverse=True)  # a long text before any text inside it
    shortest = len(ordered[-1])  # a shorter string (a key, a model name) holds none: issue 41, a million rows

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            if len(item) < shortest:
                return item
            for text in ordered:
                if text in item:
                    item = item.replace(text, WITHHELD_QUOTE)
            return item
        if isinstance(item, dict):
            return {k: clean(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return type(item)(clean(v) for v in item)
        return item

    return clean(value)


def redact_views(views: list[EvaluatorView], hidden: frozenset[str]) -> list[EvaluatorView]:
    """Copies of ``views`` whose problems and insights quote no hidden text (index.html shows them)."""
    if not hidden:
        return views
    return [{**view, "problems": redact(view.get("problems", []), hidden),
             "insights": redact(view.get("insights", []), hidden)} for view in views]


def _evaluator_info(ev: _Evaluator) -> EvaluatorInfo:
    view = ev.view
    return {
        "index": ev.index,
        "label": view["label"],
        "display_name": view["display_name"],
        "anchor": view["anchor"],
        "fragment_href": view["fragment_href"],
        "kind": view["board"]["kind"],
        "sensitive": bool(view.get("sensitive_outputs")),
        "metrics": view["metrics"],
        "primary": ev.primary_index,
    }


def _comparison(original: CaseView, perturbed: CaseView) -> list[ComparisonPairView]:
    """Per model in both cases: the original's row beside the perturbed one, and each flip."""
    first_of = {}
    for row in original["rows"]:
        first_of.setdefault(row["model"], row)
    pairs = []
    for row in perturbed["rows"]:
        before = first_of.get(row["model"])
        if before is None or any(p["model"] == row["model"] for p in pairs):
            continue
        flips = []
        for a, b in zip(before["verdicts"], row["verdicts"]):
            if a and b and {a["status"], b["status"]} == {"pass", "fail"}:
                flips.append({"ev": a["ev"], "direction": "pass → fail" if b["status"] == "fail" else "fail → pass"})
        pairs.append({"model": row["model"], "original": before, "perturbed": row, "flips": flips})
    return pairs


def write_casebook(run_dir: Path, book: Casebook, run: RunView) -> None:
    """``test_cases.html`` and one page per test case under ``cases/``."""
    cases_dir = run_dir / names.CASES_DIR
    cases_dir.mkdir(parents=True, exist_ok=True)
    for case in book.cases:
        write_text(cases_dir / case["file"], case_html(run, book, case, WITHHELD_CONTEXT))
    write_atomic(run_dir / names.TEST_CASES_HTML, matrix_html(run, book).encode("utf-8"))
