"""Start-up stays light: listing evaluators and a one-row text run import no torch (nor the model
libraries), and ROUGE's stemmer comes without NLTK's package (which imports scipy and scikit-learn)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

HEAVY = ("torch", "transformers", "sentence_transformers", "scipy", "sklearn", "pandas", "nltk")

PROBE = """
import json, sys
from sonar_core.cli import main
args, heavy = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["sonar", *args]
try:
    main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "loaded": [m for m in heavy if m in sys.modules]}))
"""


def _loaded_after(args: list[str], cwd) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args), json.dumps(HEAVY)], capture_output=True,
                          text=True, cwd=cwd, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_listing_evaluators_imports_no_model_library(tmp_path):
    assert _loaded_after(["evaluators", "--json"], tmp_path) == {"code": 0, "loaded": []}


def test_one_row_text_run_imports_no_model_library(tmp_path):
    dataset = tmp_path / "one.jsonl"
    dataset.write_text(json.dumps({"input": "What is the capital of France?", "model_key": "m",
                                   "actual_output": "The capital of France is Paris.",
                                   "expected_output": "Paris is the capital of France.",
                                   "output_condition": '"Paris"'}) + "\n", encoding="utf-8")
    result = _loaded_after(["run", "--dataset", str(dataset), "-e", "rouge", "-e", "text_matching",
                            "-e", "pii_leakage", "--no-progress", "-o", str(tmp_path / "out"), "--run-id", "r"],
                           tmp_path)
    # pyarrow imports pandas as it builds the run's Parquet files (issue 41: every evaluator's rows also as
    # Parquet, when the columnar extra is installed); no model library is imported.
    parquet = importlib.util.find_spec("pyarrow") is not None
    assert result == {"code": 0, "loaded": ["pandas"] if parquet else []}
    assert (tmp_path / "out" / "r" / "run.json").is_file()
    assert (tmp_path / "out" / "r" / "dataset" / "llm_dataset.parquet").is_file() == parquet


def test_porter_stemmer_is_nltks_and_leaves_nltk_whole():
    code = """
import sys
from sonar_plugins.summarization.porter import porter_stemmer
stem = porter_stemmer()
assert "nltk" not in sys.modules and "scipy" not in sys.modules
import nltk
from nltk.stem.porter import PorterStemmer
words = ["running", "skies", "generously", "conditional", "hopping", "agreed", "relational", "sky"]
assert [stem(w) for w in words] == [PorterStemmer().stem(w) for w in words]
assert nltk.stem.porter.PorterStemmer is PorterStemmer and callable(nltk.word_tokenize)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr
