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

from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer, model_validator

from pydantic_core import PydanticCustomError

from . import names
from .epoch_names import parse_epoch_reducer
from .errors import ConfigError, validation_message
from .traces.spec import TraceInput
from .generate_config import GenerateSpec
from .yaml_files import read_yaml

__all__ = ["EvaluatorSpec", "PerturbSpec", "RedteamSpec", "RedteamSuiteSpec", "RunConfig", "load_config", "DEMO_DATASET", "ALL_OFFLINE", "EXECUTION_KEYS"]

#: ``dataset: demo`` means the dataset bundled with Sonar.
DEMO_DATASET = "demo"
#: In ``evaluators``, every installed evaluator that can run offline.
ALL_OFFLINE = "offline"
#: Settings that say where a run executes, not what it computes: run.json leaves them out (a run
#: on Ray records the same run.json as a local one), and a resumed run takes them afresh.
EXECUTION_KEYS = ("executor", "ray_address", "ray_shard_rows", "max_cost")


def _safe_name(value: Any) -> Any:
    """A name that becomes (part of) a path must be safe (docs/reliability.md)."""
    if isinstance(value, str) and not names.is_safe_name(value):
        raise PydanticCustomError("unsafe_name", names.SAFE_NAME_RULE)
    return value


#: Settings that name a file or folder: a NUL character in one is refused (no path can hold it; the
#: operating system's calls would fail with "embedded null byte"), and so is a lone surrogate (bytes that
#: are not UTF-8, which run.json could not record).
PATH_SETTINGS = ("dataset", "output_dir", "llm_configs", "llm_cache", "base_dir", "test_suite", "benchmark",
                 "standards", "standards_output")


def _no_nul(value: Any) -> Any:
    if isinstance(value, str) and "\x00" in value:
        raise PydanticCustomError("nul_in_path", "a path cannot hold a NUL character")
    if isinstance(value, str) and any("\ud800" <= char <= "\udfff" for char in value):
        # A name of bytes that are not UTF-8: run.json and the report (UTF-8) could not record it.
        raise PydanticCustomError("surrogate_in_path", "a path must be UTF-8 text (it holds a lone surrogate)")
    return value


class EvaluatorSpec(BaseModel):
    """One evaluator of a run, with its parameters and threshold overrides."""

    # NaN and infinities are refused in every number (docs/reliability.md).
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str
    #: Label of this job when the same evaluator runs twice with different parameters.
    name: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    #: metric key -> threshold, overriding the metric's default.
    thresholds: dict[str, float] = Field(default_factory=dict)
    #: Only rows with at least one of these categories are scored (empty: all rows).
    categories: list[str] = Field(default_factory=list)
    #: Score at most this many rows: whole test cases (every model's row of a case) in dataset
    #: order, so models are compared on the same cases. The report says a subset was scored.
    max_rows: int | None = Field(default=None, ge=1)
    #: Score each assistant turn of a conversation with the user turn before it as its question; the
    #: row's value is the mean over its turns (docs/conversations.md).
    per_turn: bool = False
    #: A judge evaluator only: score its rows even when its judge fails calibration (verdicts written,
    #: marked untrusted, not counted); None takes the run's ``score_untrusted`` (docs/judges.md).
    score_untrusted: bool | None = None

    @property
    def label(self) -> str:
        return self.name or self.id

    _name_is_safe = field_validator("name")(lambda cls, value: _safe_name(value))

    @model_serializer(mode="wrap")
    def _without_default_per_turn(self, handler):
        # per_turn and score_untrusted are written only when set, so run.json of a run without them is as before.
        data = handler(self)
        if isinstance(data, dict) and not self.per_turn:
            data.pop("per_turn", None)
        if isinstance(data, dict) and self.score_untrusted is None:
            data.pop("score_untrusted", None)
        return data


class PerturbSpec(BaseModel):
    """One ``perturb:`` entry: a perturbed copy of each (matching) test case of the test suite."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: A registered perturbator (``sonar perturbators`` lists them).
    perturbator: str
    #: With the test case key and the label, seeds the copy's random choices.
    seed: int = 0
    params: dict[str, Any] = Field(default_factory=dict)
    #: Only test cases with at least one of these categories are copied (empty: all).
    categories: list[str] = Field(default_factory=list)
    #: Label of the copies (their key is ``<test case key>~<label>``); default the perturbator's name.
    name: str | None = None


class RedteamSuiteSpec(BaseModel):
    """An attack file whose columns are not Sonar's: ``columns`` maps each attack field to a column, and
    ``defaults`` gives a field's value for every row (docs/redteam.md)."""

    model_config = ConfigDict(extra="forbid")

    path: str
    columns: dict[str, str] = Field(default_factory=dict)
    defaults: dict[str, Any] = Field(default_factory=dict)


class RedteamSpec(BaseModel):
    """``redteam:``: attack sets x technique chains, expanded into the run's test suite (docs/redteam.md)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    #: Registered attack sets by name, or attack files (.jsonl/.csv) relative to the configuration.
    suites: list[Union[str, RedteamSuiteSpec]] = Field(default_factory=lambda: ["sonar-core"])
    #: Technique chains (``direct``, ``roleplay+base64``, ``crescendo``); each attack is sent once per chain.
    techniques: list[str] = Field(default_factory=lambda: ["direct"])
    seed: int = 0
    #: LLM configuration key of the attacker that plays the user in multi-turn techniques.
    attacker: str | None = None
    #: LLM configuration key of a judge: harmful requests are then decided by harmful_compliance, not refusal.
    judge: str | None = None
    max_turns: int = Field(default=6, ge=1, le=50)
    categories: list[str] = Field(default_factory=list)
    hazards: list[str] = Field(default_factory=list)
    #: A planted system prompt as the conversation's system turn (chat hosts) or written before the prompt.
    system_delivery: Literal["system_turn", "prompt"] = "system_turn"
    #: A problem when a success rate's interval lies above this (and over-refusal's above the second).
    threshold: float = Field(default=0.1, gt=0, lt=1)
    over_refusal_threshold: float = Field(default=0.2, gt=0, lt=1)


class RunConfig(BaseModel):
    """Everything a run needs; every field has a CLI flag too (``sonar run --help``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = "run"
    #: The LLM dataset to score; or give ``test_suite`` and ``hosts`` to produce it.
    dataset: str | None = None
    output_dir: str = "reports"
    run_id: str | None = None
    evaluators: list[Union[str, EvaluatorSpec]] = Field(default_factory=lambda: [ALL_OFFLINE])
    #: Threshold overrides for every evaluator: metric key -> threshold.
    thresholds: dict[str, float] = Field(default_factory=dict)
    strict: bool = False
    fail_on_problems: Literal["HIGH", "MEDIUM", "LOW"] | None = None
    #: Extra plugin modules to load, as with ``sonar run -p module``.
    plugins: list[str] = Field(default_factory=list)
    batch_size: int = Field(default=512, ge=1)
    #: Where models run: ``auto`` (CUDA when visible, else CPU), ``cpu``, ``cuda``, ``cuda:1``...
    device: str = "auto"
    #: YAML file of LLM (judge) configurations; default $SONAR_LLM_CONFIGS or
    #: ~/.config/sonar/llm-configs.yaml (docs/judges.md).
    llm_configs: str | None = None
    #: The judge of every judge evaluator that names none (default: the file's, else local-smollm2).
    default_judge: str | None = None
    #: The LLM response cache file; default $SONAR_HOME/llm-cache.sqlite (~/.cache/sonar/...).
    llm_cache: str | None = None
    #: Neither read nor write the LLM response cache.
    no_cache: bool = False
    #: Ask the LLMs again instead of using answers cached before this run (new answers are cached).
    refresh_cache: bool = False
    #: Prefix CSV text cells that start with = + - @ tab or CR with ' so spreadsheets show them as text.
    csv_formula_escape: bool = True
    #: Above this many scored rows an evaluator's row results are Parquet only: no JSON, CSV or .jay (docs/result-directory.md).
    columnar_only_above: int = Field(default=50_000, ge=0)
    #: Perturbed copies of the test suite's test cases (sonar_core.perturbations.expand_perturbations).
    perturb: list[PerturbSpec] = Field(default_factory=list)
    #: Base directory for relative paths (the config file's folder).
    base_dir: str | None = None
    #: Test cases without answers (.json, .jsonl, .csv): every host is asked every case, and the
    #: answers become the LLM dataset the evaluators score (docs/hosts.md).
    test_suite: str | None = None
    #: Production traces to score instead of a dataset: OTLP span files and how spans become rows (docs/traces.md).
    traces: TraceInput | None = None
    #: The models under test: ``{key, kind, ...settings}`` per host (docs/hosts.md).
    hosts: list[dict[str, Any]] = Field(default_factory=list)
    #: Host or judge configuration key -> ``{input_per_1k, output_per_1k}`` USD per 1,000 tokens: each row's
    #: ``cost``, and run.json's ``costs`` (docs/costs.md).
    prices: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: Measure every judge a run uses on its evaluator's calibration set before scoring (cached), and
    #: count an untrusted judge's verdicts as one problem about the judge (docs/judges.md).
    calibrate: bool = True
    #: Calibrate on a balanced subset of at most this many items per set (None: every item).
    calibration_items: int | None = Field(default=None, ge=2)
    #: Score the rows of an evaluator whose judge fails calibration anyway (its verdicts written, marked
    #: untrusted, still not counted); off: those rows are not scored and nothing is asked (docs/judges.md).
    score_untrusted: bool = False
    #: The confidence of every interval (and 1 - it the significance level of the paired tests).
    confidence_level: float = Field(default=0.95, gt=0, lt=1)
    #: Bootstrap replicates per score interval, and random sign patterns per paired permutation test.
    bootstrap_resamples: int = Field(default=2000, ge=100, le=1_000_000)
    #: A benchmark to score and grade (a registered uid, or a YAML definition file; docs/benchmarks.md):
    #: its tests run as evaluators, and hazard and benchmark grades follow.
    benchmark: str | None = None
    #: The standards file graded against (default: the benchmark's own, if its definition names one).
    standards: str | None = None
    #: A calibration run (``sonar calibrate``): write the standards here instead of grading.
    standards_output: str | None = None
    #: A calibration run over a ready dataset: the models that are the reference (default: every model).
    reference_hosts: list[str] = Field(default_factory=list)
    #: Each grade below this (1 Poor to 5 Excellent) is a HIGH problem, which ``fail_on_problems`` gates on.
    min_grade: int | None = Field(default=None, ge=1, le=5)
    #: Where rows are scored: ``local`` (this process) or ``ray`` (a Ray cluster; docs/scale-out.md).
    executor: Literal["local", "ray"] = "local"
    #: The Ray cluster to join: None starts a local Ray instance, ``auto`` joins the running cluster,
    #: else an address (``ray://host:10001`` or ``host:6379``). Only with ``executor: ray``.
    ray_address: str | None = None
    #: Rows per Ray shard (one task or actor call each); rounded up to a multiple of ``batch_size`` so
    #: every evaluator sees the batches it sees locally. None: ``batch_size``.
    ray_shard_rows: int | None = Field(default=None, ge=1)
    #: Ask every host every test case this many times (each epoch its own cache entry; a
    #: deterministic host is asked once); findings reduce a test case's epochs (docs/epochs.md).
    epochs: int = Field(default=1, ge=1, le=1000)
    #: How a test case's epochs become one value: ``mean``, or for pass/fail verdicts ``majority``,
    #: ``pass_at_k`` (at least one passes), ``pass_hat_k`` (all pass), or ``pass_at_K`` / ``pass_hat_K``
    #: (Inspect's estimators for K of the epochs; :mod:`.epoch_names`).
    epoch_reducer: str = "mean"
    #: The run's budget in USD (``--max-cost``; docs/costs.md): no call is asked that would take the priced
    #: spending past it. An execution setting (not in run.json's parameters): a resume names its own.
    max_cost: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    #: Generate the test suite from documents first (docs/generate.md); its ``output`` is ``test_suite``.
    generate: GenerateSpec | None = None

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
    #: Attack sets x techniques expanded into the test suite, scored by the red-team detectors (docs/redteam.md).
    redteam: RedteamSpec | None = None

    _names_are_safe = field_validator("name", "run_id")(lambda cls, value: _safe_name(value))
    _paths_hold_no_nul = field_validator(*PATH_SETTINGS)(lambda cls, value: _no_nul(value))

    @field_validator("epoch_reducer")
    @classmethod
    def _reducer_name(cls, value: str) -> str:
        try:
            parse_epoch_reducer(value)
        except ValueError as error:
            raise PydanticCustomError("epoch_reducer", str(error)) from None
        return value

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


def _describe(error: ValidationError, source: str) -> str:
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
    return f"{source}: {validation_message(error, 'configuration key')}"


def build_config(data: dict[str, Any], source: str = "<config>") -> RunConfig:
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source)) from None


def load_config(path: str | Path | None, overrides: dict[str, Any] | None = None) -> RunConfig:
    """Read a YAML config (optional), apply overrides (CLI flags), validate."""
    data: dict[str, Any] = {}
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
        if key == "traces" and isinstance(value, dict) and isinstance(data.get("traces"), dict):
            data["traces"] = {**data["traces"], **value}  # flags refine the file's traces (docs/traces.md)
        elif key == "thresholds":
            if not value:
                continue
            # A file's thresholds that are not a mapping are left for validation to name.
            data["thresholds"] = {**data["thresholds"], **value} if isinstance(data.get("thresholds"), dict) \
                else data.get("thresholds", value)
        else:
            data[key] = list(value) if isinstance(value, tuple) else value
    return build_config(data, source)
