"""The host pipeline: a test suite asked of every model under test, answers into an LLM dataset.

Stages (ModelBench's, 001): the *item source* reads the test suite's rows (test cases without
answers); the *host assigner* makes one item per test case and host; the *host worker* asks each
host its items (through the shared LLM client: response cache, concurrency bound, retries) and
records every answer; the answered items become the LLM dataset that the evaluators score as
if it had been given ready-made, and the *collector* (the runner) gathers their results.

Journal, per item and in this order: ``queuing item`` (``prompt_text``), ``fetched sut
response`` (``run_time``, ``request``, ``response``) or ``using cached sut response``
(``request``, ``response``), ``translated sut response`` (``response_text``, plus Sonar's
``duration``, ``cost``, tokens); each carries ``test_case_key`` and ``model_key``. Before the
items: ``running pipeline`` and ``using test items`` (``test``, ``using``, ``total``); after
them ``wrote llm dataset``; the runner's ``finished pipeline`` adds ``time``,
``total_finished`` and ``finished_counts``.

Run folder: ``dataset/answers.jsonl`` receives every answer as it arrives (appended, flushed and
fsynced per batch), so a run killed with kill -9 and resumed asks only the items not in it;
``dataset/llm_dataset.json`` and ``.csv`` are the produced dataset (a later run can score it
with ``dataset:``), ``dataset/failed_items.json`` the items a host could not answer. Those are
left out of scoring, counted in run.json (``pipeline``) and raised as a core problem.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import itertools
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .. import names
from ..named_files import named_open, naming
from ..artifacts.formats import write_atomic, write_json
from ..dataset import DATASET_FIELDS, LLMDataset, Row, RowFields, load_dataset
from ..llm.requests import CallTags
from .answers import AnswerRecord, EpochsSummary, FailedItem, FinishedFields, HostCounts, PipelineSummary
from ..perturbations import expand_perturbations
from .epoch_items import EpochPlan, epoch_row_key
from .interrupt import WorkerPool
from ..errors import DatasetError
from ..text_clean import clean_value, count_cleaned
from ..hosts.base import Host, HostAnswer, HostPool
from .conversations import ask_items, is_conversation

__all__ = ["Item", "PipelineResult", "AnswerStore", "load_suite", "item_source", "assign_hosts", "run_pipeline"]

#: Items per host per batch (per slot of its concurrency): answers are persisted (fsync) once per batch.
BATCH_PER_SLOT = 8
#: Batches of one host in flight at once.
FEEDERS = 2
_ROW_FIELDS = tuple(f.name for f in dataclasses.fields(Row))
#: Columns every produced dataset has, whatever the suite had.
_ANSWER_COLUMNS = ("key", "model_key", "test_case_key", "actual_output", "actual_duration", "cost")
#: Columns of a produced dataset whose suite was expanded with perturbed copies.
_PERTURBATION_COLUMNS = ("original_test_case_key", "perturbation", "relationships")


@dataclass
class Item:
    """One test case for one host, in one epoch (0 unless the run asks every test case more than once)."""

    row: Row
    host: str
    epoch: int = 0

    @property
    def ident(self) -> tuple[str, str, int]:
        return self.row.test_case_key, self.host, self.epoch

    @property
    def tags(self) -> CallTags:
        """The journal's item fields (the epoch only where it is not 0: one epoch journals as before)."""
        return {"test_case_key": self.row.test_case_key, "model_key": self.host,
                **({"epoch": self.epoch} if self.epoch else {})}


@dataclass
class PipelineResult:
    dataset: LLMDataset
    failed: list[FailedItem]
    counts: dict[str, HostCounts]
    seconds: float
    suite: str
    suite_fingerprint: str
    #: The epochs and the deterministic hosts asked once (:mod:`.epoch_items`); None for one epoch.
    epochs: EpochsSummary | None = None

    def summary(self) -> PipelineSummary:
        """run.json's ``pipeline`` record."""
        return {"test_suite": self.suite, "test_suite_fingerprint": self.suite_fingerprint,
                "seconds": round(self.seconds, 3), "hosts": self.counts,
                "failed_items": len(self.failed), "dataset": f"{names.DATASET_DIR}/{names.LLM_DATASET_JSON}",
                **({"epochs": self.epochs} if self.epochs else {})}

    def finished_fields(self) -> FinishedFields:
        """What the runner's ``finished pipeline`` event adds (001's fields)."""
        return {"time": round(self.seconds, 3), "total_finished": sum(c["answered"] for c in self.counts.values()),
                "finished_counts": {key: c["answered"] for key, c in self.counts.items()}}


def load_suite(path: Path) -> tuple[list[Row], list[str], str]:
    """The suite's rows (one per test case), its columns and fingerprint; DatasetError, one line, when bad."""
    dataset = load_suite_dataset(path)
    return dataset.rows, dataset.columns, dataset.fingerprint


def load_suite_dataset(path: Path) -> LLMDataset:
    """The test suite as a checked dataset (its ``cleaned`` counts included); see :func:`load_suite`."""
    dataset = load_dataset(path)
    seen: dict[str, int] = {}
    for index, row in enumerate(dataset.rows, start=1):
        if row.test_case_key in seen:
            raise DatasetError(f"{path}: row {index}, field 'test_case_key': duplicate test case "
                               f"{row.test_case_key!r} (first at row {seen[row.test_case_key]}); a test suite "
                               f"has one row per test case")
        seen[row.test_case_key] = index
        if not row.input.strip() and not row.simulated_user:
            raise DatasetError(f"{path}: row {index}, field 'input': empty; a test suite row needs the question "
                               f"to ask")
    return dataset


def item_source(rows: list[Row], config: Any = None, plugins: Any = None) -> list[Row]:
    """The test cases the hosts are asked: the suite's rows, each followed by its ``perturb:`` copies
    (perturbators from ``plugins``, the run's plugin manager)."""
    return expand_perturbations(rows, getattr(config, "perturb", None), plugins)


def assign_hosts(rows: list[Row], hosts: HostPool, epochs: int = 1) -> list[Item]:
    """One item per test case and host, test case by test case (the dataset's row order); with
    ``epochs`` > 1 that order once per epoch, epoch 0 first (its items are those of a one-epoch run)."""
    return [Item(row, key, epoch) for epoch in range(epochs) for row in rows for key in hosts.keys()]


class AnswerStore:
    """``answers.jsonl``: every answered item, appended and fsynced per batch; read back on resume."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.answers: dict[tuple[str, str, int], AnswerRecord] = {}
        self._lock = threading.Lock()
        if path.is_file():
            self._read()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = named_open(path, "a", encoding="utf-8")  # a failed write names answers.jsonl

    def _read(self) -> None:
        # Lines end at "\n" only: str.splitlines would also split an answer holding U+2028 or U+0085
        # (found by the fuzz suite), and a resumed run would ask that item again.
        for line in self.path.read_text(encoding="utf-8").split("\n"):
            try:
                record = json.loads(line)
                self.answers[_answer_key(record)] = record
            except (ValueError, KeyError, TypeError):
                # The line a kill cut short: its item is asked again.
                continue

    def get(self, ident: tuple[str, str, int] | tuple[str, str]) -> AnswerRecord | None:
        """The answer to (test case, model, epoch); (test case, model) is epoch 0."""
        return self.answers.get(ident if len(ident) == 3 else (*ident, 0))

    def add(self, records: list[AnswerRecord]) -> None:
        if not records:
            return
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        with self._lock:
            self._file.write(text)
            self._file.flush()
            with naming(self.path):
                os.fsync(self._file.fileno())
            for record in records:
                self.answers[_answer_key(record)] = record

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _answer_key(record: AnswerRecord) -> tuple[str, str, int]:
    # A record of epoch 0 has no "epoch" field: answers.jsonl of a one-epoch run is as it was.
    return record["test_case_key"], record["model_key"], int(record.get("epoch", 0))


def _record(item: Item, answer: HostAnswer) -> AnswerRecord:
    # A host's text is cleaned as it is read (docs/reliability.md); the record names what was cleaned
    # so that a resumed run counts it too.
    text, text_cleaned = clean_value(answer.text)
    contexts, contexts_cleaned = clean_value(answer.contexts)
    record: AnswerRecord = {
        "test_case_key": item.row.test_case_key, "model_key": item.host,
        **({"epoch": item.epoch} if item.epoch else {}), "actual_output": text,
        "actual_duration": round(answer.duration, 6), "cost": answer.cost, "input_tokens": answer.input_tokens,
        "output_tokens": answer.output_tokens, "contexts": contexts, "cached": answer.cached,
        **({"conversation": answer.conversation} if getattr(answer, "conversation", None) else {})}
    if text_cleaned or contexts_cleaned or answer.cleaned:
        record["cleaned"] = [name for name, did in (("actual_output", text_cleaned or answer.cleaned),
                                                     ("context", contexts_cleaned))
                             if did]
    return record


class _Batches:
    """A host's items in batches, handed to its feeder threads one at a time."""

    def __init__(self, items: list[Item], size: int) -> None:
        self._chunks = iter([items[i:i + size] for i in range(0, len(items), size)])
        self.lock = threading.Lock()

    def next(self) -> list[Item] | None:
        with self.lock:
            return next(self._chunks, None)

    def stop(self) -> None:
        """Hand out no more batches (Ctrl-C: the feeders end after the batch they are asking)."""
        with self.lock:
            self._chunks = iter(())


def _ask_host(host: Host, batches: _Batches, store: AnswerStore, journal, counts: HostCounts,
              failures: dict[tuple[str, str, int], str], advance: Callable[[int], None], llm: Any = None,
              ask: Callable | None = None) -> None:
    while (chunk := batches.next()) is not None:
        tags = [item.tags for item in chunk]
        journal.events("queuing item", "HostAssigner", "assign", (
            {**tag, "prompt_text": item.row.input} for tag, item in zip(tags, chunk)))
        answers = []
        start = 0
        # The items of one epoch are asked together: the epoch is the request's repeat index.
        for epoch, group in itertools.groupby(chunk, key=lambda item: item.epoch):
            items = list(group)
            answers += _ask_items(host, items, tags[start:start + len(items)], epoch, llm, journal, ask)
            start += len(items)
        records = []
        with batches.lock:
            for item, answer in zip(chunk, answers):
                if answer.text is None:
                    failures[item.ident] = answer.error or "no answer"
                    counts["failed"] += 1
                    continue
                records.append(_record(item, answer))
                counts["answered"] += 1
                counts["cached" if answer.cached else "fetched"] += 1
        store.add(records)
        advance(len(chunk))


def _ask_items(host: Host, items: list[Item], tags: list[CallTags], epoch: int, llm: Any, journal,
               ask: Callable | None) -> list[HostAnswer]:
    # Epoch e asks with repeat=e (its own cache entry); epoch 0's request is the one-epoch run's.
    repeat = {"repeat": epoch} if epoch else {}
    if any(is_conversation(item.row) for item in items):  # asked turn by turn (execution/conversations.py)
        return ask_items(host, [item.row for item in items], tags, llm=llm, journal=journal, **repeat)
    prompts = [item.row.input for item in items]
    # ``ask``: the executor's way (a Ray task under the host's cluster-wide limits); else the host's own.
    return ask(host, prompts, tags, **repeat) if ask is not None else host.ask_many(prompts, tags=tags, **repeat)


def _values(row: Row) -> RowFields:
    # dataclasses.asdict deep-copies every value: a thousand rows took seconds.
    return {name: getattr(row, name) for name in _ROW_FIELDS}  # type: ignore[misc]  # the Row's fields


def _row(item: Item, record: AnswerRecord) -> Row:
    values = _values(item.row)
    values.update(key=epoch_row_key(item.row.test_case_key, item.host, item.epoch), model_key=item.host, epoch=item.epoch,
                  actual_output=record["actual_output"], actual_duration=record.get("actual_duration"),
                  cost=record.get("cost"))
    if record.get("contexts") is not None:
        values["context"] = list(record["contexts"])
    if record.get("conversation"):
        values["conversation"] = record["conversation"]
        values["input"] = values["input"] or next((t["content"] for t in record["conversation"]
                                                   if t["role"] == "user"), "")
    return Row(**values)


def _write_dataset(folder: Path, rows: list[Row], columns: list[str]) -> tuple[Path, str]:
    """llm_dataset.json and .csv with ``columns``; returns the JSON path and its SHA-256."""
    records = [{name: getattr(row, name) for name in columns} for row in rows]
    raw = json.dumps(records, ensure_ascii=False, indent=1).encode("utf-8")
    write_atomic(folder / names.LLM_DATASET_JSON, raw)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        # Lists as JSON arrays: the CSV loader reads them back so.
        writer.writerow([json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else "" if v is None else v
                         for v in record.values()])
    write_atomic(folder / names.LLM_DATASET_CSV, buffer.getvalue().encode("utf-8"))
    return folder / names.LLM_DATASET_JSON, hashlib.sha256(raw).hexdigest()


def run_pipeline(suite_path: Path, hosts: HostPool, run_dir: Path, journal, *, config: Any = None,
                 progress: Callable[[str, int], Callable[[int], None]] | None = None,
                 plugins: Any = None, llm: Any = None, ask: Callable | None = None) -> PipelineResult:
    """Ask every host every test case (only those not answered yet), write the dataset; see the module docstring."""
    started = time.perf_counter()
    suite = load_suite_dataset(suite_path)
    suite_rows, suite_columns, fingerprint = suite.rows, suite.columns, suite.fingerprint
    cleaned = dict(suite.cleaned)
    rows = item_source(suite_rows, config, plugins)
    plan = EpochPlan(hosts, getattr(config, "epochs", 1))
    items = assign_hosts(rows, hosts, plan.epochs)
    folder = run_dir / names.DATASET_DIR
    store = AnswerStore(folder / names.ANSWERS_FILE)
    journal.item_test = str(suite_path)  # the item field `test` of the hosts' item messages
    journal.event("running pipeline", "Pipeline", "run", hosts=hosts.keys(), test_cases=len(rows), items=len(items))
    journal.event("using test items", "Pipeline", "run", test=str(suite_path), using=len(rows), total=len(suite_rows))
    counts: dict[str, HostCounts] = {
        key: {"items": 0, "answered": 0, "fetched": 0, "cached": 0, "resumed": 0, "failed": 0,
              **({"reused": 0} if plan.epochs > 1 else {})}
        for key in hosts.keys()}
    todo: dict[str, list[Item]] = {key: [] for key in hosts.keys()}
    plan.journal(journal)
    for item in items:
        counts[item.host]["items"] += 1
        if store.get(item.ident) is not None:
            counts[item.host]["resumed"] += 1
            counts[item.host]["answered"] += 1
        elif not plan.reuses(item):  # a deterministic host's later epochs take epoch 0's answer
            todo[item.host].append(item)
    for key, c in counts.items():
        if c["resumed"]:
            journal.event("using resumed sut responses", "Pipeline", "run", model_key=key, items=c["resumed"],
                          file=f"{names.DATASET_DIR}/{names.ANSWERS_FILE}")
    failures: dict[tuple[str, str, int], str] = {}
    try:
        # Hosts are asked at the same time (a slow local model beside a fast endpoint), each by
        # FEEDERS threads so its next batch is queued while the last answers of one come in; each
        # host's own client bounds its concurrency.
        workers = [key for key in hosts.keys() if todo[key]]
        if workers:
            # Left by Ctrl-C, the pool hands out no more batches, cancels the ledger and waits for no call.
            with WorkerPool(FEEDERS * len(workers), "host-worker", getattr(llm, "ledger", None)) as pool:
                futures = []
                for key in workers:
                    host = hosts.get(key)
                    assert host is not None
                    advance = progress(f"asking {key}", len(todo[key])) if progress else (lambda n: None)
                    slots = getattr(getattr(host, "spec", None), "max_concurrency", 1)
                    batches = _Batches(todo[key], max(1, slots) * BATCH_PER_SLOT)
                    pool.on_stop(batches.stop)
                    futures += [pool.submit(_ask_host, host, batches, store, journal, counts[key], failures, advance,
                                            llm, ask) for _ in range(FEEDERS)]
                for future in futures:
                    future.result()
    finally:
        store.close()
    answered: list[Row] = []
    failed: list[FailedItem] = []
    for item in items:
        record = store.get(item.ident)
        if record is None and plan.reuses(item) and (record := plan.reused_record(item, store)) is not None:
            counts[item.host]["reused"] += 1
            counts[item.host]["answered"] += 1
        if record is not None:
            answered.append(_row(item, record))
            for name in record.get("cleaned", ()):
                count_cleaned(cleaned, name, True)
        else:
            failed.append({"test_case_key": item.row.test_case_key, "model_key": item.host,
                           **({"epoch": item.epoch} if item.epoch else {}),
                           "error": failures.get(item.ident, failures.get(item.ident[:2] + (0,), "not answered"))})
    columns = [name for name in DATASET_FIELDS
               if name in suite_columns or name in _ANSWER_COLUMNS
               or (name == "context" and any(r.context for r in answered))
               or (name == "conversation" and any(r.conversation for r in answered))
               # perturb: copies carry their link to the original (the core's flip problems read it).
               or (name in _PERTURBATION_COLUMNS and any(r.original_test_case_key for r in answered))
               or (name == "epoch" and plan.epochs > 1)]
    json_path, dataset_fingerprint = _write_dataset(folder, answered, columns)
    write_json(folder / names.FAILED_ITEMS, failed)
    journal.event("wrote llm dataset", "Pipeline", "run", path=f"{names.DATASET_DIR}/{names.LLM_DATASET_JSON}",
                  rows=len(answered), failed_items=len(failed))
    dataset = LLMDataset(rows=answered, source=str(json_path), columns=columns, fingerprint=dataset_fingerprint,
                         cleaned=cleaned)
    return PipelineResult(dataset=dataset, failed=failed, counts=counts, seconds=time.perf_counter() - started,
                          suite=str(suite_path), suite_fingerprint=fingerprint, epochs=plan.summary())
