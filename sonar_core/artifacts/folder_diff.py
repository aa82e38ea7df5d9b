"""Which files of two result folders differ beyond what may differ: the one comparison loop.

``sonar replay`` rebuilds a packed run and lists the files that differ from the packed ones
(:func:`compare_folders`, the rules below); bench/compare_runs.py compares two runs of the same
configuration with the same loop (:func:`compare_trees`) and its own rule (times only).

A replay reads every answer from the pack where the original run asked for it, once, under
whatever concurrency, 429s, kills and resumes happened: it proves *what* the run concluded, not
*how* the answers were obtained. So before comparing:

- times are left out: JSON keys whose values are wall-clock times or durations
  (:data:`MASKED_KEYS`), ISO timestamps and ``<number> s`` durations in text;
- the machine's paths: the dataset, LLM configuration, cache and run folder of the original run
  stand for the replay's own (``aliases``), and run.json's path settings are not compared;
- how answers were obtained is left out: the cache's and the clients' counters (``hits``,
  ``writes``, ``cached``, ``fetched``, ``retries``, ``attempts``, ``shared_calls``, the adaptive
  ``concurrency_limit`` range: run.json's ``llm.used`` keeps only each configuration), an
  evaluator's ``resumed`` flag, the journal's :data:`HOW_EVENTS` (logprob support noticed, in-flight
  limit changes, retries, the cache's and the memo's counters, the start of each process, a resume's
  skipped evaluators), the answers behind a judge's calibration (its result is compared) and index.html's
  sections built from them (:data:`HOW_SECTIONS`: the adaptive
  concurrency table);
- how rows were obtained is left out: a replay reads a local-model evaluator's rows from the pack, so
  the journal's :data:`ROW_SOURCE_EVENTS` and run.json's ``services.model_loads`` and
  ``services.embeddings`` are not compared (the rows' values are, in the evaluator's files);
- what the calls cost (run.json's ``costs``, the tokens and ``call_cost`` of counters and events,
  ``costs.md`` and index.html's costs table and costs line: docs/costs.md): an answer read from the cache
  costs nothing;
- ``cache_keys.json``, the cache entries the run touched (the pack's index of them: a resumed run's
  holds those its killed part used too).

How each kind of file is compared:

- ``.json``: parsed, field by field after the exclusions (formatting never differs); a difference
  names its field (``result.problems[3].severity``);
- the journal: each event without its answer-source wording (``fetched`` / ``using cached`` /
  ``using in-flight`` become ``<answer source>``) and ``resuming run`` read as ``starting run``,
  as a multiset (answers fetched concurrently are journalled in the order they arrive). A run
  killed and resumed holds one part per process (each opens with ``starting journal``), and the
  part that was killed repeats events its resumed part wrote again; so an event counts as many
  times as the part that wrote it most often;
- zip files member by member; ``.jay`` byte for byte; other text line by line.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .. import names

__all__ = ["compare_folders", "compare_trees", "replay_view", "json_differences", "MASKED_KEYS",
           "ROW_SOURCE_EVENTS", "HOW_EVENTS", "HOW_SECTIONS"]

#: JSON keys whose values are wall-clock times or durations, wherever they are nested.
TIME_KEYS = frozenset({"created", "timestamp", "seconds", "duration", "actual_duration", "run_time", "call_seconds",
                       "pid", "started", "finished", "elapsed", "wall_seconds", "fresh_since"})
_HOW_KEYS = {"hits", "writes", "start_count", "end_count", "cached", "fetched", "retries", "attempts",
             "concurrency_limit", "shared_calls", "cleaned_text", "resumed", "costs", "input_tokens",
             "output_tokens", "call_cost"}
#: Keys whose values are masked wherever they are nested.
MASKED_KEYS = frozenset(TIME_KEYS | _HOW_KEYS)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:[+-]\d{2}:?\d{2}|Z)?")
_SECONDS = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms)\b")
#: run.json's settings that name files of the machine (the replay reads its inputs from the pack).
_PATH_SETTINGS = {"dataset", "output_dir", "base_dir", "llm_configs", "llm_cache", "test_suite"}
#: Journal events that say how rows were obtained (scored in batches, or read back), not what they hold.
ROW_SOURCE_EVENTS = frozenset({"measured batch quality", "using cached row results", "embedding cache info"})
#: Journal events that say how answers were obtained, or how a process started: a replay asks nothing
#: and runs once.
HOW_EVENTS = frozenset({"starting journal", "judge gives no logprobs", "concurrency limit changed",
                        "retrying annotator request", "retrying sut request", "cache info", "run memo info",
                        "skipping finished evaluator", "run interrupted", "started executor", "asked shard"})
#: run.json's records of the models a run loaded and the embeddings it computed: how rows were obtained.
_ROW_SOURCE_KEYS = {"model_loads", "embeddings"}
#: Journal event names that say where an answer came from, not what it was.
_SOURCE_WORDING = re.compile(r"^(fetched|using cached|using in-flight) (annotator|sut) response$")
#: The model key of a judge's calibration items (sonar_core.llm.calibration): the answers behind a
#: calibration are compared through its result (run.json's ``judge_calibration``, the journal's ``judge
#: calibrated``), since a resumed run reads a calibration measured before the kill from the calibration
#: cache, without asking again.
_CALIBRATION_ITEMS = "calibration"
#: index.html's sections built from how answers were obtained and what they cost: each from its heading to
#: the end of its table.
HOW_SECTIONS = ("costs", "concurrency")
_SECTIONS = [re.compile(rf'<h2 id="{name}">.*?</table>\n?', re.DOTALL) for name in HOW_SECTIONS] + [
    # The costs in one line, near the headline (main's layout of issue 34).
    re.compile(r'<p class="costs-line" id="costs-line">.*?</p>', re.DOTALL)]
#: Files not compared: the calls' costs (only a run that made calls writes costs.md) and the cache entries
#: the run touched (cache_keys.json: a resumed run's holds those its killed part used too).
_LEFT_OUT = frozenset({names.COSTS_MD, names.CACHE_KEYS})



@dataclass(frozen=True)
class JsonView:
    """A JSON file's parsed content, compared field by field."""

    value: Any


#: A file's comparable form: lines in order (list), a multiset of lines (Counter), a JsonView, or a zip's
#: members (dict of member name -> view).
View = Any
Normaliser = Callable[[str, bytes], View]


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        # Left out rather than blanked: a cached answer's event has no call time at all.
        masked = {k: _mask(v) for k, v in value.items() if k not in MASKED_KEYS}
        if isinstance(masked.get("services"), dict):
            masked["services"] = {k: v for k, v in masked["services"].items() if k not in _ROW_SOURCE_KEYS}
        if isinstance(masked.get("interpretation_parameters"), dict):
            masked["interpretation_parameters"] = {k: ("<path>" if k in _PATH_SETTINGS else v)
                                                   for k, v in masked["interpretation_parameters"].items()}
        llm = masked.get("llm")
        if isinstance(llm, dict) and isinstance(llm.get("used"), dict):
            # A client's counters say how its answers were obtained; its configuration says which LLM.
            masked["llm"] = {**llm, "used": {key: ({"config": entry.get("config")} if isinstance(entry, dict) else entry)
                                             for key, entry in llm["used"].items()}}
        return masked
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, str):
        return _ISO.sub("<iso>", value)
    return value


def _event_line(event: dict[str, Any]) -> str | None:
    """One journal event as compared, or None for an event left out."""
    message = event.get("message")
    if message in ROW_SOURCE_EVENTS or message in HOW_EVENTS:
        return None
    if isinstance(message, str) and _SOURCE_WORDING.match(message):
        if event.get("model_key") == _CALIBRATION_ITEMS:
            return None
        event = {**event, "message": "<answer source>"}
    elif message == "resuming run":
        event = {**event, "message": "starting run"}
    return json.dumps(_mask(event), ensure_ascii=False, sort_keys=True)


def _journal(text: str) -> Counter:
    """The journal's events as a multiset: per event, the most times one process's part holds it."""
    parts: list[Counter] = [Counter()]
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            parts[-1][_SECONDS.sub("<secs>", _ISO.sub("<iso>", line))] += 1
            continue
        if not isinstance(event, dict):
            parts[-1][json.dumps(event)] += 1
            continue
        if event.get("message") == "starting journal" and sum(parts[-1].values()):
            parts.append(Counter())
        kept = _event_line(event)
        if kept is not None:
            parts[-1][kept] += 1
    merged: Counter = Counter()
    for part in parts:
        merged |= part  # the larger count of each event
    return merged


def replay_view(name: str, data: bytes) -> View:
    """The comparable form of one file of a run folder under the replay's rules (module docstring)."""
    if name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {info.filename: replay_view(info.filename, archive.read(info))
                    for info in sorted(archive.infolist(), key=lambda i: i.filename)}
    if name.endswith(".jay"):
        return [data.hex()]
    text = data.decode("utf-8", errors="replace")
    if name.rsplit("/", 1)[-1] == names.JOURNAL:
        return _journal(text)
    if name.endswith(".jsonl"):
        lines = []
        for line in text.splitlines():
            try:
                lines.append(json.dumps(_mask(json.loads(line)), ensure_ascii=False))
            except json.JSONDecodeError:
                lines.append(_SECONDS.sub("<secs>", _ISO.sub("<iso>", line)))
        return lines
    if name.endswith(".json"):
        try:
            return JsonView(_mask(json.loads(text)))
        except json.JSONDecodeError:
            pass
    if name.endswith(".html"):
        for section in _SECTIONS:
            text = section.sub("", text)
    return _SECONDS.sub("<secs>", _ISO.sub("<iso>", text)).splitlines()


def json_differences(a: Any, b: Any, where: str = "", sides: tuple[str, str] = ("the pack", "the replay"),
                     limit: int = 50) -> list[str]:
    """The fields where two parsed JSON values differ (``where`` names the value), at most ``limit``."""
    out: list[str] = []

    def walk(x: Any, y: Any, path: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for key in [*x, *(k for k in y if k not in x)]:
                at = f"{path}.{key}" if path else str(key)
                if key not in y:
                    out.append(f"{at}: only in {sides[0]}")
                elif key not in x:
                    out.append(f"{at}: only in {sides[1]}")
                else:
                    walk(x[key], y[key], at)
        elif isinstance(x, list) and isinstance(y, list):
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{path}[{i}]")
            if len(x) != len(y):
                out.append(f"{path}: {len(x)} items in {sides[0]}, {len(y)} in {sides[1]}")
        elif x != y or type(x) is not type(y) and not {type(x), type(y)} <= {int, float}:
            out.append(f"{path or '(value)'}: {str(json.dumps(x, ensure_ascii=False))[:200]} != "
                       f"{str(json.dumps(y, ensure_ascii=False))[:200]}")

    walk(a, b, where)
    return out


def _view_differences(a: View, b: View, sides: tuple[str, str]) -> list[str]:
    if isinstance(a, Counter) and isinstance(b, Counter):
        diff = [f"{n}x only in {sides[0]}: {line[:200]!r}" for line, n in sorted((a - b).items())]
        return diff + [f"{n}x only in {sides[1]}: {line[:200]!r}" for line, n in sorted((b - a).items())]
    if isinstance(a, JsonView) and isinstance(b, JsonView):
        return json_differences(a.value, b.value, sides=sides)
    if isinstance(a, dict) and isinstance(b, dict):  # zip members
        diff = [f"member {m}: only in {sides[0] if m in a else sides[1]}" for m in sorted(set(a) ^ set(b))]
        for member in sorted(set(a) & set(b)):
            diff += [f"member {member}: {d}" for d in _view_differences(a[member], b[member], sides)]
        return diff
    if isinstance(a, list) and isinstance(b, list):
        diff = [f"line {i + 1}: {x[:200]!r} != {y[:200]!r}" for i, (x, y) in enumerate(zip(a, b)) if x != y]
        if len(a) != len(b):
            diff.append(f"{len(a)} lines in {sides[0]}, {len(b)} in {sides[1]}")
        return diff
    return [f"{sides[0]} and {sides[1]} hold different kinds of content"]


def compare_trees(before: Path, after: Path, normalise: Normaliser, aliases: list[tuple[str, str]] = (),
                  sides: tuple[str, str] = ("the pack", "the replay"),
                  leave_out: frozenset[str] | set[str] = frozenset()) -> dict[str, list[str]]:
    """relative path -> how it differs, for the files of two folders that differ after ``normalise``.

    ``aliases``: (text in ``before``, text in ``after``) pairs that stand for the same thing, replaced in
    ``before``'s bytes first (longest first, bare and JSON-escaped). ``leave_out``: file names not compared.
    """
    files_before = {p.relative_to(before).as_posix() for p in before.rglob("*") if p.is_file()} - set(leave_out)
    files_after = {p.relative_to(after).as_posix() for p in after.rglob("*") if p.is_file()} - set(leave_out)
    report: dict[str, list[str]] = {name: [f"only in {sides[0]}"] for name in sorted(files_before - files_after)}
    report.update({name: [f"only in {sides[1]}"] for name in sorted(files_after - files_before)})
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
        va, vb = normalise(name, a), normalise(name, b)
        if va == vb:
            continue
        report[name] = _view_differences(va, vb, sides) or ["differs"]
    return report


def compare_folders(before: Path, after: Path, aliases: list[tuple[str, str]] = ()) -> dict[str, list[str]]:
    """relative path -> how it differs, for the files of a packed run (``before``) and its replay (``after``)
    that differ beyond what a replay may change (the module docstring)."""
    return compare_trees(before, after, replay_view, aliases, leave_out=_LEFT_OUT)
