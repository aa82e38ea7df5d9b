"""What the RAGAS evaluators share: ragas metric objects on Sonar's services, rows scored concurrently,
NaN and judge failures turned into counted parse failures, and what the judge said kept per row.

Each evaluator names the ragas metric classes it runs (:meth:`RagasEvaluator.ragas_metrics`) and
turns one row's scores and the judge's parsed answers into a :class:`RowResult` (:meth:`explain`).
The machinery here:

* builds the metrics with :class:`~sonar_plugins.ragas.adapter.SonarRagasLLM` (the run's judge
  client: cache, concurrency, retries, journal) and :class:`~sonar_plugins.ragas.adapter.SonarRagasEmbeddings`
  (the run's embedding service);
* scores every (row, metric) of a batch as one asyncio task with ragas's own
  ``single_turn_ascore``, all tasks at once, so the client's concurrency is used across rows;
* records, per task, the outputs ragas parsed from the judge (through ragas's callback events)
  and the raw answers (through the adapter), for the row's explanation;
* a score that is NaN or missing, or a task that raised (an answer ragas could not parse, a
  call that failed after its retries), makes the row a parse failure with the reason: never a
  silent number, never a lost row;
* each (row, metric) result goes to the run memo (``ctx.memo``) under a key of everything it
  depends on, so the RAGAS score takes the four components its siblings already computed in the
  run instead of running ragas again;
* the texts an evaluator knows it will embed (:meth:`RagasEvaluator.texts_to_embed`) are embedded
  in batches on a worker thread while the judge is asked: ragas embeds row by row, some of it
  synchronously on the event loop, which would hold up every request in flight.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import threading
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Sequence

from sonar_core import (ANSWER_LIMIT, Evaluator, Input, JUDGE_KEY_PARAM, Metric, MetricRole, Param, ResultKind, Row,
                        RowResult)

__all__ = ["RagasEvaluator", "Scored", "EMBEDDING_MODEL", "JUDGE_KEY", "parse_failure_metric", "clip", "quote"]

try:
    from importlib.metadata import version as _version

    _RAGAS_VERSION = _version("ragas")
except Exception:  # pragma: no cover - ragas not installed: the evaluators fail at load anyway
    _RAGAS_VERSION = "unknown"

JUDGE_KEY = Param(
    JUDGE_KEY_PARAM, str, None,
    "Key of the LLM configuration used as the judge (`sonar judges` lists them). Empty means the run's default "
    "judge (run setting `default_judge`, else `local-smollm2`, which is far too small for ragas's JSON prompts).")
EMBEDDING_MODEL = Param(
    "embedding_model", str, "all-MiniLM-L6-v2",
    "Sentence-transformers model for ragas's embeddings, from the run's embedding service: a name Sonar knows "
    "(all-MiniLM-L6-v2, embedded), a local model folder, or a Hugging Face id already in the local cache. "
    "Nothing is downloaded; a missing model stops the run before any row is scored.")

#: Share of parse failures above which the core raises its "judge unreliable" problem.
PARSE_FAILURE_THRESHOLD = 0.2

#: The sentence every description ends with: how ragas is run.
RAGAS_NOTE = (
    "Computed by the ragas library's own metric class (ragas 0.4): its prompts, its parsing and its formula. "
    "ragas's judge calls go through the run's judge client (`custom_eval_judge_config_key`; response cache, "
    "concurrency bound, retries and journal apply, so a rerun asks nothing) and its embeddings through the run's "
    "embedding service. A row whose score ragas cannot compute (an answer it cannot parse, a call that failed "
    "after its retries, or a NaN) is a parse failure with the reason, counted in the parse-failure metric; above "
    "its threshold the judge is reported as unreliable."
)


def parse_failure_metric(prefix: str, what: str) -> Metric:
    return Metric(f"{prefix}_parse_failures", f"{what} parse failures",
                  f"Share of rows with no {what.lower()} score: the judge's answer could not be parsed, the call failed "
                  "after its retries, or ragas's result was NaN (the row's message says which). Above the threshold "
                  "the judge is reported as unreliable.", higher_is_better=False, threshold=PARSE_FAILURE_THRESHOLD,
                  role=MetricRole.PARSE_FAILURE, raises_problems=False)


def clip(text: Any, limit: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def quote(text: Any, limit: int = 80) -> str:
    return f"'{clip(text, limit)}'"


@dataclass
class Scored:
    """One ragas metric on one row: the score (None when there is none), why not, and what the judge said."""

    value: float | None
    failure: str | None = None
    #: Outputs ragas parsed from the judge, in order (pydantic models; lists from multi-answer prompts).
    outputs: list[Any] = field(default_factory=list)
    #: Scores of sub-metrics ragas ran inside this one (e.g. semantic_similarity in answer_correctness).
    inner: dict[str, float] = field(default_factory=dict)
    #: Raw judge answers: {"prompt", "answer", "error", "cached"}.
    calls: list[dict[str, Any]] = field(default_factory=list)

    def of_type(self, cls: type) -> list[Any]:
        """Parsed outputs of one model class, multi-answer lists flattened."""
        found = []
        for output in self.outputs:
            items = output if isinstance(output, list) else [output]
            found += [item for item in items if isinstance(item, cls)]
        return found

    def answers(self) -> list[str | None]:
        return [None if c["answer"] is None else str(c["answer"])[:ANSWER_LIMIT] for c in self.calls]


@functools.lru_cache(maxsize=1)
def _recorder_class():
    # Made once: defining a class per (row, metric) task cost more than the task's own bookkeeping.
    from langchain_core.callbacks import BaseCallbackHandler

    class Recorder(BaseCallbackHandler):
        """Keeps what ragas's chains end with: parsed prompt outputs and inner metric scores."""

        def __init__(self, metric_name: str) -> None:
            self.metric_name = metric_name
            self.names: dict[Any, str] = {}
            self.outputs: list[Any] = []
            self.inner: dict[str, float] = {}
            self.lock = threading.Lock()

        def on_chain_start(self, serialized, inputs, *, run_id, **kwargs):
            with self.lock:
                self.names[run_id] = (serialized or {}).get("name", "")

        def on_chain_end(self, outputs, *, run_id, **kwargs):
            with self.lock:
                name = self.names.get(run_id, "")
                output = outputs.get("output") if isinstance(outputs, dict) else None
                if isinstance(output, list):
                    self.outputs.append(output[0] if len(output) == 1 else list(output))
                elif isinstance(output, (int, float)) and name and name != self.metric_name:
                    self.inner[name] = float(output)

    return Recorder


def _failure_reason(exc: BaseException, calls: list[dict[str, Any]]) -> str:
    from .adapter import JudgeCallFailed

    if isinstance(exc, JudgeCallFailed):
        return str(exc)
    name = type(exc).__name__
    if "OutputParser" in name or name in ("ValidationError", "JSONDecodeError"):
        last = next((c["answer"] for c in reversed(calls) if c["answer"] is not None), None)
        said = f"; it answered {quote(last)}" if last is not None else ""
        return f"the judge's answer is not the JSON ragas asked for{said}"
    return f"ragas failed: {name}: {clip(exc, 200)}"


class RagasEvaluator(Evaluator):
    """Base of the RAGAS family; see the module docstring."""

    requires_judge: ClassVar[bool] = True
    extra: ClassVar[str | None] = "ragas"
    needs_modules: ClassVar[tuple[str, ...]] = ('ragas', 'langchain_core')
    # ragas re-renders and re-parses every prompt even when its answer is cached: a rerun reads
    # finished rows back instead (keyed by the ragas version, parameters, judge and inputs).
    caches_row_results: ClassVar[bool] = True
    result_version: ClassVar[str] = f"ragas-{_RAGAS_VERSION}-1"
    kind: ClassVar[ResultKind] = ResultKind.SCORE
    compatibility: ClassVar[tuple[str, ...]] = ("rag",)
    category: ClassVar[str] = "Generation"
    parameters: ClassVar[tuple[Param, ...]] = (JUDGE_KEY,)
    #: True for evaluators whose ragas metrics need embeddings.
    uses_embeddings: ClassVar[bool] = False
    #: Most tokens one judge answer may take (ragas's JSON answers list claims and reasons).
    answer_max_tokens: ClassVar[int | None] = None

    # -- what an evaluator implements --------------------------------------------------------------

    def ragas_metrics(self, llm, embeddings) -> dict[str, Any]:
        """name -> ragas metric object (built on ``llm`` / ``embeddings``), scored for every row."""
        raise NotImplementedError

    def explain(self, row: Row, scored: dict[str, Scored]) -> RowResult:
        """The row's result from each metric's :class:`Scored`."""
        raise NotImplementedError

    def texts_to_embed(self, row: Row) -> list[str]:
        """Texts ragas will embed for ``row`` (exactly as it will ask), embedded in one batch up front."""
        return []

    # -- the judge's declaration -------------------------------------------------------------------

    @classmethod
    def judge_key(cls, params: dict[str, Any]) -> str | None:
        return params.get(JUDGE_KEY_PARAM)

    # -- helpers for explain() ---------------------------------------------------------------------

    def threshold(self) -> float:
        limit = self.params.get("metric_threshold")
        return self.primary_metric().threshold if limit is None else limit

    def failed_result(self, scored: Scored, values: dict[str, float | None], prefix: str = "") -> RowResult:
        """A parse-failure row: no score, the reason as its message, the raw answers kept."""
        return RowResult(values, details={"judge": self._judge_key, "judge_answers": scored.answers()},
                         error_message=f"judge {self._judge_key}: {prefix}{scored.failure}")

    # -- the machinery -----------------------------------------------------------------------------

    def sample(self, row: Row):
        from ragas.dataset_schema import SingleTurnSample

        return SingleTurnSample(user_input=row.input or "", response=row.actual_output or "",
                                retrieved_contexts=list(row.context or []), reference=row.expected_output or "")

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        from .adapter import SonarRagasEmbeddings, SonarRagasLLM, no_retry_config

        client = self.ctx.judge(self.judge_key(self.params))
        self._judge_key = client.config.key
        llm = SonarRagasLLM(client, tags={"evaluator": self.ctx.label or self.id}, max_tokens=self.answer_max_tokens)
        embeddings = None
        if self.uses_embeddings:
            model = self.params["embedding_model"]
            embeddings = SonarRagasEmbeddings(lambda texts: self.ctx.embed(texts, model))
        metrics = self.ragas_metrics(llm, embeddings)
        for metric in metrics.values():
            metric.init(no_retry_config())
        judge = {"llm": client.identity, "temperature": client.config.temperature,
                 "max_tokens": client.config.max_tokens, "answer_max_tokens": self.answer_max_tokens}
        keys = {name: self._memo_base(metric, judge) for name, metric in metrics.items()}
        todo: list[tuple[int, str, str]] = []  # (row index, metric name, memo key)
        found: list[dict[str, Scored]] = [{} for _ in rows]
        for index, row in enumerate(rows):
            for name in metrics:
                memo_key = _memo_key(keys[name], row)
                hit = self.ctx.memo.get(MEMO_NAMESPACE, memo_key)
                if hit is not None:
                    found[index][name] = dataclasses.replace(hit)  # explain() may set its failure
                else:
                    todo.append((index, name, memo_key))
        if embeddings is not None and todo:
            texts = [t for index in dict.fromkeys(i for i, _, _ in todo) for t in self.texts_to_embed(rows[index]) if t]
            embeddings.prefetch(list(dict.fromkeys(texts)))
        try:
            fresh = _run(self._score_all([(rows[i], name, metrics[name]) for i, name, _ in todo])) if todo else []
        finally:
            llm.close()
            if embeddings is not None:
                embeddings.close()
        for (index, name, memo_key), scored in zip(todo, fresh):
            found[index][name] = scored
            self.ctx.memo.put(MEMO_NAMESPACE, memo_key, _for_memo(scored))
        return [self._result(row, {name: per_row[name] for name in metrics}) for row, per_row in zip(rows, found)]

    def _memo_base(self, metric, judge: dict[str, Any]) -> str:
        """What a ragas metric's result depends on besides the row: its class and settings, the judge
        and how it is asked, the embedding model."""
        settings = {}
        for f in dataclasses.fields(metric):
            value = getattr(metric, f.name, None)
            if _plain(value):
                settings[f.name] = value
        uses_embeddings = getattr(metric, "embeddings", None) is not None
        return json.dumps({"metric": f"{type(metric).__module__}.{type(metric).__qualname__}", "settings": settings,
                           "judge": judge, "embedding_model": self.params.get("embedding_model") if uses_embeddings
                           else None}, sort_keys=True, default=str)

    def _result(self, row: Row, per_metric: dict[str, Scored]) -> RowResult:
        try:
            return self.explain(row, per_metric)
        except Exception as exc:  # an explanation bug costs the row, not the run
            first = next(iter(per_metric.values()))
            first.failure = f"the judge's answers could not be read ({type(exc).__name__}: {clip(exc, 200)})"
            return self.failed_result(first, {m.key: (1.0 if m.role is MetricRole.PARSE_FAILURE else None)
                                               for m in self.metrics})

    async def _score_all(self, work: Sequence[tuple[Row, str, Any]]) -> list[Scored]:
        import asyncio

        return list(await asyncio.gather(*(self._score_one(row, name, metric) for row, name, metric in work)))

    async def _score_one(self, row: Row, name: str, metric) -> Scored:
        from .adapter import CALL_LOG, CALL_TAGS

        calls: list[dict[str, Any]] = []
        # This task's own context: the adapter records this row's answers here and tags its requests.
        CALL_LOG.set(calls)
        CALL_TAGS.set({"test_case_key": row.test_case_key, "model_key": row.model_key})
        recorder = _recorder_class()(metric.name)
        sample = self.sample(row)
        try:
            value = await metric.single_turn_ascore(sample, callbacks=[recorder])
        except Exception as exc:
            return Scored(None, _failure_reason(exc, calls), recorder.outputs, recorder.inner, calls)
        failure = None
        if value is None or not isinstance(value, (int, float)) or math.isnan(float(value)):
            error = next((c["error"] for c in calls if c["error"]), None)
            failure = f"judge call failed: {error}" if error else None
            value = None
        return Scored(None if value is None else float(value), failure, recorder.outputs, recorder.inner, calls)


#: The run memo's namespace for ragas results.
MEMO_NAMESPACE = "ragas"


def _plain(value: Any) -> bool:
    """A setting that can be part of a key (numbers, text, flags, and lists of them)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return True
    return isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float, bool)) for v in value)


def _memo_key(base: str, row: Row) -> str:
    canonical = json.dumps([base, row.input, row.actual_output, list(row.context or []), row.expected_output],
                           ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _for_memo(scored: Scored) -> Scored:
    """``scored`` as the memo keeps it: prompts (kilobytes each) by their digest, enough to tell them apart."""
    calls = [{**call, "prompt": hashlib.sha1(str(call["prompt"]).encode("utf-8")).hexdigest()} for call in scored.calls]
    return dataclasses.replace(scored, calls=calls)


def _run(coroutine):
    """Run ``coroutine`` to completion, from a thread with or without an event loop of its own."""
    # Here, not at the top: loading the plugin (every run does) need not import asyncio.
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: dict[str, Any] = {}

    def target():
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="ragas-loop")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


#: Inputs of the catalogue's RAGAS evaluator, for evaluators that use them all.
ALL_INPUTS = (Input.QUESTION, Input.EXPECTED_ANSWER, Input.RETRIEVED_CONTEXT, Input.ACTUAL_ANSWER)
