"""Run configuration: a YAML file and/or CLI flags, validated before anything runs.

Example (configs/quickstart.yaml)::

    name: quickstart
    dataset: demo                 # the bundled demo dataset, or a path relative to this file
    output_dir: ../reports
    evaluators:
      - offline                   # every installed evaluator that needs no network or judge
      - id: factual_knowledge
        name: factual_knowledge_and
        params: {target_output_delimiter: "<AND>", logical_operator: AND}
        categories: [factual_and]
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer, model_validator

from pydantic_core import PydanticCustomError

from .config_sections import EvaluatorSpec, PerturbSpec, RedteamSpec, RedteamSuiteSpec, no_nul, safe_name
from .epoch_names import parse_epoch_reducer
from .errors import ConfigError, validation_message
from .traces.spec import TraceInput
from .generate_config import GenerateSpec
from .yaml_files import read_yaml

__all__ = ["EvaluatorSpec", "PerturbSpec", "RedteamSpec", "RedteamSuiteSpec", "RunConfig", "Flag", "load_config", "build_config",
           "DEMO_DATASET", "ALL_OFFLINE", "EXECUTION_KEYS"]

#: ``dataset: demo`` means the dataset bundled with Sonar.
DEMO_DATASET = "demo"
#: In ``evaluators``, every installed evaluator that can run offline.
ALL_OFFLINE = "offline"
#: Settings that say where a run executes, not what it computes: run.json leaves them out (a run
#: on Ray records the same run.json as a local one), and a resumed run takes them afresh.
EXECUTION_KEYS = ("executor", "ray_address", "ray_shard_rows", "ray_model_actors", "max_cost")


#: Settings that name a file or folder: an empty or blank one is refused, and so is a NUL character (no path
#: can hold it; the operating system's calls would fail with "embedded null byte") or a lone surrogate (bytes
#: that are not UTF-8, which run.json could not record).
PATH_SETTINGS = ("dataset", "output_dir", "llm_configs", "llm_cache", "base_dir", "test_suite", "benchmark",
                 "standards", "standards_output")


@dataclass(frozen=True)
class Flag:
    """Marks a :class:`RunConfig` field as a ``sonar run`` option (``Annotated[type, Flag(...)]``); the option's
    help is the field's ``description``, its value type, choices and repeatability follow the field's type
    (:mod:`sonar_core.cli.settings` builds it). A field without one is a configuration key (and an API keyword) only.
    """

    #: The long flag; default ``--`` and the field's name with dashes.
    name: str | None = None
    short: str | None = None
    metavar: str | None = None
    #: A bool as a ``--x/--no-x`` pair (for a default of True); else ``--x`` alone switches it on.
    negatable: bool = False
    #: Choices (a ``Literal``) match in any case.
    case_sensitive: bool = True
    #: The value names a file (the option refuses a folder; shown as FILE).
    file: bool = False
    #: The option checks the field's ``ge``/``le`` bounds itself (and its help shows them).
    bounded: bool = False


class RunConfig(BaseModel):
    """Everything a run needs, each setting declared once: its type, default and ``description`` here, and,
    for one with a :class:`Flag`, its ``sonar run`` option; ``sonar_core.run`` takes every field as a keyword
    (docs/cli.md: "Adding a setting")."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field("run", description="The run's name, the stem of its folder (default: run).")
    dataset: Annotated[str | None, Flag(short="-d")] = Field(
        None, description="Dataset file (.json, .jsonl, .csv) or 'demo' for the bundled one.")
    output_dir: Annotated[str, Flag(short="-o")] = Field(
        "reports", description="Folder that receives the run folder (default: reports).")
    run_id: Annotated[str | None, Flag()] = Field(None, description="Name of the run folder (default: <name>-<timestamp>).")
    evaluators: Annotated[list[Union[str, EvaluatorSpec]], Flag("--evaluator", "-e")] = Field(
        default_factory=lambda: [ALL_OFFLINE],
        description="Evaluator id to run (repeatable); 'offline' means every evaluator that runs offline.")
    thresholds: Annotated[dict[str, float], Flag("--threshold", metavar="METRIC=VALUE")] = Field(
        default_factory=dict, description="Override a metric's threshold for every evaluator that has it (repeatable).")
    strict: Annotated[bool, Flag()] = Field(False, description=(
        "Fail (exit 4) on a plugin load error, an evaluator whose inputs are missing, or one that scored with a "
        "fallback model."))
    fail_on_problems: Annotated[Literal["HIGH", "MEDIUM", "LOW"] | None, Flag(case_sensitive=False)] = Field(
        None, description="Exit 5 when a problem of this severity or worse is found (a CI gate).")
    plugins: Annotated[list[str], Flag("--plugin", "-p", metavar="MODULE")] = Field(
        default_factory=list, description="Also load this Python module as a plugin (repeatable).")
    batch_size: int = Field(512, ge=1, description="Rows per evaluate() call (default: 512).")
    device: Annotated[str, Flag()] = Field("auto", description=(
        "Where models run: auto (CUDA when visible, else CPU; the default), cpu, cuda."))
    #: Default $SONAR_LLM_CONFIGS or ~/.config/sonar/llm-configs.yaml (docs/judges.md).
    llm_configs: Annotated[str | None, Flag(file=True)] = Field(
        None, description="YAML file of LLM (judge) configurations.")
    #: Default: the file's, else local-smollm2.
    default_judge: Annotated[str | None, Flag("--judge", metavar="KEY")] = Field(
        None, description="Default judge: an LLM configuration key (sonar judges).")
    #: Default $SONAR_HOME/llm-cache.sqlite (~/.cache/sonar/...).
    llm_cache: Annotated[str | None, Flag(file=True)] = Field(None, description="LLM response cache file (SQLite).")
    no_cache: Annotated[bool, Flag()] = Field(False, description="Neither read nor write the LLM response cache.")
    refresh_cache: Annotated[bool, Flag()] = Field(False, description=(
        "Ask the LLMs again instead of using cached answers (new answers are cached)."))
    csv_formula_escape: Annotated[bool, Flag(negatable=True)] = Field(True, description=(
        "Prefix CSV text cells starting with = + - @ tab or CR with ' (default: on)."))
    columnar_only_above: int = Field(50_000, ge=0, description=(
        "Above this many scored rows an evaluator's row results are Parquet only: no JSON, CSV or .jay "
        "(docs/result-directory.md)."))
    perturb: list[PerturbSpec] = Field(default_factory=list, description=(
        "Perturbed copies of the test suite's test cases (sonar perturbators; needs test_suite)."))
    base_dir: str | None = Field(None, description="The folder relative paths are resolved from (the config file's).")
    test_suite: Annotated[str | None, Flag()] = Field(
        None, description="Test cases without answers: ask the hosts, then score their answers.")
    #: Its flags (--traces, --trace-scope, ...) are declared in sonar_core.cli.traces: they set its keys.
    traces: TraceInput | None = Field(None, description=(
        "Production traces to score instead of a dataset: span files and how spans become rows (docs/traces.md)."))
    hosts: Annotated[list[dict[str, Any]], Flag("--host", metavar="YAML")] = Field(default_factory=list, description=(
        "A model under test as a YAML mapping, e.g. '{key: m, kind: openai_chat, model: m, base_url: http://...}' "
        "(repeatable; replaces the file's hosts; docs/hosts.md)."))
    prices: dict[str, dict[str, Any]] = Field(default_factory=dict, description=(
        "Host or judge key -> {input_per_1k, output_per_1k}, USD per 1,000 tokens: each row's cost and run.json's "
        "costs (docs/costs.md)."))
    calibrate: Annotated[bool, Flag(negatable=True)] = Field(True, description=(
        "Measure each judge on its evaluator's calibration set before scoring (default: on; cached). "
        "--no-calibrate skips it, and the report says the judges are uncalibrated."))
    calibration_items: Annotated[int | None, Flag(metavar="N")] = Field(None, ge=2, description=(
        "Calibrate on a balanced subset of at most N items per set (default: every item)."))
    score_untrusted: Annotated[bool, Flag()] = Field(False, description=(
        "Score the rows of an evaluator whose judge fails calibration anyway (verdicts marked untrusted, not "
        "counted); without it those rows are not scored and the judge is not asked."))
    confidence_level: Annotated[float, Flag(metavar="C")] = Field(0.95, gt=0, lt=1, description=(
        "Confidence of every interval, between 0 and 1 (default: 0.95); tests use 1 - C as significance level."))
    bootstrap_resamples: Annotated[int, Flag(metavar="N")] = Field(2000, ge=100, le=1_000_000, description=(
        "Bootstrap replicates per score interval and sign patterns per paired test (default: 2000)."))
    benchmark: Annotated[str | None, Flag(short="-b", metavar="UID")] = Field(
        None, description="Score and grade a benchmark (sonar benchmarks; docs/benchmarks.md).")
    standards: Annotated[str | None, Flag(metavar="FILE")] = Field(
        None, description="Standards file to grade against (default: the benchmark's own).")
    standards_output: str | None = Field(None, description=(
        "A calibration run (sonar calibrate): write the standards here instead of grading."))
    reference_hosts: list[str] = Field(default_factory=list, description=(
        "A calibration run over a ready dataset: the models that are the reference (default: every model)."))
    min_grade: Annotated[int | None, Flag(metavar="N", bounded=True)] = Field(None, ge=1, le=5, description=(
        "A grade below N (1 Poor .. 5 Excellent) is a HIGH problem: with --fail-on-problems, exit 5."))
    executor: Annotated[Literal["local", "ray"], Flag()] = Field("local", description=(
        "Where rows are scored: local (default) or ray (a Ray cluster; docs/scale-out.md)."))
    ray_address: Annotated[str | None, Flag(metavar="ADDRESS")] = Field(None, description=(
        "Ray cluster to join with --executor ray: 'auto' (the running one) or an address (default: start a local "
        "Ray instance)."))
    #: Rounded up to a multiple of batch_size, so every evaluator sees the batches it sees locally.
    ray_shard_rows: Annotated[int | None, Flag(metavar="N")] = Field(
        None, ge=1, description="Rows per Ray shard (default: batch size).")
    #: Each actor runs its model on one thread; the count cannot change a score (docs/scale-out.md).
    ray_model_actors: Annotated[Union[int, str], Flag(metavar="auto|N")] = Field("auto", description=(
        "Ray actors per pool of a model-backed evaluator, one thread each: auto (the cluster's CPUs, or GPUs; the "
        "default) or a number."))
    #: Each epoch is its own cache entry; a deterministic host is asked once.
    epochs: Annotated[int, Flag(metavar="N")] = Field(1, ge=1, le=1000, description=(
        "Ask every host every test case N times (docs/epochs.md; default 1)."))
    #: Inspect's estimators for K of the epochs (:mod:`.epoch_names`).
    epoch_reducer: Annotated[str, Flag(metavar="R")] = Field("mean", description=(
        "How a test case's epochs become one value: mean (default), majority, pass_at_k, pass_hat_k, or "
        "pass_at_K / pass_hat_K for K of the epochs, e.g. pass_at_2 (docs/epochs.md)."))
    #: An execution setting (EXECUTION_KEYS: not in run.json's parameters): a resume names its own.
    max_cost: Annotated[float | None, Flag(metavar="USD")] = Field(None, gt=0, allow_inf_nan=False, description=(
        "Budget: stop asking (exit 7) before a call would take the priced spending past USD; --resume with a "
        "higher budget finishes the run (docs/costs.md)."))
    generate: GenerateSpec | None = Field(None, description=(
        "Generate the test suite from documents first (docs/generate.md); its output is the run's test_suite."))
    redteam: RedteamSpec | None = Field(None, description=(
        "Attack sets x technique chains expanded into the test suite, scored by the red-team detectors "
        "(docs/redteam.md)."))

    @model_validator(mode="before")
    @classmethod
    def _generated_suite(cls, data: Any) -> Any:
        # generate: writes the suite the hosts are asked: its output is the run's test_suite.
        if isinstance(data, dict) and isinstance(data.get("generate"), dict):
            output = data["generate"].get("output") or GenerateSpec.model_fields["output"].default
            if data.get("test_suite") not in (None, output):
                raise ValueError("'generate.output' and 'test_suite' name different files (give one of them)")
            data = {**data, "test_suite": output, "generate": {**data["generate"], "output": output}}
        return data

    _names_are_safe = field_validator("name", "run_id")(lambda cls, value: safe_name(value))
    _paths_hold_no_nul = field_validator(*PATH_SETTINGS)(lambda cls, value: no_nul(value))

    @field_validator("epoch_reducer")
    @classmethod
    def _reducer_name(cls, value: str) -> str:
        try:
            parse_epoch_reducer(value)
        except ValueError as error:
            raise PydanticCustomError("epoch_reducer", str(error)) from None
        return value

    @field_validator("ray_model_actors", mode="before")
    @classmethod
    def _actors(cls, value: Any) -> Any:
        if value == "auto":
            return value
        if not isinstance(value, bool) and str(value).isdigit() and int(value) >= 1:
            return int(value)
        raise PydanticCustomError("actors", "'auto' or a number of actors (1 or more), not {value}",
                                  {"value": repr(value)})

    @field_validator("fail_on_problems", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_cache_mode(self) -> "RunConfig":
        if self.no_cache and self.refresh_cache:
            raise ValueError("no_cache and refresh_cache exclude each other")
        return self

    @model_serializer(mode="wrap")
    def _without_unset_sections(self, handler):
        # generate: and redteam: are written only when given: run.json of any other run is as before.
        data = handler(self)
        if isinstance(data, dict):
            for key in ("generate", "redteam"):
                if getattr(self, key) is None:
                    data.pop(key, None)
        return data

    @property
    def _suite(self) -> str | None:
        """What the hosts are asked: ``test_suite``, or ``redteam`` (whose expansion becomes the test suite)."""
        return "test_suite" if self.test_suite is not None else "redteam" if self.redteam is not None else None

    @model_validator(mode="after")
    def _one_source(self) -> "RunConfig":
        sources = [key for key in ("dataset", self._suite, "traces") if key is not None and getattr(self, key) is not None]
        if not sources:
            raise ValueError("give 'dataset' (answers to score), 'test_suite' with 'hosts' (models to ask) "
                             "or 'traces' (spans to score)")
        if len(sources) > 1:
            raise ValueError(f"'{sources[0]}' and '{sources[1]}' exclude each other")
        if self._suite is not None and not self.hosts:
            raise ValueError(f"'{self._suite}' needs 'hosts' (the models to ask)")
        if self.hosts and self._suite is None:
            raise ValueError("'hosts' needs 'test_suite' (the questions to ask them)")
        return self

    @model_validator(mode="after")
    def _perturb_needs_hosts(self) -> "RunConfig":
        if self.perturb and self._suite is None:
            raise ValueError("'perturb' needs 'test_suite' and 'hosts' (perturbed copies are asked of the models)")
        return self

    @model_validator(mode="after")
    def _epochs_need_hosts(self) -> "RunConfig":
        # A ready dataset's rows are not asked again: its epochs are its rows' ``epoch`` column.
        if self.epochs > 1 and self._suite is None:
            raise ValueError("'epochs' needs 'test_suite' and 'hosts' (each epoch asks the models again)")
        reducer = parse_epoch_reducer(self.epoch_reducer)  # a bad name never gets here (_reducer_name)
        if self._suite is not None:  # a ready dataset's epochs are checked once it is loaded
            reducer.check_epochs(self.epochs, f"the run ('epochs': {self.epochs})")
        return self

    @model_validator(mode="after")
    def _benchmark_keys(self) -> "RunConfig":
        if self.benchmark is None and (self.standards or self.standards_output or self.min_grade or self.reference_hosts):
            raise ValueError("'standards', 'standards_output', 'reference_hosts' and 'min_grade' need 'benchmark'")
        if self.standards and self.standards_output:
            raise ValueError("'standards' (grade against) and 'standards_output' (calibrate) exclude each other")
        return self

    @property
    def cache_mode(self) -> str:
        return "off" if self.no_cache else "refresh" if self.refresh_cache else "use"

    def specs(self) -> list[EvaluatorSpec]:
        return [EvaluatorSpec(id=e) if isinstance(e, str) else e for e in self.evaluators]

    def resolve_path(self, value: str) -> Path:
        path = Path(value).expanduser()
        if not path.is_absolute() and self.base_dir:
            path = Path(self.base_dir) / path
        return path


def _describe(error: ValidationError, source: str, model: type[BaseModel]) -> str:
    first = error.errors()[0]
    if not first["loc"] and first["type"] == "value_error":  # a check across keys says it all itself
        return f"{source}: {str(first['msg']).removeprefix('Value error, ')}"
    # An evaluator entry is a name or a mapping: a mapping's own error says more than "should be a string".
    spec = next((e for e in error.errors() if "EvaluatorSpec" in e["loc"]), None)
    if spec is not None and first["type"] == "string_type":
        location = ".".join(str(part) for part in spec["loc"] if part != "EvaluatorSpec")
        if spec["type"] == "extra_forbidden":
            return f"{source}: unknown configuration key '{location}'"
        if spec["type"] == "missing":
            return f"{source}: missing required configuration key '{location}'"
        return f"{source}: configuration key '{location}': {spec['msg']}"
    message = validation_message(error, 'configuration key')
    if first["type"] == "extra_forbidden" and len(first["loc"]) == 1:
        message += nearest_setting(str(first["loc"][0]), model)
    return f"{source}: {message}"


def nearest_setting(key: str, model: type[BaseModel]) -> str:
    """`` (did you mean 'x'?)`` for an unknown top-level key close to a setting of ``model``, else ''."""
    close = difflib.get_close_matches(key, list(model.model_fields), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


#: What a configuration holds once read: keys to YAML values (mappings, lists, text, numbers).
ConfigData = dict[str, object]


def build_config(data: Mapping[str, object], source: str = "<config>",
                 model: type[RunConfig] = RunConfig) -> RunConfig:
    """``data`` validated as ``model`` (RunConfig, or a subclass that adds settings); a ConfigError names the key."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source, model)) from None


def load_config(path: str | Path | None, overrides: Mapping[str, object] | None = None,
                model: type[RunConfig] = RunConfig) -> RunConfig:
    """Read a YAML config (optional), apply overrides (CLI flags, API keywords), validate.

    An override that is None or empty keeps the file's value; ``traces`` and ``thresholds`` refine the file's."""
    data: ConfigData = {}
    source = "<command line>"
    if path is not None:
        path = Path(path)
        source = str(path)
        try:
            found = path.is_file()
        except OSError as exc:  # a name too long for the file system (found by the fuzz suite)
            raise ConfigError(f"{path}: cannot read the configuration file ({exc.strerror})") from None
        except ValueError:  # a NUL character
            raise ConfigError(f"{str(path)!r}: a path cannot hold a NUL character") from None
        if not found:
            raise ConfigError(f"{path}: configuration file not found")
        loaded = read_yaml(path, "configuration file")
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the configuration must be a mapping of keys to values")
        data = loaded
        data.setdefault("base_dir", str(path.parent.resolve()))
    for key, value in (overrides or {}).items():
        if value is None or value == () or value == []:
            continue
        file_value = data.get(key)
        if key == "traces" and isinstance(value, dict) and isinstance(file_value, dict):
            data["traces"] = {**file_value, **value}  # flags refine the file's traces (docs/traces.md)
        elif key == "thresholds":
            if not value:
                continue
            # A file's thresholds that are not a mapping are left for validation to name.
            data["thresholds"] = {**file_value, **value} if isinstance(file_value, dict) and isinstance(value, Mapping) \
                else data.get("thresholds", value)
        else:
            data[key] = list(value) if isinstance(value, tuple) else value
    return build_config(data, source, model)
