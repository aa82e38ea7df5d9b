"""A finished evaluator's problems and insights, kept as their files rather than in memory.

run.json repeats every finished evaluator's problems, and with a large dataset they name
hundreds of thousands of failing rows. The run keeps each file's path instead, and run.json
copies the file's text (:class:`~.jsontext.ListFiles`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import names
from .jsontext import ListFiles

__all__ = ["StoredList", "stored_summary", "items_value", "severities", "load_summary"]


class StoredList(Sequence):
    """A finished evaluator's problems or insights: the list in its JSON file, read when first used.

    run.json repeats every finished evaluator's problems, and with a large dataset they name
    hundreds of thousands of failing rows. Rather than hold them all until the run ends, the
    run keeps each file's path (run.json copies the file's text, see jsontext.ListFiles), the
    length and the severities; the items are read back only when something iterates them.
    """

    def __init__(self, path: Path, items: list[dict[str, Any]]) -> None:
        self.path = path
        self._length = len(items)
        self.severities = [item.get("severity") for item in items]
        self._items: list[dict[str, Any]] | None = None

    def _load(self) -> list[dict[str, Any]]:
        if self._items is None:
            self._items = _load_sharing_row_keys(self.path.read_text(encoding="utf-8"))
        return self._items

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index):
        return self._load()[index]

    def __iter__(self):
        return iter(self._load())


def _load_sharing_row_keys(text: str) -> list[Any]:
    """``json.loads(text)``, with the test case and model keys of each problem's row lists made
    one string per distinct key.

    A problem names its failing rows twice (``dataset_row_keys`` pairs and ``test_case_keys``)
    and the JSON reader makes a new string for every occurrence: with many failing rows those
    copies were most of the memory the read-back problems took. Sharing happens as each
    object is completed, so the copies of only one problem exist at a time.
    """
    shared: dict[str, str] = {}

    def share(obj: dict[str, Any]) -> dict[str, Any]:
        keys = obj.get("test_case_keys")
        if isinstance(keys, list):
            obj["test_case_keys"] = [shared.setdefault(k, k) if type(k) is str else k for k in keys]
        pairs = obj.get("dataset_row_keys")
        if isinstance(pairs, list):
            for pair in pairs:
                if isinstance(pair, list):
                    pair[:] = [shared.setdefault(k, k) if type(k) is str else k for k in pair]
        return obj

    return json.JSONDecoder(object_hook=share).decode(text)


def stored_summary(summary: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``summary`` (an evaluator's, as written to its folder) with its problems and insights
    replaced by :class:`StoredList` views of the folder's files, in the view as well."""
    stored = dict(summary)
    view = stored["view"] = dict(summary["view"])
    for key, path in (("problems", folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE),
                      ("insights", folder / names.INSIGHTS_DIR / names.INSIGHTS_FILE)):
        items = summary[key]
        stored[key] = StoredList(path, items)
        if view.get(key) is items or view.get(key) == items:
            view[key] = stored[key]
    return stored


def _items_value(lists: list) -> Any:
    """The concatenation of ``lists`` for run.json: copied from their files when all are stored."""
    if all(isinstance(items, StoredList) for items in lists):
        return ListFiles([items.path for items in lists])
    return [item for items in lists for item in items]


def items_value(lists: list) -> Any:
    """The concatenation of ``lists`` for run.json: copied from their files when all are stored."""
    if all(isinstance(items, StoredList) for items in lists):
        return ListFiles([items.path for items in lists])
    return [item for items in lists for item in items]


def severities(summaries: list[dict[str, Any]]) -> list[str]:
    """The severities of every summary's problems, without reading stored problems back."""
    return [severity for s in summaries for severity in
            (s["problems"].severities if isinstance(s["problems"], StoredList) else (p["severity"] for p in s["problems"]))]


def load_summary(folder: Path) -> dict[str, Any] | None:
    """A finished evaluator folder's evaluator_summary.json, or None when it cannot be read."""
    try:
        return json.loads((folder / names.EVALUATOR_SUMMARY).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
