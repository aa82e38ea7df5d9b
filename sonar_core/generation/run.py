"""A test-set generation, in order: documents, graph, plan, items, quality, suite, report.

:func:`run_generation` is what ``sonar generate``, ``sonar_core.generate(...)`` and a run
configuration's ``generate:`` section call. Everything it writes goes beside the suite file, named
from its stem (``names.GENERATION_FILES``): the report (JSON and HTML), the document graph and the
journal; a dry run writes nothing. The LLM response cache is the one every run shares.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import names
from ..errors import EXIT_EVALUATOR_FAILED, EXIT_OK, BudgetExceeded, ConfigError
from ..execution.output_dir import check_writable
from ..generate_config import GenerateSpec
from ..findings.judge_trust import JudgeTrust
from ..journal import Journal
from ..llm.ledger import CostEstimate
from .documents import read_corpus
from .graph import (DocumentGraph, GraphSettings, Reusing, build_graph, earlier_vectors, graph_encoder, graph_key,
                    read_graph_file, save_graph, stored_graph)
from .items import item_outcomes, suite_lines
from .quality import calibrate_checks, judge_checks, rule_scores
from .quotas import plan_items
from .writing import write_items

__all__ = ["GenerationResult", "run_generation"]


@dataclass
class GenerationResult:
    """What a generation did: where its files are, its exit code and one-line message, its findings."""

    suite: Path
    exit_code: int
    message: str
    findings: Any = None
    files: dict[str, Path] = field(default_factory=dict)
    #: A dry run's estimate (the ledger's ``estimate_record``), else None.
    estimate: CostEstimate | None = None


def _path(spec: GenerateSpec, value: str) -> Path:
    if value == "demo":  # the bundled documents (the claims assistant's booklet, its claims guide, a German leaflet)
        return Path(__file__).resolve().parent.parent / "demo" / "docs"
    path = Path(value).expanduser()
    return Path(spec.base_dir) / path if spec.base_dir and not path.is_absolute() else path


def _services(spec: GenerateSpec, journal, dry: bool):
    from ..llm import LLMService, load_llm_configs
    from ..llm.ledger import CostLedger
    from ..llm.tokens import Price

    configs = load_llm_configs(_path(spec, spec.llm_configs) if spec.llm_configs else None,
                               required=spec.llm_configs is not None)
    from ..llm.cache import default_cache_path

    cache_path = _path(spec, spec.llm_cache) if spec.llm_cache else default_cache_path()
    # A dry run writes nothing: without a cache file yet there is nothing to look up, and none is made.
    off = spec.no_cache or (dry and not cache_path.exists())
    service = LLMService(configs, default_judge=spec.judge, journal=journal, cache_path=cache_path,
                         cache_mode="off" if off else "use")
    generator = service.judge_key(spec.judge)
    quality = service.judge_key(spec.quality_judge or generator)
    for key in spec.prices:
        configs.get(key)  # a price for an unknown key is a configuration error now
    service.ledger = CostLedger({k: Price(**v) for k, v in spec.prices.items()},
                                max_cost=None if dry else spec.max_cost, dry=dry)
    for key in (generator, quality):
        if (why := service.unavailable(key)) is not None:
            raise ConfigError(why)
    if dry and service.cache is not None:
        service.cache.read_only = True  # a dry run looks the cache up and writes nothing
    return service, generator, quality


def _graph(spec: GenerateSpec, corpus, files: dict[str, Path], embeddings, dry: bool, say) -> DocumentGraph:
    settings, embed = graph_encoder(GraphSettings(max_tokens=spec.chunk_tokens,
                                                  embedding_backend=spec.embedding_backend), embeddings, say)
    stored = read_graph_file(files["graph"])  # read once: the graph itself, or the vectors it already holds
    graph = stored_graph(stored, graph_key(corpus, settings))
    if graph is None:
        say("building the document graph (chunks, embeddings, topics, links)")
        # The documents changed since this output's graph was made: chunks it already embedded keep their vectors.
        encode = Reusing(embed, earlier_vectors(stored, settings))
        graph = build_graph(corpus, settings, encode)
        graph.vectors_reused = encode.reused
        if graph.vectors_reused:
            say(f"{graph.vectors_reused} chunk(s) kept their vectors from the earlier graph of this output")
        if not dry:
            save_graph(graph, files["graph"])
    return graph


def _unanswerable_passages(graph: DocumentGraph, embeddings, questions: list[str], k: int = 4) -> list[list[str]]:
    """The ``k`` chunks of the corpus closest to each question: what an unanswerable item is checked against."""
    if not questions or not len(graph.vectors):
        return [[] for _ in questions]
    sims = embeddings.embed(questions) @ graph.vectors.T
    found = []
    for row in sims:
        order = sorted(range(len(row)), key=lambda j: (-float(row[j]), j))[:k]
        found.append([graph.chunks[j]["text"] for j in order])
    return found


def _require_extra() -> None:
    """One line naming the missing packages when the generate extra is not installed."""
    import importlib.util

    missing = [name for module, name in (("sklearn", "scikit-learn"), ("py3langid", "py3langid"),
                                         ("sentence_transformers", "sentence-transformers"))
               if importlib.util.find_spec(module) is None]
    if missing:
        raise ConfigError(f"sonar generate needs the generate extra (pip install 'sonar-eval[generate]'); "
                          f"missing: {', '.join(missing)}")


def run_generation(spec: GenerateSpec, *, dry_run: bool = False,
                   progress: Callable[[str], None] | None = None) -> GenerationResult:
    """Generate the suite ``spec.output`` from ``spec.docs``; see the module docstring.

    Raises:
        DatasetError: documents that cannot be used (nothing readable, a bad chunk file).
        ConfigError: an unknown or unusable model key, a bad setting.
        OutputError: the output folder cannot be written.
        BudgetExceeded: ``max_cost`` reached (the items written so far are cached).
    """
    say = progress or (lambda text: None)
    _require_extra()
    suite = _path(spec, spec.output)
    if suite.suffix.lower() != ".jsonl":
        raise ConfigError(f"{suite}: the generated suite is a JSON Lines file: name it <something>.jsonl")
    folder, stem = suite.parent, suite.stem
    files = {kind: folder / pattern.format(stem=stem) for kind, pattern in names.GENERATION_FILES.items()}
    if not dry_run:
        check_writable(folder)
    corpus = read_corpus([_path(spec, d) for d in spec.docs], int(spec.max_file_mb * 2**20))
    say(f"read {len(corpus.documents)} document(s), skipped {len(corpus.skipped)}")
    service, generator, quality_key = _services(spec, None, dry_run)  # bad keys fail before anything is written
    try:
        if not dry_run:
            folder.mkdir(parents=True, exist_ok=True)
        journal = Journal(None if dry_run else files["journal"])
        service.attach(journal)
        try:
            return _generate(spec, corpus, files, suite, service, generator, quality_key, journal, dry_run, say)
        finally:
            journal.close()
    finally:
        service.close()


def _generate(spec, corpus, files, suite, service, generator, quality_key, journal, dry, say) -> GenerationResult:
    from ..findings.generation_summary import summarize_generation
    from ..models.embeddings import EmbeddingService

    started = time.perf_counter()
    journal.event("starting generation", "Generation", "run", docs=list(spec.docs), n=spec.n, seed=spec.seed,
                  generator=generator, quality_judge=quality_key, skipped=corpus.skipped)
    embeddings = EmbeddingService(device=spec.device)
    graph = _graph(spec, corpus, files, embeddings, dry, say)
    journal.event("reused document graph" if graph.reused else "built document graph", "Generation", "graph",
                  key=graph.key, chunks=len(graph.chunks), duplicates=len(graph.duplicates), topics=len(graph.topics),
                  links=len(graph.links), vectors_reused=graph.vectors_reused, seconds=graph.seconds)
    plan = plan_items(graph, spec.n, seed=spec.seed, weights=spec.types, spread=spec.spread,
                      personas=spec.personas, styles=spec.styles, min_tokens=spec.min_tokens)
    journal.event("planned items", "Generation", "plan", items=len(plan.items), quotas=plan.quotas, notes=plan.notes)
    say(f"planned {len(plan.items)} item(s)")
    trust: dict[str, JudgeTrust] = {}
    stopped = None
    written = []
    try:
        if plan.items:
            say(f"measuring the quality judge {quality_key} on its calibration sets" if spec.calibrate else
                "quality judge not calibrated (--no-calibrate)")
            trust = calibrate_checks(service, quality_key, spec.judge_batch, spec.calibrate)

        def settled(item) -> None:
            journal.event("item failed" if item.error else "wrote item", "Generation", "write",
                          test_case_key=item.plan.key, type=item.plan.type, attempts=item.attempts,
                          **({"error": item.error} if item.error else {"repairs": item.repairs}),
                          **({"unreadable": item.unreadable} if item.unreadable else {}))
        client = service.client(generator)
        written = write_items(client, graph, plan.items, max_attempts=spec.max_attempts, on_item=settled)
        ready = [w for w in written if w.reply is not None]
        say(f"wrote {len(ready)} of {len(written)} item(s); scoring them")
        rows = [{"key": w.plan.key, "question": w.reply.question, "answer": w.reply.answer, "language": w.plan.language}
                for w in ready]
        rules = rule_scores(rows, embeddings.embed, spec.max_similarity)
        cited = {w.plan.key: [graph.chunks[graph.index[c]]["text"] for c in w.reply.chunk_ids] for w in ready}
        grounded = [{**r, "passages": cited[r["key"]]} for r, w in zip(rows, ready) if w.plan.type != "unanswerable"]
        unanswerable = [(r, w) for r, w in zip(rows, ready) if w.plan.type == "unanswerable"]
        near = _unanswerable_passages(graph, embeddings, [r["question"] for r, _ in unanswerable])
        retrieved = {r["key"]: p for (r, _), p in zip(unanswerable, near)}
        answerable = [{**r, "passages": retrieved.get(r["key"], cited[r["key"]])} for r in rows]
        judged = judge_checks(service, quality_key, spec.judge_batch, grounded, answerable)
        if service.ledger.stopped:
            raise BudgetExceeded(service.ledger.stopped)
    except BudgetExceeded as exc:
        stopped = str(exc)
        judged, rules = {}, []
    outcomes = [] if stopped else item_outcomes(written, rules, judged, trust, spec)
    findings = summarize_generation(
        outcomes, documents={"read": len(corpus.documents), "skipped": corpus.skipped,
                             "sources": sorted(d.source for d in corpus.documents)},
        graph={"key": graph.key, "chunks": len(graph.chunks), "duplicates": len(graph.duplicates),
               "short_chunks": plan.short_chunks, "topics": len(graph.topics), "links": len(graph.links),
               "reused": graph.reused, "vectors_reused": graph.vectors_reused, "seconds": graph.seconds,
               "duplicate_chunks": graph.duplicates[:200], "topic_labels": graph.topics},
        trust={name: t.as_dict() for name, t in trust.items()}, costs=service.ledger.record(),
        settings={**spec.model_dump(mode="json", exclude={"base_dir"}), "generator": generator,
                  "quality_judge": quality_key, "quotas": plan.quotas},
        notes=plan.notes + ([stopped] if stopped else []))
    if dry:
        return GenerationResult(suite, EXIT_OK, "dry run: nothing was asked or written", findings,
                                estimate=service.ledger.estimate_record())
    from ..artifacts.generation_report import write_generation_report

    if not stopped:  # a stopped generation writes no suite (its answers are cached for the next run)
        lines = suite_lines(written, outcomes, graph, spec, generator)
        temporary = suite.with_name(f".{suite.name}.{os.getpid()}.tmp")
        temporary.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
        os.replace(temporary, suite)
    report = write_generation_report(findings, suite.parent, suite.stem, suite.name)
    journal.event("finished generation", "Generation", "run", kept=findings.counts["kept"],
                  flagged=findings.counts["flagged"], dropped=findings.counts["dropped"],
                  failed=findings.counts["failed"], seconds=round(time.perf_counter() - started, 3))
    result_files = {"suite": suite, **report, "graph": suite.parent / names.GENERATION_FILES["graph"].format(
        stem=suite.stem), "journal": suite.parent / names.GENERATION_FILES["journal"].format(stem=suite.stem)}
    if stopped:
        raise BudgetExceeded(f"{stopped}; the items written so far are cached: run again with a higher --max-cost")
    if findings.status == "empty":
        return GenerationResult(suite, EXIT_EVALUATOR_FAILED, f"no item kept: {findings.empty_reason}", findings,
                                result_files)
    counts = findings.counts
    return GenerationResult(suite, EXIT_OK, f"{counts['kept'] + counts['flagged']} item(s) in {suite} "
                            f"({counts['dropped']} dropped, {counts['failed']} failed)", findings, result_files)
