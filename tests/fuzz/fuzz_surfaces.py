"""Every input surface a user or a remote system controls, as Hypothesis strategies, and how one case runs.

A surface is a strategy of cases and a ``run(case, sandbox)`` that writes the case's inputs into
``sandbox`` (a fresh folder), runs ``sonar`` in this process, and returns the outcome and the output
folder; :func:`fuzz_properties.check` then holds it to the promise. The CI suite (test_fuzz.py) and
bench/fuzz.py run the same surfaces.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any, Callable

import yaml
from hypothesis import strategies as st

from fuzz_properties import Outcome, sonar

FAST = ["factual_knowledge", "looping_detection"]
FIELDS = ["key", "input", "expected_output", "context", "categories", "output_condition", "output_constraints",
          "actual_output", "actual_duration", "cost", "model_key", "test_case_key", "test_key", "corpus",
          "relationships", "original_test_case_key", "perturbation"]
SPECIAL_TEXT = ["", " ", "\x00", "\ud800", "Par\udfffis", "\ufeff", "=1+1", "../escape", "/abs", ".hidden", "-x",
                "nan", "NaN", "inf", "-Infinity", "1e309", "<script>alert(1)</script>", "{{ACTUAL_ANSWER}}",
                "\u202e", "a\r\nb", "\t", "😀", "true", "null", "0", "-1", "~", "*", "&a", "!!python/object:os.system"]

#: Text as real inputs hold it: any code point, lone surrogates and control characters included.
text = st.one_of(st.sampled_from(SPECIAL_TEXT),
                 st.text(st.characters(blacklist_categories=()), max_size=30),
                 st.text(max_size=8).map(lambda s: s * 2000))  # long values
numbers = st.one_of(st.integers(-10**30, 10**30), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([10**400, -10**400, 2**1024]))
scalars = st.one_of(st.none(), st.booleans(), numbers, text)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(text, inner, max_size=4)), max_leaves=12)


def _typed(field: str) -> st.SearchStrategy:
    if field in ("context", "categories", "output_constraints", "corpus"):
        return st.lists(text, max_size=3)
    if field in ("actual_duration", "cost"):
        return numbers
    if field == "relationships":
        return st.lists(st.fixed_dictionaries({"type": st.sampled_from(["perturbation_of", "x"]), "target": text}),
                        max_size=2)
    return text


def _valid(field: str) -> st.SearchStrategy:
    if field in ("actual_duration", "cost"):
        return st.one_of(st.none(), st.floats(0, 1e9), st.integers(0, 10**6))
    if field in ("key", "test_case_key", "relationships", "original_test_case_key"):
        return st.nothing()
    return _typed(field)


@st.composite
def rows(draw) -> dict[str, Any]:
    """A dataset row: usually valid (any text in any text field), sometimes of any type."""
    if draw(st.integers(0, 9)) < 7:
        chosen = draw(st.lists(st.sampled_from([f for f in FIELDS if not _valid(f).is_empty]), max_size=8,
                               unique=True))
        row = {"input": draw(text), "actual_output": draw(text), "expected_output": draw(text)}
        row.update({field: draw(_valid(field)) for field in chosen})
        row.pop("model_key", None)  # keys stay unique: the loader's duplicate check is not the subject here
        return row
    chosen = draw(st.lists(st.sampled_from(FIELDS), max_size=8, unique=True))
    row = {"input": draw(text), "actual_output": draw(text)} if draw(st.booleans()) else {}
    for field in chosen:
        row[field] = draw(st.one_of(_typed(field), _typed(field), json_values))
    if draw(st.integers(0, 9)) == 0:
        row[draw(text)] = draw(json_values)
    return row


# -- dataset files ---------------------------------------------------------------------------------

@st.composite
def dataset_cases(draw) -> dict[str, Any]:
    kind = draw(st.sampled_from(["json", "jsonl", "csv", "special"]))
    data = draw(st.lists(rows(), min_size=0, max_size=5))
    if kind == "special":
        return {"kind": kind, "special": draw(st.sampled_from(["folder", "fifo", "empty", "link", "deep", "bom"]))}
    if kind == "json":
        body = draw(st.one_of(st.just(data), st.just({"inputs": data}), json_values))
        raw = json.dumps(body, allow_nan=True, ensure_ascii=draw(st.booleans()))
        if data and draw(st.booleans()):
            raw = raw.replace("{", '{"key": "dup", "key": "dup2", ', 1)  # duplicate keys
    elif kind == "jsonl":
        lines = [json.dumps(r, allow_nan=True, ensure_ascii=draw(st.booleans())) for r in data]
        if draw(st.integers(0, 3)) == 0:
            lines.insert(draw(st.integers(0, len(lines))), draw(text))
        raw = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))
    else:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        header = list(dict.fromkeys(k for r in data for k in r)) or ["input"]
        writer.writerow(header)
        for r in data:
            writer.writerow([json.dumps(r.get(k), allow_nan=True) if isinstance(r.get(k), (list, dict))
                             else "" if r.get(k) is None else str(r.get(k)) for k in header])
        raw = buffer.getvalue()
        if draw(st.integers(0, 4)) == 0:
            raw = raw[: draw(st.integers(0, len(raw)))] + draw(text) + raw[len(raw) // 2:]
    prefix = draw(st.sampled_from(["", "", "\ufeff"]))
    cut = draw(st.one_of(st.none(), st.integers(0, max(0, len(raw)))))
    return {"kind": kind, "raw": prefix + (raw if cut is None else raw[:cut])}


def run_dataset(case: dict[str, Any], sandbox: Path) -> tuple[Outcome, Path]:
    if case["kind"] == "special":
        path = sandbox / "d.json"
        special = case["special"]
        if special == "folder":
            path.mkdir()
        elif special == "fifo":
            os.mkfifo(path)
        elif special == "empty":
            path.write_bytes(b"")
        elif special == "link":
            (sandbox / "target.json").write_text('[{"input": "q", "actual_output": "a"}]', encoding="utf-8")
            path.symlink_to(sandbox / "target.json")
        elif special == "deep":
            path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
        else:
            path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf[]")
    else:
        path = sandbox / f"d.{case['kind']}"
        path.write_bytes(case["raw"].encode("utf-8", "surrogatepass"))
    args = ["run", "--no-progress", "--no-cache", "-d", str(path), *sum((["-e", e] for e in FAST), []),
            "-o", "out", "--run-id", "r"]
    return sonar(args, sandbox), sandbox / "out"


# -- run configurations (YAML) ---------------------------------------------------------------------

CONFIG_KEYS = ["name", "run_id", "thresholds", "strict", "fail_on_problems", "batch_size", "device", "calibrate",
               "calibration_items", "csv_formula_escape", "perturb", "prices", "refresh_cache", "base_dir",
               "evaluators", "dataset", "output_dir", "default_judge"]
yaml_values = st.recursive(st.one_of(scalars, st.sampled_from(FAST)),
                           lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.one_of(text, st.sampled_from(FIELDS)), inner,
                                                                   max_size=3)), max_leaves=10)
evaluator_entries = st.one_of(st.sampled_from(FAST), st.fixed_dictionaries(
    {"id": st.sampled_from(FAST)},
    optional={"name": text, "params": st.dictionaries(st.sampled_from(["metric_threshold", "save_llm_result", "x"]),
                                                      yaml_values, max_size=2),
              "thresholds": st.dictionaries(st.sampled_from(FAST + ["x"]), yaml_values, max_size=2),
              "categories": yaml_values, "max_rows": yaml_values}))


@st.composite
def config_cases(draw) -> dict[str, Any]:
    if draw(st.integers(0, 9)) == 0:  # not a mapping, or not YAML at all
        return {"text": draw(st.one_of(text, st.sampled_from(
            ["a: &x [1, 2]\nb: *x\n", "- 1\n- 2\n", "a: [\n", "dataset: d.json\ndataset: other.json\n",
             "x: &a [1]\n" + "".join(f"x{i}: &a{i} [*a{i - 1 if i > 1 else ''}, *a{i - 1 if i > 1 else ''}]\n"
                                     .replace("*a0", "*a").replace("*a,", "*a,") for i in range(1, 6)),
             "!!python/object/apply:os.system ['true']\n"])))}
    config: dict[str, Any] = {"dataset": "d.json", "output_dir": "out", "no_cache": True,
                              "evaluators": draw(st.lists(evaluator_entries, min_size=1, max_size=3))}
    valid = {"name": text, "run_id": text, "thresholds": st.dictionaries(st.sampled_from(FAST), numbers, max_size=2),
             "strict": st.booleans(), "fail_on_problems": st.sampled_from(["HIGH", "medium", "low", None]),
             "batch_size": st.integers(1, 5), "csv_formula_escape": st.booleans(), "calibrate": st.booleans()}
    for key in draw(st.lists(st.sampled_from(sorted(valid)), max_size=4, unique=True)):
        config[key] = draw(valid[key])
    for key in draw(st.lists(st.sampled_from(CONFIG_KEYS), max_size=2, unique=True)):
        if key in ("dataset", "output_dir", "base_dir") and draw(st.booleans()):
            config[key] = draw(st.one_of(st.integers(), st.lists(st.integers(), max_size=1), st.none()))
            continue
        if key in ("dataset", "output_dir", "base_dir"):
            continue  # a path anywhere is the user's to choose, not a fuzz case
        config[key] = draw(evaluator_entries if key == "evaluators" else yaml_values)
    if draw(st.integers(0, 9)) == 0:
        config[draw(text)] = draw(yaml_values)
    shared = draw(st.lists(st.sampled_from(FAST), min_size=1, max_size=2))
    if draw(st.booleans()):  # the same object twice: PyYAML writes an anchor and an alias
        config["evaluators"] = shared
        config.setdefault("thresholds", {})
    try:
        rendered = yaml.safe_dump(config, allow_unicode=draw(st.booleans()))
    except yaml.YAMLError:
        rendered = json.dumps(config, allow_nan=True)
    return {"text": rendered}


SMALL_DATASET = [{"test_case_key": f"t{i}", "model_key": m, "input": f"Capital {i}?", "expected_output": "Paris",
                  "actual_output": "Paris" if i % 2 else "Rome"} for i in range(3) for m in ("m1", "m2")]


def run_config(case: dict[str, Any], sandbox: Path) -> tuple[Outcome, Path]:
    (sandbox / "d.json").write_text(json.dumps(SMALL_DATASET), encoding="utf-8")
    path = sandbox / "c.yaml"
    path.write_bytes(case["text"].encode("utf-8", "surrogatepass"))
    return sonar(["run", "--no-progress", "--no-cache", str(path)], sandbox), sandbox / "out"


# -- command-line flags and evaluator parameters ---------------------------------------------------

PARAMS = {"factual_knowledge": ["metric_threshold", "save_llm_result", "target_output_delimiter", "logical_operator"],
          "looping_detection": ["metric_threshold", "save_llm_result"]}


@st.composite
def flag_cases(draw) -> dict[str, Any]:
    flags: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        flag = draw(st.sampled_from(["--param", "--threshold", "--run-id", "-o", "--host", "--fail-on-problems",
                                     "--calibration-items", "--device", "--param"]))
        if flag == "--param":
            evaluator = draw(st.one_of(st.sampled_from(FAST), st.sampled_from(FAST), text))
            name = draw(st.one_of(st.sampled_from(PARAMS.get(evaluator, ["x"])), text))
            value = f"{evaluator}.{name}={draw(st.one_of(text, numbers.map(str)))}"
        elif flag == "--threshold":
            value = f"{draw(st.one_of(st.sampled_from(FAST), text))}={draw(st.one_of(numbers.map(str), text))}"
        elif flag == "--run-id":
            value = draw(st.one_of(text, st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,20}", fullmatch=True)))
        elif flag == "-o":
            value = draw(st.one_of(st.just("out"), st.text("abc/.", min_size=1, max_size=6).map(lambda s: "out/" + s)))
        else:
            value = draw(text)
        flags += [flag, value]
    return {"flags": flags}


def run_flags(case: dict[str, Any], sandbox: Path) -> tuple[Outcome, Path]:
    (sandbox / "d.json").write_text(json.dumps(SMALL_DATASET), encoding="utf-8")
    flags = case["flags"]
    if any("python" in f or "callable" in f for f in flags):
        flags = [f for f in flags if "python" not in f and "callable" not in f] or ["--run-id", "r"]
    args = ["run", "--no-progress", "--no-cache", "-d", "d.json", *sum((["-e", e] for e in FAST), []), "-o", "out",
            *flags]
    args = [a.replace("\x00", "") for a in args]
    # The output folder is the last -o's value ("out/.." is the sandbox itself, a folder like any).
    output = [value for flag, value in zip(args, args[1:]) if flag == "-o"][-1]
    return sonar(args, sandbox), sandbox / output


# -- judge answers and host responses through the loopback server ----------------------------------

judge_answers = st.one_of(text, st.sampled_from(["true", "false", "True.", " FALSE ", "yes", "{\"verdict\": true}",
                                                 "absent", "present", "", "\ud800"]),
                          json_values.map(lambda v: json.dumps(v, allow_nan=True)))


def judge_run(server, answer: str, sandbox: Path) -> tuple[Outcome, Path]:
    from judge_server import write_llm_configs

    server.default = answer
    (sandbox / "d.json").write_text(json.dumps(SMALL_DATASET), encoding="utf-8")
    configs = write_llm_configs(sandbox / "llm.yaml", server.base_url, retries=0, timeout=2, backoff=0)
    args = ["run", "--no-progress", "--no-cache", "--no-calibrate", "-d", "d.json", "-e", "byop", "-e",
            "contact_information", "--llm-configs", str(configs), "-o", "out", "--run-id", "r"]
    return sonar(args, sandbox), sandbox / "out"


@st.composite
def host_responses(draw) -> dict[str, Any]:
    status = draw(st.one_of(st.just(200), st.sampled_from([201, 204, 301, 400, 401, 404, 429, 500, 502, 503]),
                            st.integers(200, 599)))
    content_type = draw(st.sampled_from(["application/json", "text/plain", "text/html", "application/x-ndjson", ""]))
    kind = draw(st.sampled_from(["chat", "rag", "json", "bytes", "text"]))
    if kind == "chat":
        body: Any = {"choices": [{"message": {"role": "assistant", "content": draw(st.one_of(text, json_values))}}],
                     "usage": draw(st.one_of(st.none(), json_values))}
    elif kind == "rag":
        body = {"answer": draw(st.one_of(text, json_values)), "contexts": draw(st.one_of(st.lists(text, max_size=2),
                                                                                         json_values))}
    elif kind == "json":
        body = draw(json_values)
    else:
        body = None
    raw = (json.dumps(body, allow_nan=True).encode() if body is not None else
           draw(st.binary(max_size=200)) if kind == "bytes" else draw(text).encode("utf-8", "surrogatepass"))
    return {"status": status, "headers": {"Content-Type": content_type} if content_type else {}, "body": raw,
            "truncate": draw(st.integers(0, 5)) == 0, "host_kind": draw(st.sampled_from(["openai_chat", "rag_http"]))}


def host_run(server, case: dict[str, Any], sandbox: Path) -> tuple[Outcome, Path]:
    server.raw = lambda call: (case["status"], case["headers"], case["body"], case["truncate"])
    suite = sandbox / "suite.jsonl"
    suite.write_text('{"test_case_key": "t1", "input": "q1"}\n{"test_case_key": "t2", "input": "q2"}\n', "utf-8")
    base = server.base_url if case["host_kind"] == "openai_chat" else server.base_url + "/rag"
    host = json.dumps({"key": "m", "kind": case["host_kind"], "base_url": base, "model": "m", "retries": 0,
                       "timeout": 2} if case["host_kind"] == "openai_chat" else
                      {"key": "m", "kind": "rag_http", "url": base, "retries": 0, "timeout": 2})
    args = ["run", "--no-progress", "--no-cache", "--test-suite", str(suite), "--host", host, "-e",
            "looping_detection", "-o", "out", "--run-id", "r"]
    return sonar(args, sandbox), sandbox / "out"


#: name -> (strategy, run(case, sandbox)); the server-backed ones take the server first.
SURFACES: dict[str, tuple[st.SearchStrategy, Callable]] = {
    "dataset": (dataset_cases(), run_dataset),
    "config": (config_cases(), run_config),
    "flags": (flag_cases(), run_flags),
}


# -- evaluator parameters --------------------------------------------------------------------------

PARAM_EVALUATORS = ["factual_knowledge", "looping_detection", "text_matching", "bleu", "rouge", "classification",
                    "encoding_guardrail", "pii_leakage", "sensitive_data_leakage"]


def declared_params() -> dict[str, list[str]]:
    from sonar_core.plugins import get_plugin_manager

    manager = get_plugin_manager().load()
    return {e: [p.name for p in manager.resolve(e).all_parameters()] for e in PARAM_EVALUATORS}


_DECLARED: dict[str, list[str]] = {}


@st.composite
def param_cases(draw) -> dict[str, Any]:
    if not _DECLARED:
        _DECLARED.update(declared_params())
    entries = []
    for evaluator in draw(st.lists(st.sampled_from(PARAM_EVALUATORS), min_size=1, max_size=2, unique=True)):
        names = draw(st.lists(st.one_of(st.sampled_from(_DECLARED[evaluator]), text), max_size=3, unique=True))
        entries.append({"id": evaluator, "max_rows": 4, "params": {n: draw(yaml_values) for n in names}})
    return {"evaluators": entries}


def run_params(case: dict[str, Any], sandbox: Path) -> tuple[Outcome, Path]:
    config = {"dataset": "demo", "output_dir": "out", "run_id": "r", "no_cache": True, **case}
    path = sandbox / "c.yaml"
    path.write_bytes(yaml.safe_dump(config, allow_unicode=True).encode("utf-8", "surrogatepass"))
    return sonar(["run", "--no-progress", str(path)], sandbox), sandbox / "out"


SURFACES["params"] = (param_cases(), run_params)
# Configuration paths and parameter values written as YAML text (issue 35): tests/fuzz/fuzz_paths.py.
from fuzz_paths import FUZZ_SURFACES  # noqa: E402

SURFACES.update(FUZZ_SURFACES)
#: Surfaces answered by a loopback server: name -> (strategy, run(server, case, sandbox)).
SERVED: dict[str, tuple[st.SearchStrategy, Callable]] = {
    "judge": (judge_answers, judge_run),
    "host": (host_responses(), host_run),
}
