"""Declared differences from the H2O Sonar catalogue, shown where a reader looks: ``sonar describe``
(text and --json), ``sonar catalogue`` (docs/evaluators.md) and the report's evaluator section."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from sonar_core import Difference
from sonar_core.artifacts.evaluator_dir import write_evaluator_dir
from sonar_core.catalogue import render_catalogue
from sonar_core.cli import cli
from sonar_core.findings import ScoredEvaluator, derive_findings
from sonar_core.plugins import get_plugin_manager
from sonar_core.testing import make_row
from sonar_plugins.summarization.bleu import BleuEvaluator

ROOT = Path(__file__).resolve().parents[2]

PERPLEXITY_THRESHOLD = {
    "field": "threshold:perplexity",
    "what": "perplexity threshold: catalogue 0.5, Sonar inf (no problem is raised)",
    "why": "with lower-is-better and every perplexity at least 1, the catalogue's 0.5 would flag every row",
    "action": "set a threshold for your model and data (`--threshold perplexity=VALUE`) to have problems raised",
}

#: Every built-in evaluator that declares a difference (the others conform to the checked table).
DIFFERING = {
    "answer_correctness", "answer_relevancy", "answer_relevancy_sentence_similarity",
    "answer_semantic_sentence_similarity", "answer_semantic_similarity", "byop", "classification",
    "context_relevancy", "context_relevancy_soft_recall_precision", "encoding_guardrail", "fact_check",
    "gptscore_machine_translation", "gptscore_question_answering", "gptscore_summarization_with_reference",
    "gptscore_summarization_without_reference", "groundedness_semantic_similarity", "perplexity", "pii_leakage",
    "ragas", "ragas_context_relevance", "sensitive_data_leakage", "step_alignment_completeness", "summarization_completeness_faithfulness",
    "summarization_judge", "text_matching", "toxicity",
}


def flat(text: str) -> str:
    return " ".join(text.split())


def test_describe_json_lists_each_difference_and_an_empty_list_for_a_conforming_evaluator():
    result = CliRunner().invoke(cli, ["describe", "perplexity", "--json"])
    assert result.exit_code == 0
    differences = json.loads(result.stdout)["differences"]
    assert [d["field"] for d in differences] == ["model", "metric:perplexity", "threshold:perplexity"]
    assert differences[2] == PERPLEXITY_THRESHOLD
    assert differences[0]["what"] == "language model: catalogue distilgpt2, Sonar SmolLM2-135M-Instruct (embedded)"
    result = CliRunner().invoke(cli, ["describe", "bleu", "--json"])
    assert json.loads(result.stdout)["differences"] == []


def test_describe_text_ends_with_the_differences_and_says_nothing_for_a_conforming_evaluator():
    text = flat(CliRunner().invoke(cli, ["describe", "perplexity"]).stdout)
    section = text[text.index("Where Sonar differs from the catalogue"):]
    assert section.endswith(flat(
        "- perplexity threshold: catalogue 0.5, Sonar inf (no problem is raised). Why: with lower-is-better and "
        "every perplexity at least 1, the catalogue's 0.5 would flag every row. What to do: set a threshold for "
        "your model and data (`--threshold perplexity=VALUE`) to have problems raised."))
    assert section.startswith("Where Sonar differs from the catalogue - language model: catalogue distilgpt2, ")
    assert "Where Sonar differs" not in CliRunner().invoke(cli, ["describe", "bleu"]).stdout


def test_the_catalogue_section_lists_exactly_the_evaluators_that_declare_differences():
    markdown = render_catalogue(get_plugin_manager().load())
    start = markdown.index("## Where Sonar differs from the catalogue")
    section = markdown[start:markdown.index("\n## ", start + 1)]
    listed = set(re.findall(r"^### \[[^\]]+\]\(#([a-z_0-9]+)\)$", section, re.M))
    declared = {eid for eid, cls in get_plugin_manager().load().evaluators.items() if cls.differences}
    assert listed == declared == DIFFERING
    assert ("### [Perplexity](#perplexity)\n\n- language model: catalogue distilgpt2, Sonar SmolLM2-135M-Instruct "
            "(embedded). Why: distilgpt2 is not embedded and Sonar downloads nothing at run time. What to do: values "
            "are on SmolLM2's scale, not comparable with H2O Sonar's: set `perplexity_model: distilgpt2` (a model in "
            "the local Hugging Face cache) to compare.\n") in section
    # The committed catalogue is this rendering, and the README points at the section.
    assert (ROOT / "docs" / "evaluators.md").read_text(encoding="utf-8") == markdown
    assert "(docs/evaluators.md#where-sonar-differs-from-the-catalogue)" in (ROOT / "README.md").read_text()


class HostileBleu(BleuEvaluator):
    differences = (Difference(what="<b>bold</b> & co", why="a <script>alert(1)</script> test", action="",
                              field="formula"),)


def _fragment(cls, tmp_path: Path) -> tuple[str, dict]:
    row = make_row(test_case_key="t1", model_key="m", expected_output="a cat sat", actual_output="a cat sat")
    results = list(cls(cls.validate_params({}), None).evaluate([row]))
    ev = ScoredEvaluator(cls=cls, params={"save_llm_result": False},
                         thresholds={m.key: m.threshold for m in cls.metrics}, scored=list(zip([row], results)))
    summary = write_evaluator_dir(derive_findings(ev), tmp_path / cls.__name__)
    html = next((tmp_path / cls.__name__).rglob("explanation.html")).read_text(encoding="utf-8")
    return html, summary["view"]


def test_the_report_shows_an_evaluators_differences_escaped(tmp_path):
    html, view = _fragment(HostileBleu, tmp_path)
    assert view["differences"] == [{"field": "formula", "what": "<b>bold</b> & co",
                                    "why": "a <script>alert(1)</script> test", "action": ""}]
    assert "Where Sonar differs from the catalogue (1)" in html
    assert "<li>&lt;b&gt;bold&lt;/b&gt; &amp; co.<br><span class=\"muted\">Why: a &lt;script&gt;alert(1)&lt;/script&gt; " \
           "test.</span></li>" in html
    assert "<script>alert" not in html


def test_an_evaluator_without_differences_keeps_its_summary_and_report_as_they_were(tmp_path):
    html, view = _fragment(BleuEvaluator, tmp_path)
    assert "differences" not in view and "fallbacks" not in view
    assert "Where Sonar differs" not in html and "Fallback model" not in html

