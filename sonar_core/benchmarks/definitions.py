"""Benchmark definitions: a benchmark has hazards, a hazard is scored by tests, a test is an evaluator.

A definition is YAML (or a mapping a plugin registers)::

    uid: assistant_safety
    version: "1.0"
    name: Assistant safety            # optional, for people
    standards: assistant_safety_standards.json   # optional default standards, beside this file
    tests:
      - uid: privacy_pii
        evaluator: pii_leakage         # an installed evaluator id
        params: {}                     # its parameters
        thresholds: {}                 # metric key -> threshold, as in a run configuration
        categories: [privacy]          # only rows with one of these categories are its items
        safe: {metric: null, threshold: null}   # default: the primary metric at the threshold in force
    hazards:
      - uid: privacy
        key: privacy                   # the standards file's key (default: the uid)
        tests: [privacy_pii]

A row is a *safe* item of a test when the rule's metric (default: the evaluator's primary metric)
is on the right side of its threshold (default: the threshold in force for the run). Every error
is one line naming the file and the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ConfigError, validation_message
from ..jsontypes import JsonObject
from ..yaml_files import read_yaml

__all__ = ["SafeRule", "TestDefinition", "HazardDefinition", "BenchmarkDefinition", "load_benchmark",
           "parse_benchmark"]

_UID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def _check_uid(value: str, what: str) -> str:
    if not _UID.match(value):
        raise ValueError(f"{what} {value!r} must be letters, digits, '_', '.' or '-' (starting with a letter or digit)")
    return value


class SafeRule(BaseModel):
    """What makes a scored row safe: ``metric`` on the right side of ``threshold``."""

    model_config = ConfigDict(extra="forbid")

    #: Metric key; None: the evaluator's primary metric.
    metric: str | None = None
    #: Threshold; None: the threshold in force for the run (the test's, the run's, the metric's default).
    threshold: float | None = None


class TestDefinition(BaseModel):
    """One test: an evaluator with its parameters, the rows it scores (by category) and the safe rule."""

    model_config = ConfigDict(extra="forbid")
    __test__ = False  # not a pytest class

    uid: str
    #: Installed evaluator id (``sonar evaluators``).
    evaluator: str
    params: dict[str, Any] = Field(default_factory=dict)
    thresholds: dict[str, float] = Field(default_factory=dict)
    #: Only rows with at least one of these categories are this test's items (empty: every row).
    categories: list[str] = Field(default_factory=list)
    safe: SafeRule = Field(default_factory=SafeRule)

    @model_validator(mode="after")
    def _uid(self) -> "TestDefinition":
        _check_uid(self.uid, "test uid")
        return self

    def initialization(self) -> "InitializationRecord":
        """The test as the journal's ``test info`` records it."""
        return {"evaluator": self.evaluator, "params": self.params, "thresholds": self.thresholds,
                "categories": self.categories, "safe": self.safe.model_dump()}


class SafeRecord(TypedDict):
    metric: str | None
    threshold: float | None


class InitializationRecord(TypedDict):
    """A test as the journal's ``test info`` records it."""
    evaluator: str
    params: JsonObject  #: the definition file's parameters, as written (validated by the evaluator)
    thresholds: dict[str, float]
    categories: list[str]
    safe: SafeRecord


class HazardDefinition(BaseModel):
    """One hazard: the tests whose items score it."""

    model_config = ConfigDict(extra="forbid")

    uid: str
    #: The standards file's key for this hazard's reference score (default: the uid).
    key: str | None = None
    name: str | None = None
    description: str = ""
    tests: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _uid(self) -> "HazardDefinition":
        _check_uid(self.uid, "hazard uid")
        return self

    @property
    def hazard_key(self) -> str:
        return self.key or self.uid

    @property
    def title(self) -> str:
        return self.name or self.uid


class BenchmarkDefinition(BaseModel):
    """A benchmark: uid, version, tests and the hazards they score."""

    model_config = ConfigDict(extra="forbid")

    uid: str
    version: str
    name: str | None = None
    description: str = ""
    #: Default standards file (relative to the definition's folder); ``--standards`` overrides it.
    standards: str | None = None
    tests: list[TestDefinition] = Field(min_length=1)
    hazards: list[HazardDefinition] = Field(min_length=1)
    #: Where the definition came from (a file, or the plugin that registered it); not read from YAML.
    source: str = Field(default="", exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _version_text(cls, data: Any) -> Any:
        # YAML reads `version: 1.0` as a number: keep it as the text the author wrote.
        if isinstance(data, dict) and isinstance(data.get("version"), (int, float)):
            data = {**data, "version": str(data["version"])}
        return data

    @model_validator(mode="after")
    def _references(self) -> "BenchmarkDefinition":
        _check_uid(self.uid, "benchmark uid")
        tests = [t.uid for t in self.tests]
        for index, uid in enumerate(tests):
            if uid in tests[:index]:
                raise ValueError(f"field 'tests[{index}].uid': test '{uid}' is defined twice")
        seen: set[str] = set()
        keys: set[str] = set()
        used: set[str] = set()
        for index, hazard in enumerate(self.hazards):
            if hazard.uid in seen:
                raise ValueError(f"field 'hazards[{index}].uid': hazard '{hazard.uid}' is defined twice")
            if hazard.hazard_key in keys:
                raise ValueError(f"field 'hazards[{index}].key': hazard key '{hazard.hazard_key}' is used twice")
            seen.add(hazard.uid)
            keys.add(hazard.hazard_key)
            for position, test in enumerate(hazard.tests):
                if test not in tests:
                    raise ValueError(f"field 'hazards[{index}].tests[{position}]': unknown test '{test}' "
                                     f"(defined: {', '.join(tests)})")
                used.add(test)
        unused = [t for t in tests if t not in used]
        if unused:
            raise ValueError(f"field 'tests': test '{unused[0]}' scores no hazard")
        return self

    @property
    def title(self) -> str:
        return self.name or self.uid

    def test(self, uid: str) -> TestDefinition:
        return next(t for t in self.tests if t.uid == uid)

    def standards_path(self) -> Path | None:
        """The default standards file, resolved against the definition's folder."""
        if self.standards is None:
            return None
        path = Path(self.standards).expanduser()
        if not path.is_absolute() and self.source and Path(self.source).is_file():
            path = Path(self.source).parent / path
        return path


def parse_benchmark(data: Any, source: str) -> BenchmarkDefinition:
    """A definition from a mapping; ConfigError (one line naming ``source`` and the field) when bad."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a benchmark definition must be a mapping of keys to values")
    try:
        definition = BenchmarkDefinition.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "value_error":
            message = str(first["msg"]).removeprefix("Value error, ")
            if not message.startswith("field "):
                location = ".".join(str(p) for p in first["loc"])
                message = f"field '{location}': {message}" if location else message
            raise ConfigError(f"{source}: {message}") from None
        raise ConfigError(f"{source}: {validation_message(exc, 'field')}") from None
    return definition.model_copy(update={"source": source})


def load_benchmark(path: str | Path) -> BenchmarkDefinition:
    """Read a YAML benchmark definition; ConfigError, one line naming the file and field, when bad."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: benchmark definition not found")
    return parse_benchmark(read_yaml(path, "benchmark definition"), str(path))
