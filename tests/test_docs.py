"""Docs stay in step with the code."""

from __future__ import annotations

from sonar_core.catalogue import render_catalogue
from sonar_core.plugins import PluginManager

from conftest import REPO


def test_committed_catalogue_is_current():
    expected = render_catalogue(PluginManager(autoload=True).load())
    committed = (REPO / "docs" / "evaluators.md").read_text(encoding="utf-8")
    assert committed == expected, "docs/evaluators.md is stale: run `sonar catalogue --write docs/evaluators.md`"


def test_readme_quick_start_is_two_commands():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.strip().splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[0].startswith("./quickstart.sh") and "pytest" in commands[1]
    assert (REPO / "quickstart.sh").is_file()
