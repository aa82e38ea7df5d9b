"""The base install, for real: a fresh venv, ``pip install`` of the project WITHOUT extras (its base
dependencies from the package registry, through pip's cache), then the text evaluators on the demo.

It checks what a plugin author or a CI job gets from ``pip install sonar-eval``: no torch, the
model evaluators listed with what they need, and a run of the base evaluators that writes its
folders. About 30 s with a warm pip cache (longer on the first run).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from sonar_core import names

pytestmark = pytest.mark.base_install

EVALUATORS = ("text_matching", "pii_leakage", "rouge", "bleu")


def _copy_project(target: Path) -> Path:
    """The files a wheel is built from, copied so the build leaves nothing in the working tree."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("sonar_core", "plugins"):
        shutil.copytree(REPO / folder, target / folder, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, target / name)
    return target


def _size_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink()) / 2**20


def test_base_install_runs_the_text_evaluators(tmp_path):
    project = _copy_project(tmp_path / "project")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(project)],
                             capture_output=True, text=True, env=env, timeout=900)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]

    # None of the models extra came with it.
    probe = subprocess.run([str(python), "-c", "import importlib.util as u; "
                            "print([m for m in ('torch', 'transformers', 'sentence_transformers', 'ragas') "
                            "if u.find_spec(m)])"], capture_output=True, text=True, env=env, check=True)
    assert probe.stdout.strip() == "[]"

    sonar = venv / "bin" / "sonar"
    listing = json.loads(subprocess.run([str(sonar), "evaluators", "--json"], capture_output=True, text=True,
                                        env=env, check=True).stdout)
    needs = {e["id"]: e["needs"] for e in listing["evaluators"]}
    assert needs["perplexity"] == "sonar-eval[models]"
    assert needs["faithfulness"] == "sonar-eval[ragas]"
    assert all(needs[eid] is None for eid in EVALUATORS)
    assert listing["plugin_failures"] == []

    out = tmp_path / "reports"
    command = [str(sonar), "run", "--dataset", "demo", "--no-progress", "-o", str(out), "--run-id", "base"]
    for eid in EVALUATORS:
        command += ["-e", eid]
    run = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    run_dir = out / "base"
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    assert [e["evaluator_id"] for e in record["result"]["executed_explainers"]] == list(EVALUATORS)
    assert all(e["status"] == "success" for e in record["result"]["executed_explainers"])
    for entry in record["result"]["executed_explainers"]:
        assert (run_dir / entry["job_location"]).is_dir()
    assert (run_dir / names.INDEX_HTML).is_file()

    lib = _size_mb(venv / "lib")
    print(f"base install: venv lib/ {lib:.0f} MB")
    assert lib < 300, f"the base install's lib/ is {lib:.0f} MB"
