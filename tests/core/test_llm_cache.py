"""The SQLite response cache: keys, modes, persistence and concurrent writers."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import sqlite3

from sonar_core.llm.cache import CACHE_FORMAT, ResponseCache, default_cache_path, request_key

IDENTITY = {"backend": "openai", "base_url": "http://h/v1", "model": "m"}
MESSAGES = [{"role": "user", "content": "Is the sky green?"}]
PARAMS = {"temperature": 0.0, "max_tokens": 10}


def test_key_is_sha256_of_the_canonical_request():
    canonical = ('{"format":%d,"llm":{"backend":"openai","base_url":"http://h/v1","model":"m"},'
                 '"messages":[{"content":"Is the sky green?","role":"user"}],'
                 '"params":{"max_tokens":10,"temperature":0.0},"repeat":0}') % CACHE_FORMAT
    assert request_key(IDENTITY, MESSAGES, PARAMS, 0) == hashlib.sha256(canonical.encode()).hexdigest()


def test_key_changes_with_each_part_of_the_request():
    base = request_key(IDENTITY, MESSAGES, PARAMS, 0)
    others = {
        request_key({**IDENTITY, "model": "m2"}, MESSAGES, PARAMS, 0),
        request_key(IDENTITY, [{"role": "user", "content": "Is the sky blue?"}], PARAMS, 0),
        request_key(IDENTITY, MESSAGES, {**PARAMS, "temperature": 0.7}, 0),
        request_key(IDENTITY, MESSAGES, {**PARAMS, "max_tokens": 11}, 0),
        request_key(IDENTITY, MESSAGES, PARAMS, 1),
    }
    assert base not in others and len(others) == 5


def test_answers_persist_across_cache_objects(tmp_path):
    path = tmp_path / "sub" / "cache.sqlite"
    cache = ResponseCache(path)
    assert cache.get("k1") is None
    cache.put("k1", "judge-a", {"messages": MESSAGES}, "absent")
    assert cache.get("k1") == "absent"
    cache.close()
    again = ResponseCache(path)
    assert again.start_count == 1 and again.get("k1") == "absent" and again.hits == {"annotator": 1}
    row = sqlite3.connect(path).execute("SELECT llm, request, response FROM responses").fetchone()
    assert row == ("judge-a", json.dumps({"messages": MESSAGES}, sort_keys=True), "absent")
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_refresh_ignores_older_entries_but_keeps_this_runs(tmp_path):
    path = tmp_path / "cache.sqlite"
    old = ResponseCache(path)
    old.put("old", "j", {}, "stale")
    old.close()
    started = sqlite3.connect(path).execute("SELECT created FROM responses").fetchone()[0] + 0.001
    refresh = ResponseCache(path, mode="refresh", fresh_since=started)
    assert refresh.get("old") is None
    refresh.put("old", "j", {}, "fresh")
    assert refresh.get("old") == "fresh"


def test_off_mode_neither_reads_nor_writes(tmp_path):
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path, mode="off")
    cache.put("k", "j", {}, "answer")
    assert cache.get("k") is None and not path.exists()
    assert cache.info() == [{"type": "annotator", "cache": f"ResponseCache(path={path}, mode=off)",
                             "start_count": 0, "end_count": 0, "hits": 0, "writes": 0}]


def test_hits_and_writes_are_counted_per_kind_of_asker(tmp_path):
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    cache.put("q", "host", {}, "answer", kind="sut")
    cache.put("v", "judge", {}, "verdict")
    assert cache.get("q", "sut") == "answer" and cache.get("v") == "verdict"
    assert cache.get("v", count=False) == "verdict"  # a look, not a use
    assert cache.get("nothing", "sut") is None
    where = f"ResponseCache(path={path}, mode=use)"
    assert cache.info() == [
        {"type": "sut", "cache": where, "start_count": 0, "end_count": 2, "hits": 1, "writes": 1},
        {"type": "annotator", "cache": where, "start_count": 0, "end_count": 2, "hits": 1, "writes": 1}]


def test_default_location_follows_sonar_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SONAR_HOME", str(tmp_path))
    assert default_cache_path() == tmp_path / "llm-cache.sqlite"


def _writer(path: str, worker: int, count: int) -> None:
    cache = ResponseCache(path)
    for i in range(count):
        cache.put(f"{worker}-{i}", "j", {"i": i}, f"answer {worker}-{i}")
    cache.close()


def test_concurrent_writer_processes_lose_nothing(tmp_path):
    path = tmp_path / "cache.sqlite"
    ResponseCache(path).close()  # create the file and WAL mode once
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(path), w, 150)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
    assert [p.exitcode for p in workers] == [0, 0, 0, 0]
    cache = ResponseCache(path)
    assert cache.count() == 600
    assert cache.get("3-149") == "answer 3-149" and cache.get("0-0") == "answer 0-0"
