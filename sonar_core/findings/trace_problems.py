"""The core's dataset problem about a trace run's input: spans (and lines) that could not be used.

A span that cannot become part of a row is not scored, so a report that said nothing of it would read
as if every production call had been evaluated. One ``dataset`` problem lists every reason with its
count and the first example; LOW when the only reason is spans of neither convention (an HTTP or
database span is not an error of the data), MEDIUM otherwise.
"""

from __future__ import annotations

from typing import Any

from .. import names
from .row_keys import row_keys
from .types import Problem, Source

__all__ = ["skipped_span_problems"]

_BENIGN = frozenset({"unknown convention"})


def skipped_span_problems(traces: dict[str, Any]) -> list[Problem]:
    """The problem for ``traces`` (run.json's ``result.dataset.traces``), or none when nothing was skipped."""
    spans, lines = traces.get("spans_skipped", {}), traces.get("lines_skipped", {})
    if not spans and not lines:
        return []
    examples = traces.get("skip_examples", {})
    parts = [f"{n:,} span(s): {reason}" for reason, n in sorted(spans.items(), key=lambda kv: (-kv[1], kv[0]))]
    parts += [f"{n:,} line(s): {reason}" for reason, n in sorted(lines.items(), key=lambda kv: (-kv[1], kv[0]))]
    first = next((found[0] for reason in [*spans, *lines] if (found := examples.get(reason))), "")
    description = (f"Trace input not scored ({traces.get('spans_read', 0):,} span(s) read): " + "; ".join(parts)
                   + (f". First: {first}" if first else ""))
    severity = "LOW" if not lines and set(spans) <= _BENIGN else "MEDIUM"
    return [Problem(
        source=Source(explainer_id="sonar_core.traces", explainer_name="Trace input", evaluator_id="traces",
                      evaluator_label="traces"),
        description=description, severity=severity, problem_type="dataset",
        actions="Fix the instrumentation or the export named in the examples "
                "(run.json: result.dataset.traces.skip_examples), then run again; docs/traces.md lists each reason.",
        attrs={"spans_skipped": dict(spans), "lines_skipped": dict(lines), "examples": examples,
               "spans_read": traces.get("spans_read", 0), **row_keys([]),
               "evaluator_name": "Trace input"},
        resources=(names.RUN_JSON,),
    )]
