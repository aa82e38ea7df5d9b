"""Typed findings: what the reports say is concluded in findings/, and artifacts/ only lays it out.

What "computes" means for the import rule below: a module computes when it draws a conclusion
from numbers, i.e. it is

- a module of ``sonar_core.findings`` other than the six that hold no conclusion:
  ``findings.types`` (the frozen dataclasses the findings are made of, and the severities),
  ``findings.comparison_types`` (run A against run B as frozen dataclasses),
  ``findings.judge_status`` (a judge's trust as plain values), ``findings.run_types`` (a finished
  run read back, as plain values), ``findings.redteam_types`` (a red-team run's outcomes, rates and
  findings as frozen dataclasses) and ``findings.wording`` (how a figure is written: a number in,
  text out); or
- a numerical library: ``numpy``, ``scipy``, ``pandas``, ``sklearn``, ``statistics``.

An ``artifacts/`` module may import neither at run time. Imports under ``if TYPE_CHECKING:`` run
nothing and are not counted (a writer may name ``ScoredEvaluator`` in an annotation).
"""

from __future__ import annotations

import ast
import collections.abc
import dataclasses
import importlib
import json
import math
import sys
import typing
from pathlib import Path

import pytest

from sonar_core import Evaluator, Input, Metric, RowResult
from sonar_core.artifacts.evaluator_dir import write_evaluator_dir
from sonar_core.artifacts.items import insight_json, problem_json
from sonar_core.artifacts.stored import stored_summary
from sonar_core.findings import ScoredEvaluator, StatsSettings, derive_findings
from sonar_core.findings.tradeoff import tradeoff_rows, with_fronts
from sonar_core.findings.types import Leaderboard, LeaderboardRow, TradeoffRow
from sonar_core.testing import make_row

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "sonar_core" / "artifacts"
DATA_MODULES = {"sonar_core.findings.types", "sonar_core.findings.judge_status", "sonar_core.findings.run_types",
                "sonar_core.findings.wording", "sonar_core.findings.redteam_types", "sonar_core.findings.comparison_types",
                "sonar_core.jsontypes"}
NUMERICAL = {"numpy", "scipy", "pandas", "sklearn", "statistics"}


def _runtime_imports(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports outside ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:  # relative to sonar_core.artifacts
                parts = ["sonar_core", "artifacts"][: 2 - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add(base)
            # ``from ..findings import types`` names a module too
            found |= {f"{base}.{alias.name}" for alias in node.names if base == "sonar_core.findings"}
    return found


def _computing(imports: set[str]) -> set[str]:
    out = set()
    for name in imports:
        if name.split(".")[0] in NUMERICAL:
            out.add(name)
        elif name.startswith("sonar_core.findings.") and name not in DATA_MODULES:
            out.add(name)
        elif name == "sonar_core.findings":
            continue  # the package itself: its names are checked as ``sonar_core.findings.<name>`` above
    # ``from ..findings import EvaluatorFindings``: a name, not a module; only modules count
    return {n for n in out if not (n.startswith("sonar_core.findings.") and n.split(".")[-1][:1].isupper())}


def test_the_rule_sees_relative_numerical_and_type_checking_imports(tmp_path):
    source = tmp_path / "probe.py"
    source.write_text("from typing import TYPE_CHECKING\nimport numpy as np\nfrom ..findings.types import Leaderboard\n"
                      "from ..findings.confidence import annotate_board\nfrom .html import clip\n"
                      "if TYPE_CHECKING:\n    from ..findings.scored import ScoredEvaluator\n", encoding="utf-8")
    imports = _runtime_imports(source)
    assert {"numpy", "sonar_core.findings.types", "sonar_core.findings.confidence", "sonar_core.artifacts.html"} <= imports
    assert "sonar_core.findings.scored" not in imports
    assert _computing(imports) == {"numpy", "sonar_core.findings.confidence"}


def test_artifacts_import_nothing_that_computes():
    offenders = {}
    for path in sorted(ARTIFACTS.glob("*.py")):
        computing = _computing(_runtime_imports(path))
        if computing:
            offenders[path.stem] = sorted(computing)
    assert offenders == {}, f"artifacts/ modules importing what computes (see this file's docstring): {offenders}"


def _threshold_decisions(source: str) -> list[str]:
    """Where ``source`` decides a side of a threshold itself: a comparison one of whose operands names a
    threshold, or a call of ``fails`` (:meth:`~sonar_core.contract.Metric.fails`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops):
            if any("threshold" in ast.unparse(operand) for operand in [node.left, *node.comparators]):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fails":
            found.append(ast.unparse(node))
    return found


def test_the_threshold_rule_sees_a_hand_made_verdict():
    assert _threshold_decisions("x = value < metric['threshold'] if up else value > threshold\n"
                                "y = m.fails(v)\nz = a < b\nw = threshold is None\n") == [
        "m.fails(v)", "value < metric['threshold']", "value > threshold"]


def test_artifacts_decide_no_side_of_a_threshold():
    # Pass or fail (a row's value, a turn's, a model's mean in a chart) is concluded in findings/
    # (case_verdicts.case_fails, Leaderboard.fails_by_metric); the writers only colour it.
    offenders = {path.stem: found for path in sorted(ARTIFACTS.glob("*.py"))
                 if (found := _threshold_decisions(path.read_text(encoding="utf-8")))}
    assert offenders == {}, f"artifacts/ modules deciding a side of a threshold: {offenders}"


#: Classes of findings/ that artifacts/ import but whose loose dicts are not findings handed to a writer, and why.
NOT_FINDINGS = {
    "ScoredEvaluator": "the rows as scored and the evaluator's parameters and hooks' output as given: what the "
                       "findings are computed from (its rows are the contract's Row and RowResult)",
    "EvaluatorSummary": "made by artifacts/stored.py from the files the writers wrote (their own JSON), for the run",
}


def _findings_classes() -> dict[type, set[str]]:
    """Each class an artifacts/ module imports from findings/ (at run time or for annotations) -> the importers."""
    found: dict[type, set[str]] = {}
    for path in sorted(ARTIFACTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and (node.module or "").startswith("findings"):
                module = importlib.import_module(f"sonar_core.{node.module}")
                for alias in node.names:
                    value = getattr(module, alias.name)
                    if isinstance(value, type):
                        found.setdefault(value, set()).add(path.stem)
    return found


def _loose_dicts(tp: object, where: str, seen: set[type], namespace: dict[str, object]) -> list[str]:
    """Where the type ``tp`` holds a ``dict[str, Any]`` (or a Mapping of Any, a bare dict, or Any), looking
    into the fields of the dataclasses of findings/ it names."""
    if tp is typing.Any:
        return [f"{where}: Any"]
    if tp in (dict, list, collections.abc.Mapping, collections.abc.Sequence):
        return [f"{where}: bare {tp.__name__}"]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (dict, collections.abc.Mapping) and len(args) == 2 and args[1] is typing.Any:
        return [f"{where}: dict[str, Any]"]
    out = []
    for arg in args:
        if not isinstance(arg, typing.ForwardRef):  # JsonValue names itself
            out += _loose_dicts(arg, f"{where}[]", seen, namespace)
    if typing.is_typeddict(tp) and tp.__module__.startswith("sonar_core") and tp not in seen:
        seen.add(tp)  # a JSON record's declared shape (GenerationFindings.documents): its keys' types too
        hints = typing.get_type_hints(tp, globalns=vars(sys.modules[tp.__module__]), localns=namespace)
        for key, hint in hints.items():
            out += _loose_dicts(hint, f"{tp.__name__}.{key}", seen, namespace)
    if (isinstance(tp, type) and dataclasses.is_dataclass(tp) and tp.__module__.startswith("sonar_core.findings")
            and tp not in seen and tp.__name__ not in NOT_FINDINGS):
        seen.add(tp)
        hints = typing.get_type_hints(tp, globalns=vars(sys.modules[tp.__module__]), localns=namespace)
        for f in dataclasses.fields(tp):
            if not f.name.startswith("_"):
                out += _loose_dicts(hints[f.name], f"{tp.__name__}.{f.name}", seen, namespace)
    return out


def _annotation_namespace() -> dict[str, object]:
    """The names findings/ types name only under ``TYPE_CHECKING``, to resolve their annotations."""
    from sonar_core.contract import RowResult
    from sonar_core.dataset import Row
    from sonar_core.benchmarks.definitions import BenchmarkDefinition, HazardDefinition
    from sonar_core.findings.grades import Graded
    from sonar_core.findings.judge_status import JudgeTrust
    from sonar_core.findings.statistics import Interval

    from sonar_core.jsontypes import JsonValue

    # JsonValue: the recursive JSON type names itself, wherever JsonObject is used without it.
    return {"JsonValue": JsonValue, "Row": Row, "RowResult": RowResult, "JudgeTrust": JudgeTrust,
            "ScoredEvaluator": ScoredEvaluator,
            "BenchmarkDefinition": BenchmarkDefinition, "HazardDefinition": HazardDefinition,
            "Graded": Graded, "Interval": Interval}


def test_no_loose_dict_crosses_from_findings_to_artifacts():
    # Every class a writer takes from findings/ is typed all the way down: no dict[str, Any] in any field.
    classes = _findings_classes()
    assert {"EvaluatorFindings", "Board", "TradeoffRow", "Problem", "Comparison"} <= {c.__name__ for c in classes}
    namespace = _annotation_namespace()
    loose = {c.__name__: found for c in classes if (found := _loose_dicts(c, c.__name__, set(), namespace))}
    assert loose == {}, f"findings handed to artifacts/ holding loose dicts: {loose}"


def test_the_loose_dict_rule_sees_nested_fields():
    @dataclasses.dataclass(frozen=True)
    class Inner:
        figures: typing.Mapping[str, typing.Any]

    @dataclasses.dataclass(frozen=True)
    class Outer:
        inner: tuple[Inner, ...]
        fine: dict[str, float]

    class Record(typing.TypedDict):
        name: str
        extra: dict[str, typing.Any]

    @dataclasses.dataclass(frozen=True)
    class Holder:
        record: Record

    Inner.__module__ = Outer.__module__ = Record.__module__ = Holder.__module__ = "sonar_core.findings.probe"
    sys.modules["sonar_core.findings.probe"] = sys.modules[__name__]
    try:
        assert _loose_dicts(Outer, "Outer", set(), {"Inner": Inner}) == ["Inner.figures: dict[str, Any]"]
        assert _loose_dicts(Holder, "Holder", set(), {"Record": Record}) == ["Record.extra: dict[str, Any]"]
    finally:
        del sys.modules["sonar_core.findings.probe"]
    assert set(NOT_FINDINGS) <= {c.__name__ for c in _findings_classes()}, "drop what artifacts/ no longer imports"


def test_the_data_modules_compute_nothing_themselves():
    for name in DATA_MODULES:
        path = ROOT / (name.replace(".", "/") + ".py")
        # A relative import reads as if from artifacts/: ``from .wording`` is ``sonar_core.artifacts.wording``.
        imports = {i.replace("sonar_core.artifacts.", "sonar_core.findings.") for i in _runtime_imports(path)}
        assert not {i for i in imports if i.split(".")[0] in NUMERICAL
                    or (i.startswith("sonar_core") and i not in DATA_MODULES)}, (name, imports)


class Toy(Evaluator):
    id = "toy_typed"
    display_name = "Toy typed"
    required_inputs = (Input.ACTUAL_ANSWER,)
    metrics = (Metric("score", "Score", "A score.", threshold=0.5, is_primary=True),
               Metric("errors", "Errors", "A count.", threshold=0.1, higher_is_better=False))


def _scored(values: dict[str, list[float]]) -> ScoredEvaluator:
    scored = []
    for model, scores in values.items():
        for n, score in enumerate(scores):
            row = make_row(test_case_key=f"t{n}", model_key=model, actual_output=f"{model}{n}")
            scored.append((row, RowResult({"score": score, "errors": 0.0 if score >= 0.5 else 1.0})))
    return ScoredEvaluator(cls=Toy, params={}, thresholds={"score": 0.5, "errors": 0.1}, label="toy_typed",
                           scored=scored)


def test_the_leaderboard_by_hand():
    # A: 0.9 0.7 0.2 -> mean 0.6, 2 of 3 pass; B: 0.4 0.6 -> mean 0.5 (not below 0.5), 1 of 2 pass;
    # C: 0.1 -> mean 0.1, fails, 0 of 1. Errors (1 per score below 0.5): A 1/3, B 1/2, C 1: all fail 0.1.
    findings = derive_findings(_scored({"A": [0.9, 0.7, 0.2], "B": [0.4, 0.6], "C": [0.1]}))
    board = findings.leaderboard
    assert board.ranking == ("A", "B", "C") and board.leader == "A" and not board.untrusted
    assert [(r.model, r.rank, r.passed, r.checked, r.fails) for r in board.rows] == [
        ("A", 1, 2, 3, False), ("B", 2, 1, 2, False), ("C", 3, 0, 1, True)]
    assert [r.value for r in board.rows] == [pytest.approx(0.6), pytest.approx(0.5), pytest.approx(0.1)]
    assert board.pass_counts == {"A": (2, 3), "B": (1, 2), "C": (0, 1)}
    assert board.fails_by_metric == {"score": {"A": False, "B": False, "C": True},
                                     "errors": {"A": True, "B": True, "C": True}}
    # Weakest: the failing rows, furthest below 0.5 first.
    assert [(w.row.model_key, w.score) for w in findings.weakest] == [("C", 0.1), ("A", 0.2), ("B", 0.4)]
    assert all(r.n is None and r.ci_low is None for r in board.rows)  # no stats settings: no intervals


def test_a_tie_at_the_top_has_no_leader_and_intervals_carry_n():
    findings = derive_findings(_scored({"A": [0.9, 0.1], "B": [0.5, 0.5]}), stats=StatsSettings(resamples=200))
    board = findings.leaderboard
    assert board.ranking == ("A", "B") and board.leader is None  # both 0.5: the order is only the names'
    for row in board.rows:
        assert row.n == 2 and row.ci_low <= row.value <= row.ci_high


def test_a_resumed_run_reads_back_the_leaderboard_the_findings_made(tmp_path):
    findings = derive_findings(_scored({"A": [0.9, 0.7, 0.2], "B": [0.4, 0.6], "C": [0.1]}),
                               stats=StatsSettings(resamples=200))
    folder = tmp_path / "toy"
    written = write_evaluator_dir(findings, folder)
    on_disk = json.loads((folder / "evaluator_summary.json").read_text(encoding="utf-8"))
    fresh, resumed = stored_summary(written, folder, findings.leaderboard), stored_summary(on_disk, folder)
    assert resumed.leaderboard == fresh.leaderboard == findings.leaderboard
    assert resumed.label == "toy_typed" and resumed.fallbacks == () and not resumed.untrusted
    assert list(resumed.problems) == [problem_json(p) for p in findings.problems]
    # Score (>= 0.5; HIGH at or below 0.25): C's 0.1 is HIGH. Errors (<= 0.1; HIGH from 0.1 + 0.9 / 2 = 0.55):
    # C's 1.0 is HIGH, A's 1/3 and B's 1/2 MEDIUM. Most severe first, then in the order they were found.
    assert [(p["severity"], p["problem_attrs"]["model_name"], p["problem_attrs"]["metric_id"])
            for p in resumed.problems] == [("HIGH", "C", "score"), ("HIGH", "C", "errors"), ("MEDIUM", "A", "errors"),
                                           ("MEDIUM", "B", "errors")]


def test_the_tradeoff_by_hand():
    one = Leaderboard("score", ("A", "B"), (LeaderboardRow("A", 1, 0.8, passed=3, checked=4),
                                           LeaderboardRow("B", 2, 0.5, passed=1, checked=4)))
    two = Leaderboard("score", ("B", "A"), (LeaderboardRow("B", 1, 0.9, passed=4, checked=4),
                                           LeaderboardRow("A", 2, 0.1, passed=0, checked=4),
                                           LeaderboardRow("C", 3, None)))  # C: nothing checked, not shown
    stats = {"A": {"mean_time": 2.0, "mean_cost": 0.001}, "B": {"mean_time": 1.0, "mean_cost": 0.002}}
    rows = tradeoff_rows([one, two], stats)
    # A: 3 of 8 = 0.375, B: 5 of 8 = 0.625. B is faster and better: A is on no time front; on cost A is
    # cheaper, so both are on the cost front, and both on the front of all three.
    assert rows == (TradeoffRow("A", 3, 8, 0.375, 2.0, 0.001, front_cost=True, front_time=False, front_all=True),
                    TradeoffRow("B", 5, 8, 0.625, 1.0, 0.002, front_cost=True, front_time=True, front_all=True))


def test_fronts_leave_out_a_model_without_the_measure():
    rows = with_fronts([TradeoffRow("A", 0, 0, 0.9, None, 0.01), TradeoffRow("B", 0, 0, 0.5, 1.0, 0.02)])
    assert [(r.front_cost, r.front_time, r.front_all) for r in rows] == [(True, False, False), (False, True, True)]
    assert math.isclose(rows[0].quality, 0.9)


def test_drilldown_verdicts_by_hand():
    from sonar_core.findings.case_verdicts import summary_fails
    from sonar_core.findings.types import EvaluatorSummary, MetricRule

    # score >= 0.5 passes; errors <= 0.1 passes; a null threshold (an infinite one) fails nothing.
    rules = (MetricRule("score", True, 0.5), MetricRule("errors", False, 0.1), MetricRule("tokens", False, None))
    cells = {"rows": [["r1", [0.5, 0.2, 9e9], None], ["r2", [0.49, 0.1, None], "why"], ["r3", [None, 0.0, 1.0], None]]}
    summary = EvaluatorSummary(label="x", leaderboard=Leaderboard("score", (), ()), fallbacks=(), problems=[],
                               insights=[], view={}, test_cases=cells, metrics=rules)
    assert summary_fails(summary) == {"r1": (False, True, False), "r2": (True, False, None),
                                      "r3": (None, False, False)}
    assert summary_fails(EvaluatorSummary(label="x", leaderboard=Leaderboard("score", (), ()), fallbacks=(),
                                          problems=[], insights=[], view={}, metrics=rules)) == {}


def test_the_json_shape_is_the_writers_and_the_findings_hold_plain_text():
    from sonar_core.findings.types import Insight, Problem, Source

    source = Source("pkg.Toy", "Toy", "toy", "toy-2")
    problem = Problem(source, "Model <b> fails", "HIGH", "accuracy", "Fix it", {"model_name": "<b>"}, ("run.json",))
    assert problem_json(problem) == {
        "schema_version": "1.0", "description": "Model <b> fails", "description_html": "Model &lt;b&gt; fails",
        "actions_description": "Fix it", "actions_codes": [], "explainer_id": "pkg.Toy", "explainer_name": "Toy",
        "evaluator_id": "toy", "evaluator_label": "toy-2", "explanation_type": "global-html-fragment",
        "resources": ["run.json"], "severity": "HIGH", "problem_type": "accuracy",
        "problem_attrs": {"model_name": "<b>"}}
    insight = insight_json(Insight(source, "A & B", "accuracy", attrs={"rank": "best"}))
    assert (insight["description_html"], insight["insight_type"], insight["insight_attrs"]) == (
        "A &amp; B", "accuracy", {"rank": "best"})
    assert list(insight)[-2:] == ["insight_type", "insight_attrs"] and insight["resources"] == []
    # Nothing in the findings' types is HTML: no field of them names it.
    import dataclasses
    for cls in (Problem, Insight, Source):
        assert not [f.name for f in dataclasses.fields(cls) if "html" in f.name]
