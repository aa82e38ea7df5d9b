"""Parameter coercion and validation, what the plugin manager accepts as an evaluator, and the layer
the contract sits on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sonar_core
import sonar_core.contract
import sonar_core.inputs

from sonar_core import Evaluator, Input, Metric, Param, ParameterError, PassFailEvaluator, Verdict
from sonar_core.plugins import _check_declaration


@pytest.mark.parametrize(
    ("param", "given", "expected"),
    [
        (Param("p", bool, True, ""), "no", False),
        (Param("p", bool, False, ""), "TRUE", True),
        (Param("p", int, 1, ""), 3.0, 3),
        (Param("p", float, 0.5, ""), "0.25", 0.25),
        (Param("p", list, [], ""), "a, b,,c", ["a", "b", "c"]),
        (Param("p", str, "OR", "", choices=("OR", "AND")), "AND", "AND"),
    ],
)
def test_param_coercion(param, given, expected):
    assert param.coerce(given, "ev") == expected


@pytest.mark.parametrize(
    ("param", "given", "message"),
    [
        (Param("p", bool, True, ""), "maybe", "parameter 'p' of evaluator 'ev' must be of type bool, got 'maybe'"),
        (Param("p", int, 1, ""), 2.5, "parameter 'p' of evaluator 'ev' must be of type int, got 2.5"),
        (Param("p", float, 1.0, ""), True, "parameter 'p' of evaluator 'ev' must be of type float, got True"),
        (Param("p", float, 1.0, ""), "nan", "parameter 'p' of evaluator 'ev' must be of type float, got 'nan'"),
        (Param("p", float, 1.0, "", min=0.0), -1, "parameter 'p' of evaluator 'ev' must be >= 0.0, got -1.0"),
        (Param("p", str, "OR", "", choices=("OR", "AND")), "XOR",
         "parameter 'p' of evaluator 'ev' must be one of 'OR', 'AND', got 'XOR'"),
        (Param("p", str, "x", "", check=lambda v: None if v else "must not be empty"), "",
         "parameter 'p' of evaluator 'ev': must not be empty"),
    ],
)
def test_param_errors_name_parameter_and_evaluator(param, given, message):
    with pytest.raises(ParameterError) as info:
        param.coerce(given, "ev")
    assert str(info.value) == message


class _Scores(Evaluator):
    id = "scores"
    display_name = "Scores"
    required_inputs = (Input.ACTUAL_ANSWER,)
    parameters = (Param("limit", int, 3, "", min=1),)
    metrics = (Metric("s", "S", "", is_primary=True),)

    def evaluate(self, rows):
        return []


def test_validate_params_defaults_common_parameters_and_unknown_names():
    assert _Scores.validate_params({"limit": "5"}) == {"limit": 5, "metric_threshold": None, "save_llm_result": True}
    with pytest.raises(ParameterError, match=r"^unknown parameter 'limitt' for evaluator 'scores' \(known: "
                                             r"limit, metric_threshold, save_llm_result\)$"):
        _Scores.validate_params({"limitt": 1})


def test_declarations_the_host_refuses():
    class NoEvaluate(Evaluator):
        id = "x"
        display_name = "X"
        metrics = (Metric("m", "M", "", is_primary=True),)

    class NoCheck(PassFailEvaluator):
        id = "y"
        display_name = "Y"
        metrics = (Metric("m", "M", "", is_primary=True),)

    class TwoPrimaries(_Scores):
        metrics = (Metric("a", "A", "", is_primary=True), Metric("b", "B", "", is_primary=True))

    class Fine(NoCheck):
        def check(self, row):
            return Verdict()

    assert _check_declaration(NoEvaluate) == "NoEvaluate does not implement evaluate()"
    assert _check_declaration(NoCheck) == "NoCheck does not implement check()"
    assert _check_declaration(TwoPrimaries) == "TwoPrimaries declares several primary metrics: a, b"
    assert _check_declaration(int) == "<class 'int'> is not a subclass of sonar_core.Evaluator"
    assert _check_declaration(Fine) is None and _check_declaration(_Scores) is None


def test_explicit_null_means_the_default():
    assert _Scores.validate_params({"limit": None, "save_llm_result": None}) == {
        "limit": 3, "metric_threshold": None, "save_llm_result": True}


def test_each_base_checks_its_own_declaration_through_super():
    class NoName(Evaluator):
        id = "n"
        metrics = (Metric("m", "M", "", is_primary=True),)

    class NoMetrics(Evaluator):
        id = "z"
        display_name = "Z"

    class NoCheck(PassFailEvaluator):
        id = "y"
        display_name = "Y"

    class NeedsUnits(_Scores):
        """A base of a plugin's own: its check comes after the base's."""

        units = ""

        @classmethod
        def declaration_problem(cls):
            problem = super().declaration_problem()
            return problem or (None if cls.units else f"{cls.__name__} declares no units")

    class NoUnits(NeedsUnits):
        pass

    class Broken(NeedsUnits):
        metrics = ()

    assert NoName.declaration_problem() == "NoName declares no 'display_name'"
    assert NoMetrics.declaration_problem() == "NoMetrics declares no metrics"
    # The base's problem comes first: a pass/fail class with no metrics is told so, not about check().
    assert NoCheck.declaration_problem() == "NoCheck declares no metrics"
    assert _check_declaration(NoUnits) == "NoUnits declares no units"
    assert _check_declaration(Broken) == "Broken declares no metrics"
    NoUnits.units = "words"
    assert _check_declaration(NoUnits) is None


def test_the_base_evaluator_declares_no_judge():
    params = {"custom_eval_judge_config_key": "gpt"}
    assert _Scores.requires_judge is False
    assert _Scores.judge_key(params) is None
    assert _Scores.judge_prompt() == ""
    # The judge's own settings live on the judge bases (sonar_core.judge_evaluator), not on every evaluator.
    assert not hasattr(Evaluator, "judge_param") and not hasattr(Evaluator, "prompt_template")


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function (relative ones as ``.name``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
    return found


def test_the_dataset_and_the_inputs_do_not_import_the_contract():
    core = Path(sonar_core.__file__).parent
    for module in ("dataset.py", "inputs.py"):
        imported = _imported_modules(core / module)
        assert not {".contract", "sonar_core.contract"} & imported, module
    assert Input is sonar_core.inputs.Input and sonar_core.contract.Input is Input


def test_the_core_never_imports_ragas():
    core = Path(sonar_core.__file__).parent
    offenders = {str(path.relative_to(core)): sorted(name for name in _imported_modules(path) if "ragas" in name)
                 for path in core.rglob("*.py")}
    assert {path: names for path, names in offenders.items() if names} == {}
