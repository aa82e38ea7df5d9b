"""List what differs between two result folders, apart from timestamps and durations.

    python bench/compare_runs.py BEFORE_DIR AFTER_DIR [--show N] [--alias BEFORE_TEXT=AFTER_TEXT ...]
                                 [--noise BEFORE_AGAIN_DIR]

Used to check that a change of the core's shape left every artifact as it was: run the same
configuration with the same ``--run-id`` before and after, then compare the two folders. Exit
status 0 when nothing but times differs, 1 otherwise.

What is masked before comparing, and why:
- JSON keys whose values are wall-clock times or durations (``created``, ``timestamp``,
  ``seconds``, ``duration``, ``run_time``, ``call_seconds``, ``mean_time``/``total_time`` of
  hosts' measured durations...), wherever they are nested;
- in text files (HTML, markdown, CSV, logs), ISO timestamps and ``<number> s`` durations;
- the ``pid`` of the journal's first event.
Zip archives are compared member by member, the same way. The loop that compares two folders is
``sonar replay``'s (sonar_core.artifacts.folder_diff.compare_trees); only what is masked differs. ``--alias`` says that two texts
stand for the same thing (the checkout or output folder of each run, for example) and replaces
the first by the second in BEFORE's files before comparing.

``--noise`` takes a second run of the BEFORE code (same configuration and run id): a line that
differs between BEFORE and it is the run's own noise (a live host's measured durations, answers
arriving in another order under concurrency) and is not reported for AFTER either.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from sonar_core.artifacts.folder_diff import TIME_KEYS, compare_trees

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:[+-]\d{2}:?\d{2}|Z)?")
_SECONDS = re.compile(r"\b\d+(?:\.\d+)?\s?s\b")
_SIDES = ("BEFORE", "AFTER")


def _mask_json(value):
    if isinstance(value, dict):
        return {k: ("<time>" if k in TIME_KEYS else _mask_json(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_json(v) for v in value]
    if isinstance(value, str):
        return _ISO.sub("<iso>", value)
    return value


def _mask_text(text: str) -> str:
    return _SECONDS.sub("<secs>", _ISO.sub("<iso>", text))


def normalised(name: str, data: bytes) -> list[str] | dict:
    """The file's content as comparable lines (a zip: its members' lines by name), times masked."""
    if name.endswith(".zip"):
        import io
        import zipfile

        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {info.filename: normalised(info.filename, archive.read(info))
                    for info in sorted(archive.infolist(), key=lambda i: i.filename)}
    if name.endswith(".jay"):
        return [data.hex()]
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".jsonl"):
        lines = []
        for line in text.splitlines():
            try:
                lines.append(json.dumps(_mask_json(json.loads(line)), ensure_ascii=False, sort_keys=False))
            except json.JSONDecodeError:
                lines.append(_mask_text(line))
        return lines
    if name.endswith(".json"):
        try:
            return json.dumps(_mask_json(json.loads(text)), ensure_ascii=False, indent=1).splitlines()
        except json.JSONDecodeError:
            pass
    return _mask_text(text).splitlines()


def compare(before: Path, after: Path, aliases: list[tuple[str, str]] = ()) -> dict[str, list[str]]:
    """relative path -> description of how it differs (only differing files): sonar replay's comparison
    loop (sonar_core.artifacts.folder_diff.compare_trees) with this script's rule, times only."""
    return compare_trees(before, after, normalised, aliases, sides=_SIDES)


def without_noise(report: dict[str, list[str]], noise: dict[str, list[str]]) -> dict[str, list[str]]:
    """``report`` less the lines (by number) that differ in ``noise`` too."""
    kept: dict[str, list[str]] = {}
    for name, diff in report.items():
        noisy = {line.split(":", 1)[0] for line in noise.get(name, [])}
        rest = [line for line in diff if line.split(":", 1)[0] not in noisy]
        if rest:
            kept[name] = rest
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--show", type=int, default=3, help="differing lines shown per file (default 3)")
    parser.add_argument("--alias", action="append", default=[], metavar="BEFORE_TEXT=AFTER_TEXT",
                        help="treat BEFORE_TEXT in BEFORE's files as AFTER_TEXT (e.g. checkout folders)")
    parser.add_argument("--noise", type=Path, help="a second run of the BEFORE code: what differs there is noise")
    args = parser.parse_args(argv)
    aliases = [tuple(item.split("=", 1)) for item in args.alias if "=" in item]
    report = compare(args.before, args.after, aliases)
    if args.noise is not None:
        report = without_noise(report, compare(args.before, args.noise))
    count = sum(1 for p in args.before.rglob("*") if p.is_file())
    if not report:
        print(f"identical apart from times: {count} files")
        return 0
    print(f"{len(report)} of {count} files differ beyond times:")
    for name, diff in report.items():
        print(f"  {name}: {len(diff)} difference(s)")
        for line in diff[:args.show]:
            print(f"      {line[:300]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
