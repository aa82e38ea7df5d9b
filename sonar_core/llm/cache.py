"""The persistent LLM response cache: SQLite in WAL mode, shared by runs and processes.

Each entry is one answer, keyed by :func:`request_key`: a SHA-256 over the configuration's
identity (backend, base URL, model; never a key or a secret), the messages, the sampling
parameters and the repeat index. Asking the same judge the same thing again, in this run or a
later one, reads the entry instead of calling the LLM; the repeat index keeps the N answers of
``judge_repeats`` apart.

Location: the run setting ``llm_cache:``, else ``$SONAR_HOME/llm-cache.sqlite`` (default
``~/.cache/sonar/llm-cache.sqlite``). Every answer is committed as soon as it arrives, so a run
killed mid-way keeps what it fetched and a resumed or repeated run asks only for the rest.
Several processes may write at once: WAL lets readers go on while one writer commits, and a
writer waits for the lock (``busy_timeout``) instead of failing.

Modes: ``use`` (read and write), ``refresh`` (ignore entries written before this run started,
write new ones; a resumed refresh run still reuses what it fetched itself), ``off`` (neither).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Literal, TypedDict

from ..errors import EXIT_DATA, SonarError
from .configs import LLMIdentity
from .requests import CallParams, CallRecord

__all__ = ["CacheInfo", "ResponseCache", "CacheMode", "request_key", "default_cache_path", "CACHE_FORMAT",
           "CacheMissError", "copy_entries", "CACHE_ONLY_ENV", "CacheUnreadable"]

CacheMode = Literal["use", "refresh", "off"]
#: Part of every key: a change in how requests are keyed starts a fresh set of entries.
CACHE_FORMAT = 1
_BUSY_TIMEOUT_MS = 60_000


#: Set to 1 (``sonar replay`` does) and a cache miss raises :class:`CacheMissError` instead of letting
#: the caller ask the LLM: a replay answers everything from its pack or stops.
CACHE_ONLY_ENV = "SONAR_CACHE_ONLY"


class CacheMissError(SonarError):
    """A cache-only cache was asked for an answer it does not hold (the key is in the message)."""

    exit_code = EXIT_DATA


class CacheUnreadable(SonarError):
    """The cache file cannot be opened, read or written (not an SQLite database, damaged, locked past the
    busy timeout): one line naming the file. It ends the run (every judge would fail the same way);
    finished evaluators are kept for ``--resume``."""

    exit_code = EXIT_DATA


@contextmanager
def _named(path: Path) -> Iterator[None]:
    """SQLite's errors name no file ("file is not a database"): this names it."""
    try:
        yield
    except sqlite3.Error as exc:
        raise CacheUnreadable(f"{path}: the LLM response cache cannot be used ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else 'no detail'}); move it away or name "
                              "another file with --llm-cache") from None


def default_cache_path() -> Path:
    """``$SONAR_HOME/llm-cache.sqlite`` (``~/.cache/sonar`` without ``SONAR_HOME``)."""
    from ..models import sonar_home

    return sonar_home() / "llm-cache.sqlite"


class CacheInfo(TypedDict):
    """The fields of one ``cache info`` journal event (ModelBench's names)."""
    type: str  #: who used the cache: ``sut`` or ``annotator``
    cache: str
    start_count: int
    end_count: int
    hits: int
    writes: int


def request_key(identity: LLMIdentity, messages: list[dict[str, str]], params: CallParams, repeat: int) -> str:
    """The cache key of one request (hex SHA-256 of its canonical JSON)."""
    canonical = json.dumps({"format": CACHE_FORMAT, "llm": identity, "messages": messages, "params": params,
                            "repeat": repeat}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """A SQLite table of answers; one object per process and file, safe to use from threads."""

    def __init__(self, path: Path, mode: CacheMode = "use", fresh_since: float | None = None) -> None:
        """
        Args:
            path: the database file (created with its folder when missing).
            mode: ``use``, ``refresh`` or ``off`` (see the module docstring).
            fresh_since: for ``refresh``, entries created at or after this Unix time count.
        """
        self.path = Path(path)
        self.mode = mode
        self.fresh_since = fresh_since if fresh_since is not None else time.time()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self.start_count = 0
        #: Answers read and written, per kind of asker (``annotator``: judges, ``sut``: models under test).
        self.hits: dict[str, int] = {}
        self.writes: dict[str, int] = {}
        #: Keys of the answers and row results this process used (read or wrote): ``sonar pack`` keeps only those.
        self.used: set[str] = set()
        self.used_rows: set[str] = set()
        #: Keys asked for and missing while cache-only (see CACHE_ONLY_ENV).
        self.missed: set[str] = set()
        self.cache_only = os.environ.get(CACHE_ONLY_ENV) == "1"
        #: True for a dry run (``sonar run --dry-run``): lookups as usual, every write dropped.
        self.read_only = False
        if mode != "off":
            self._open()

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _named(self.path):
            db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                                 isolation_level=None)
            try:
                db.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
                db.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a commit survives a killed process; only a power cut may lose the last ones.
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, llm TEXT NOT NULL, "
                           "request TEXT NOT NULL, response TEXT NOT NULL, created REAL NOT NULL)")
                # Finished rows of evaluators that cache them (sonar_core.execution.row_cache).
                db.execute("CREATE TABLE IF NOT EXISTS row_results (key TEXT PRIMARY KEY, evaluator TEXT NOT NULL, "
                           "result TEXT NOT NULL, created REAL NOT NULL)")
            except sqlite3.Error:
                db.close()
                raise
        self._db = db
        self.start_count = self.count()

    @property
    def reads(self) -> bool:
        return self.mode != "off"

    def get(self, key: str, kind: str = "annotator", count: bool = True) -> str | None:
        """The cached answer for ``key``, or None (always None with mode ``off``); a hit counts for ``kind``
        unless ``count`` is false (a look that is not a use)."""
        with self._lock:
            if self._db is None:
                return None
            with _named(self.path):
                row = self._db.execute("SELECT response, created FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None or (self.mode == "refresh" and row[1] < self.fresh_since):
                if count and self.cache_only:
                    self.missed.add(key)
                    raise CacheMissError(f"no cached answer for request {key} (cache-only: nothing may be asked)")
                return None
            if count:
                self.hits[kind] = self.hits.get(kind, 0) + 1
                self.used.add(key)
        return row[0]

    def put(self, key: str, llm: str, request: CallRecord, response: str, kind: str = "annotator") -> None:
        """Store (or replace) one answer and commit it at once."""
        payload = json.dumps(request, ensure_ascii=False, sort_keys=True)
        with self._lock:
            if self._db is None or self.read_only:  # closed: an interrupted run's last answers are not kept
                return
            with _named(self.path):
                self._db.execute("INSERT OR REPLACE INTO responses (key, llm, request, response, created) "
                                 "VALUES (?, ?, ?, ?, ?)", (key, llm, payload, response, time.time()))
            self.writes[kind] = self.writes.get(kind, 0) + 1
            self.used.add(key)

    def get_row(self, key: str) -> str | None:
        """A cached row result (JSON text) for ``key``, or None; the mode applies as to answers."""
        with self._lock:
            if self._db is None:
                return None
            with _named(self.path):
                row = self._db.execute("SELECT result, created FROM row_results WHERE key = ?", (key,)).fetchone()
        if row is None or (self.mode == "refresh" and row[1] < self.fresh_since):
            return None
        with self._lock:
            self.used_rows.add(key)
        return row[0]

    def put_row(self, key: str, evaluator: str, result: str) -> None:
        """Store (or replace) one row result and commit it at once."""
        with self._lock:
            if self._db is None or self.read_only:
                return
            with _named(self.path):
                self._db.execute("INSERT OR REPLACE INTO row_results (key, evaluator, result, created) "
                                 "VALUES (?, ?, ?, ?)", (key, evaluator, result, time.time()))
            self.used_rows.add(key)

    def answers_of(self, llm: str, limit: int) -> list[str]:
        """Up to ``limit`` stored answers of configuration ``llm`` (the newest first): the cost estimate's
        sample of how long its answers are (docs/costs.md). No hit is counted."""
        with self._lock:
            if self._db is None:
                return []
            with _named(self.path):
                rows = self._db.execute("SELECT response FROM responses WHERE llm = ? ORDER BY created DESC LIMIT ?",
                                        (llm, limit)).fetchall()
        return [row[0] for row in rows]

    def count(self) -> int:
        with self._lock:
            if self._db is None:
                return 0
            with _named(self.path):
                return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def info(self) -> list["CacheInfo"]:
        """The fields of one ``cache info`` journal event (ModelBench's names) per kind of asker that used
        the cache (``sut`` before ``annotator``, the order a pipeline run uses them); one ``annotator``
        event when none did. The counts of entries are the file's, shared by both kinds."""
        with self._lock:
            kinds = sorted(set(self.hits) | set(self.writes), key=lambda k: (k != "sut", k)) or ["annotator"]
            hits, writes = dict(self.hits), dict(self.writes)
        end = self.count()
        return [{"type": kind, "cache": f"ResponseCache(path={self.path}, mode={self.mode})",
                 "start_count": self.start_count, "end_count": end, "hits": hits.get(kind, 0),
                 "writes": writes.get(kind, 0)} for kind in kinds]

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def copy_entries(source: Path, target: Path, keys: set[str], row_keys: set[str]) -> tuple[list[str], list[str]]:
    """Copy the answers ``keys`` and row results ``row_keys`` of the cache file ``source`` into a new cache
    file ``target``; returns the keys of each kind that ``source`` does not hold."""
    out = ResponseCache(target)  # creates both tables
    out.close()
    db = sqlite3.connect(target, isolation_level=None)
    missing: list[list[str]] = []
    try:
        with _named(source):  # the run's cache file, damaged since the run
            db.execute("ATTACH DATABASE ? AS src", (str(source),))
            for table, wanted, columns in (("responses", keys, "key, llm, request, response, created"),
                                           ("row_results", row_keys, "key, evaluator, result, created")):
                found = set()
                for key in sorted(wanted):
                    row = db.execute(f"SELECT {columns} FROM src.{table} WHERE key = ?", (key,)).fetchone()
                    if row is None:
                        continue
                    found.add(key)
                    db.execute(f"INSERT OR REPLACE INTO main.{table} ({columns}) VALUES "
                               f"({', '.join('?' * len(row))})", row)
                missing.append(sorted(wanted - found))
            db.execute("DETACH DATABASE src")
    finally:
        db.close()
    return missing[0], missing[1]
