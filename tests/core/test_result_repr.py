"""A RunResult prints as one short line, and ``leaderboard()`` with no argument is every evaluator's (issue 34).

``print(result)`` in a plain REPL used to dump every problem, insight and evaluator entry (~370 KB for
the quickstart), and ``result.leaderboard()`` raised a TypeError.
"""

from __future__ import annotations

import math

import pytest

import sonar_core
from sonar_core.results import open_run

MODELS = ["acme-gpt-large", "llama-3.1-8b-rag", "mistral-7b-chat"]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("repr")
    return sonar_core.run(dataset="demo", evaluators=["text_matching", "rouge"], output_dir=out, run_id="r",
                          no_cache=True)


def test_print_shows_run_id_folder_status_evaluators_and_models_in_one_line(demo_run, capsys):
    assert demo_run.status == "success" and len(demo_run.problems) > 0
    expected = (f"RunResult(run_id='r', run_dir='{demo_run.run_dir}', status='success', exit_code=0, evaluators=2, "
                f"models=[{', '.join(MODELS)}], problems={len(demo_run.problems)})")
    assert repr(demo_run) == expected
    print(demo_run)
    assert capsys.readouterr().out == expected + "\n"
    assert repr(open_run(demo_run.run_dir)) == expected  # the same for a folder on disk
    assert demo_run.models == MODELS


def test_repr_counts_failed_and_skipped_evaluators_and_shortens_many_models(demo_run):
    from dataclasses import replace

    many = replace(open_run(demo_run.run_dir), models=[f"m{i}" for i in range(8)],
                   failed=[{"evaluator": "x", "error": "e"}], skipped=[{"evaluator": "y", "reason": "r"}] * 2)
    assert repr(many) == (f"RunResult(run_id='r', run_dir='{demo_run.run_dir}', status='success', exit_code=0, "
                          f"evaluators=2 (1 failed, 2 skipped), models=[m0, m1, m2, m3, m4, +3 more], "
                          f"problems={len(demo_run.problems)})")


def _records(table) -> list[dict]:
    missing = lambda v: v is None or (isinstance(v, float) and math.isnan(v))  # noqa: E731
    return [{k: (None if missing(v) else v) for k, v in row.items()} for row in table.to_dict("records")]


def test_leaderboard_without_an_evaluator_is_every_evaluators_board(demo_run):
    boards = demo_run.leaderboard()
    assert list(boards.columns)[0] == "evaluator"
    assert list(boards["evaluator"]) == ["text_matching"] * 3 + ["rouge"] * 3
    every = _records(boards)
    for label in ("text_matching", "rouge"):
        own = _records(demo_run.leaderboard(label))
        assert len(own) == 3 and sorted(r["model"] for r in own) == MODELS
        # The same rows, best first, with the evaluator named; another evaluator's metrics are None there.
        assert [{k: v for k, v in r.items() if k in own[0] or k == "evaluator"} for r in every
                if r["evaluator"] == label] == [{"evaluator": label, **r} for r in own]
        others = set(boards.columns) - set(own[0]) - {"evaluator"}
        assert others and all(r[c] is None for r in every if r["evaluator"] == label for c in others)
    assert [r["rank"] for r in every] == [1, 2, 3, 1, 2, 3]
