"""Sonar's own benchmarks, registered as a plugin before any other: the demo's "assistant safety"."""

from __future__ import annotations

from pathlib import Path

from ..hookspecs import hookimpl

__all__ = ["PLUGIN_NAME", "DEMO_BENCHMARK", "register_benchmarks"]

PLUGIN_NAME = "sonar.benchmarks"
#: The demo benchmark's definition (its standards file lies beside it).
DEMO_BENCHMARK = Path(__file__).parent.parent / "demo" / "assistant_safety.yaml"


@hookimpl
def register_benchmarks(register):
    register(DEMO_BENCHMARK)
