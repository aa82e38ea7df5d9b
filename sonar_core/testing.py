"""Helpers for testing evaluators without a full run (used by Sonar's tests and plugin authors).

A plugin imports ``sonar_core``; its tests may import this module too, which also hands on the
:class:`PluginManager` a test loads a plugin with (docs/plugin-authoring.md, "Testing a plugin").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .findings import ScoredEvaluator
from .context import EvaluationContext
from .contract import Evaluator, RowResult
from .dataset import Row, row_from_record
from .plugins import PluginManager
from .run_memo import RunMemo

if TYPE_CHECKING:  # pragma: no cover
    from .hosts import HostPool
    from .llm import LLMService
    from .models import EmbeddingService

__all__ = ["make_row", "make_context", "score_rows", "model_means", "PluginManager"]


def make_row(**fields: Any) -> Row:
    """A validated Row from keyword fields (same rules as a dataset file's row)."""
    fields.setdefault("input", "question")
    return row_from_record(fields, "<test row>", 1)


def make_context(*, device: str = "auto", embeddings: "EmbeddingService | None" = None,
                 llm: "LLMService | None" = None, hosts: "HostPool | None" = None,
                 memo: RunMemo | None = None, label: str = "",
                 plugins: "PluginManager | None" = None) -> EvaluationContext:
    """A context for scoring rows outside a run, holding what a run would hand an evaluator.

    It has a fresh run memo and an embedding service on ``device`` (the ones given, where given).
    A judge and model hosts are there only when given (``llm``, ``hosts``): a test of a judge
    evaluator names its LLM service, so ``ctx.judge()`` never reaches a configuration or response
    cache the test did not choose; so is a plugin manager (``plugins``), for evaluators that look up
    what plugins register.
    """
    if embeddings is None:
        from .models import EmbeddingService

        embeddings = EmbeddingService(device=device)
    return EvaluationContext(memo=memo if memo is not None else RunMemo(), embeddings=embeddings, device=device,
                             llm=llm, hosts=hosts, label=label, plugins=plugins)


def score_rows(evaluator_cls: type[Evaluator], rows: list[Row], **params: Any) -> list[RowResult]:
    """Validate ``params``, build the evaluator with :func:`make_context`'s context and score ``rows``."""
    evaluator = evaluator_cls(evaluator_cls.validate_params(params), make_context())
    results = list(evaluator.evaluate(rows))
    if len(results) != len(rows):
        raise AssertionError(f"{evaluator_cls.id} returned {len(results)} results for {len(rows)} rows")
    return results


def model_means(evaluator_cls: type[Evaluator], rows: list[Row], results: list[RowResult]) -> dict[str, dict]:
    """model -> metric key -> mean, computed by the core's own aggregation of these rows."""
    scored = ScoredEvaluator(cls=evaluator_cls, params={}, thresholds={}, scored=list(zip(rows, results)))
    return scored.aggregates()
