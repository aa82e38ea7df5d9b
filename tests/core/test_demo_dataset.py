"""The bundled demo dataset is generated from its case files, and regenerating it changes nothing.

``demo_llm_dataset.json`` is shipped, and the quickstart's report, the docs and several tests are built
on its exact rows; ``python -m sonar_core.demo.generate`` must rebuild it byte for byte from
``sonar_core/demo/cases/*.json`` (with the demo's frozen typo and whitespace perturbations).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sonar_core.demo import generate
from sonar_core.demo.case_files import CASES_DIR, CaseFileError, load_cases, render_text

SHIPPED = Path(generate.__file__).with_name("demo_llm_dataset.json")


def test_regenerating_the_demo_dataset_reproduces_the_shipped_file_byte_for_byte(tmp_path):
    before = SHIPPED.stat().st_mtime_ns
    out = tmp_path / "demo.json"
    done = subprocess.run([sys.executable, "-m", "sonar_core.demo.generate", "--output", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out} (207 rows, 69 test cases, 195 KiB)" in done.stdout
    assert out.read_bytes() == SHIPPED.read_bytes()
    assert SHIPPED.stat().st_mtime_ns == before  # --output leaves the shipped file alone


def test_text_pieces_are_joined_into_the_text_they_stand_for():
    text = ["a ", {"base64": "hi"}, " ", {"base16": "hi"}, " ", {"repeat": "Go.", "times": 3}, " ",
            {"secret": "WINDOWS_KEY"}]
    assert render_text(text, "here") == "a aGk= 6869 Go. Go. Go. W269N-WFGWX-YVC9B-4J6C9-T83GX"
    assert render_text("plain", "here") == "plain"


@pytest.mark.parametrize("piece, message", [
    ({"secret": "NO_SUCH_KEY"}, "here: unknown secret 'NO_SUCH_KEY' (known: AWS_ACCESS_KEY,"),
    ({"base32": "hi"}, "here: unknown piece {'base32': 'hi'}"),
    ({"repeat": "Go.", "times": "3"}, "here: unknown piece {'repeat': 'Go.', 'times': '3'}"),
])
def test_an_unknown_piece_is_an_error_naming_it(piece, message):
    with pytest.raises(CaseFileError) as err:
        render_text(["x", piece], "here")
    assert str(err.value).startswith(message)


def _edited_cases(tmp_path: Path, group: str, edit) -> Path:
    cases_dir = tmp_path / "cases"
    shutil.copytree(CASES_DIR, cases_dir)
    path = cases_dir / f"{group}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data["cases"][0])
    path.write_text(json.dumps(data), encoding="utf-8")
    return cases_dir


def test_a_misspelt_case_field_is_an_error_not_a_silently_dropped_value(tmp_path):
    def misspell(case):
        case["expected_ouptut"] = case.pop("expected_output")

    with pytest.raises(CaseFileError) as err:
        load_cases(_edited_cases(tmp_path, "factual", misspell))
    assert str(err.value) == "factual.json case 'fact-berlin-capital-of': unknown ['expected_ouptut']"


def test_a_case_must_answer_for_exactly_the_three_models(tmp_path):
    def drop_one(case):
        del case["answers"]["mistral-7b-chat"]

    with pytest.raises(CaseFileError) as err:
        load_cases(_edited_cases(tmp_path, "rag", drop_one))
    assert str(err.value) == ("rag.json case 'rag-claim-deadline': answers must be given for exactly "
                              "acme-gpt-large, llama-3.1-8b-rag, mistral-7b-chat")


def test_the_case_files_hold_every_original_test_case_in_group_order():
    cases = load_cases()
    assert len(cases) == 57  # 66 test cases in the dataset, 9 of them perturbed copies
    assert [c.category for c in cases][:1] == ["rag"] and cases[-1].category == "looping"
    classify = next(c for c in cases if c.key == "sentiment-no-callback")
    assert classify.input.startswith("Classify the sentiment of this customer feedback")
    assert classify.input.endswith("Feedback: Three weeks and still no call back about my windshield claim. "
                                   "Absolutely useless.")
