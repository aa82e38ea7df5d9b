"""The Ray executor (issue 21): same artifacts as a local run, limits held cluster-wide, no row lost.

One local Ray instance (``ray.init(num_cpus=2)``) serves every test of this module, and is shut down
after them so that its processes do not idle through the rest of the suite; every run here joins
it (the executor starts none of its own when Ray is up). Artifacts are compared byte for byte
with :func:`differences`, which leaves out only what docs/scale-out.md lists as allowed to differ:
the journal, the times in the evaluators' log lines, run.json's timings and durations,
and the durations index.html and the case pages print.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from judge_server import JudgeServer, write_llm_configs
from sonar_core import api, names
from sonar_core.config import build_config
from sonar_core.errors import ConfigError
from sonar_core.execution.choose import RAY_MISSING, make_executor
from sonar_core.models.embeddings import _PROCESS_CACHE

TESTS = Path(__file__).parent.parent
ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def ray_cluster():
    """One local Ray instance for this module; its workers import the test plugins as the driver does."""
    path = os.pathsep.join([str(TESTS / "core"), str(TESTS), str(TESTS.parent)])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path, "SONAR_RAY_SLEEP": "0.3"}})
    yield
    ray.shutdown()


# -- what may differ between two runs of the same configuration -------------------------------------

_STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", re.M)
_RUN_JSON_TIMES = ("timings", "duration", "created", "seconds", "call_seconds", "run_time")


def _drop_times(value):
    if isinstance(value, dict):
        return {k: _drop_times(v) for k, v in value.items() if k not in _RUN_JSON_TIMES}
    if isinstance(value, list):
        return [_drop_times(v) for v in value]
    return value


def _normal(path: Path, alias: tuple[str, str]) -> bytes:
    data = path.read_bytes().replace(alias[0].encode(), alias[1].encode())
    if path.suffix == ".log":
        # A line an evaluator logs once per instance (the model it chose) comes once per actor.
        return "\n".join(sorted(set(_STAMP.sub("", data.decode()).splitlines()))).encode()
    if path.name == names.RUN_JSON:
        return json.dumps(_drop_times(json.loads(data)), sort_keys=True).encode()
    if path.suffix == ".html":  # durations and the creation time, shown in the pages
        text = data.decode()
        text = re.sub(r"\d+(\.\d+)?\s?(ms|s)\b", "<t>", text)
        return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\+00:00)?", "<ts>", text).encode()
    return data


def differences(a: Path, b: Path) -> list[str]:
    """Files that differ between two run folders (beyond timestamps, durations and the output folder's
    name), or exist in one only."""
    alias = (str(a.parent), str(b.parent))
    files = {p.relative_to(a) for p in a.rglob("*") if p.is_file()} | {p.relative_to(b) for p in b.rglob("*")
                                                                      if p.is_file()}
    out = []
    for rel in sorted(files):
        if rel.name == names.JOURNAL:
            continue
        if not (a / rel).is_file() or not (b / rel).is_file():
            out.append(f"only in one: {rel}")
        elif _normal(a / rel, alias) != _normal(b / rel, alias):
            out.append(str(rel))
    return out


def _journal(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()]


# -- settings and errors --------------------------------------------------------------------------

def test_ray_missing_is_a_one_line_error_naming_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # as on an install without the extra
    with pytest.raises(ConfigError) as caught:
        make_executor(build_config({"dataset": "demo", "executor": "ray"}))
    assert str(caught.value) == RAY_MISSING == ("executor 'ray' needs Ray, which is not installed: "
                                               "pip install 'sonar-eval[ray]'")
    from sonar_core.cli import cli

    result = CliRunner().invoke(cli, ["run", "-d", "demo", "-e", "text_matching", "--executor", "ray",
                                      "-o", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"error: {RAY_MISSING}"]
    assert not any(tmp_path.iterdir())  # nothing ran


def test_executor_settings_are_checked_and_left_out_of_run_json(tmp_path):
    with pytest.raises(ConfigError, match="executor"):
        build_config({"dataset": "demo", "executor": "spark"})
    with pytest.raises(ConfigError, match="ray_address needs executor: ray"):
        make_executor(build_config({"dataset": "demo", "ray_address": "auto"}))
    result = api.run(dataset="demo", evaluators=["text_matching"], output_dir=tmp_path, run_id="r")
    parameters = json.loads((result.run_dir / names.RUN_JSON).read_text())["interpretation_parameters"]
    assert not {"executor", "ray_address", "ray_shard_rows"} & set(parameters)
    assert not [e for e in _journal(result.run_dir) if e["message"] == "started executor"]


# -- same artifacts ----------------------------------------------------------------------------------

#: The quickstart's evaluators: rule-based ones on every row, model-backed ones (an embedding model,
#: the toxicity model) on a few rows; batches of 4 and shards of 8 make several shards per evaluator.
QUICK = [
    "text_matching", "pii_leakage", "sensitive_data_leakage", "encoding_guardrail", "factual_knowledge",
    {"id": "answer_semantic_similarity", "max_rows": 12},
    {"id": "groundedness_semantic_similarity", "max_rows": 12},
    {"id": "toxicity", "max_rows": 12},
]


def test_quickstart_evaluators_give_the_local_artifacts(tmp_path, ray_cluster):
    common = dict(dataset="demo", evaluators=QUICK, run_id="q", batch_size=4, calibrate=False)
    _PROCESS_CACHE.clear()  # a fresh process's embedding cache, as the run's embedding actor has
    local = api.run(output_dir=tmp_path / "local", **common)
    on_ray = api.run(output_dir=tmp_path / "ray", executor="ray", ray_shard_rows=8, **common)
    assert local.status == on_ray.status == "success"
    assert differences(local.run_dir, on_ray.run_dir) == []
    journal = _journal(on_ray.run_dir)
    started = [e for e in journal if e["message"] == "started executor"]
    assert started[0]["executor"] == "ray" and started[0]["resources"]["CPU"] == 2.0
    shards = [e for e in journal if e["message"] == "measured batch quality" and e["evaluator"] == "text_matching"]
    assert [e["shard"] for e in shards] == list(range(1, len(shards) + 1))
    assert all(e["rows"] == 8 for e in shards[:-1]) and shards[-1]["done"] == shards[-1]["total"]
    assert {e["on"] for e in journal if e.get("evaluator") == "toxicity" and "on" in e} == {"actor pool"}
    assert {e["on"] for e in journal if e.get("evaluator") == "answer_semantic_similarity" and "on" in e} \
        == {"embedding actors"}


# -- model work on many actors (issue 41) ------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory) -> str:
    """A tiny BERT encoder (tests/tiny_models.py) that sentence-transformers loads with mean pooling: the
    real loading and encoding path at a fraction of all-MiniLM-L6-v2's cost."""
    from tiny_models import bert_encoder_folder

    return str(bert_encoder_folder(tmp_path_factory.mktemp("tiny-encoder")))


def _embedding_evaluators(model: str) -> list:
    """Two embedding evaluators that share texts (the answers), then one that embeds nothing."""
    return [{"id": "answer_semantic_similarity", "max_rows": 24, "params": {"embedding_model": model}},
            {"id": "groundedness_semantic_similarity", "max_rows": 24, "params": {"embedding_model": model}},
            "text_matching"]


def _shard_pids(run_dir: Path, evaluator: str) -> list[int]:
    return [e["pid"] for e in _journal(run_dir) if e["message"] == "measured batch quality"
            and e["evaluator"] == evaluator]


def test_embedding_evaluators_give_the_same_artifacts_on_one_and_on_two_actors(tmp_path, ray_cluster, tiny_encoder):
    """Each text is embedded on its own, so the actor that embeds it and the texts it embedded before do
    not change its vector: 1 actor, 2 actors and a local run write the same files (run.json's embedding
    counters included: the driver counts the workers' requests as one process does)."""
    evaluators = _embedding_evaluators(tiny_encoder)
    common = dict(dataset="demo", evaluators=evaluators, run_id="n", batch_size=4, calibrate=False)
    _PROCESS_CACHE.clear()
    local = api.run(output_dir=tmp_path / "local", **common)
    runs = {n: api.run(output_dir=tmp_path / f"ray{n}", executor="ray", ray_shard_rows=4, ray_model_actors=n,
                       **common) for n in (1, 2)}
    assert local.status == runs[1].status == runs[2].status == "success"
    assert differences(runs[1].run_dir, runs[2].run_dir) == []
    assert differences(local.run_dir, runs[2].run_dir) == []
    for n, run in runs.items():
        first, second = (_shard_pids(run.run_dir, e["id"]) for e in evaluators[:2])
        assert len(first) == 6 and len(set(first)) == n  # 24 rows in shards of 4, on n actors
        assert second == first  # shard i of each evaluator on the same actor: its texts are cached there
        assert {e["actors"] for e in _journal(run.run_dir) if e.get("on") == "embedding actors"} == {n}
    scored = [e for e in _journal(runs[2].run_dir) if e["message"] == "evaluator scored"]
    # The tiny model's scores are there (so the files compared above hold vectors' work, not only errors).
    assert [e["evaluator"] for e in scored[:2]] == ["answer_semantic_similarity", "groundedness_semantic_similarity"]
    assert all(e["rows"] > 20 and 0 < min(e["means"].values()) < 1 for e in scored[:2])
    counters = json.loads((runs[2].run_dir / names.RUN_JSON).read_text())["services"]["embeddings"]["models"]
    encoded = sum(e["encoded"] for e in _journal(runs[2].run_dir) if e.get("on") == "embedding actors")
    # The run's count is one process's; the two actors encoded at least that many between them.
    assert list(counters) == [tiny_encoder]
    assert encoded >= counters[tiny_encoder]["unique_encoded"] > 0


# -- a host's limits hold across workers ------------------------------------------------------------

def test_a_hosts_max_concurrency_holds_across_workers(tmp_path, ray_cluster):
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": f"c{i}", "input": f"Question {i}?"}) + "\n"
                             for i in range(40)), encoding="utf-8")
    with JudgeServer(default="An answer.", latency=0.15) as server:
        # Each chunk (max_concurrency x 8 items) is a task whose client may run 2 calls at once:
        # two tasks on the two workers would put 4 in flight without the cluster-wide limiter.
        result = api.run(test_suite=suite, output_dir=tmp_path, run_id="p", evaluators=["text_matching"],
                         llm_cache=str(tmp_path / "cache.sqlite"), executor="ray",
                         hosts=[{"key": "m", "kind": "openai_chat", "base_url": server.base_url, "model": "m",
                                 "max_concurrency": 2, "retries": 0}])
        assert server.calls == 40
        assert server.max_in_flight == 2
        # The answers went into the driver's cache: a second run (the same host) asks nothing.
        again = api.run(test_suite=suite, output_dir=tmp_path, run_id="p2", evaluators=["text_matching"],
                        llm_cache=str(tmp_path / "cache.sqlite"), executor="ray",
                        hosts=[{"key": "m", "kind": "openai_chat", "base_url": server.base_url, "model": "m",
                                "max_concurrency": 2, "retries": 0}])
        assert server.calls == 40
    asked = [e for e in _journal(result.run_dir) if e["message"] == "asked shard"]
    assert sum(e["items"] for e in asked) == 40
    assert len({e["pid"] for e in asked}) == 2  # both workers asked
    fetched = [e for e in _journal(result.run_dir) if e["message"] == "fetched sut response"]
    assert len(fetched) == 40  # the workers' events, written by the driver
    assert len([e for e in _journal(again.run_dir) if e["message"] == "using cached sut response"]) == 40
    produced = json.loads((again.run_dir / "dataset" / "llm_dataset.json").read_text())
    assert [row["actual_output"] for row in produced] == ["An answer."] * 40


def test_the_cluster_wide_limit_adapts_to_429s(tmp_path, ray_cluster):
    """Workers report each call's outcome to the host's limiter actor: one AIMD limit for the cluster, whose
    changes the workers journal (through the driver) and whose range run.json keeps."""
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": f"c{i}", "input": f"Question {i}?"}) + "\n"
                             for i in range(64)), encoding="utf-8")
    with JudgeServer(default="An answer.", latency=0.05, max_in_flight_429=2, retry_after=None) as server:
        # Two chunks of 32 (max_concurrency x 8), one on each worker, under one limit starting at 4.
        result = api.run(test_suite=suite, output_dir=tmp_path, run_id="a", evaluators=["text_matching"],
                         llm_cache=str(tmp_path / "cache.sqlite"), executor="ray",
                         hosts=[{"key": "m", "kind": "openai_chat", "base_url": server.base_url, "model": "m",
                                 "max_concurrency": 4, "retries": 30, "backoff": 0.02}])
        assert server.outcomes()["answered"] == 64 and server.over_limit > 0
    journal = _journal(result.run_dir)
    assert len({e["pid"] for e in journal if e["message"] == "asked shard"}) == 2
    changes = [e for e in journal if e["message"] == "concurrency limit changed"]
    assert changes and all(e["configuration"] == "m" for e in changes)
    for e in changes:
        assert (e["to"], e["reason"]) in ((e["from"] // 2, "429"), (e["from"] + 1, f"{e['from']} successes"))
    # One limit, so the changes (journaled by whichever worker caused each) form one path from 4: each
    # limit is entered as often as it is left, but the last. Two limits of their own would both leave 4
    # first, and 4 would be left once more than it was entered (unless a path ended there).
    for limit in range(1, 5):
        entered = sum(e["to"] == limit for e in changes) + (limit == 4)
        assert entered - sum(e["from"] == limit for e in changes) in (0, 1)
    low = min(e["to"] for e in changes)
    assert low <= 2
    host = json.loads((result.run_dir / names.RUN_JSON).read_text())["pipeline"]["host_settings"]["m"]
    assert host["concurrency_limit"] == {"min": low, "max": 4}


# -- a killed actor loses no row ---------------------------------------------------------------------

def test_a_killed_actor_loses_no_row(tmp_path, ray_cluster, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS / "core"))
    common = dict(dataset="demo", evaluators=["ray_slow_len"], plugins=["ray_plugin"], run_id="k",
                  batch_size=8, calibrate=False)
    monkeypatch.setenv("SONAR_RAY_SLEEP", "0")
    local = api.run(output_dir=tmp_path / "local", **common)
    killed = []

    def kill_one() -> None:
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                actor = ray.get_actor("sonar:k:ray_slow_len:0")
            except ValueError:
                time.sleep(0.05)
                continue
            time.sleep(0.8)  # a few shards in
            ray.kill(actor, no_restart=False)  # dies; Ray restarts it and retries its calls
            killed.append(time.time())
            return

    killer = threading.Thread(target=kill_one)
    killer.start()
    on_ray = api.run(output_dir=tmp_path / "ray", executor="ray", ray_shard_rows=8, **common)
    finished = time.time()
    killer.join()
    assert killed and killed[0] < finished  # killed while the run went on
    assert on_ray.status == "success"
    assert differences(local.run_dir, on_ray.run_dir) == []
    pids = {e["pid"] for e in _journal(on_ray.run_dir) if e.get("evaluator") == "ray_slow_len" and "pid" in e}
    assert len(pids) >= 2


# -- resume across executors -------------------------------------------------------------------------

def _interrupted(run_dir: Path, evaluator: str) -> None:
    """As if the run had been killed while ``evaluator`` scored: its folder has no done marker."""
    folder = next(p for p in run_dir.iterdir() if p.is_dir() and evaluator in p.name)
    (folder / names.DONE_MARKER).unlink()


@pytest.mark.parametrize("first, then", [("local", "ray"), ("ray", "local")])
def test_a_run_resumes_on_the_other_executor(tmp_path, ray_cluster, first, then):
    common = dict(dataset="demo", evaluators=["text_matching", "pii_leakage"], run_id="x", calibrate=False)
    # The reference went through the same interruption, locally (a resumed run records that it was).
    reference = api.run(output_dir=tmp_path / "reference", **common)
    _interrupted(reference.run_dir, "PiiLeakage")
    reference = api.resume(reference.run_dir)
    started = api.run(output_dir=tmp_path / "resumed", executor=first, **common)
    _interrupted(started.run_dir, "PiiLeakage")
    resumed = api.resume(started.run_dir, executor=then)
    assert resumed.status == "success"
    journal = _journal(resumed.run_dir)
    assert [e["evaluator"] for e in journal if e["message"] == "skipping finished evaluator"] == ["text_matching"]
    resumed_at = next(i for i, e in enumerate(journal) if e["message"] == "resuming run")
    assert [e["executor"] for e in journal[resumed_at - 3:] if e["message"] == "started executor"] == \
        (["ray"] if then == "ray" else [])
    assert differences(reference.run_dir, resumed.run_dir) == []


# -- epochs on Ray: each epoch asked with its repeat index --------------------------------------------

def test_epochs_on_ray_ask_each_epoch_once(tmp_path, ray_cluster):
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": f"c{i}", "input": f"Question {i}?"}) + "\n"
                             for i in range(6)), encoding="utf-8")
    with JudgeServer(default="An answer.") as server:
        # With the response cache on: epoch 1 must be its own entry, not epoch 0's answer again.
        result = api.run(test_suite=suite, output_dir=tmp_path, run_id="e", evaluators=["text_matching"], epochs=2,
                         llm_cache=str(tmp_path / "cache.sqlite"), executor="ray",
                         hosts=[{"key": "m", "kind": "openai_chat", "base_url": server.base_url, "model": "m",
                                 "temperature": 0.7, "retries": 0}])
        assert server.calls == 12
    assert result.exit_code == 0, result.message
    produced = json.loads((result.run_dir / "dataset" / "llm_dataset.json").read_text())
    assert [(row["key"], row["epoch"]) for row in produced][5:7] == [("c5::m", 0), ("c0::m::epoch1", 1)]


def test_costs_on_ray_count_every_workers_calls(tmp_path, ray_cluster):
    """The hosts' and judges' calls happen in the workers; run.json's costs count them as a local run does."""
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"test_case_key": f"c{i}", "input": f"Question number {i}?"}) + "\n"
                             for i in range(12)), encoding="utf-8")
    records = []
    with JudgeServer(default="An answer of five words.") as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url)
        for executor in ("local", "ray"):
            result = api.run(test_suite=suite, output_dir=tmp_path / executor, run_id="c", executor=executor,
                             evaluators=["text_matching", {"id": "contact_information", "max_rows": 6}],
                             llm_configs=str(configs), llm_cache=str(tmp_path / f"{executor}.sqlite"), calibrate=False,
                             prices={"m": {"input_per_1k": 1.0, "output_per_1k": 2.0},
                                     "test-judge": {"input_per_1k": 0.5, "output_per_1k": 0.5}},
                             hosts=[{"key": "m", "kind": "openai_chat", "base_url": server.base_url, "model": "m"}])
            assert result.status == "success", result.message
            records.append(json.loads((result.run_dir / names.RUN_JSON).read_text(encoding="utf-8"))["costs"])
    local, on_ray = records
    host = local["hosts"]["m"]
    # The server counts whitespace words: "Question number N?" is 3 in, "An answer of five words." 5 out.
    assert host == {"calls": 12, "input_tokens": 36, "output_tokens": 60,
                    "cost": round(36 / 1000 * 1.0 + 60 / 1000 * 2.0, 6)}
    # The six judged rows hold the same answer: one prompt, one call (the others read it back).
    assert local["judges"]["test-judge"]["calls"] == 1 and local["evaluators"]["contact_information"]["calls"] == 1
    assert local["judges"]["test-judge"]["cost"] > 0
    assert on_ray == local



# -- answers reach the driver as they arrive (issue 35) -----------------------------------------------

def _cached_answers(path: Path) -> int:
    """How many answers the response cache file holds (read-only: the run's driver is writing it)."""
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.Error:  # not made yet
        return 0


def test_judge_answers_are_cached_as_they_arrive_not_when_their_shard_returns(tmp_path, ray_cluster):
    """One shard of six rows, its judge two calls at a time: the first three answers come at once, the
    others wait for the test. The driver's cache holds the three while the shard cannot have returned,
    so a run killed then would not ask the judge for them again."""
    held = threading.Event()
    replies = []
    lock = threading.Lock()

    def reply(prompt: str) -> str:
        with lock:
            replies.append(prompt)
            first = len(replies) <= 3
        if not first:
            held.wait(120)
        return "absent"

    cache = tmp_path / "cache.sqlite"
    with JudgeServer(default=reply) as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url, max_concurrency=2, retries=0)
        outcome = {}
        run = threading.Thread(target=lambda: outcome.update(result=api.run(
            dataset="demo", evaluators=[{"id": "contact_information", "max_rows": 6}], output_dir=tmp_path,
            run_id="j", llm_configs=str(configs), llm_cache=str(cache), calibrate=False, executor="ray",
            ray_shard_rows=512)))
        run.start()
        try:
            deadline = time.monotonic() + 180
            while _cached_answers(cache) < 3 and run.is_alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            stored, calls = _cached_answers(cache), server.calls
        finally:
            held.set()
            run.join(300)
    assert stored == 3 and calls == 5  # three answered and stored, two held: the shard was still running
    result = outcome["result"]
    assert result.status == "success", result.message
    scored = [e for e in _journal(result.run_dir) if e["message"] == "measured batch quality"]
    assert [(e["shard"], e["shards"], e["rows"]) for e in scored] == [(1, 1, 6)]
    assert _cached_answers(cache) == len(set(replies)) == 6
