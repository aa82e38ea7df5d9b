"""Row results as Parquet (zstd): every evaluator's rows, and the run's dataset once.

A result folder used to repeat the whole dataset in every evaluator's llm-eval-results (JSON, CSV
and .jay), about 1.2 KB per row and evaluator. Here each evaluator's rows are written as Parquet
holding only the row keys, the metric values and the per-row messages
(``global_llm_eval_results/application_vnd_apache_parquet/explanation.parquet``), and the dataset
fields H2O Sonar's eval-results records carry (input, context, expected and actual output, ...) are
written once per run, to ``dataset/llm_dataset.parquet``; joining the two on ``key`` gives the
records of the JSON file (:mod:`sonar_core.result_rows` does, for ``open_run(...).rows()``).

Above ``columnar_only_above`` scored rows (a run setting) the JSON, CSV and .jay are not written:
Parquet alone holds the rows. Parquet needs pyarrow (``pip install 'sonar-eval[columnar]'``, 170 MB,
so not in the base install): without it the rows are written as JSON, CSV and .jay at any size, as
before, so nothing is lost. Both writers stream: rows are converted and written in chunks of
:data:`CHUNK_ROWS`, so memory holds one chunk, never the file.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from .. import names
from ..named_files import naming
from .eval_results import RECORD_FIELDS, write_eval_results
from .formats import write_json

if TYPE_CHECKING:  # pragma: no cover
    from ..findings.scored import ScoredEvaluator

__all__ = ["parquet_available", "MIME_PARQUET", "RUN_DATASET_PARQUET", "CHUNK_ROWS", "write_row_results", "write_run_dataset",
           "evaluator_parquet", "LIST_FIELDS", "JSON_FIELDS"]

#: IANA's MIME type for Parquet (registered 2024); its folder is ``application_vnd_apache_parquet``.
MIME_PARQUET = "application/vnd.apache.parquet"
#: The run's one dataset copy, relative to the run folder.
RUN_DATASET_PARQUET = f"{names.DATASET_DIR}/llm_dataset.parquet"
#: Rows per Parquet row group and per conversion step: a few MB of Python objects at a time.
CHUNK_ROWS = 65_536
#: Dataset fields that are lists of strings: native Parquet lists (DuckDB, Polars and Spark read them).
LIST_FIELDS = ("corpus", "context", "categories", "output_constraints")
#: Fields that hold lists or objects of any shape: JSON text in Parquet, decoded again by the reader.
JSON_FIELDS = ("relationships", "details", "actual_output_meta")
_NUMERIC_FIELDS = ("actual_duration", "cost")
#: Row fields of the dataset copy beyond the eval-results record's (epochs, production traces).
_EXTRA_FIELDS = ("epoch", "trace_id", "span_id")
#: A multi-turn case's turns (JSON text), a column of the dataset copy only when some row has them,
#: so the copy of a dataset without conversations is what it always was (``sonar view`` shows them).
_CONVERSATION = "conversation"
_FORMAT_CLASS = "ParquetFormat"
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def parquet_available() -> bool:
    """Whether pyarrow is installed (the ``columnar`` extra)."""
    return importlib.util.find_spec("pyarrow") is not None


def _json_cell(value: Any) -> str:
    # Most cells are empty: skipping the encoder for them keeps a million rows cheap.
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    return _ENCODE(value)


#: Distinct ``details`` objects remembered per file: a model-free evaluator's million rows hold a handful.
_CELL_CACHE_LIMIT = 4096
#: Hashable value types whose equal values may encode differently (0.0 and -0.0; (1,) and (True,)).
_UNCACHED = (float, tuple, frozenset)


def _cell_encoder():
    """:func:`_json_cell` for one file, which encodes an object of hashable values once and reuses the
    text for every equal one. The key holds each value's type (1 and true are equal in Python but not
    in JSON); floats and tuples are always encoded. Encoding each row's ``details`` was most of the time
    a million-row evaluator spent writing its Parquet."""
    texts: dict[tuple, str] = {}

    def encode(value: Any) -> str:
        if type(value) is not dict or not value:
            return _json_cell(value)
        types = tuple(map(type, value.values()))
        if any(t in types for t in _UNCACHED):
            return _ENCODE(value)
        try:
            key = (tuple(value.items()), types, tuple(map(type, value)))
            text = texts.get(key)
        except TypeError:  # a list or dict value: not hashable
            return _ENCODE(value)
        if text is None:
            text = _ENCODE(value)
            if len(texts) < _CELL_CACHE_LIMIT:
                texts[key] = text
        return text
    return encode


def _chunks(items: list, size: int) -> Iterable[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _string_list(values: list) -> list:
    """Lists of strings as they are; a list holding anything else gets its items as text."""
    return [v if all(isinstance(x, str) for x in v) else [x if isinstance(x, str) else _ENCODE(x) for x in v]
            for v in values]


def _write_atomic_parquet(target: Path, schema, batches: Iterable[dict[str, list]]) -> None:
    """Stream ``batches`` (column -> values) into ``target`` through ``<target>.tmp``, zstd-compressed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp")
    with naming(temporary):
        with pq.ParquetWriter(str(temporary), schema, compression="zstd") as writer:
            for columns in batches:
                writer.write_table(pa.table(columns, schema=schema), row_group_size=CHUNK_ROWS)
        os.replace(temporary, target)


def _dataset_schema(conversation: bool = False):
    import pyarrow as pa

    fields = []
    names_ = RECORD_FIELDS + list(_EXTRA_FIELDS) + ([_CONVERSATION] if conversation else [])
    for name in names_:
        if name in LIST_FIELDS:
            fields.append(pa.field(name, pa.list_(pa.string())))
        elif name in _NUMERIC_FIELDS:
            fields.append(pa.field(name, pa.float64()))
        elif name == "epoch":
            fields.append(pa.field(name, pa.int64()))
        else:
            fields.append(pa.field(name, pa.string()))
    return pa.schema(fields, metadata={"sonar.schema_version": names.SCHEMA_VERSION,
                                       "sonar.json_columns": json.dumps([f for f in JSON_FIELDS if f in RECORD_FIELDS]
                                         + ([_CONVERSATION] if conversation else []))})


def write_run_dataset(rows: list, run_dir: Path) -> Path | None:
    """Write the run's dataset rows once, as ``dataset/llm_dataset.parquet``; return its path (None:
    pyarrow is not installed, nothing written).

    Every field of an eval-results record that comes from the dataset, plus ``epoch``, ``trace_id`` and
    ``span_id`` (and ``conversation`` when a row has turns); lists of strings as Parquet lists,
    ``relationships`` and ``conversation`` as JSON text.
    """
    if not parquet_available():
        return None
    schema = _dataset_schema(any(getattr(row, _CONVERSATION, None) for row in rows))

    def batches():
        for chunk in _chunks(rows, CHUNK_ROWS):
            columns: dict[str, list] = {}
            for name in schema.names:
                values = [getattr(row, name) for row in chunk]
                if name in LIST_FIELDS:
                    values = _string_list(values)
                elif name in JSON_FIELDS or name == _CONVERSATION:
                    values = [_json_cell(v) for v in values]
                columns[name] = values
            yield columns

    target = run_dir / RUN_DATASET_PARQUET
    _write_atomic_parquet(target, schema, batches())
    return target


def evaluator_parquet(folder: Path) -> Path:
    """Where an evaluator folder's Parquet row results are."""
    return folder / names.EVAL_RESULTS / names.mime_dir(MIME_PARQUET) / f"{names.EXPLANATION_STEM}.parquet"


def _write_evaluator_parquet(ev: ScoredEvaluator, folder: Path, judge_trust: dict[str, Any] | None) -> None:
    """The evaluator's rows: keys, metric values, error message, details, sentence meta (and judge trust)."""
    import pyarrow as pa

    metric_keys = [m.key for m in ev.cls.metrics]
    epochs = any(row.epoch for row, _ in ev.scored)
    traced = any(row.span_id for row, _ in ev.scored)
    # The columns of the JSON records, in their order (eval_results: a metric named like a dataset
    # field takes its place); the reader gives rows() exactly these.
    record_columns = list(dict.fromkeys(RECORD_FIELDS + metric_keys + ["result_error_message", "details",
                                                                       "actual_output_meta"]))
    record_columns += (["judge_trust"] if judge_trust else []) + (["epoch"] if epochs else []) \
        + (["trace_id", "span_id"] if traced else [])
    fields = [pa.field("key", pa.string()), pa.field("test_case_key", pa.string()), pa.field("model_key", pa.string())]
    fields += [pa.field(k, pa.float64()) for k in metric_keys if k not in ("key", "test_case_key", "model_key")]
    fields += [pa.field("result_error_message", pa.string()), pa.field("details", pa.string()),
               pa.field("actual_output_meta", pa.string())]
    if judge_trust:
        fields.append(pa.field("judge_trust", pa.string()))
    own = {f.name for f in fields}
    schema = pa.schema(fields, metadata={
        "sonar.schema_version": names.SCHEMA_VERSION, "sonar.evaluator_id": ev.cls.id,
        "sonar.record_columns": json.dumps(record_columns),
        "sonar.dataset_columns": json.dumps([c for c in record_columns if c not in own]),
        "sonar.json_columns": json.dumps(["details", "actual_output_meta"]),
        "sonar.metrics_meta": json.dumps(ev.cls.metrics_meta(ev.thresholds), ensure_ascii=False),
        **({"sonar.judge_trust": json.dumps(judge_trust, ensure_ascii=False)} if judge_trust else {}),
    })

    details_cell = _cell_encoder()

    def batches():
        for chunk in _chunks(ev.scored, CHUNK_ROWS):
            rows = [row for row, _ in chunk]
            results = [result for _, result in chunk]
            columns: dict[str, list] = {"key": [r.key for r in rows], "test_case_key": [r.test_case_key for r in rows],
                                        "model_key": [r.model_key for r in rows]}
            for k in metric_keys:
                if k in own and k not in columns:
                    columns[k] = [None if (v := res.values.get(k)) is None else float(v) for res in results]
            columns["result_error_message"] = [res.error_message or "" for res in results]
            columns["details"] = [details_cell(res.details) for res in results]
            columns["actual_output_meta"] = [_json_cell(res.actual_output_meta or []) for res in results]
            if judge_trust:
                columns["judge_trust"] = [judge_trust["status"]] * len(rows)
            yield columns

    _write_atomic_parquet(evaluator_parquet(folder), schema, batches())
    write_json(folder / names.EVAL_RESULTS / f"{names.mime_dir(MIME_PARQUET)}.meta", {
        "schema_version": names.SCHEMA_VERSION, "name": _FORMAT_CLASS, "full_name": f"sonar_core.formats.{_FORMAT_CLASS}",
        "mime": MIME_PARQUET, "explanation_type": names.EVAL_RESULTS.replace("_", "-"),
        "files": [f"{names.EXPLANATION_STEM}.parquet"], "dataset": f"../{RUN_DATASET_PARQUET}"})


def _note_formats(folder: Path, formats: list[str]) -> None:
    """Make the descriptor's llm-eval-results entry list the formats this folder holds."""
    path = folder / names.RESULT_DESCRIPTOR
    if not path.is_file():
        return
    descriptor = json.loads(path.read_text(encoding="utf-8"))
    for explanation in descriptor.get("explanations", []):
        if explanation.get("explanation_type") == names.EVAL_RESULTS.replace("_", "-"):
            explanation["formats"] = formats
    write_json(path, descriptor)


def write_row_results(ev: ScoredEvaluator, folder: Path, csv_formula_escape: bool = True,
                      judge_trust: dict[str, Any] | None = None, columnar_only_above: int | None = None) -> None:
    """Write an evaluator's llm-eval-results: Parquet always; JSON, CSV and .jay up to ``columnar_only_above``
    scored rows (None: always), and at any size without pyarrow. The descriptor lists the formats written."""
    if not parquet_available():
        write_eval_results(ev, folder, csv_formula_escape, judge_trust)
        return
    _write_evaluator_parquet(ev, folder, judge_trust)
    if columnar_only_above is None or len(ev.scored) <= columnar_only_above:
        write_eval_results(ev, folder, csv_formula_escape, judge_trust)
        _note_formats(folder, [names.MIME_JSON, names.MIME_CSV, names.MIME_JAY, MIME_PARQUET])
    else:
        _note_formats(folder, [MIME_PARQUET])
