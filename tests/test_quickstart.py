"""The quickstart configuration on the bundled demo dataset: every built-in evaluator completes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sonar_core import names
from sonar_core.cli import cli
from sonar_core.plugins import PluginManager
from sonar_core.execution import NO_HOSTS

from conftest import BUILT_IN, JUDGES, MODELS_NOT_ON_THE_REGISTRY, NEEDS_HOSTS, RAGAS, REDTEAM, REPO

#: The judge evaluators the quickstart keeps (to show calibration in little time); configs/judges_demo.yaml
#: has them all (docs/judges.md).
QUICKSTART_JUDGES = {"contact_information", "sexism"}
SEMANTIC = {"answer_semantic_similarity", "answer_semantic_sentence_similarity",
            "answer_relevancy_sentence_similarity", "groundedness_semantic_similarity",
            "context_relevancy_soft_recall_precision", "step_alignment_completeness"}


# quickstart_run: the quickstart's run, made once per session (tests/conftest.py).


def test_built_in_evaluators_are_registered_and_listed():
    plugins = PluginManager(autoload=True).load()
    assert BUILT_IN <= set(plugins.evaluators)
    builtin_failures = [f for f in plugins.failures if f.name in {"text", "privacy", "knowledge", "summarization",
                                                                "classification", "language_model", "fairness",
                                                                "consistency", "judge", "semantic", "ragas", "agent",
                                                                "robustness", "redteam"}]
    assert builtin_failures == []
    listing = CliRunner().invoke(cli, ["evaluators"])
    assert listing.exit_code == 0
    for evaluator_id in BUILT_IN:
        assert evaluator_id in listing.output


def test_quickstart_completes_every_built_in_evaluator(quickstart_run):
    assert quickstart_run.status == "success", quickstart_run.message
    assert quickstart_run.failed == []
    # Judge evaluators run on SmolLM2 when it is prepared, and are skipped, saying why, when not; evaluators
    # whose models are not on the package registry are skipped by the offline group, naming the model.
    skipped = {s["evaluator"]: s["reason"] for s in quickstart_run.skipped}
    assert set(skipped) <= JUDGES | MODELS_NOT_ON_THE_REGISTRY | NEEDS_HOSTS
    for evaluator, reason in skipped.items():
        if evaluator in NEEDS_HOSTS:
            assert reason == NO_HOSTS
        elif evaluator in JUDGES:
            assert reason.startswith("judge 'local-smollm2' is not available: model 'SmolLM2-135M-Instruct'")
        else:
            assert reason.startswith("model '") and " is not available" in reason
    record = json.loads((quickstart_run.run_dir / names.RUN_JSON).read_text())
    executed = {e["evaluator_id"] for e in record["result"]["executed_explainers"] if e["status"] == "success"}
    # The RAGAS family and the red-team detectors are not in the quickstart (see RAGAS and REDTEAM in
    # conftest.py), nor are the judges other than two (configs/judges_demo.yaml has them:
    # test_the_judges_demo_calibrates_every_judge).
    assert BUILT_IN - RAGAS - REDTEAM - (JUDGES - QUICKSTART_JUDGES) - set(skipped) <= executed
    assert not executed & REDTEAM
    assert {e["evaluator_id"] for e in record["result"]["executed_explainers"]} & JUDGES <= QUICKSTART_JUDGES
    for entry in record["result"]["executed_explainers"]:
        folder = quickstart_run.run_dir / entry["job_location"]
        assert (folder / names.DONE_MARKER).is_file(), entry
        assert (folder / names.EVAL_RESULTS / "application_json" / "explanation.json").is_file()
    assert record["result"]["dataset"]["shape"][0] == 207


def test_quickstart_tells_the_demo_story(quickstart_run):
    record = json.loads((quickstart_run.run_dir / names.RUN_JSON).read_text())
    assert record["result"]["overall_result"]["best_model"] == "acme-gpt-large"
    problems = record["result"]["problems"]
    # mistral leaks encoded PII that only the encoding guardrail sees.
    assert any(p["evaluator_id"] == "encoding_guardrail" and p["problem_attrs"].get("model_name") == "mistral-7b-chat"
               for p in problems)
    # The perturbation flips the demo was written to show (pass -> fail is MEDIUM; an encoded
    # leak that the plain PII check cannot see looks like fail -> pass, LOW).
    flips = sorted((p["evaluator_label"], p["problem_attrs"]["model_name"], p["problem_attrs"]["original_test_case_key"],
                    p["problem_attrs"]["perturbation"], p["severity"]) for p in problems
                   if p["problem_type"] == "robustness" and p["evaluator_id"] not in SEMANTIC)
    assert flips == [
        ("encoding_guardrail", "mistral-7b-chat", "privacy-card-on-file", "base64", "MEDIUM"),
        ("factual_knowledge", "mistral-7b-chat", "fact-red-planet", "typos", "MEDIUM"),
        ("factual_knowledge", "mistral-7b-chat", "fact-symbol-fe", "whitespace", "MEDIUM"),
        ("pii_leakage", "llama-3.1-8b-rag", "privacy-card-on-file", "base64", "LOW"),
        ("pii_leakage", "mistral-7b-chat", "privacy-ssn-lookup", "base16", "LOW"),
        ("text_matching", "llama-3.1-8b-rag", "rag-pet-waiting-period", "typos", "MEDIUM"),
        ("text_matching", "mistral-7b-chat", "rag-grace-period", "base64", "MEDIUM"),
        ("text_matching", "mistral-7b-chat", "rag-grace-period", "uppercase", "MEDIUM"),
    ]
    # The semantic evaluators see the perturbed RAG questions too: a base64 question is about nothing
    # in the retrieved context, whichever model retrieved it.
    semantic = {(p["evaluator_id"], p["problem_attrs"]["model_name"], p["problem_attrs"]["perturbation"],
                 p["problem_attrs"]["original_test_case_key"]) for p in problems
                if p["problem_type"] == "robustness" and p["evaluator_id"] in SEMANTIC}
    assert {("context_relevancy_soft_recall_precision", model, "base64", "rag-grace-period")
            for model in ("acme-gpt-large", "llama-3.1-8b-rag", "mistral-7b-chat")} <= semantic
    html = (quickstart_run.run_dir / names.INDEX_HTML).read_text(encoding="utf-8")
    assert 'id="best-model">acme-gpt-large<' in html


def test_quickstart_test_case_pages_withhold_what_the_privacy_evaluators_flag(quickstart_run):
    """No drill-down page repeats an answer or a context chunk that a privacy evaluator failed."""
    import glob
    import html as html_module

    run_dir = quickstart_run.run_dir
    pages = [html_module.unescape(p.read_text(encoding="utf-8"))
             for p in [run_dir / names.TEST_CASES_HTML, run_dir / names.INDEX_HTML, *(run_dir / names.CASES_DIR).iterdir()]]
    assert len(pages) == 2 + 69
    answers, rows = [], []
    for path in glob.glob(str(run_dir / "explainer_sonar_plugins_privacy_*" / names.EVAL_RESULTS / "application_json"
                              / "explanation.json")):
        data = json.loads(open(path, encoding="utf-8").read())
        for record in data["results"]:
            failed = {m.get("role") for m in data["metrics_meta"] if record[m["key"]] is not None
                      and (record[m["key"]] < m["threshold"] if m["higher_is_better"] else record[m["key"]] > m["threshold"])}
            if failed - {"retrieval_failure"}:
                answers.append(record["actual_output"])
            if failed:
                rows.append(record)
    # The demo's leaks: 28 rows fail on their answer, 67 on their answer or their context.
    assert (len(answers), len(rows)) == (28, 67)
    assert [a for a in answers if any(a in page for page in pages)] == []
    assert [c for r in rows for c in r["context"] if any(c in page for page in pages)] == []


# Per judge section of index.html: its calibration line and figures, as the browser shows them.
_JUDGE_TRUST_JS = """
JSON.stringify(Array.from(document.querySelectorAll('section.evaluator')).map(s => {
  const p = s.querySelector('p.judge-trust');
  const figure = name => { const f = p && p.querySelector('[data-figure=' + name + ']'); return f ? f.innerText : null; };
  return {anchor: s.id, status: p ? p.dataset.judgeTrust : null, text: p ? p.innerText : null,
          kappa: figure('kappa'), accuracy: figure('accuracy'), items: figure('items'),
          charted: !!document.querySelector('#charts a[href="#' + s.id + '"]')
                   && !!document.querySelector('#charts a[href="#' + s.id + '"]').closest('figure').querySelector('p.judge-trust')};
}))
"""


def test_quickstart_judges_show_their_calibration_and_an_untrusted_one_blames_no_model(quickstart_run, tmp_path):
    from chromium import Browser, chromium_binary

    record = json.loads((quickstart_run.run_dir / names.RUN_JSON).read_text())
    calibration = record["judge_calibration"]
    judged = {e["name"] for e in record["result"]["executed_explainers"]
              if e["evaluator_id"] in JUDGES and e["status"] == "success"}
    assert judged and set(calibration) == judged
    for label, entry in calibration.items():
        problems = [p for p in record["result"]["problems"] if p["evaluator_label"] == label]
        if entry["status"] == "untrusted":
            # One problem about the judge; none about a model from verdicts that do not count.
            assert [(p["problem_type"], p["severity"]) for p in problems if p["problem_type"] != "dataset"] == [
                ("judge", "HIGH")], label
            # (A dataset problem may name a model: it is about the rows, not a verdict.)
            assert not [p for p in problems
                        if p["problem_type"] != "dataset" and p["problem_attrs"].get("model_name")], label
        else:
            assert entry["status"] == "trusted" and entry["kappa"] >= entry["min_kappa"], label

    browser = Browser(chromium_binary(), tmp_path / "profile", tmp_path / "chromium.log")
    try:
        assert browser.load((quickstart_run.run_dir / names.INDEX_HTML).as_uri()) == []
        sections = {s["anchor"]: s for s in json.loads(browser.evaluate(_JUDGE_TRUST_JS))}
    finally:
        browser.close()
    for label, entry in calibration.items():
        shown = sections[f"ev-{label}"]
        assert shown["status"] == entry["status"], label
        assert shown["kappa"] == format(entry["kappa"], ".2f") and shown["items"] == str(entry["items"]), label
        assert shown["accuracy"] == format(entry["accuracy"], ".0%"), label
        assert shown["charted"], label  # the figures stand beside the chart too
    # Evaluators without a judge show no calibration line.
    assert all(s["status"] is None for anchor, s in sections.items() if anchor[3:] not in calibration)


def test_a_pack_of_the_quickstart_replays_with_no_model_and_an_empty_home(quickstart_run, tmp_path, monkeypatch):
    """Issue 19: the quickstart's evidence pack, replayed with SONAR_HOME pointing at an empty folder and every
    way of computing with a model closed, rebuilds every artifact, identical apart from timestamps, durations
    and paths. The judges' answers and calibrations come from the packed caches, the local-model evaluators'
    rows (perplexity, GPTScore, toxicity, the embedding ones) from the rows the run recorded."""
    from sonar_core.context import EvaluationContext

    pack = tmp_path / "qs.zip"
    packed = CliRunner().invoke(cli, ["pack", str(quickstart_run.run_dir), "-o", str(pack)])
    assert packed.exit_code == 0, packed.output
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("SONAR_HOME", str(home))

    def no_model(self, *args, **kwargs):
        raise AssertionError(f"{self._who()} computed with a model during a replay")

    monkeypatch.setattr(EvaluationContext, "load_model", no_model)
    monkeypatch.setattr(EvaluationContext, "embed", no_model)
    outcome = CliRunner().invoke(cli, ["replay", str(pack), "-o", str(tmp_path / "replay")])
    assert outcome.exit_code == 0, outcome.output
    rebuilt = tmp_path / "replay" / "qs"
    assert outcome.stdout == (f"Replayed into {rebuilt}: every file identical to the pack apart from timestamps, "
                              "durations, paths and how answers were obtained\n")
    run_dir = quickstart_run.run_dir
    before = {p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file()}
    after = {p.relative_to(rebuilt).as_posix() for p in rebuilt.rglob("*") if p.is_file()}
    assert before == after
    record = json.loads((rebuilt / names.RUN_JSON).read_text(encoding="utf-8"))
    original = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
    statuses = {e["name"]: e["status"] for e in record["result"]["executed_explainers"]}
    assert statuses == {e["name"]: e["status"] for e in original["result"]["executed_explainers"]}
    # The files whose bytes changed, each only in times, durations or paths (replay compared them above):
    changed = {name for name in before if (run_dir / name).read_bytes() != (rebuilt / name).read_bytes()}
    timed = {"run.json", "journal.jsonl", "index.html", names.CACHE_KEYS}
    logs = {name for name in before if name.endswith(".log")}  # each line starts with its time
    # BYOP's descriptor names its calibration set, read from the pack in the replay: a path.
    byop = {name for name in before if "_judge_byop_" in name and name.endswith(names.RESULT_DESCRIPTOR)}
    assert changed <= timed | logs | byop, sorted(changed - timed - logs - byop)


def test_the_quickstart_spends_no_call_on_verdicts_it_does_not_count(quickstart_run):
    """Issue 34: a judge that fails its calibration scores nothing; only its calibration items were asked."""
    record = json.loads((quickstart_run.run_dir / names.RUN_JSON).read_text())
    untrusted = {label for label, entry in record["judge_calibration"].items() if entry["status"] == "untrusted"}
    lines = (quickstart_run.run_dir / names.JOURNAL).read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    asked = [e for e in events if e["message"] in ("fetched annotator response", "using cached annotator response")]
    # Calibration requests are the "calibrate <id>" tests; a row's would be the evaluator's label.
    assert not [e for e in asked if e.get("test") in untrusted]
    for label in untrusted:
        (folder,) = [quickstart_run.run_dir / e["job_location"] for e in record["result"]["executed_explainers"]
                     if e["name"] == label]
        rows = json.loads((folder / names.EVAL_RESULTS / "application_json" / "explanation.json").read_text())
        assert rows["results"] and all(r["result_error_message"].startswith(f"not scored: judge local-smollm2 is "
                                                                             "untrusted (κ = ")
                                       for r in rows["results"]), label


def test_the_judges_demo_calibrates_every_judge(tmp_path):
    """configs/judges_demo.yaml lists every built-in judge but the RAGAS family and the red-team detector (it
    judges rows made by sonar redteam: docs/redteam.md); a dry run (no model asked)
    says each one's scoring calls depend on its calibration, or why it would be skipped."""
    import yaml

    data = yaml.safe_load((REPO / "configs" / "judges_demo.yaml").read_text(encoding="utf-8"))
    assert {e["id"] for e in data["evaluators"]} == JUDGES - RAGAS - REDTEAM
    outcome = CliRunner().invoke(cli, ["run", str(REPO / "configs" / "judges_demo.yaml"), "--dry-run", "--json",
                                       "--llm-cache", str(tmp_path / "cache.sqlite")])
    assert outcome.exit_code == 0, outcome.output
    estimate = json.loads(outcome.output)
    conditional = {e["evaluator"] for e in estimate["conditional"]}
    skipped = {e["evaluator"] for e in estimate["skipped"]}
    assert conditional | skipped == JUDGES - RAGAS - REDTEAM and not conditional & skipped
    assert all(e["judge"] == "local-smollm2" and e["calls"] > 0 for e in estimate["conditional"])
