"""The result directory as a reader sees it: every file present, parseable and consistent.

One run of every installed offline evaluator over a small three-model dataset whose model
names and answers hold markup, ampersands, quotes and non-ASCII text (tests/hostile_run.py).
The checks follow docs/result-directory.md: the tree, schema versions, the three
llm-eval-results formats holding the same rows, leaderboards, problems (with the severity
rule), insights, .meta files, the work archive, HTML escaping, run.json and the journal.
"""

from __future__ import annotations

import csv
import html
import json
import math
import zipfile
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath

import pytest

from conftest import BUILT_IN, JUDGES, MODELS_NOT_ON_THE_REGISTRY, NEEDS_CONVERSATIONS, NEEDS_HOSTS, REDTEAM
from hostile_run import HOSTILE_ANSWER, MODELS, QUESTION_PARIS, hostile_rows
from sonar_core import names
from sonar_core.plugins import PluginManager

# What each MIME type's .meta must name (H2O Sonar's format classes).
FORMAT_CLASS = {
    "application/json": "JsonFormat",
    "text/csv": "CsvFormat",
    "application/vnd.h2oai.datatable.jay": "DatatableFormat",
    "text/markdown": "MarkdownFormat",
    "application/vnd.h2oai-evalstudio-leaderboard.markdown": "EvalStudioMarkdownFormat",
    "text/html": "HtmlFormat",
    "application/zip": "ZipFormat",
    "application/vnd.apache.parquet": "ParquetFormat",  # issue 41: row results as Parquet too
}
# explanation folder -> MIME folder -> the files it must hold (leaderboards: see below).
EXPLANATION_FILES = {
    "global_llm_eval_results": {
        "application_json": ["explanation.json"],
        "text_csv": ["explanation.csv"],
        "application_vnd_h2oai_datatable_jay": ["explanation.jay"],
        "application_vnd_apache_parquet": ["explanation.parquet"],
    },
    "global_html_fragment": {"text_html": ["explanation.html"]},
    "global_work_dir_archive": {"application_zip": ["explanation.zip"]},
}
LEADERBOARD_MIME_DIRS = ("application_json", "text_markdown", "application_vnd_h2oai_evalstudio_leaderboard_markdown")
SEVERITIES = {"HIGH", "MEDIUM", "LOW"}


@pytest.fixture(scope="module")
def run(hostile_result):
    """The hostile run (made once per session, tests/conftest.py; read only)."""
    result = hostile_result
    assert result.status == "success", result.message
    assert result.failed == []
    # Only evaluators whose models are not on the package registry may be skipped (model missing), and
    # those that ask the models under test (the hostile dataset comes without hosts) or score
    # conversations (it has none).
    assert {s["evaluator"] for s in result.skipped} <= MODELS_NOT_ON_THE_REGISTRY | NEEDS_HOSTS | NEEDS_CONVERSATIONS
    return result


def _load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _evaluator_dirs(run) -> dict[str, Path]:
    """evaluator id -> its folder, from run.json's executed_explainers."""
    record = _load(run.run_dir / names.RUN_JSON)
    return {e["evaluator_id"]: run.run_dir / e["job_location"] for e in record["result"]["executed_explainers"]}


def _leaderboard_dir(folder: Path) -> Path:
    found = [folder / n for n in (names.HEATMAP_LEADERBOARD, names.BOOL_LEADERBOARD) if (folder / n).is_dir()]
    assert len(found) == 1, f"{folder.name}: expected exactly one leaderboard folder, got {found}"
    return found[0]


def _installed():
    """A fresh plugin manager (not the process-wide one, which other tests may reset or extend)."""
    return PluginManager(autoload=True).load()


def test_every_built_in_evaluator_ran(run):
    dirs = _evaluator_dirs(run)
    # "offline" leaves out the judges (tests/plugins/judge run them) and the red-team detectors (they judge
    # red-team rows), and skips evaluators whose models are missing.
    assert set(dirs) == BUILT_IN - JUDGES - REDTEAM - {s["evaluator"] for s in run.skipped}
    for evaluator_id, folder in dirs.items():
        assert folder.is_dir(), evaluator_id
        assert folder.name.startswith("explainer_sonar_plugins_"), folder.name


def test_tree_has_every_file(run):
    root = run.run_dir
    for name in (names.INDEX_HTML, names.RUN_JSON, names.JOURNAL):
        assert (root / name).is_file(), name
    for evaluator_id, folder in _evaluator_dirs(run).items():
        job_id = folder.name[-36:]
        expected = [
            names.RESULT_DESCRIPTOR,
            names.EVALUATOR_SUMMARY,
            f"{names.PROBLEMS_DIR}/{names.PROBLEMS_FILE}",
            f"{names.INSIGHTS_DIR}/{names.INSIGHTS_FILE}",
            f"{names.LOG_DIR}/explainer_run_{job_id}.log",
            f"{names.WORK_DIR}/{names.REPORT_MD}",
            names.DONE_MARKER,
        ]
        for explanation, formats in EXPLANATION_FILES.items():
            for mime_dir, files in formats.items():
                expected.append(f"{explanation}/{mime_dir}.meta")
                expected += [f"{explanation}/{mime_dir}/{f}" for f in files]
        board = _leaderboard_dir(folder).name
        for mime_dir in LEADERBOARD_MIME_DIRS:
            expected.append(f"{board}/{mime_dir}.meta")
        expected += [f"{board}/application_json/explanation.json", f"{board}/application_json/leaderboard_0.json",
                     f"{board}/text_markdown/explanation.md",
                     f"{board}/application_vnd_h2oai_evalstudio_leaderboard_markdown/explanation.md"]
        missing = [p for p in expected if not (folder / p).is_file()]
        assert missing == [], f"{evaluator_id}: missing {missing}"
        assert not (folder / names.FAILED_MARKER).exists()
        assert "scoring 9 rows" in (folder / names.LOG_DIR / f"explainer_run_{job_id}.log").read_text(encoding="utf-8")


def test_every_json_parses_and_has_a_schema_version(run):
    json_files = [p for p in run.run_dir.rglob("*") if p.suffix in (".json", ".meta")]
    # run.json + per evaluator: descriptor, summary, problems, insights, eval results,
    # leaderboard index and at least two leaderboard files, and 8 .meta files.
    assert len(json_files) >= 1 + 16 * len(_evaluator_dirs(run))
    for path in json_files:
        data = _load(path)
        where = path.relative_to(run.run_dir)
        if path.name in (names.PROBLEMS_FILE, names.INSIGHTS_FILE):
            assert isinstance(data, list), where
            for item in data:
                assert item["schema_version"] == "1.0", where
        else:
            assert isinstance(data, dict), where
            assert data["schema_version"] == "1.0", where


def test_descriptor_matches_the_evaluator(run):
    plugins = _installed()
    for evaluator_id, folder in _evaluator_dirs(run).items():
        cls = plugins.evaluators[evaluator_id]
        d = _load(folder / names.RESULT_DESCRIPTOR)
        assert d["id"] == cls.qualified_name() and d["key"] == evaluator_id and d["name"] == cls.__name__
        assert d["display_name"] == cls.display_name
        assert "| Question | Expected answer | Retrieved context | Actual answer | Conditions |" in d["description"]
        assert [m["key"] for m in d["metrics_meta"]] == [m.key for m in cls.metrics]
        assert sum(m["is_primary_metric"] for m in d["metrics_meta"]) == 1
        params = {p["name"] for p in d["parameters"]}
        assert {"metric_threshold", "save_llm_result"} <= params
        for needed in cls.required_inputs:
            assert needed.keyword in d["keywords"]
        board = "global-llm-bool-leaderboard" if d["result_kind"] == "bool" else "global-llm-heatmap-leaderboard"
        assert board.replace("-", "_") == _leaderboard_dir(folder).name
        assert [e["explanation_type"] for e in d["explanations"]] == [
            "global-llm-eval-results", board, "global-html-fragment", "global-work-dir-archive"]


def test_meta_files_name_their_mime_and_format(run):
    for evaluator_id, folder in _evaluator_dirs(run).items():
        descriptor = _load(folder / names.RESULT_DESCRIPTOR)
        declared = {e["explanation_type"]: set(e["formats"]) for e in descriptor["explanations"]}
        metas = sorted(folder.glob("global_*/*.meta"))
        assert len(metas) == 9, f"{evaluator_id}: {[m.name for m in metas]}"  # 8, and Parquet's since issue 41
        for meta_path in metas:
            meta = _load(meta_path)
            mime = meta["mime"]
            assert names.mime_dir(mime) == meta_path.stem, meta_path
            assert meta["name"] == FORMAT_CLASS[mime]
            assert meta["full_name"].endswith("." + FORMAT_CLASS[mime])
            explanation = meta_path.parent.name
            assert meta["explanation_type"] == explanation.replace("_", "-")
            # The descriptor lists this format under this explanation.
            assert mime in declared[meta["explanation_type"]], meta_path
            files = sorted(p.name for p in (meta_path.parent / meta_path.stem).iterdir())
            assert meta["files"] == files


def _eval_results(folder: Path):
    base = folder / names.EVAL_RESULTS
    explanation = _load(base / "application_json" / "explanation.json")
    with open(base / "text_csv" / "explanation.csv", encoding="utf-8", newline="") as handle:
        csv_rows = list(csv.DictReader(handle))
    return explanation, csv_rows, base / "application_vnd_h2oai_datatable_jay" / "explanation.jay"


def _same_number(cell, value) -> bool:
    if value is None:
        return cell in ("", None) or (isinstance(cell, float) and math.isnan(cell))
    return math.isclose(float(cell), float(value), rel_tol=1e-12, abs_tol=0.0)


def test_eval_results_json_csv_and_jay_hold_the_same_rows(run):
    import datatable as dt

    dataset = {(r["test_case_key"], r["model_key"]): r for r in hostile_rows()}
    for evaluator_id, folder in _evaluator_dirs(run).items():
        explanation, csv_rows, jay_path = _eval_results(folder)
        records = explanation["results"]
        metric_keys = [m["key"] for m in explanation["metrics_meta"]]
        assert explanation["evaluator_id"] == evaluator_id
        assert {(r["test_case_key"], r["model_key"]) for r in records} == set(dataset), evaluator_id
        for record in records:
            source = dataset[(record["test_case_key"], record["model_key"])]
            assert record["input"] == source["input"] and record["actual_output"] == source["actual_output"]
            assert record["context"] == source["context"]
            assert record["key"] == f"{record['test_case_key']}::{record['model_key']}"
            for key in metric_keys:
                assert key in record, (evaluator_id, key)

        # CSV: same columns, same rows in the same order, lists as JSON text.
        assert len(csv_rows) == len(records)
        assert list(csv_rows[0]) == list(records[0])
        for cells, record in zip(csv_rows, records):
            for field in ("key", "test_case_key", "model_key", "input", "actual_output", "output_condition"):
                assert cells[field] == record[field], (evaluator_id, field)
            assert json.loads(cells["context"]) == record["context"]
            for key in metric_keys:
                assert _same_number(cells[key], record[key]), (evaluator_id, key, cells[key], record[key])

        # .jay: opens with datatable, same columns and rows.
        frame = dt.fread(str(jay_path))
        assert list(frame.names) == list(records[0])
        assert frame.nrows == len(records)
        columns = frame.to_dict()
        for i, record in enumerate(records):
            for field in ("key", "test_case_key", "model_key", "input", "actual_output"):
                assert columns[field][i] == record[field], (evaluator_id, field)
            for key in metric_keys:
                assert _same_number(columns[key][i], record[key]), (evaluator_id, key)


def test_leaderboards(run):
    for evaluator_id, folder in _evaluator_dirs(run).items():
        board_dir = _leaderboard_dir(folder)
        json_dir = board_dir / "application_json"
        index = _load(json_dir / "explanation.json")
        metric_keys = index["metrics"]
        assert list(index["files"]) == ["ALL_METRICS"] + metric_keys
        assert sorted(p.name for p in json_dir.glob("leaderboard_*.json")) == sorted(index["files"].values())
        descriptor = _load(folder / names.RESULT_DESCRIPTOR)
        primary = next(m for m in descriptor["metrics_meta"] if m["is_primary_metric"])
        assert index["primary_metric"] == primary["key"]
        kind = "bool" if board_dir.name == names.BOOL_LEADERBOARD else "heatmap"
        assert index["kind"] == kind

        full = _load(json_dir / index["files"]["ALL_METRICS"])
        assert sorted(full["ranking"]) == sorted(MODELS) and set(full["data"]) == set(MODELS)
        for model in MODELS:
            assert set(full["data"][model]) == set(metric_keys)
            assert full["models"][model]["rank"] == full["ranking"].index(model) + 1
            assert full["models"][model]["rows"] == 3
            if kind == "bool":
                counts = full["models"][model]["counts"]
                assert set(counts) >= {"pass", "fail", "retrieval_failure", "generation_failure", "parse_failure"}
                assert "total_time" in full["models"][model] and "total_cost" in full["models"][model]
        # The ranking follows the primary metric (best first).
        values = [full["data"][m][primary["key"]] for m in full["ranking"]]
        ordered = sorted(values, reverse=primary["higher_is_better"])
        assert values == ordered, (evaluator_id, values)
        for key in metric_keys:
            single = _load(json_dir / index["files"][key])
            assert single["metric"] == key and list(single["metadata"]) == [key]
            assert single["metadata"][key]["threshold"] == next(
                m["threshold"] for m in descriptor["metrics_meta"] if m["key"] == key)
            assert {m: v[key] for m, v in single["data"].items()} == {m: v[key] for m, v in full["data"].items()}

        markdown = (board_dir / "text_markdown" / "explanation.md").read_text(encoding="utf-8")
        evalstudio = (board_dir / "application_vnd_h2oai_evalstudio_leaderboard_markdown" / "explanation.md")
        assert evalstudio.read_text(encoding="utf-8") == markdown
        table = [line for line in markdown.splitlines() if line.startswith("| ")]
        assert table[0].startswith("| Rank | LLM |") and table[0].endswith("| Time (s) | Cost (USD) |")
        if kind == "bool":
            assert table[0].startswith("| Rank | LLM | Pass | Fail |")
        # Model names come from the dataset: escaped, so a markdown viewer cannot render them as HTML.
        assert [line.split(" | ")[1] for line in table[1:]] == [
            html.escape(m, quote=False).replace("|", "\\|") for m in full["ranking"]]
        assert "<script>" not in markdown
        assert table[1].startswith("| 1 | ")
        report = (folder / "work" / "report.md").read_text(encoding="utf-8")
        assert "<script>" not in report


def test_problems_and_severity_rule(run):
    all_problems = []
    for evaluator_id, folder in _evaluator_dirs(run).items():
        problems = _load(folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE)
        metas = {m["key"]: m for m in _load(folder / names.RESULT_DESCRIPTOR)["metrics_meta"]}
        for p in problems:
            assert p["severity"] in SEVERITIES
            assert p["evaluator_id"] == evaluator_id
            assert p["explanation_type"] == "global-html-fragment"
            for key in ("description", "description_html", "actions_description", "actions_codes", "explainer_id",
                        "explainer_name", "resources", "problem_type", "problem_attrs"):
                assert key in p, key
            assert "<" not in p["description_html"]
            attrs = p["problem_attrs"]
            for row_key in attrs.get("dataset_row_keys", []):
                assert row_key[1] in MODELS and len(row_key) == 2
            if p["problem_type"] != "robustness" and "metric_threshold" in attrs and attrs.get("metric_id") in metas:
                # The threshold rule of docs/result-directory.md, on the metric's range.
                meta = metas[attrs["metric_id"]]
                lo, hi = meta["value_range"]
                t, s = attrs["metric_threshold"], attrs["metric_score"]
                # An unbounded end (null: a count) counts as twice as far from the threshold as the other.
                hi = t + 2 * (t - lo) if hi is None else hi
                lo = t - 2 * (hi - t) if lo is None else lo
                eps = 1e-9 * max(1.0, hi - lo)  # keeps a score exactly on the bound HIGH
                if meta["higher_is_better"]:
                    assert s < t
                    expected = "HIGH" if s <= lo + (t - lo) / 2 + eps else "MEDIUM"
                else:
                    assert s > t
                    expected = "HIGH" if s >= t + (hi - t) / 2 - eps else "MEDIUM"
                assert p["severity"] == expected, p["description"]
        order = [{"HIGH": 0, "MEDIUM": 1, "LOW": 2}[p["severity"]] for p in problems]
        assert order == sorted(order), evaluator_id
        all_problems += problems
    # The answers of MODEL_UNICODE are wrong everywhere: factual knowledge 0 of 3, so HIGH.
    fk = [p for p in all_problems if p["evaluator_id"] == "factual_knowledge"
          and p["problem_attrs"].get("metric_id") == "factual_knowledge"]
    assert [(p["problem_attrs"]["model_name"], p["severity"]) for p in fk] == [(MODELS[1], "HIGH")]
    assert sorted(fk[0]["problem_attrs"]["test_case_keys"]) == ["tc-paris", "tc-sum", "tc-tokyo"]


def test_insights(run):
    for evaluator_id, folder in _evaluator_dirs(run).items():
        insights = _load(folder / names.INSIGHTS_DIR / names.INSIGHTS_FILE)
        for i in insights:
            assert i["insight_type"] in {"accuracy", "retrieval", "weak-point", "performance", "cost"}
            assert isinstance(i["insight_attrs"], dict)
            assert i["evaluator_id"] == evaluator_id
        types = [i["insight_type"] for i in insights]
        # Row durations are 0.5 + case index + model index (s), so a model's mean is 1.5 + its
        # index: MODELS[0] is the fastest and MODELS[2] the slowest; costs differ likewise.
        performance = [i for i in insights if i["insight_type"] == "performance"]
        assert [(i["insight_attrs"]["rank"], i["insight_attrs"]["model_name"]) for i in performance] == [
            ("best", MODELS[0]), ("worst", MODELS[2])]
        assert types.count("cost") == 2


def test_work_archive_extracts_inside_its_folder(run, tmp_path):
    for evaluator_id, folder in _evaluator_dirs(run).items():
        archive = folder / names.WORK_ARCHIVE / "application_zip" / "explanation.zip"
        target = tmp_path / evaluator_id
        target.mkdir()
        with zipfile.ZipFile(archive) as z:
            assert z.testzip() is None
            members = z.namelist()
            for member in members:
                pure = PurePosixPath(member)
                assert not pure.is_absolute() and ".." not in pure.parts and "\\" not in member, member
                assert pure.parts[0] == names.WORK_DIR
            z.extractall(target)
        extracted = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
        for path in extracted:
            assert (target / path).resolve().is_relative_to(target.resolve())
        work = sorted(f"work/{p.relative_to(folder / names.WORK_DIR).as_posix()}"
                      for p in (folder / names.WORK_DIR).rglob("*") if p.is_file())
        assert extracted == sorted(members) == work
        assert (target / "work" / names.REPORT_MD).read_bytes() == (folder / "work" / names.REPORT_MD).read_bytes()


class _Text(HTMLParser):
    """Text content and start tags of an HTML document (character references decoded)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _parse(html: str) -> _Text:
    parser = _Text()
    parser.feed(html)
    parser.close()
    return parser


def test_html_escapes_hostile_strings(run):
    pages = {"index.html": (run.run_dir / names.INDEX_HTML).read_text(encoding="utf-8")}
    for evaluator_id, folder in _evaluator_dirs(run).items():
        pages[evaluator_id] = (folder / names.HTML_FRAGMENT / "text_html" / "explanation.html").read_text(encoding="utf-8")
    for name, page in pages.items():
        lowered = page.lower()
        assert "<script" not in lowered and "<b>bold" not in lowered, name
        parsed = _parse(page)
        assert "script" not in parsed.tags, name
        text = "".join(parsed.text)
        for model in MODELS:
            assert model in text, (name, model)  # shown as text, after the escaping is decoded
        assert "gpt-&lt;script&gt;alert(" in page and "llama &amp; " in page, name
        # The stylesheet is not escaped (entities inside <style> would break the CSS).
        assert "details > summary" in page and "&#34;Segoe UI&#34;" not in page, name
    fragments = {k: v for k, v in pages.items() if k != "index.html"}
    # The wrong answer with markup is among the weakest answers of at least one fragment.
    with_answer = [k for k, v in fragments.items() if HOSTILE_ANSWER in "".join(_parse(v).text)]
    assert "factual_knowledge" in with_answer
    assert "Lyon &lt;script&gt;alert(" in fragments["factual_knowledge"]
    assert QUESTION_PARIS in "".join(_parse(fragments["factual_knowledge"]).text)


def test_run_json(run):
    record = _load(run.run_dir / names.RUN_JSON)
    assert record["status"] == "success" and record["progress"] == 1.0 and record["error"] == ""
    result = record["result"]
    assert result["models"] == sorted(MODELS)
    assert result["dataset"]["shape"] == [9, 9] and result["dataset"]["unique_test_cases"] == 3
    dirs = _evaluator_dirs(run)
    skipped = [s["evaluator"] for s in run.skipped]
    # Skipped evaluators (their models missing) are scheduled, then listed as incompatible.
    assert [e for e in result["scheduled_explainers"] if e not in skipped] == list(dirs)
    assert result["incompatible_explainer_ids"] == skipped
    for entry in result["executed_explainers"]:
        assert entry["status"] == "success" and entry["error"] == "" and entry["duration"] >= 0
        assert entry["job_location"] == dirs[entry["evaluator_id"]].name
        assert entry["key"] == entry["job_location"][-36:]
    per_folder = [p for folder in dirs.values() for p in _load(folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE)]
    assert result["problems"] == per_folder
    insights = [i for folder in dirs.values() for i in _load(folder / names.INSIGHTS_DIR / names.INSIGHTS_FILE)]
    assert result["insights"] == insights
    # The API's result holds the same problems and insights (read back from the folders).
    assert run.problems == per_folder and run.insights == insights
    overall = result["overall_result"]
    for severity in ("high", "medium", "low"):
        assert overall[f"{severity}_severity_problems"] == sum(p["severity"] == severity.upper() for p in per_folder)
    assert overall["best_model"] == MODELS[0] and overall["failed_explainers"] == []
    for folder in dirs.values():
        summary = _load(folder / names.EVALUATOR_SUMMARY)
        assert summary["problems"] == _load(folder / names.PROBLEMS_DIR / names.PROBLEMS_FILE)
        assert summary["view"]["dir_name"] == folder.name


def test_journal(run):
    lines = (run.run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    for event in events:
        for key in ("timestamp", "message", "class", "method"):
            assert isinstance(event[key], str) and event[key], (key, event)
        assert datetime.fromisoformat(event["timestamp"]).tzinfo is not None
    timestamps = [datetime.fromisoformat(e["timestamp"]) for e in events]
    assert timestamps == sorted(timestamps)
    assert events[0]["message"] == "starting journal" and events[0]["schema_version"] == "1.0"
    assert events[1]["message"] == "starting run"
    assert events[-1]["message"] == "finished run" and events[-1]["status"] == "success"
    dirs = _evaluator_dirs(run)
    # Scoring is summarised per batch (the 9 rows make one batch per evaluator), not per row.
    batches = {e["evaluator"]: e for e in events if e["message"] == "measured batch quality"}
    assert len(batches) == len([e for e in events if e["message"] == "measured batch quality"]) == len(dirs)
    for evaluator, folder in dirs.items():
        explanation, _, _ = _eval_results(folder)
        primary = next(m for m in explanation["metrics_meta"] if m["is_primary_metric"])
        values = [r[primary["key"]] for r in explanation["results"] if r[primary["key"]] is not None]
        threshold = primary["threshold"]  # null: a metric without a threshold fails no row
        failing = [v for v in values if threshold is not None
                   and (v < threshold if primary["higher_is_better"] else v > threshold)]
        batch = batches[evaluator]
        assert (batch["batch"], batch["rows"], batch["done"], batch["total"], batch["metric"], batch["failing"]) == (
            1, len(hostile_rows()), len(hostile_rows()), len(hostile_rows()), primary["key"], len(failing)), evaluator
        assert batch["mean"] == pytest.approx(sum(values) / len(values)), evaluator
    scored = {e["evaluator"]: e for e in events if e["message"] == "evaluator scored"}
    assert list(scored) == list(dirs)
    for evaluator, folder in dirs.items():
        board = _load(_leaderboard_dir(folder) / "application_json" / "leaderboard_0.json")
        primary = scored[evaluator]["metric"]
        assert scored[evaluator]["means"] == {model: values[primary] for model, values in board["data"].items()}


def test_docs_name_every_file_and_journal_message(run):
    """docs/result-directory.md stays in step with names.py and the journal."""
    doc = (Path(__file__).parent.parent / "docs" / "result-directory.md").read_text(encoding="utf-8")
    constants = [value for key, value in vars(names).items() if key.isupper() and isinstance(value, str)
                 and key not in ("SCHEMA_VERSION",)]
    for value in constants:
        documented = names.mime_dir(value) if "/" in value else value
        assert documented in doc, value
    messages = {json.loads(line)["message"] for line in
                (run.run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()}
    for message in messages:
        assert f"`{message}`" in doc, message


def test_leader_marked_only_when_strictly_ahead(run):
    """The fragment's bold leader row: the rank-1 model, unless the top two tie on the primary metric."""
    import re
    from markupsafe import escape

    ties = 0
    for evaluator_id, folder in _evaluator_dirs(run).items():
        board_dir = _leaderboard_dir(folder)
        index = _load(board_dir / "application_json" / "explanation.json")
        board = _load(board_dir / "application_json" / "leaderboard_0.json")
        first, second = (board["data"][m][index["primary_metric"]] for m in board["ranking"][:2])
        html = (folder / names.HTML_FRAGMENT / "text_html" / "explanation.html").read_text(encoding="utf-8")
        leader_rows = re.findall(r'<tr class="leader">\s*<td class="num">1</td><td>(.*?)</td>', html)
        if first == second:
            ties += 1
            assert leader_rows == [], evaluator_id
        else:
            assert leader_rows == [str(escape(board["ranking"][0]))], evaluator_id
    assert ties < len(_evaluator_dirs(run))  # at least one evaluator has a clear leader


def test_save_llm_result_off_writes_and_lists_no_eval_results(tmp_path):
    from hostile_run import write_hostile_dataset
    import sonar_core

    result = sonar_core.run(dataset=str(write_hostile_dataset(tmp_path)), output_dir=str(tmp_path / "reports"),
                            run_id="no-results",
                            evaluators=[{"id": "factual_knowledge", "params": {"save_llm_result": False}}])
    assert result.status == "success"
    (folder,) = list(result.run_dir.glob("explainer_*"))
    assert not (folder / names.EVAL_RESULTS).exists()
    descriptor = _load(folder / names.RESULT_DESCRIPTOR)
    assert [e["explanation_type"] for e in descriptor["explanations"]] == [
        "global-llm-heatmap-leaderboard", "global-html-fragment", "global-work-dir-archive"]
    assert (folder / names.DONE_MARKER).is_file()


def test_docs_describe_every_run_json_field():
    """run.json's model (RunRecord) and the page's run.json table name the same fields."""
    from sonar_core.artifacts.run_json import RunOutcome, RunRecord

    doc = (Path(__file__).parent.parent / "docs" / "result-directory.md").read_text(encoding="utf-8")
    table = doc.split("## run.json", 1)[1].split("\n## ", 1)[0]
    documented = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    fields = set(RunRecord.model_fields) - {"result"} | {f"result.{name}" for name in RunOutcome.model_fields}
    assert documented == fields
    # Every field of the model says what it is.
    for model in (RunRecord, RunOutcome):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no docstring"

