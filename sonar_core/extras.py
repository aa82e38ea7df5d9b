"""Optional parts of Sonar (pip extras) and whether the modules an evaluator needs are installed.

The base install (``pip install sonar-eval``) holds the core and every evaluator that needs no
model; ``sonar-eval[models]`` adds torch and the model libraries, ``sonar-eval[ragas]`` the RAGAS
library, ``sonar-eval[all]`` everything. An evaluator declares the extra it needs and the import
names that prove it is installed (:attr:`sonar_core.Evaluator.extra`,
:attr:`~sonar_core.Evaluator.needs_modules`); the check finds the modules without importing them,
so listing evaluators stays cheap and never loads torch.
"""

from __future__ import annotations

import importlib.util
from typing import Iterable

__all__ = ["DISTRIBUTION", "requirement", "missing_modules", "install_command", "missing_reason"]

#: The name Sonar is installed under.
DISTRIBUTION = "sonar-eval"


def requirement(extra: str) -> str:
    """``sonar-eval[models]`` for ``models`` (``ragas,models`` gives ``sonar-eval[ragas,models]``)."""
    return f"{DISTRIBUTION}[{extra}]"


def install_command(extra: str) -> str:
    """The command that installs ``extra``, quoted for a POSIX shell."""
    return f"pip install '{requirement(extra)}'"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that is not a package; a module set to None
        return False


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The modules in ``modules`` that cannot be imported (found without importing them)."""
    return [module for module in modules if not _installed(module)]


def missing_reason(extra: str, missing: list[str]) -> str:
    """Why an evaluator cannot run: the extra it needs and the first module not installed."""
    return (f"needs {requirement(extra)}, which is not installed (no module '{missing[0]}'); "
            f"install it with: {install_command(extra)}")
