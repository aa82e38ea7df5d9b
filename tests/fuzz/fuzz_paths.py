"""Two more fuzz surfaces (issue 35): the configuration's path settings, and evaluator parameter values as
YAML can write them (aliases, tags, merge keys, nesting), held to the same promise (fuzz_properties.check).

``paths``: each chosen setting gets a *shape* of path that a case builds in its sandbox: a NUL, a lone
surrogate (no file system name can hold it), names and paths past the system's limits, a file where a
folder is wanted and the reverse, a FIFO, a link loop, a dangling link, ``/dev/null``, ``/dev/full``,
``/proc`` (no one can create files there), an empty or blank value. Only shapes that cannot lead a write
outside the sandbox are given to settings the run writes to (``output_dir``, ``llm_cache``).

``values``: a YAML configuration written as text, so that it can hold what ``yaml.safe_dump`` never writes:
alias bombs of any width and depth (the expanded value is what evaluators see), merge keys, tags
(``!!binary``, ``!!set``, ``!!timestamp``), deep nesting and long text, as the value of a declared parameter
of an evaluator, judges' prompt templates included (their judge is a configuration whose key variable is
unset: the evaluator is skipped after its parameters are checked, and nothing is asked).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from fuzz_properties import Outcome, sonar

FAST = ["factual_knowledge", "looping_detection"]
SMALL = [{"test_case_key": f"t{i}", "model_key": m, "input": f"Capital {i}?", "expected_output": "Paris",
          "actual_output": "Paris" if i % 2 else "Rome"} for i in range(3) for m in ("m1", "m2")]

#: Shapes safe for any setting (nothing can be written through them outside the sandbox).
CLOSED = ["nul", "surrogate", "long-name", "long-path", "file", "fifo", "loop", "under-file", "dev-null", "proc",
          "empty", "blank", "newline", "folder", "tilde-nul"]
#: Shapes only for settings the run reads (a read through a link or device writes nothing).
READ_ONLY = ["dangling", "dev-full", "missing", "link-to-folder"]
READ_SETTINGS = ["dataset", "llm_configs", "base_dir", "benchmark", "standards", "calibration_set", "config"]
WRITE_SETTINGS = ["output_dir", "llm_cache"]


def build_path(shape: str, sandbox: Path) -> str:
    """The path of ``shape``, made in ``sandbox`` where it needs a file."""
    if shape == "nul":
        return str(sandbox / "a\x00b")
    if shape == "tilde-nul":
        return "~/\x00"
    if shape == "surrogate":
        return str(sandbox / "caf\udce9")
    if shape == "long-name":
        return str(sandbox / ("n" * 300))
    if shape == "long-path":
        return str(sandbox / "/".join(["p" * 200] * 30))
    if shape == "file":
        (sandbox / "plain.txt").write_text("not what was asked for", encoding="utf-8")
        return str(sandbox / "plain.txt")
    if shape == "folder":
        (sandbox / "a-folder").mkdir(exist_ok=True)
        return str(sandbox / "a-folder")
    if shape == "link-to-folder":
        (sandbox / "a-folder").mkdir(exist_ok=True)
        if not (sandbox / "folder-link").is_symlink():
            (sandbox / "folder-link").symlink_to(sandbox / "a-folder")
        return str(sandbox / "folder-link")
    if shape == "fifo":
        if not (sandbox / "fifo").exists():
            os.mkfifo(sandbox / "fifo")
        return str(sandbox / "fifo")
    if shape == "loop":
        if not (sandbox / "loop-a").is_symlink():
            (sandbox / "loop-a").symlink_to(sandbox / "loop-b")
            (sandbox / "loop-b").symlink_to(sandbox / "loop-a")
        return str(sandbox / "loop-a" / "x")
    if shape == "dangling":
        if not (sandbox / "dangling").is_symlink():
            (sandbox / "dangling").symlink_to(sandbox / "nowhere")
        return str(sandbox / "dangling")
    if shape == "under-file":
        (sandbox / "plain.txt").write_text("a file", encoding="utf-8")
        return str(sandbox / "plain.txt" / "child")
    if shape == "dev-null":
        return "/dev/null/x"
    if shape == "dev-full":
        return "/dev/full"
    if shape == "proc":
        return f"/proc/sonar-fuzz-{os.getpid()}"
    if shape == "missing":
        return str(sandbox / "missing" / "x.json")
    if shape == "empty":
        return ""
    if shape == "blank":
        return "   "
    if shape == "newline":
        return str(sandbox / "a\nb")
    raise ValueError(shape)


@st.composite
def path_cases(draw) -> dict[str, Any]:
    settings = draw(st.lists(st.sampled_from(READ_SETTINGS + WRITE_SETTINGS), min_size=1, max_size=3, unique=True))
    return {"paths": {key: draw(st.sampled_from(CLOSED + (READ_ONLY if key in READ_SETTINGS else [])))
                      for key in settings}}


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar of ``text`` (any code point, NUL and lone surrogates as escapes)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif not char.isprintable() or 0xD800 <= ord(char) <= 0xDFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def run_paths(case: dict[str, Any], sandbox: Path) -> tuple[Outcome, Path]:
    (sandbox / "d.json").write_text(json.dumps(SMALL), encoding="utf-8")
    paths = {key: build_path(shape, sandbox) for key, shape in case["paths"].items()}
    config: dict[str, str] = {"dataset": "d.json", "output_dir": "out", "run_id": "r"}
    evaluators = [f"  - {e}" for e in FAST]
    for key, value in paths.items():
        if key == "calibration_set":
            evaluators.append(f"  - id: byop\n    max_rows: 2\n    params:\n      calibration_set: {_quoted(value)}")
        elif key == "standards":
            config.update(benchmark="assistant_safety", standards=value)
        elif key != "config":
            config[key] = value
    text = "".join(f"{key}: {_quoted(value)}\n" for key, value in config.items())
    text += "no_cache: false\nevaluators:\n" + "\n".join(evaluators) + "\n"
    (sandbox / "c.yaml").write_text(text, encoding="utf-8")
    target = paths.get("config", str(sandbox / "c.yaml"))
    output = config["output_dir"] if config["output_dir"] and "\x00" not in config["output_dir"] else "out"
    return sonar(["run", "--no-progress", target.replace("\x00", "")], sandbox), sandbox / output


# -- parameter values as YAML text -----------------------------------------------------------------

#: Evaluators and their parameters (a judge's prompt template and judge key included), each with a value of
#: the declared type that a hand may write, so that some cases run.
VALUE_PARAMS = {"factual_knowledge": {"target_output_delimiter": '"<AND>"', "logical_operator": "AND",
                                      "metric_threshold": "0.5"},
                "text_matching": {"evaluate_retrieved_context": "yes", "metric_threshold": "1"},
                "bleu": {"lowercase": "true", "metric_threshold": "0.25", "save_llm_result": "false"},
                "byop": {"prompt_template": '"Is {{ACTUAL_ANSWER}} polite? Answer true or false."',
                         "custom_eval_judge_config_key": "keyless", "judge_repeats": "3", "min_judge_kappa": "0.2",
                         "calibration_set": '"set.jsonl"'},
                "contact_information": {"custom_eval_judge_config_key": "keyless", "judge_repeats": "1",
                                        "min_judge_kappa": "-1"}}


@st.composite
def yaml_value(draw, typed: str, anchor: str) -> str:
    """One YAML value (flow style) that a hand may write: ``typed`` (a value of the declared type), aliases
    (anchors named ``anchor`` + level: unique in the file), tags, merges, nesting, long text."""
    kind = draw(st.sampled_from(["typed", "typed", "bomb", "bomb-map", "merge", "tag", "nested", "long", "scalar",
                                 "text", "empty"]))
    a = anchor
    if kind == "typed":
        return typed
    if kind in ("bomb", "bomb-map"):
        width, depth = draw(st.integers(2, 12)), draw(st.integers(1, 12))
        leaf = draw(st.sampled_from(['"lol"', "1", "true", "null", '"' + "x" * 1000 + '"', "{a: 1}", typed]))
        if kind == "bomb":
            levels = [f"&{a}0 [{', '.join([leaf] * width)}]"]
            levels += [f"&{a}{i} [{', '.join([f'*{a}{i - 1}'] * width)}]" for i in range(1, depth)]
        else:
            levels = [f"&{a}0 {{{', '.join(f'k{j}: {leaf}' for j in range(width))}}}"]
            levels += [f"&{a}{i} {{{', '.join(f'k{j}: *{a}{i - 1}' for j in range(width))}}}" for i in range(1, depth)]
        return levels[0] if depth == 1 else "[" + ", ".join(levels) + "]"  # the anchors travel with the value
    if kind == "merge":
        return f"[&{a} {{a: 1, b: [2]}}, {{<<: *{a}, c: 3}}, {{<<: [*{a}, *{a}]}}]"
    if kind == "tag":
        return draw(st.sampled_from(["!!binary aGVsbG8=", "!!set {a, b}", "!!timestamp 2001-12-14", "!!float .nan",
                                     "!!float -.inf", "!!int 0x1F", "!!str 12", "!!null ''", "!!omap [a: 1, b: 2]",
                                     "!!python/name:os.system", "!!python/object/apply:os.system [true]"]))
    if kind == "nested":
        depth = draw(st.integers(1, 2000))
        return "[" * depth + "]" * depth
    if kind == "long":
        return _quoted(draw(st.text(max_size=3)) * draw(st.integers(1, 200_000)))
    if kind == "scalar":
        return draw(st.sampled_from(["1e999", "-0", ".inf", "0b101", "0o17", "1_000", "~", "yes", "NO", "1" * 400,
                                     "2001-12-14t21:59:43.10-05:00", "'{{ACTUAL_ANSWER}}'", '"{{EXPECTED_ANSWER}}"']))
    if kind == "text":
        return _quoted(draw(st.text(st.characters(blacklist_categories=()), max_size=40)))
    return "''"


@st.composite
def value_cases(draw) -> dict[str, Any]:
    entries = []
    for evaluator in draw(st.lists(st.sampled_from(sorted(VALUE_PARAMS)), min_size=1, max_size=2, unique=True)):
        names = draw(st.lists(st.sampled_from(sorted(VALUE_PARAMS[evaluator])), min_size=1, max_size=3, unique=True))
        entries.append((evaluator, {name: draw(yaml_value(VALUE_PARAMS[evaluator][name], f"{evaluator[:2]}{i}x"))
                                    for i, name in enumerate(names)}))
    return {"evaluators": entries}


def run_values(case: dict[str, Any], sandbox: Path) -> tuple[Outcome, Path]:
    (sandbox / "d.json").write_text(json.dumps(SMALL), encoding="utf-8")
    (sandbox / "set.jsonl").write_text('{"calibration_set": "s", "labels": ["true", "false"]}\n', encoding="utf-8")
    (sandbox / "llm.yaml").write_text("default_judge: keyless\nllms:\n  keyless:\n    base_url: http://127.0.0.1:9/v1\n"
                                      "    model: m\n    api_key_env: SONAR_FUZZ_KEY_NEVER_SET\n", encoding="utf-8")
    lines = ["dataset: d.json", "output_dir: out", "run_id: r", "no_cache: true", "llm_configs: llm.yaml",
             "calibrate: false", "evaluators:"]
    for evaluator, params in case["evaluators"]:
        lines += [f"  - id: {evaluator}", "    max_rows: 2", "    params:"]
        lines += [f"      {name}: {value}" for name, value in params.items()]
    (sandbox / "c.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return sonar(["run", "--no-progress", "c.yaml"], sandbox), sandbox / "out"


FUZZ_SURFACES = {"paths": (path_cases(), run_paths), "values": (value_cases(), run_values)}
