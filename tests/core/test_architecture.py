"""The core's shape: no import circles, the layer rules kept, every module importable alone, no
oversized modules.

docs/architecture.md describes the layers and docs/architecture/layers.json draws them; these tests
hold the code to both: the import graph of ``sonar_core`` (module-level, function-level and
type-checking-only imports alike, as ``farm-studio look`` counts them) has no circle, no import of
``sonar_core`` or the built-in plugins crosses a "never" of layers.json, each module imports on its
own in a fresh interpreter state, and a module past 400 lines is an exception named here with its
reason.
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "sonar_core"
PLUGINS = ROOT / "plugins"
LAYERS = ROOT / "docs" / "architecture" / "layers.json"
#: Folders whose import name is not the folder's name (pyproject.toml's package-dir).
IMPORT_NAMES = {"plugins": "sonar_plugins"}
#: Modules allowed past MAX_LINES, each with why it stays whole.
MAX_LINES = 400
OVERSIZED: dict[str, str] = {}


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under ``package_dir`` (packages by their __init__)."""
    base = package_dir.parent
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        parts[0] = IMPORT_NAMES.get(parts[0], parts[0])
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def import_graph(*package_dirs: Path) -> dict[str, set[str]]:
    """module -> the modules of these packages it imports anywhere (under ``if TYPE_CHECKING:`` too)."""
    modules: dict[str, Path] = {}
    for package_dir in package_dirs:
        modules.update(module_names(package_dir))
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(tree):
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
        graph[name] = {d for d in deps if d in modules and d != name}
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
    (pkg / "c.py").write_text("from . import a\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    # An import for type checkers only closes the circle too: `farm-studio look` counts it.
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    assert find_cycle(import_graph(pkg)) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    (pkg / "c.py").write_text("import typing\n")
    assert find_cycle(import_graph(pkg)) is None


def test_sonar_core_has_no_import_circle():
    assert find_cycle(import_graph(CORE)) is None


def part_of(relative: str, parts: dict[str, list[str]]) -> str | None:
    """The part of layers.json a file (path from the root) is in: its file's entry, else its longest
    folder entry; None for a file on no part."""
    found, length = None, -1
    for name, entries in parts.items():
        for entry in entries:
            if (relative == entry or (entry.endswith("/") and relative.startswith(entry))) and len(entry) > length:
                found, length = name, len(entry)
    return found


def broken_rules(layers_file: Path, root: Path, *package_dirs: Path) -> list[str]:
    """Every import of these packages that a "never" of ``layers_file`` forbids, one line each:
    importer (file), imported module (file), the rule and its reason."""
    drawing = json.loads(layers_file.read_text(encoding="utf-8"))
    parts = {name: part["is"] for name, part in drawing["parts"].items()}
    never = {(rule[0], rule[1]): (rule[2] if len(rule) > 2 else "") for rule in drawing.get("never", [])}
    files: dict[str, str] = {}
    for package_dir in package_dirs:
        files.update({name: path.relative_to(root).as_posix() for name, path in module_names(package_dir).items()})
    broken = []
    for importer, deps in sorted(import_graph(*package_dirs).items()):
        above = part_of(files[importer], parts)
        for dep in sorted(deps):
            below = part_of(files[dep], parts)
            if (above, below) in never:
                broken.append(f"{importer} ({files[importer]}) imports {dep} ({files[dep]}): never "
                              f"{above} -> {below}: {never[above, below]}")
    return broken


def test_the_rule_checker_names_importer_and_imported(tmp_path):
    # The meta-test: a low layer that imports a high one, once at run time and once for type checkers.
    pkg = tmp_path / "pkg"
    (pkg / "high").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "high" / "__init__.py").write_text("")
    (pkg / "high" / "top.py").write_text("from ..low import x\n")
    (pkg / "low.py").write_text("def f():\n    from .high import top\n")
    (pkg / "ground.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .high.top import y\n")
    layers = tmp_path / "layers.json"
    layers.write_text(json.dumps({
        "parts": {"High": {"is": ["pkg/high/"]}, "Low": {"is": ["pkg/low.py", "pkg/ground.py"]}},
        "arrows": [["High", "Low"]], "never": [["Low", "High", "nothing looks up"]]}))
    assert broken_rules(layers, tmp_path, pkg) == [
        "pkg.ground (pkg/ground.py) imports pkg.high.top (pkg/high/top.py): never Low -> High: nothing looks up",
        "pkg.low (pkg/low.py) imports pkg.high.top (pkg/high/top.py): never Low -> High: nothing looks up",
    ]
    (pkg / "low.py").write_text("")
    (pkg / "ground.py").write_text("")
    assert broken_rules(layers, tmp_path, pkg) == []


def test_no_import_breaks_a_layer_rule():
    assert broken_rules(LAYERS, ROOT, CORE, PLUGINS) == []


def test_the_layer_drawing_names_only_what_exists():
    # A renamed or moved module leaves no stale path in layers.json (farm-studio draw would skip it).
    drawing = json.loads(LAYERS.read_text(encoding="utf-8"))
    missing = [entry for part in drawing["parts"].values() for entry in part["is"] if not (ROOT / entry).exists()]
    assert missing == []


def shared_class_names(package_dir: Path) -> dict[str, list[str]]:
    """Public class name -> the modules defining it at their top level, for names defined twice or more."""
    defined: dict[str, list[str]] = {}
    for name, path in module_names(package_dir).items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                defined.setdefault(node.name, []).append(f"{name}:{node.lineno}")
    return {name: where for name, where in sorted(defined.items()) if len(where) > 1}


def test_the_name_check_finds_two_classes_of_one_name(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("class Result:\n    pass\n\nclass _Private:\n    pass\n")
    (pkg / "b.py").write_text("import enum\n\n\nclass Result(enum.Enum):\n    X = 1\nclass _Private:\n    pass\n")
    assert shared_class_names(pkg) == {"Result": ["pkg.a:1", "pkg.b:4"]}


def test_no_two_public_classes_share_a_name():
    # Two RunResults (the analyst's and the run layer's) once made every reader ask which one.
    assert shared_class_names(CORE) == {}


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
             for folder in (CORE, PLUGINS) for path in folder.rglob("*.py")}
    oversized = sorted(name for name, lines in sizes.items() if lines > MAX_LINES and name not in OVERSIZED)
    assert oversized == [], {name: sizes[name] for name in oversized}
    # An exception that no longer needs its place must give it up.
    assert sorted(name for name in OVERSIZED if sizes.get(name, 0) <= MAX_LINES) == []
