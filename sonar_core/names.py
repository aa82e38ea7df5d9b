"""Every file and folder name of the result directory, and every schema version.

Constants only, importing nothing of Sonar: the findings (problems and insights carry their
schema version), the artifact writers, the run and the journal all read them here.
docs/result-directory.md documents each of them; tests/test_result_directory.py checks that
the page names every one.
"""

from __future__ import annotations

import hashlib
import uuid

RUN_JSON = "run.json"
INDEX_HTML = "index.html"
JOURNAL = "journal.jsonl"
#: The run's calls, tokens and cost per host, judge and evaluator (docs/costs.md); only in runs that called one.
COSTS_MD = "costs.md"

RESULT_DESCRIPTOR = "result_descriptor.json"
PROBLEMS_DIR = "problems"
PROBLEMS_FILE = "problems_and_actions.json"
INSIGHTS_DIR = "insights"
INSIGHTS_FILE = "insights_and_actions.json"
LOG_DIR = "log"
WORK_DIR = "work"
REPORT_MD = "report.md"
#: What run.json and index.html need from a finished evaluator (read again on resume).
EVALUATOR_SUMMARY = "evaluator_summary.json"
DONE_MARKER = "EXPLAINER_DONE"
FAILED_MARKER = "EXPLAINER_FAILED"
EXPLANATION_STEM = "explanation"

EVAL_RESULTS = "global_llm_eval_results"
HEATMAP_LEADERBOARD = "global_llm_heatmap_leaderboard"
BOOL_LEADERBOARD = "global_llm_bool_leaderboard"
HTML_FRAGMENT = "global_html_fragment"
WORK_ARCHIVE = "global_work_dir_archive"

MIME_JSON = "application/json"
MIME_CSV = "text/csv"
MIME_JAY = "application/vnd.h2oai.datatable.jay"
MIME_MARKDOWN = "text/markdown"
MIME_LEADERBOARD_MARKDOWN = "application/vnd.h2oai-evalstudio-leaderboard.markdown"
MIME_HTML = "text/html"
MIME_ZIP = "application/zip"

#: Schema version of run.json, result_descriptor.json and the explanation JSON files.
SCHEMA_VERSION = "1.0"
#: Schema version carried by each problem of problems_and_actions.json.
PROBLEMS_SCHEMA_VERSION = "1.0"
#: Schema version carried by each insight of insights_and_actions.json.
INSIGHTS_SCHEMA_VERSION = "1.0"
#: Schema version of a leaderboard as evaluator_summary.json keeps it.
LEADERBOARD_SCHEMA_VERSION = "1.0"
#: Schema version in the first event (``starting journal``) of journal.jsonl.
JOURNAL_SCHEMA_VERSION = "1.0"
#: Schema version of judge calibration results (``sonar judges calibrate --json``, run.json's
#: ``judge_calibration``).
CALIBRATION_SCHEMA_VERSION = "1.0"
#: Schema version of the ``--json`` listings (``sonar evaluators``, ``describe``, ``plugins``, ``hosts``).
LISTING_SCHEMA_VERSION = "1.0"

# A fixed namespace so a run's evaluator job ids are reproducible: resuming a run finds the
# same folders, and an uninterrupted run of the same configuration names them alike.
_JOB_NAMESPACE = uuid.UUID("6f1c3f0e-5c1b-4b8e-9f0a-7d2f3a1b9c11")


def mime_dir(mime: str) -> str:
    """The folder a MIME type's files live in: '/', '.', '-', '+' become '_'."""
    return "".join("_" if c in "/.-+" else c for c in mime)


def job_uuid(run_id: str, evaluator_id: str, position: int) -> str:
    """Deterministic job id of one evaluator in one run."""
    return str(uuid.uuid5(_JOB_NAMESPACE, f"{run_id}/{position}/{evaluator_id}"))


def evaluator_dir_name(qualified_name: str, job_id: str) -> str:
    """``explainer_<module path and class, dots as _>_<job uuid>``."""
    return f"explainer_{qualified_name.replace('.', '_')}_{job_id}"


def log_file(job_id: str) -> str:
    return f"explainer_run_{job_id}.log"


#: What a run with a test suite and hosts writes: ``dataset/`` with the hosts' answers as they come
#: (``answers.jsonl``), the LLM dataset they make (JSON and CSV) and the items no host answered.
DATASET_DIR = "dataset"
ANSWERS_FILE = "answers.jsonl"
LLM_DATASET_JSON = "llm_dataset.json"
LLM_DATASET_CSV = "llm_dataset.csv"
FAILED_ITEMS = "failed_items.json"

#: A run of production traces (docs/traces.md): its verdicts as OTLP JSON evaluator spans, each linked to the
#: span it judged, and as a flat table (span id, evaluator, metric, score, label, explanation).
ANNOTATIONS_JSONL = "annotations.jsonl"
ANNOTATIONS_CSV = "annotations.csv"

#: The run's test case x model matrix, beside index.html.
TEST_CASES_HTML = "test_cases.html"
#: One page per test case of the matrix: ``cases/<case_page_name(key)>``.
CASES_DIR = "cases"


def case_page_name(test_case_key: str) -> str:
    """The file name of a test case's page: a hash of the key, never the key itself.

    Keys come from datasets; a hash cannot climb out of the folder, name a hidden file or
    clash with another key by sanitising alike.
    """
    return f"tc-{hashlib.sha256(test_case_key.encode('utf-8')).hexdigest()[:16]}.html"

#: ``sonar compare``'s folder: the page, the JSON (with ``COMPARISON_SCHEMA_VERSION``) and the summary.
COMPARISON_HTML = "comparison.html"
COMPARISON_JSON = "comparison.json"
COMPARISON_MD = "comparison.md"
#: Schema version of comparison.json (``sonar compare``, also its ``--json`` output).
COMPARISON_SCHEMA_VERSION = "1.0"

#: The response-cache keys a run used (``sonar pack`` copies only those entries); runs that opened the cache.
CACHE_KEYS = "cache_keys.json"
CACHE_KEYS_SCHEMA_VERSION = "1.0"
#: ``sonar pack``'s archive: its manifest, and the folders of what it holds.
PACK_MANIFEST = "pack.json"
PACK_SCHEMA_VERSION = "1.0"

#: A benchmark run's grades (docs/benchmarks.md): ``benchmark/`` with the findings as JSON, the
#: grades and the unsafe items as CSV, a markdown report, and a calibration run's standards.
BENCHMARK_DIR = "benchmark"
BENCHMARK_JSON = "benchmark.json"
BENCHMARK_GRADES_CSV = "grades.csv"
BENCHMARK_FAILING_CSV = "unsafe_items.csv"
BENCHMARK_REPORT_MD = "report.md"
BENCHMARK_STANDARDS_JSON = "standards.json"
BENCHMARK_SCHEMA_VERSION = "1.0"

#: A name that becomes a file or folder name (a run id, a run's name, an evaluator's name): letters,
#: digits, '.', '_' and '-', not starting with '.' or '-' (no hidden file, no option, no '..'), at most 128.
SAFE_NAME_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}"
SAFE_NAME_RULE = ("use 1 to 128 letters, digits, '.', '_' and '-', starting with a letter, digit or '_' "
                  "(it names a folder)")


def is_safe_name(value: str) -> bool:
    """Whether ``value`` may name a file or folder of the result directory (:data:`SAFE_NAME_PATTERN`)."""
    import re

    return isinstance(value, str) and re.fullmatch(SAFE_NAME_PATTERN, value) is not None

# ``sonar generate`` (docs/generate.md): beside the suite file ``<stem>.jsonl``, files named from its stem.
GENERATION_REPORT_SCHEMA_VERSION = "1.0"
GENERATION_FILES = {"report_json": "{stem}.report.json", "report_html": "{stem}.report.html",
                    "graph": "{stem}.graph.json", "journal": "{stem}.journal.jsonl"}
