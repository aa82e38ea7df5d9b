"""One face for plugins: a plugin imports ``sonar_core`` and nothing under it.

Every module of the built-in plugins (plugins/, installed as ``sonar_plugins``), of the example
plugin (examples/sonar-example-plugin) and of the plugins the suite loads (tests/plugin_fixtures,
tests/core/*_plugin*.py) is parsed with ``ast``; an import of a private path (``sonar_core.judging``,
``sonar_core.llm``, ...) fails the test, naming file and line. A plugin's own tests may import the
testing helpers too (``sonar_core.testing``). Evaluators declare their id one way: ``id = "..."``.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path
from typing import ClassVar

import pytest

import sonar_core
from sonar_core import Evaluator, Input, Metric, RowResult

ROOT = Path(__file__).resolve().parents[2]
FACE = "sonar_core"
#: What a plugin's own tests may import besides the face.
TEST_HELPERS = ("sonar_core.testing",)


def plugin_files() -> list[Path]:
    """Every plugin module the face rule covers."""
    folders = [ROOT / "plugins", ROOT / "examples" / "sonar-example-plugin", ROOT / "tests" / "plugin_fixtures"]
    files = [path for folder in folders for path in folder.rglob("*.py")]
    suite_plugins = [path for path in (ROOT / "tests" / "core").glob("*_plugin*.py")
                     if not path.name.startswith("test_")]
    return sorted(files + suite_plugins)


def private_imports(path: Path, root: Path) -> list[str]:
    """``file:line imports <module>`` for each import of a ``sonar_core`` path other than the face."""
    allowed = {FACE, *(TEST_HELPERS if path.name.startswith("test_") else ())}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            if (module == FACE or module.startswith(FACE + ".")) and module not in allowed:
                found.append(f"{path.relative_to(root).as_posix()}:{node.lineno} imports {module}")
    return found


def annotated_ids(path: Path, root: Path) -> list[str]:
    """``file:line`` of each class that declares ``id`` with an annotation (``id: ClassVar[str] = ...``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.target.id == "id":
                    found.append(f"{path.relative_to(root).as_posix()}:{item.lineno} {node.name}")
    return found


def test_the_rule_names_file_and_line_of_a_private_import(tmp_path):
    plugin = tmp_path / "myplugin" / "judge.py"
    plugin.parent.mkdir()
    plugin.write_text("import json\nfrom sonar_core import Evaluator\n\nfrom sonar_core.judging import JudgeEvaluator\n"
                      "def f():\n    import sonar_core.llm\n    from . import sibling\n")
    assert private_imports(plugin, tmp_path) == ["myplugin/judge.py:4 imports sonar_core.judging",
                                                 "myplugin/judge.py:6 imports sonar_core.llm"]
    # The testing helpers are for a plugin's tests, not for the plugin.
    helper = "from sonar_core.testing import make_row\n"
    (tmp_path / "myplugin" / "rows.py").write_text(helper)
    (tmp_path / "myplugin" / "test_rows.py").write_text(helper)
    assert private_imports(tmp_path / "myplugin" / "rows.py", tmp_path) == [
        "myplugin/rows.py:1 imports sonar_core.testing"]
    assert private_imports(tmp_path / "myplugin" / "test_rows.py", tmp_path) == []


def test_plugins_import_only_the_face():
    files = plugin_files()
    # The folders are there: an empty list would pass for nothing.
    assert {"plugins", "examples", "tests"} <= {path.relative_to(ROOT).parts[0] for path in files}
    assert len(files) > 100
    assert [line for path in files for line in private_imports(path, ROOT)] == []


def test_every_built_in_evaluator_declares_its_id_one_way():
    assert [line for path in plugin_files() for line in annotated_ids(path, ROOT)] == []


def test_the_annotated_id_still_works_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning) as caught:
        class Annotated(Evaluator):
            id: ClassVar[str] = "annotated"
            display_name = "Annotated"
            required_inputs = (Input.ACTUAL_ANSWER,)
            metrics = (Metric("m", "M", "A metric.", is_primary=True),)

            def evaluate(self, rows):
                return [RowResult(values={"m": 1.0}) for _ in rows]

    assert [str(w.message) for w in caught] == [
        f"{__name__}.test_the_annotated_id_still_works_with_a_deprecation_warning.<locals>.Annotated declares its "
        "id as 'id: ClassVar[str] = ...'; write id = \"annotated\" (the annotated form is deprecated)"]
    assert Annotated.id == "annotated" and Annotated.declaration_problem() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        class Plain(Evaluator):
            id = "plain"

    assert Plain.id == "plain"


def test_the_face_serves_every_name_it_lists_and_the_judge_base():
    from sonar_core import judge_evaluator, llm, perturbations

    missing = [name for name in sonar_core.__all__ if not hasattr(sonar_core, name)]
    assert missing == []
    assert sonar_core.JudgeEvaluator is judge_evaluator.JudgeEvaluator
    assert sonar_core.LLMRequest is llm.LLMRequest
    assert sonar_core.PERTURBATOR_ALIASES is perturbations.registry.ALIASES
    with pytest.raises(AttributeError, match="module 'sonar_core' has no attribute 'judging_base'"):
        sonar_core.judging_base  # noqa: B018
