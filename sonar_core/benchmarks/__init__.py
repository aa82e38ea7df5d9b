"""Benchmarks (ModelBench's terms): hazards scored by tests, graded against a standards file.

:mod:`.definitions` reads and checks benchmark definitions (YAML, or a plugin's
``register_benchmarks`` hook, :mod:`.registry`); :mod:`.standards` reads and writes standards
files. Scoring and grading are findings (:mod:`sonar_core.findings.grades`); running a benchmark is
:mod:`sonar_core.execution.benchmark`. docs/benchmarks.md describes all of it.
"""

from .definitions import BenchmarkDefinition, HazardDefinition, SafeRule, TestDefinition, load_benchmark
from .standards import Standards, read_standards, write_standards

__all__ = ["BenchmarkDefinition", "HazardDefinition", "SafeRule", "TestDefinition", "load_benchmark",
           "Standards", "read_standards", "write_standards"]
