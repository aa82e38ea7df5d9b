"""Which files of two result folders differ beyond what a replay may change.

``sonar replay`` rebuilds a packed run and lists the files that differ from the packed ones. What
is masked before comparing, and why (bench/compare_runs.py masks times the same way):

- times: JSON keys whose values are wall-clock times or durations (left out of the comparison), ISO timestamps and
  ``<number> s`` durations in text;
- the machine's paths: the dataset, LLM configuration, cache and run folder of the original
  run stand for the replay's own (``aliases``);
- how answers were obtained: a replay reads every answer from the cache where the original
  run asked for some, so the cache's counters (``hits``, ``writes``, ``start_count``,
  ``end_count``) and the clients' (``cached``, ``fetched``, ``retries``, ``attempts``, the adaptive
  ``concurrency_limit`` range) are left out,
  and the journal's per-answer events are compared without their ``fetched``/``using cached``
  wording and as a sorted list of events (answers fetched concurrently are journalled in the
  order they arrive);
- how rows were obtained: a replay reads a local-model evaluator's rows from the pack where the
  original run scored them with the model (sonar_core.execution.row_cache), so the journal's
  per-batch summaries of scoring, its note of rows read back and its embedding counters
  (:data:`ROW_SOURCE_EVENTS`) are left out, as are run.json's ``services.model_loads`` and
  ``services.embeddings``; the rows' values are compared in the evaluator's results like every other file;
- what the calls cost (run.json's ``costs``, the tokens and ``call_cost`` of the counters and journal
  events, ``costs.md`` and index.html's costs table: docs/costs.md), as an answer read from the cache
  costs nothing;
- archive timestamps: zip files are compared member by member.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

__all__ = ["compare_folders", "MASKED_KEYS", "ROW_SOURCE_EVENTS"]

_TIME_KEYS = {"created", "timestamp", "seconds", "duration", "actual_duration", "run_time", "call_seconds", "pid",
              "started", "finished", "elapsed", "wall_seconds", "fresh_since"}
_CACHE_KEYS = {"hits", "writes", "start_count", "end_count", "cached", "fetched", "retries", "attempts",
               "concurrency_limit", "costs", "input_tokens", "output_tokens", "call_cost"}
#: Keys whose values are masked wherever they are nested.
MASKED_KEYS = frozenset(_TIME_KEYS | _CACHE_KEYS)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:[+-]\d{2}:?\d{2}|Z)?")
_SECONDS = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms)\b")
#: run.json's settings that name files of the machine (the replay reads its inputs from the pack).
_PATH_SETTINGS = {"dataset", "output_dir", "base_dir", "llm_configs", "llm_cache", "test_suite"}
#: Journal events that say how rows were obtained (scored in batches, or read back), not what they hold.
ROW_SOURCE_EVENTS = frozenset({"measured batch quality", "using cached row results", "embedding cache info"})
#: run.json's records of the models a run loaded and the embeddings it computed: how rows were obtained.
_ROW_SOURCE_KEYS = {"model_loads", "embeddings"}
#: Journal event names that say where an answer came from, not what it was.
_SOURCE_WORDING = re.compile(r"^(fetched|using cached) (annotator|sut) response$")
#: index.html's costs section and its costs line (a replay's answers all come from the cache, and cost nothing).
_COSTS_SECTION = re.compile(r'<h2 id="costs">.*?</table>\n?|<p class="costs-line" id="costs-line">.*?</p>', re.DOTALL)
#: Files only a run that made calls writes (names.COSTS_MD).
_COST_FILES = {"costs.md"}


def _mask(value):
    if isinstance(value, dict):
        # Left out rather than blanked: a cached answer's event has no call time at all.
        masked = {k: _mask(v) for k, v in value.items() if k not in MASKED_KEYS}
        if isinstance(masked.get("services"), dict):
            masked["services"] = {k: v for k, v in masked["services"].items() if k not in _ROW_SOURCE_KEYS}
        if isinstance(masked.get("interpretation_parameters"), dict):
            masked["interpretation_parameters"] = {k: ("<path>" if k in _PATH_SETTINGS else v)
                                                   for k, v in masked["interpretation_parameters"].items()}
        return masked
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, str):
        return "<answer source>" if _SOURCE_WORDING.match(value) else _ISO.sub("<iso>", value)
    return value


def _lines(name: str, data: bytes) -> list[str]:
    if name.endswith(".zip"):
        out = []
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in sorted(archive.infolist(), key=lambda i: i.filename):
                out += [f"== {info.filename}", *_lines(info.filename, archive.read(info))]
        return out
    if name.endswith(".jay"):
        return [data.hex()]
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".jsonl"):
        lines = []
        for line in text.splitlines():
            try:
                event = json.loads(line)
                if isinstance(event, dict) and event.get("message") in ROW_SOURCE_EVENTS:
                    continue
                lines.append(json.dumps(_mask(event), ensure_ascii=False))
            except json.JSONDecodeError:
                lines.append(_SECONDS.sub("<secs>", _ISO.sub("<iso>", line)))
        # Answers fetched concurrently are journalled as they arrive; read from the cache, in request order.
        return sorted(lines)
    if name.endswith(".json"):
        try:
            return json.dumps(_mask(json.loads(text)), ensure_ascii=False, indent=1).splitlines()
        except json.JSONDecodeError:
            pass
    if name.endswith(".html"):
        text = _COSTS_SECTION.sub("", text)
    return _SECONDS.sub("<secs>", _ISO.sub("<iso>", text)).splitlines()


def compare_folders(before: Path, after: Path, aliases: list[tuple[str, str]] = ()) -> dict[str, list[str]]:
    """relative path -> how it differs, for the files that differ beyond the masked fields.

    ``aliases``: (text in ``before``, text in ``after``) pairs that stand for the same thing.
    """
    files_before = {p.relative_to(before).as_posix() for p in before.rglob("*") if p.is_file()} - _COST_FILES
    files_after = {p.relative_to(after).as_posix() for p in after.rglob("*") if p.is_file()} - _COST_FILES
    report: dict[str, list[str]] = {name: ["only in the pack"] for name in sorted(files_before - files_after)}
    report.update({name: ["only in the replay"] for name in sorted(files_after - files_before)})
    # Longest first: a folder's path must not be replaced inside a longer path that starts with it.
    ordered = sorted(aliases, key=lambda pair: -len(pair[0]))
    for name in sorted(files_before & files_after):
        a, b = (before / name).read_bytes(), (after / name).read_bytes()
        if a == b:
            continue
        for old, new in ordered:
            for form_old, form_new in ((old, new), (json.dumps(old)[1:-1], json.dumps(new)[1:-1])):
                a = a.replace(form_old.encode("utf-8"), form_new.encode("utf-8"))
        if a == b:
            continue
        la, lb = _lines(name, a), _lines(name, b)
        if la == lb:
            continue
        diff = [f"line {i + 1}: {x[:200]!r} != {y[:200]!r}" for i, (x, y) in enumerate(zip(la, lb)) if x != y]
        if len(la) != len(lb):
            diff.append(f"{len(la)} lines in the pack, {len(lb)} in the replay")
        report[name] = diff
    return report
