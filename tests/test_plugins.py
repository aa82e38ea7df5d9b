"""The plugin system end to end: discovery by entry point, the environment switches, ``-p``
modules, and every way a plugin can be broken (reported, skipped, or fatal under --strict).

The example third-party package in ``examples/sonar-example-plugin`` is really installed into
this environment with pip (offline, no build isolation) for the session and uninstalled at
the end. Broken plugins live in ``tests/plugin_fixtures`` and are loaded with ``-p``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sonar_core import hookimpl, hookspecs
from sonar_core.perturbations import Perturbator
from sonar_core.errors import EXIT_STRICT, PluginError
from sonar_core.plugins import PluginFailure, PluginManager

from conftest import REPO

FIXTURES = REPO / "tests" / "plugin_fixtures"
EXAMPLE = REPO / "examples" / "sonar-example-plugin"
EXAMPLE_DIST = "sonar-example-plugin"
PLUGIN_ENV = ("SONAR_PLUGINS", "SONAR_DISABLE_PLUGIN_AUTOLOAD")

BROKEN_IMPORT_ERROR = "RuntimeError: sonarfix_broken_import is broken on purpose"


# -- helpers ----------------------------------------------------------------------------


def _pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=180)


def _sonar_command() -> list[str]:
    script = Path(sys.executable).parent / "sonar"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "sonar_core.cli"]


def sonar(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    """Run the ``sonar`` CLI in a subprocess with the fixture plugins importable.

    The plugin switches are cleared unless given; COLUMNS is wide so rich tables do not wrap.
    """
    environ = {k: v for k, v in os.environ.items() if k not in PLUGIN_ENV}
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(FIXTURES), os.environ.get("PYTHONPATH")]))
    environ["COLUMNS"] = "400"
    environ.update(env)
    return subprocess.run([*_sonar_command(), *args], capture_output=True, text=True, env=environ,
                          cwd=cwd or REPO, timeout=120)


def table_row(output: str, first_cell: str) -> list[str]:
    """The cells of the rich table row whose first cell is ``first_cell``."""
    for line in output.splitlines():
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no table row starts with {first_cell!r} in:\n{output}")


def write_dataset(path: Path) -> Path:
    """Two models x two test cases; the word counts are in the comments."""
    rows = [
        {"test_case_key": "capital", "model_key": "m1", "input": "Capital of France?",
         "actual_output": "Paris."},                                                       # 1 word
        {"test_case_key": "moon", "model_key": "m1", "input": "How far is the Moon?",
         "actual_output": "It is about 384,400 km away."},                                 # 6 words
        {"test_case_key": "capital", "model_key": "m2", "input": "Capital of France?",
         "actual_output": "The capital of France is Paris, a city on the Seine."},         # 11 words
        {"test_case_key": "moon", "model_key": "m2", "input": "How far is the Moon?",
         "actual_output": "About 384,400 km."},                                            # 3 words
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def evaluator_dirs(run_dir: Path, qualified_name: str) -> list[Path]:
    return sorted(run_dir.glob(f"explainer_{qualified_name.replace('.', '_')}_*"))


def journal(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "journal.jsonl").read_text(encoding="utf-8").splitlines()]


# -- fixtures ---------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def plugin_env(monkeypatch):
    """No plugin switches from the caller's shell; fixture plugins importable in-process."""
    for name in PLUGIN_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.syspath_prepend(str(FIXTURES))


@pytest.fixture(scope="module")
def example_plugin(tmp_path_factory) -> Path:
    """pip-install examples/sonar-example-plugin, offline, into a folder of its own for this module.

    ``pip install --target`` into a temporary folder that is put on ``sys.path`` (this process)
    and ``PYTHONPATH`` (subprocesses): discovery reads entry points from every ``sys.path``
    entry, so the package is found as an installed distribution while the shared virtualenv
    is never modified, not even by a test run killed before teardown. Module scope keeps the
    plugin out of later modules (the quickstart's ``offline`` evaluators, the catalogue check).
    The package is built from a copy so the build leaves no build/ or *.egg-info behind.
    """
    missing = [tool for tool in ("pip", "setuptools", "wheel") if importlib.util.find_spec(tool) is None]
    if missing:
        pytest.fail(f"installing the example plugin offline needs {', '.join(missing)} in {sys.executable}'s "
                    f"environment (pip install -e '.[test]' brings them)")
    work = tmp_path_factory.mktemp("example")
    source, site = work / "sonar-example-plugin", work / "site"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    installed = _pip("install", "--no-deps", "--no-build-isolation", "--no-index", "--quiet",
                     "--target", str(site), str(source))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    previous_pythonpath = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), previous_pythonpath]))
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield source
    finally:
        sys.path.remove(str(site))
        if previous_pythonpath is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = previous_pythonpath
        for module in [m for m in sys.modules if m.split(".")[0] == "sonar_example_plugin"]:
            del sys.modules[module]
        importlib.invalidate_caches()


# -- discovery of an installed third-party package --------------------------------------


def test_fresh_plugin_manager_discovers_the_installed_example(example_plugin):
    plugins = PluginManager()
    assert not plugins.plugins, "a plugin manager must not load anything before it is used"
    evaluators = plugins.evaluators
    assert "answer_length" in evaluators
    cls = evaluators["answer_length"]
    assert cls.qualified_name() == "sonar_example_plugin.answer_length.AnswerLengthEvaluator"
    assert plugins.owner_of("answer_length") == "example"
    (info,) = [p for p in plugins.plugins if p.name == "example"]
    assert (info.module, info.distribution, info.version) == ("sonar_example_plugin", EXAMPLE_DIST, "0.1.0")
    assert info.hooks == ["register_evaluators"]
    assert info.evaluators == ["answer_length"]
    assert not [f for f in plugins.failures if f.name == "example"]
    # Built-ins come through the same entry-point group.
    assert plugins.owner_of("factual_knowledge") == "knowledge"


def test_cli_lists_and_describes_the_example(example_plugin):
    listed = sonar("evaluators")
    assert listed.returncode == 0, listed.stderr
    # Id, name, kind, LLM, RAG, judge, then Q / EA / RC / AA / C / CV / TC / EO and GPU.
    assert table_row(listed.stdout, "answer_length") == [
        "answer_length", "Answer length", "score", "✓", "✓", "", "", "", "", "✓", "", "", "", "", ""]
    assert table_row(listed.stdout, "factual_knowledge")[1] == "Factual knowledge"

    plugins = sonar("plugins")
    assert plugins.returncode == 0, plugins.stderr
    assert table_row(plugins.stdout, "example") == [
        "example", EXAMPLE_DIST, "0.1.0", "register_evaluators", "answer_length"]

    described = sonar("describe", "answer_length", SONAR_PLUGINS="example")
    assert described.returncode == 0, described.stderr
    assert described.stdout.splitlines()[0] == (
        "Answer length (answer_length, sonar_example_plugin.answer_length.AnswerLengthEvaluator)")
    assert "Result kind: score; judge: no; GPU: no; plugin: example" in described.stdout
    assert table_row(described.stdout, "conciseness") == [
        "conciseness", "Conciseness", "[0, 1]", "higher", "0.75", "★"]
    assert table_row(described.stdout, "max_words")[:3] == ["max_words", "int", "50"]


def test_run_with_the_example_writes_its_result_folder(example_plugin, tmp_path):
    dataset = write_dataset(tmp_path / "answers.json")
    done = sonar("run", "--dataset", str(dataset), "-e", "answer_length", "--param", "answer_length.max_words=4",
                 "-o", str(tmp_path / "reports"), "--run-id", "example-run", SONAR_PLUGINS="example")
    assert done.returncode == 0, done.stderr
    run_dir = tmp_path / "reports" / "example-run"
    (folder,) = evaluator_dirs(run_dir, "sonar_example_plugin.answer_length.AnswerLengthEvaluator")
    assert (folder / "EXPLAINER_DONE").is_file()
    assert not (folder / "EXPLAINER_FAILED").exists()

    # max_words = 4.  conciseness: m1 = (1 + 4/6) / 2 = 0.8333; m2 = (4/11 + 1) / 2 = 0.6818
    # answer_words:              m1 = (1/4 + 1) / 2 = 0.625;  m2 = (1 + 3/4) / 2 = 0.875
    board = json.loads((folder / "global_llm_heatmap_leaderboard" / "application_json" / "leaderboard_0.json")
                       .read_text(encoding="utf-8"))
    assert board["ranking"] == ["m1", "m2"]
    assert board["data"]["m1"] == pytest.approx({"conciseness": 5 / 6, "answer_words": 0.625}, abs=1e-4)
    assert board["data"]["m2"] == pytest.approx({"conciseness": 15 / 22, "answer_words": 0.875}, abs=1e-4)

    results = json.loads((folder / "global_llm_eval_results" / "application_json" / "explanation.json")
                         .read_text(encoding="utf-8"))["results"]
    by_key = {(r["test_case_key"], r["model_key"]): r for r in results}
    assert by_key[("capital", "m2")]["result_error_message"] == "answer has 11 words; the budget is 4"
    assert by_key[("capital", "m2")]["details"] == {"words": 11}

    # Only m2's mean conciseness (0.6818) is below the 0.75 threshold; answer_words raises none.
    problems = json.loads((folder / "problems" / "problems_and_actions.json").read_text(encoding="utf-8"))
    assert [(p["problem_attrs"]["model_name"], p["problem_attrs"]["metric_id"]) for p in problems] == [
        ("m2", "conciseness")]

    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["versions"]["plugins"] == {"example": "0.1.0"}
    assert record["plugin_failures"] == []


def test_the_examples_own_tests_pass(example_plugin):
    # What the example's README tells an author to run, in the installed copy's folder.
    tested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                            capture_output=True, text=True, cwd=example_plugin, timeout=120)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "3 passed" in tested.stdout


# -- SONAR_PLUGINS, SONAR_DISABLE_PLUGIN_AUTOLOAD and -p ---------------------------------


def test_sonar_plugins_loads_only_the_named_entry_points(example_plugin, monkeypatch):
    monkeypatch.setenv("SONAR_PLUGINS", "text")
    plugins = PluginManager().load()
    assert [p.name for p in plugins.plugins] == ["text"]
    assert plugins.failures == []
    assert plugins.evaluators, "the text family registers evaluators"
    assert {plugins.owner_of(eid) for eid in plugins.evaluators} == {"text"}
    assert "answer_length" not in plugins.evaluators

    monkeypatch.setenv("SONAR_PLUGINS", " example , text ")
    assert [p.name for p in PluginManager().load().plugins] == ["example", "text"]


def test_sonar_plugins_reports_a_name_that_matches_no_entry_point(monkeypatch):
    monkeypatch.setenv("SONAR_PLUGINS", "text,txet")
    plugins = PluginManager().load()
    assert [p.name for p in plugins.plugins] == ["text"]
    (failure,) = plugins.failures
    assert (failure.name, failure.stage) == ("txet", "import")
    assert failure.error.startswith(
        "SONAR_PLUGINS names 'txet', but no installed distribution has a 'sonar.plugins' entry point of that name "
        "(installed: ")
    assert "text" in failure.error.split("(installed: ")[1]


def test_disable_autoload_loads_only_p_modules(example_plugin, monkeypatch):
    monkeypatch.setenv("SONAR_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("SONAR_PLUGINS", "example")  # ignored: autoload is off
    plugins = PluginManager(extra_modules=["sonarfix_good"]).load()
    assert [(p.name, p.module, p.distribution) for p in plugins.plugins] == [("sonarfix_good", "sonarfix_good", "")]
    assert list(plugins.evaluators) == ["fixture_length"]
    assert plugins.failures == []
    assert [p.name for p in PluginManager().load().plugins] == []

    listed = sonar("evaluators", "-p", "sonarfix_good", SONAR_DISABLE_PLUGIN_AUTOLOAD="1")
    assert listed.returncode == 0, listed.stderr
    assert table_row(listed.stdout, "fixture_length")[1] == "Fixture length"
    assert "answer_length" not in listed.stdout and "factual_knowledge" not in listed.stdout


def test_empty_disable_variable_keeps_autoload_on(monkeypatch):
    monkeypatch.setenv("SONAR_DISABLE_PLUGIN_AUTOLOAD", "")
    monkeypatch.setenv("SONAR_PLUGINS", "knowledge")
    assert [p.name for p in PluginManager().load().plugins] == ["knowledge"]
    # The constructor argument wins over the environment.
    assert PluginManager(autoload=False).load().plugins == []


def test_plugin_manager_loads_once(monkeypatch):
    monkeypatch.setenv("SONAR_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins = PluginManager(extra_modules=["sonarfix_good", "sonarfix_broken_import"])
    assert plugins.load() is plugins
    plugins.load()
    assert [p.name for p in plugins.plugins] == ["sonarfix_good"]
    assert len(plugins.failures) == 1


# -- a plugin that raises on import -----------------------------------------------------


def test_import_error_is_recorded_in_one_line_and_skipped():
    plugins = PluginManager(extra_modules=["sonarfix_broken_import", "sonarfix_good"], autoload=False).load()
    assert plugins.failures == [PluginFailure("sonarfix_broken_import", "import", BROKEN_IMPORT_ERROR)]
    assert plugins.failures[0].message() == f"plugin 'sonarfix_broken_import' failed to import: {BROKEN_IMPORT_ERROR}"
    assert list(plugins.evaluators) == ["fixture_length"]
    with pytest.raises(PluginError) as raised:
        plugins.raise_for_failures()
    assert str(raised.value) == f"plugin 'sonarfix_broken_import' failed to import: {BROKEN_IMPORT_ERROR}"
    assert raised.value.exit_code == EXIT_STRICT == 4


def test_import_error_is_shown_by_the_cli():
    shown = sonar("plugins", "-p", "sonarfix_good", "-p", "sonarfix_broken_import", SONAR_DISABLE_PLUGIN_AUTOLOAD="1")
    assert shown.returncode == 0, shown.stderr
    assert "Plugins that failed to load" in shown.stdout
    assert table_row(shown.stdout, "sonarfix_broken_import") == ["sonarfix_broken_import", "import", BROKEN_IMPORT_ERROR]
    assert table_row(shown.stdout, "sonarfix_good") == ["sonarfix_good", "", "", "register_evaluators", "fixture_length"]
    assert "second line" not in shown.stdout + shown.stderr

    listed = sonar("evaluators", "-p", "sonarfix_broken_import", SONAR_DISABLE_PLUGIN_AUTOLOAD="1")
    assert listed.returncode == 0
    assert listed.stderr.splitlines() == [f"warning: plugin 'sonarfix_broken_import' failed to import: {BROKEN_IMPORT_ERROR}"]


def test_run_journals_the_failure_and_the_other_evaluators_finish(example_plugin, tmp_path):
    dataset = write_dataset(tmp_path / "answers.json")
    done = sonar("run", "-d", str(dataset), "-p", "sonarfix_broken_import", "-p", "sonarfix_good",
                 "-e", "answer_length", "-e", "fixture_length", "-o", str(tmp_path), "--run-id", "tolerant",
                 SONAR_PLUGINS="example")
    assert done.returncode == 0, done.stderr
    run_dir = tmp_path / "tolerant"
    for qualified in ("sonar_example_plugin.answer_length.AnswerLengthEvaluator", "sonarfix_good.FixtureLengthEvaluator"):
        (folder,) = evaluator_dirs(run_dir, qualified)
        assert (folder / "EXPLAINER_DONE").is_file()
    events = journal(run_dir)
    failed = [e for e in events if e["message"] == "plugin failed"]
    assert [(e["plugin"], e["stage"], e["error"], e["class"]) for e in failed] == [
        ("sonarfix_broken_import", "import", BROKEN_IMPORT_ERROR, "Runner")]
    (loaded,) = [e for e in events if e["message"] == "loaded plugins"]
    assert loaded["plugins"] == ["example", "sonarfix_good"]
    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["plugin_failures"] == [
        {"plugin": "sonarfix_broken_import", "stage": "import", "error": BROKEN_IMPORT_ERROR}]


def test_strict_run_exits_4_with_a_one_line_error(tmp_path):
    dataset = write_dataset(tmp_path / "answers.json")
    refused = sonar("run", "-d", str(dataset), "-p", "sonarfix_good", "-p", "sonarfix_broken_import",
                    "-e", "fixture_length", "-o", str(tmp_path / "reports"), "--run-id", "strict", "--strict",
                    SONAR_DISABLE_PLUGIN_AUTOLOAD="1")
    assert refused.returncode == EXIT_STRICT == 4
    assert refused.stderr == f"error: plugin 'sonarfix_broken_import' failed to import: {BROKEN_IMPORT_ERROR}\n"
    assert not (tmp_path / "reports" / "strict").exists()


def test_strict_run_rejects_a_misspelt_sonar_plugins_name(tmp_path):
    dataset = write_dataset(tmp_path / "answers.json")
    refused = sonar("run", "-d", str(dataset), "-e", "factual_knowledge", "-o", str(tmp_path), "--strict",
                    SONAR_PLUGINS="knowlege")
    assert refused.returncode == 4
    assert refused.stderr.startswith("error: plugin 'knowlege' failed to import: SONAR_PLUGINS names 'knowlege', "
                                     "but no installed distribution has a 'sonar.plugins' entry point of that name")
    assert len(refused.stderr.splitlines()) == 1


# -- plugins that import but cannot register --------------------------------------------


def test_misspelt_hook_name_fails_at_register():
    # The good plugin comes after the broken one: the broken one must be unregistered, or
    # check_pending() would fail again for every later plugin.
    plugins = PluginManager(extra_modules=["sonarfix_misspelt_hook", "sonarfix_good"], autoload=False).load()
    (failure,) = plugins.failures
    assert (failure.name, failure.stage) == ("sonarfix_misspelt_hook", "register")
    assert failure.error.startswith(
        "PluginValidationError: unknown hook 'register_evaluator' in plugin <module 'sonarfix_misspelt_hook'")
    assert plugins.pm.get_plugin("sonarfix_misspelt_hook") is None
    assert [p.name for p in plugins.plugins] == ["sonarfix_good"]
    assert list(plugins.evaluators) == ["fixture_length"]


def test_hook_with_a_wrong_argument_keeps_pluggys_reason():
    plugins = PluginManager(extra_modules=["sonarfix_wrong_argument"], autoload=False).load()
    assert plugins.failures == [PluginFailure(
        "sonarfix_wrong_argument", "register",
        "PluginValidationError: Plugin 'sonarfix_wrong_argument' for hook 'register_evaluators'; "
        "hookimpl definition: register_evaluators(add); "
        "Argument(s) {'add'} are declared in the hookimpl but can not be found in the hookspec")]
    assert plugins.plugins == []


def test_two_plugins_registering_one_id_are_both_named():
    plugins = PluginManager(extra_modules=["sonarfix_duplicate_a", "sonarfix_duplicate_b"], autoload=False).load()
    assert plugins.failures == [PluginFailure(
        "sonarfix_duplicate_b", "register",
        "PluginError: evaluator id 'fixture_twin' is registered by both plugin 'sonarfix_duplicate_a' "
        "and plugin 'sonarfix_duplicate_b'")]
    # The first registration stands; the second plugin is unregistered as a whole.
    assert plugins.evaluators["fixture_twin"].display_name == "Twin A"
    assert plugins.owner_of("fixture_twin") == "sonarfix_duplicate_a"
    assert [p.name for p in plugins.plugins] == ["sonarfix_duplicate_a"]
    assert plugins.pm.get_plugin("sonarfix_duplicate_b") is None


def test_duplicate_id_under_strict_names_both_plugins(tmp_path):
    dataset = write_dataset(tmp_path / "answers.json")
    refused = sonar("run", "-d", str(dataset), "-p", "sonarfix_duplicate_a", "-p", "sonarfix_duplicate_b",
                    "-e", "fixture_twin", "-o", str(tmp_path), "--strict", SONAR_DISABLE_PLUGIN_AUTOLOAD="1")
    assert refused.returncode == 4
    assert refused.stderr == (
        "error: plugin 'sonarfix_duplicate_b' failed to register: PluginError: evaluator id 'fixture_twin' is "
        "registered by both plugin 'sonarfix_duplicate_a' and plugin 'sonarfix_duplicate_b'\n")


@pytest.mark.parametrize("module, error", [
    ("sonarfix_not_evaluator",
     "PluginError: <class 'sonarfix_not_evaluator.NotAnEvaluator'> is not a subclass of sonar_core.Evaluator"),
    ("sonarfix_no_metrics", "PluginError: NoMetricsEvaluator declares no metrics"),
])
def test_invalid_declarations_are_reported(module, error):
    plugins = PluginManager(extra_modules=[module, "sonarfix_good"], autoload=False).load()
    assert plugins.failures == [PluginFailure(module, "register", error)]
    assert list(plugins.evaluators) == ["fixture_length"]


def test_a_hook_that_raises_registers_nothing():
    plugins = PluginManager(extra_modules=["sonarfix_hook_raises"], autoload=False).load()
    assert plugins.failures == [PluginFailure("sonarfix_hook_raises", "register", "KeyError: 'missing_setting'")]
    # It called register() once before raising; a plugin registers all of its evaluators or none.
    assert "fixture_half_registered" not in plugins.evaluators
    assert plugins.plugins == []
    assert plugins.pm.get_plugin("sonarfix_hook_raises") is None


class _Reverse(Perturbator):
    description = "The text backwards."
    random = False

    def apply(self, text, rng):
        return text[::-1]


class _Registers:
    """A plugin object whose hook named ``hook`` calls ``register(*args)`` for each of ``calls``, then
    raises ``raises`` if given; it also registers a valid evaluator, which must be left out with it."""

    def __init__(self, hook: str, calls: list[tuple], raises: Exception | None = None) -> None:
        def implementation(register):
            for args in calls:
                register(*args)
            if raises is not None:
                raise raises

        setattr(self, hook, hookimpl(specname=hook)(implementation))

    @hookimpl
    def register_evaluators(self, register):
        from sonarfix_good import FixtureLengthEvaluator

        class Twin(FixtureLengthEvaluator):
            id = "fixture_kept_out"

        register(Twin)


def _echo_factory(spec, services):
    return None


@pytest.mark.parametrize("hook, calls, raises, error", [
    ("register_host_kinds", [("echo", _echo_factory)], RuntimeError("no kinds today"),
     "RuntimeError: no kinds today"),
    ("register_perturbators", [("reverse", _Reverse)], RuntimeError("no perturbators today"),
     "RuntimeError: no perturbators today"),
    ("register_host_kinds", [("echo", "not callable")], None,
     "PluginError: host kind 'echo': 'not callable' is not callable (a factory(spec, services) -> Host)"),
    ("register_perturbators", [("reverse", str)], None,
     "PluginError: perturbator 'reverse': <class 'str'> is not a subclass of sonar_core.perturbations.Perturbator"),
    ("register_host_kinds", [("python", _echo_factory)], None,
     "PluginError: host kind 'python' is registered by both plugin 'sonar_core' and plugin 'broken'"),
    ("register_perturbators", [("reverse", _Reverse), ("random_uppercase", _Reverse)], None,
     "PluginError: perturbator 'random_uppercase' is registered by both plugin 'sonar.perturbations' and "
     "plugin 'broken'"),
])
def test_every_registry_records_a_broken_plugin_the_same_way(monkeypatch, hook, calls, raises, error):
    """Host kinds and perturbators are collected as evaluators are: a plugin whose hook raises, registers a
    bad entry or a taken name is one PluginFailure, and none of its entries (in any registry) is kept."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    plugins = PluginManager(autoload=False).load()
    assert plugins.register_plugin(_Registers(hook, calls, raises), name="broken") is False
    assert plugins.failures == [PluginFailure("broken", "register", error)]
    assert plugins.plugins == [] and plugins.pm.get_plugin("broken") is None
    assert "fixture_kept_out" not in plugins.evaluators
    assert "echo" not in plugins.registry("register_host_kinds").entries
    assert "reverse" not in plugins.registry("register_perturbators").entries
    # The built-ins are plugins too, registered first, and are not listed among the loaded plugins.
    assert plugins.registry("register_perturbators").owner("butter_finger") == "sonar.perturbations"
    assert plugins.registry("register_host_kinds").owner("python") == "sonar_core"


def test_a_sound_plugin_adds_to_every_registry_attributed_to_it(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    plugins = PluginManager(autoload=False).load()
    plugin = _Registers("register_perturbators", [("reverse", _Reverse)])
    assert plugins.register_plugin(plugin, name="sound") is True
    assert plugins.failures == []
    assert plugins.registry("register_perturbators").owner("reverse") == "sound"
    assert plugins.owner_of("fixture_kept_out") == "sound"
    (info,) = plugins.plugins
    assert (info.name, info.hooks, info.evaluators) == ("sound", ["register_evaluators", "register_perturbators"],
                                                        ["fixture_kept_out"])


# -- laziness ---------------------------------------------------------------------------


def test_importing_sonar_core_imports_no_plugin(example_plugin):
    probe = (
        "import sys, sonar_core, sonar_core.cli, sonar_core.api, sonar_core.execution\n"
        "from sonar_core.plugins import PluginManager\n"
        "def plugins():\n"
        "    return sorted(m for m in sys.modules if m.split('.')[0] in ('sonar_plugins', 'sonar_example_plugin'))\n"
        "print(plugins())\n"
        "manager = PluginManager()\n"
        "print(plugins())\n"
        "manager.load()\n"
        "print('sonar_example_plugin' in plugins(), 'sonar_example_plugin.answer_length' in plugins())\n"
    )
    environ = {k: v for k, v in os.environ.items() if k not in PLUGIN_ENV}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=environ, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[]", "[]", "True True"]


# -- every hook is documented and tested (in the spirit of datasette's test_plugins) ----


def _hookspecs() -> dict[str, object]:
    marker = f"{hookspecs.PROJECT_NAME}_spec"
    return {name: fn for name, fn in vars(hookspecs).items() if inspect.isfunction(fn) and hasattr(fn, marker)}


def test_every_hook_is_documented_tested_and_has_a_guide_section():
    specs = _hookspecs()
    assert "register_evaluators" in specs
    guide = (REPO / "docs" / "plugin-authoring.md").read_text(encoding="utf-8")
    headings = [line for line in guide.splitlines() if line.startswith("## ")]
    # This file names every hook itself, so it cannot count as the test that exercises one.
    test_sources = {path: path.read_text(encoding="utf-8") for path in (REPO / "tests").rglob("test_*.py")
                    if path.resolve() != Path(__file__).resolve()}
    for name, fn in specs.items():
        doc = inspect.getdoc(fn) or ""
        assert doc, f"hook {name} has no docstring"
        for argument in inspect.signature(fn).parameters:
            assert f"``{argument}" in doc or f"`{argument}" in doc, f"hook {name}'s docstring does not explain {argument}"
        assert name in hookspecs.__all__, f"hook {name} is missing from sonar_core.hookspecs.__all__"
        pattern = re.compile(rf"\b{name}\b")
        assert any(pattern.search(line) for line in headings), (
            f"docs/plugin-authoring.md has no '## ' heading for hook {name}")
        assert any(pattern.search(source) for source in test_sources.values()), f"no test mentions hook {name}"
