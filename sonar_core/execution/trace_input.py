"""A run whose input is production traces: its dataset from span files, its problem about skipped spans,
and its verdicts written back as spans once every evaluator has finished (docs/traces.md).
"""

from __future__ import annotations

from ..artifacts.annotations import AnnotatedEvaluator, read_span_rows, write_annotations
from ..findings.run_data import span_verdicts
from ..config import RunConfig
from ..findings.trace_problems import skipped_span_problems
from ..journal import Journal
from ..traces.load import TraceDataset, load_traces
from .state import RunState

__all__ = ["load_trace_input", "note_trace_input", "write_trace_annotations"]


def load_trace_input(config: RunConfig) -> TraceDataset:
    """The rows of ``config.traces``; spans past the in-memory bound spill under the output folder."""
    return load_traces(config.traces, config.base_dir, spill_parent=config.resolve_path(config.output_dir))


def note_trace_input(state: RunState, journal: Journal) -> None:
    """Journal what was read and skipped; the skipped spans become the run's dataset problem."""
    if state.config.traces is None:
        return
    traces = state.dataset_summary.get("traces", {})
    journal.event("loaded traces", "Runner", "execute_run", scope=traces.get("scope"),
                  spans_read=traces.get("spans_read"), rows=traces.get("rows"),
                  spans_skipped=traces.get("spans_skipped"), lines_skipped=traces.get("lines_skipped"))
    state.core_problems = skipped_span_problems(traces)


def write_trace_annotations(state: RunState, journal: Journal) -> None:
    """``annotations.jsonl`` and ``annotations.csv`` from every finished evaluator's folder."""
    if state.config.traces is None:
        return
    failed = {f["evaluator"] for f in state.result.failed} | set(state.incompatible)
    evaluators = [AnnotatedEvaluator(job.label, job.cls.id, job.folder, "LLM" if job.cls.requires_judge else "CODE")
                  for job in state.jobs if job.label not in failed and job.folder.is_dir()]
    # Stamped with the end of the latest span read, not the clock: a resumed run writes the same file.
    stamp = state.dataset_summary.get("traces", {}).get("last_end_unix_nano") or int(state.started * 1e9)

    def verdicts():  # one evaluator's rows at a time
        for evaluator in evaluators:
            rows = read_span_rows(evaluator)
            if rows is not None:
                yield (evaluator, rows, *span_verdicts(rows))

    written = write_annotations(state.run_dir, state.run_id, state.config.traces.scope, verdicts(), stamp,
                                csv_formula_escape=state.config.csv_formula_escape)
    journal.event("wrote annotations", "Runner", "execute_run", verdicts=written,
                  evaluators=[e.label for e in evaluators])
