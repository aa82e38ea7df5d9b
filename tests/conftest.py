"""Shared fixtures: a small LLM dataset with several models, and a plugin manager with the toy plugin."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sonar_core.plugins import PluginManager

TESTS = Path(__file__).parent
REPO = TESTS.parent
CORE_TESTS = TESTS / "core"

#: The built-in evaluators, written out: a test must not derive them from the code it checks.
BUILT_IN = frozenset({
    "text_matching", "pii_leakage", "sensitive_data_leakage", "encoding_guardrail", "factual_knowledge",
    "bleu", "rouge", "classification", "looping_detection",
    "perplexity", "gptscore_summarization_with_reference", "gptscore_summarization_without_reference",
    "gptscore_machine_translation", "gptscore_question_answering", "toxicity", "fairness_bias", "hallucination",
    "summarization_completeness_faithfulness",
    "byop", "contact_information", "language_mismatch", "sexism", "stereotypes", "summarization_judge", "fact_check",
    "answer_semantic_similarity", "answer_semantic_sentence_similarity", "answer_relevancy_sentence_similarity",
    "groundedness_semantic_similarity", "context_relevancy_soft_recall_precision", "step_alignment_completeness",
    "faithfulness", "answer_relevancy", "context_precision", "context_recall", "context_relevancy",
    "ragas_context_relevance", "answer_correctness", "ragas",
    "general_semantic_robustness",
    "tool_call_accuracy", "tool_call_f1", "trajectory_match",
    "goal_accuracy", "conversation_relevancy", "knowledge_retention", "role_adherence",
    "canary_leak", "injection_marker", "private_data_leak", "refusal", "harmful_compliance",
})
#: The RAGAS family (plugins/ragas): judge evaluators left out of the quickstart, whose local judge
#: (SmolLM2-135M) cannot answer ragas's JSON prompts; tests/plugins/ragas runs them on a scripted judge.
RAGAS = frozenset({"faithfulness", "answer_relevancy", "context_precision", "context_recall",
                   "ragas_context_relevance", "answer_correctness", "ragas"})
#: The built-in evaluators that ask an LLM judge.
JUDGES = frozenset({"byop", "contact_information", "language_mismatch", "sexism", "stereotypes",
                    "summarization_judge", "fact_check", "context_relevancy", "goal_accuracy", "conversation_relevancy",
                    "knowledge_retention", "role_adherence", "harmful_compliance"}) | RAGAS
#: The red-team detectors (plugins/redteam): not in the ``offline`` group nor the quickstart, since they
#: judge rows made by ``sonar redteam`` (tests/core/test_redteam_runs.py and tests/plugins/redteam run them).
REDTEAM = frozenset({"canary_leak", "injection_marker", "private_data_leak", "refusal", "harmful_compliance"})
#: Built-in evaluators whose models cannot be installed from the package registry: the `offline`
#: group skips them (saying which model is missing) unless their models are in the local caches.
MODELS_NOT_ON_THE_REGISTRY = frozenset({"fairness_bias", "hallucination", "summarization_completeness_faithfulness"})
#: Built-in evaluators that ask the models under test themselves: a run without hosts skips them, saying so.
NEEDS_HOSTS = frozenset({"general_semantic_robustness"})
#: Built-in evaluators that score only conversation rows (plugins/agent): a dataset without
#: conversations skips them, saying which input is missing.
NEEDS_CONVERSATIONS = frozenset({"tool_call_accuracy", "tool_call_f1", "trajectory_match"})


@pytest.fixture
def toy_plugins(monkeypatch) -> PluginManager:
    """A plugin manager that loads only the toy plugin (no entry points)."""
    monkeypatch.syspath_prepend(str(CORE_TESTS))
    return PluginManager(extra_modules=["toy_plugin"], autoload=False).load()


@pytest.fixture
def toy_env(monkeypatch) -> dict:
    """Environment for a subprocess that should find the toy plugin with -p toy_plugin."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(CORE_TESTS) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def write_json(path: Path, rows) -> Path:
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def sonar_cli():
    """The installed console script next to this interpreter."""
    return str(Path(sys.executable).parent / "sonar")


@pytest.fixture
def judge_server():
    """A scripted chat-completions server on 127.0.0.1 (tests/judge_server.py); set its ``script``,
    ``default`` and fault attributes in the test, read ``calls`` / ``requests`` afterwards."""
    from judge_server import JudgeServer

    with JudgeServer() as server:
        yield server


# -- runs made once per session and only read by the tests that share them ---------------------------
# Each of these is a whole run of many evaluators (tens of seconds to minutes on 2 cores). The tests
# that use one read its folder and never change it; a test that needs to change a run makes its own.

@pytest.fixture(scope="session")
def quickstart_run(tmp_path_factory):
    """configs/quickstart.yaml on the demo dataset (tests/test_quickstart.py, tests/test_drilldown_browser.py)."""
    import sonar_core

    out = tmp_path_factory.mktemp("quickstart")
    return sonar_core.run(REPO / "configs" / "quickstart.yaml", output_dir=str(out), run_id="qs")


@pytest.fixture(scope="session")
def hostile_result(tmp_path_factory):
    """Every offline evaluator over tests/hostile_run.py's dataset (tests/test_result_directory.py,
    tests/test_index_html_browser.py)."""
    from hostile_run import run_hostile

    return run_hostile(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """One headless Chromium (tests/chromium.py) for every browser test of the session, started once
    (a start per test module cost one to three seconds each). Each test opens its own pages; a module
    that changes the viewport overrides this fixture and puts the viewport back when it ends."""
    from chromium import Browser, chromium_binary

    folder = tmp_path_factory.mktemp("chromium")
    instance = Browser(chromium_binary(), folder / "profile", folder / "chromium.log")
    yield instance
    instance.close()
