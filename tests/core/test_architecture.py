"""The core's shape: no import circles, every module importable alone, no oversized modules.

docs/architecture.md describes the layers; these tests keep the code to the rules that do not
need a drawing: the import graph of ``sonar_core`` (module-level and function-level imports
alike, type-checking-only imports aside) has no circle, each module imports on its own in a
fresh interpreter state, and a module past 400 lines is an exception named here with its reason.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "sonar_core"
#: Modules allowed past MAX_LINES, each with why it stays whole.
MAX_LINES = 400
OVERSIZED: dict[str, str] = {}


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under ``package_dir`` (packages by their __init__)."""
    base = package_dir.parent
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                for inner in ast.walk(child):
                    if hasattr(inner, "lineno"):
                        lines.add(inner.lineno)
    return lines


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports anywhere (type-checking-only imports aside)."""
    modules = module_names(package_dir)
    top = package_dir.name
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    candidate = f"{target}.{alias.name}"
                    deps.add(candidate if candidate in modules else target)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = {d for d in deps if d in modules and d != name and d.split(".")[0] == top}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a list of modules (first repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_circle_finder_finds_a_circle(tmp_path):
    # The meta-test: a package whose modules import each other (one only inside a function).
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
                              "from . import a\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    assert find_cycle(import_graph(pkg)) is None


def test_sonar_core_has_no_import_circle():
    assert find_cycle(import_graph(CORE)) is None


@pytest.mark.parametrize("module", sorted(module_names(CORE)))
def test_each_module_imports_alone(module):
    # Alone: with no other Sonar module imported before it, so an import that works only after
    # another module happened to load (a hidden circle) fails here.
    saved = {k: v for k, v in sys.modules.items() if k == "sonar_core" or k.startswith(("sonar_core.", "sonar_plugins"))}
    for key in saved:
        del sys.modules[key]
    try:
        importlib.import_module(module)
    finally:
        for key in [k for k in sys.modules if k == "sonar_core" or k.startswith(("sonar_core.", "sonar_plugins"))]:
            del sys.modules[key]
        sys.modules.update(saved)


def test_no_module_is_oversized():
    sizes = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in CORE.rglob("*.py")}
    oversized = sorted(name for name, lines in sizes.items() if lines > MAX_LINES and name not in OVERSIZED)
    assert oversized == [], {name: sizes[name] for name in oversized}
    # An exception that no longer needs its place must give it up.
    assert sorted(name for name in OVERSIZED if sizes.get(name, 0) <= MAX_LINES) == []
