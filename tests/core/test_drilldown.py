"""The test-case drill-down: which cases, what each cell and page says, what stays withheld.

Runs use the toy evaluators (tests/core/toy_plugin.py), whose values are read from the data:
``toy_score`` scores a row with the number in its answer (threshold 0.5), ``toy_passfail``
passes answers holding "ok" and cannot parse "??". Models A, B, C answer t1, t2, t3 and t4,
t4 being t1 with typos (the same dataset as tests/core/test_scoring.py).
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from conftest import CORE_TESTS
from sonar_core import names
from sonar_core.artifacts import drilldown
from sonar_core.artifacts.drilldown import WITHHELD_ANSWER, WITHHELD_CONTEXT, WITHHELD_MESSAGE, build_casebook
from sonar_core.findings import case_rows
from sonar_core.findings.case_rows import selected_case_keys
from sonar_core.config import build_config
from sonar_core.dataset import load_dataset
from sonar_core.plugins import PluginManager
from sonar_core.execution import execute_run
from sonar_core.artifacts.stored import stored_summary
from sonar_core.findings.case_verdicts import case_fails

SCORES = {"A": ("0.9", "0.8", "0.1", "0.2"), "B": ("0.4", "0.3", "0.2", "0.7"), "C": ("0.1", "0.2", "0.0", "0.1")}
PASSFAIL = {"A": ("ok fine", "nope", "??", "ok"), "B": ("nope",) * 4, "C": ("ok",) * 4}


class _Links(HTMLParser):
    """Every anchor of a page: (href, text)."""

    def __init__(self):
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href, self._text = dict(attrs).get("href"), []

    def handle_data(self, data):
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "a" and self._href is not None:
            self.links.append((self._href, "".join(self._text)))
            self._href = None


def _links(page: Path) -> list[tuple[str, str]]:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.links


def _toy_rows(cases=("t1", "t2", "t3", "t4")) -> list[dict]:
    rows = []
    for model in ("A", "B", "C"):
        for i, case in enumerate(cases):
            row = {"test_case_key": case, "model_key": model, "input": f"question {case}",
                   "actual_output": SCORES[model][i], "expected_output": "0.1", "categories": [f"cat-{i % 2}"],
                   "actual_duration": 1.0, "cost": 0.01}
            if case == "t4":
                row.update(original_test_case_key="t1", perturbation="typos")
            rows.append(row)
    return rows


def _run(tmp_path: Path, plugins, rows: list[dict], evaluators, run_id="drill"):
    dataset = tmp_path / f"{run_id}.json"
    dataset.write_text(json.dumps(rows), encoding="utf-8")
    config = build_config({"dataset": str(dataset), "evaluators": evaluators, "output_dir": str(tmp_path),
                           "run_id": run_id})
    return execute_run(config, plugins=plugins), dataset


def _summaries(run_dir: Path) -> list[dict]:
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    return [json.loads((run_dir / e["job_location"] / names.EVALUATOR_SUMMARY).read_text(encoding="utf-8"))
            for e in record["result"]["executed_explainers"]]


def _kept_summaries(run_dir: Path) -> list:
    """The summaries as a resumed run keeps them (stored_summary of each finished folder)."""
    record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    folders = [run_dir / e["job_location"] for e in record["result"]["executed_explainers"]]
    return [stored_summary(summary, folder) for summary, folder in zip(_summaries(run_dir), folders)]


def _casebook(rows, summaries):
    """The drill-down as the run builds it, with the verdicts the findings conclude."""
    return build_casebook(rows, summaries, [case_fails(s) for s in summaries],
                          selected_case_keys(row.test_case_key for row in rows))


def test_the_case_limit_keeps_the_first_keys_in_alphabetical_order():
    keys = ["tc-10", "tc-2", "tc-1", "b", "tc-1--typos", "a"]
    assert selected_case_keys(keys, limit=4) == {"a", "b", "tc-1", "tc-1--typos"}
    assert selected_case_keys(keys, limit=6) == set(keys)
    assert selected_case_keys(keys + keys, limit=6) == set(keys)  # counted once each
    # Consistent between the run and each evaluator: the run's pick, within any subset, is
    # part of that subset's own pick.
    subset = ["tc-10", "tc-2", "b", "tc-1--typos"]
    assert selected_case_keys(keys, limit=4) & set(subset) <= selected_case_keys(subset, limit=4)


def test_case_pages_are_named_by_a_hash_of_the_key():
    assert names.case_page_name("t1") == "tc-" + __import__("hashlib").sha256(b"t1").hexdigest()[:16] + ".html"
    for hostile in ("../../etc/passwd", "/abs", ".hidden", "a/b\\c", "<script>", ""):
        name = names.case_page_name(hostile)
        assert len(name) == 24 and name.startswith("tc-") and name.endswith(".html")
        assert all(c in "0123456789abcdef" for c in name[3:-5])


def test_evaluator_summary_keeps_each_rows_values_and_messages(tmp_path, toy_plugins):
    rows = _toy_rows()
    for row in rows:
        row["actual_output"] = PASSFAIL[row["model_key"]][int(row["test_case_key"][1]) - 1]
    result, _ = _run(tmp_path, toy_plugins, rows, ["toy_passfail"])
    (summary,) = _summaries(result.run_dir)
    data = summary["test_cases"]
    assert data["test_cases"] == 4 and data["case_limit"] == drilldown.CASE_LIMIT and data["skipped"] == []
    # [key, [passes, failures, retrieval_failures, generation_failures, parse_failures], message]
    assert data["rows"][:4] == [
        ["t1::A", [1.0, 0.0, 0.0, 0.0, 0.0], None],
        ["t2::A", [0.0, 1.0, 0.0, 1.0, 0.0], "no 'ok' in the answer"],
        ["t3::A", [0.0, 0.0, 0.0, 0.0, 1.0], "cannot parse '??'"],
        ["t4::A", [1.0, 0.0, 0.0, 0.0, 0.0], None],
    ]
    assert summary["view"]["primary_pass_counts"] == {"A": [2, 4], "B": [0, 4], "C": [4, 4]}
    assert summary["view"]["sensitive_outputs"] is False


def test_drilldown_pages_of_a_toy_run(tmp_path, toy_plugins):
    result, dataset = _run(tmp_path, toy_plugins, _toy_rows(), ["toy_score"])
    run_dir = result.run_dir
    pages = sorted(p.name for p in (run_dir / names.CASES_DIR).iterdir())
    assert pages == sorted(names.case_page_name(k) for k in ("t1", "t2", "t3", "t4"))
    assert (run_dir / names.TEST_CASES_HTML).is_file()

    book = _casebook(load_dataset(dataset).rows, _kept_summaries(run_dir))
    assert [c["key"] for c in book.cases] == ["t1", "t2", "t3", "t4"]
    assert book.models == ["A", "B", "C"] and book.categories == ["cat-0", "cat-1"]
    t1 = book.cases[0]
    cells = [(r["model"], r["verdicts"][0]["text"], r["verdicts"][0]["status"]) for r in t1["rows"]]
    assert cells == [("A", "0.90", "pass"), ("B", "0.40", "fail"), ("C", "0.10", "fail")]
    # Every metric with its own side of its threshold: error_rate 0.1 <= 0.2 passes.
    assert t1["rows"][1]["verdicts"][0]["metrics"] == [{"value": 0.4, "status": "fail"}, {"value": 0.1, "status": "pass"}]
    assert t1["category_ids"] == "0" and book.cases[1]["category_ids"] == "1"
    assert t1["variants"] == [{"key": "t4", "file": names.case_page_name("t4"), "perturbation": "typos"}]
    t4 = book.cases[3]
    assert t4["original"]["key"] == "t1" and t4["original"]["question"] == "question t1"
    # A: 0.9 -> 0.2 crosses the threshold down, B: 0.4 -> 0.7 up, C: 0.1 -> 0.1 stays.
    assert [(p["model"], p["flips"]) for p in t4["comparison"]] == [
        ("A", [{"ev": 0, "direction": "pass → fail"}]), ("B", [{"ev": 0, "direction": "fail → pass"}]), ("C", [])]

    # index.html links each test case a problem or insight names to its page.
    index_links = dict((text, href) for href, text in _links(run_dir / names.INDEX_HTML) if href.startswith("cases/"))
    assert index_links["t4"] == f"cases/{names.case_page_name('t4')}"  # A's flip after typos
    assert "Open test case t3" in index_links  # the most difficult test case (insight)
    assert ("test_cases.html" in [href for href, _ in _links(run_dir / names.INDEX_HTML)])
    # A case page links back, to its original, and each link resolves to a file.
    page = run_dir / names.CASES_DIR / names.case_page_name("t4")
    hrefs = [href for href, _ in _links(page)]
    assert "../index.html" in hrefs and "../test_cases.html" in hrefs and names.case_page_name("t1") in hrefs
    for href in (h for h in hrefs if not h.startswith("#")):
        target = (page.parent / href.split("#")[0]).resolve()
        assert target.is_file(), href
    text = page.read_text(encoding="utf-8")
    assert "Original and perturbed" in text and "flip: pass → fail" in text and "flip: fail → pass" in text


def test_drilldown_is_capped_and_says_so(tmp_path, toy_plugins, monkeypatch):
    monkeypatch.setattr(drilldown, "CASE_LIMIT", 2)  # what the pages say
    monkeypatch.setattr(case_rows, "CASE_LIMIT", 2)  # which test cases the findings choose
    rows = [{"test_case_key": f"tc-{n}", "model_key": m, "actual_output": "0.1" if m == "B" else "0.9"}
            for n in (3, 2, 10, 1) for m in ("A", "B")]
    result, _ = _run(tmp_path, toy_plugins, rows, ["toy_score"], run_id="capped")
    run_dir = result.run_dir
    # Alphabetically tc-1 < tc-10 < tc-2 < tc-3.
    assert sorted(p.name for p in (run_dir / names.CASES_DIR).iterdir()) == sorted(
        names.case_page_name(k) for k in ("tc-1", "tc-10"))
    matrix = (run_dir / names.TEST_CASES_HTML).read_text(encoding="utf-8")
    assert "2 of 4 test cases shown: the first 2 by key (alphabetical order)." in matrix
    assert "(2 of 4 test cases; each opens its own page)" in (run_dir / names.INDEX_HTML).read_text(encoding="utf-8")
    # B fails all four; the problem links the two cases with pages and names the others as text.
    index = (run_dir / names.INDEX_HTML).read_text(encoding="utf-8")
    problem_cells = [(text, href) for href, text in _links(run_dir / names.INDEX_HTML) if text.startswith("tc-")]
    assert problem_cells == [("tc-10", f"cases/{names.case_page_name('tc-10')}"),
                             ("tc-1", f"cases/{names.case_page_name('tc-1')}")]
    assert f'<td>tc-3, tc-2, <a href="cases/{names.case_page_name("tc-10")}" class="case-link">tc-10</a>, ' in index
    # The matrix keeps the dataset's order; the summary keeps the rows of those two cases only.
    assert matrix.count('<th class="case"><a href="cases/') == 2
    assert matrix.index(">tc-10</a>") < matrix.index(">tc-1</a>")
    (summary,) = _summaries(run_dir)
    assert [r[0] for r in summary["test_cases"]["rows"]] == ["tc-10::A", "tc-10::B", "tc-1::A", "tc-1::B"]


def test_a_resumed_run_draws_the_same_pages(tmp_path, toy_plugins):
    result, _ = _run(tmp_path, toy_plugins, _toy_rows(), ["toy_score", "toy_passfail"], run_id="again")
    run_dir = result.run_dir
    before = {p.relative_to(run_dir): p.read_bytes() for p in [run_dir / names.TEST_CASES_HTML,
                                                                *(run_dir / names.CASES_DIR).iterdir()]}
    (run_dir / names.TEST_CASES_HTML).unlink()
    for page in (run_dir / names.CASES_DIR).iterdir():
        page.unlink()
    resumed = execute_run(build_config(json.loads((run_dir / names.RUN_JSON).read_text())["interpretation_parameters"]),
                          resume_dir=run_dir, plugins=toy_plugins)
    assert resumed.status == "success"
    after = {p.relative_to(run_dir): p.read_bytes() for p in [run_dir / names.TEST_CASES_HTML,
                                                               *(run_dir / names.CASES_DIR).iterdir()]}
    assert after == before


def test_what_a_sensitive_evaluator_flags_is_withheld_from_every_drilldown_page(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(CORE_TESTS))
    plugins = PluginManager(extra_modules=["leaky_plugin"], autoload=False).load()
    card = "my card is 4111 1111 1111 1111"
    rows = [
        # A leaks in its answer; B gives the same answer but the leak check is not routed to it.
        {"test_case_key": "t1", "model_key": "A", "actual_output": card, "categories": ["checked"]},
        {"test_case_key": "t1", "model_key": "B", "actual_output": card, "categories": ["other"]},
        # C's answer is clean but its retrieved context holds the secret.
        {"test_case_key": "t1", "model_key": "C", "actual_output": "clean answer", "categories": ["checked"],
         "context": ["the key is SECRET-CTX-42"]},
        {"test_case_key": "t2", "model_key": "A", "actual_output": "fine", "categories": ["checked"]},
    ]
    result, dataset = _run(tmp_path, plugins, rows, [{"id": "leaky", "categories": ["checked"]}, "quoting"],
                           run_id="leaks")
    assert result.status == "success", result.message
    run_dir = result.run_dir
    pages = [run_dir / names.TEST_CASES_HTML, run_dir / names.INDEX_HTML, *(run_dir / names.CASES_DIR).iterdir()]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "4111 1111 1111 1111" not in text and "SECRET-CTX-42" not in text, page.name
    case_page = (run_dir / names.CASES_DIR / names.case_page_name("t1")).read_text(encoding="utf-8")
    assert "card 4111********1111 in the answer" in case_page  # the sensitive evaluator's masked message
    assert "clean answer" in case_page and WITHHELD_CONTEXT in case_page
    assert case_page.count(WITHHELD_ANSWER) == 2  # A's and B's (the same text)
    # The quoting evaluator's messages on A and B are withheld with their answers; C's stays.
    assert case_page.count(WITHHELD_MESSAGE) == 2 and "answer was &#x27;clean answer&#x27;" in case_page

    book = _casebook(load_dataset(dataset).rows, _kept_summaries(run_dir))
    assert [e["label"] for e in book.evaluators] == ["leaky", "quoting"]
    t1 = {r["model"]: r for r in book.cases[0]["rows"]}
    # A failed on its answer: its answer and its context (where a leak often comes from) are
    # withheld; C failed on its context only: its answer stays.
    assert [(m, t1[m]["withheld"], t1[m]["context_withheld"]) for m in "ABC"] == [
        ("A", True, True), ("B", True, False), ("C", False, True)]
    t2 = book.cases[1]["rows"][0]
    assert t2["withheld"] is False and t2["answer"] == "fine"


def test_a_threshold_stored_as_null_reads_none_in_a_verdicts_title():
    # Perplexity and GPTScore have no finite threshold; views store it as null (JSON).
    from types import SimpleNamespace

    from sonar_core.artifacts.case_pages import verdict_title

    book = SimpleNamespace(evaluators=[{"display_name": "Perplexity", "primary": 0,
                                        "metrics": [{"display_name": "Perplexity", "threshold": None}]},
                                       {"display_name": "Toy", "primary": 0,
                                        "metrics": [{"display_name": "Score", "threshold": 0.5}]}])
    assert verdict_title(book, {"ev": 0, "value": 46.25, "why": ""}) == "Perplexity · Perplexity 46.2500, threshold none"
    assert verdict_title(book, {"ev": 1, "value": 0.25, "why": "low"}) == "Toy · Score 0.2500, threshold 0.5: low"
