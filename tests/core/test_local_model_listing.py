"""`sonar models` lists the local-model evaluators' models, whether each is present and who uses it."""

from __future__ import annotations

from click.testing import CliRunner

from sonar_core.cli import cli
from sonar_core.models import ModelStore


def test_sonar_models_lists_the_toxicity_bias_and_consistency_models(tmp_path, monkeypatch):
    monkeypatch.setenv("SONAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 0, result.output
    lines = {line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:-1]]
             for line in result.output.splitlines() if line.startswith("│") and line.split("│")[1].strip()}
    # Columns: kind, present, source, location, used by, how to provide.
    profanity = lines["alt-profanity-check"]
    assert profanity[:2] == ["toxicity", "yes"] and profanity[4] == "toxicity.fallback_model"
    assert profanity[2].startswith("Python package") and profanity[5] == "-"  # long cells wrap
    assert lines["detoxify-original"][:2] == ["toxicity", "NO"]
    assert lines["d4data/bias-detection-model"][:2] == ["classifier", "NO"]
    assert lines["d4data/bias-detection-model"][4] == "fairness_bias.bias_model"
    assert lines["summac-conv-vitc"][:2] == ["summac_conv", "NO"]
    # Long "used by" cells are cut by the table; the first users of SmolLM2 are named in full.
    assert lines["SmolLM2-135M-Instruct"][0] == "causal_lm"
    assert "perplexity.perplexity_model" in result.output


def test_single_file_models_are_found_in_the_store_folder_and_the_torch_hub_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    store = ModelStore(tmp_path / "models")
    hub = tmp_path / "torch" / "hub" / "checkpoints"
    hub.mkdir(parents=True)
    (hub / "toxic_original-c1212f89.ckpt").write_bytes(b"x")
    assert store.resolve("detoxify") == hub / "toxic_original-c1212f89.ckpt"
    weights = tmp_path / "models" / "summac-conv-vitc" / "summac_conv_vitc_sent_perc_e.bin"
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"x")
    assert store.resolve("summac-conv-vitc") == weights
    assert store.resolve(str(weights)) == weights  # a model file named by its path is used as it is
    assert store.status("summac-conv-vitc").present


def test_the_embedded_profanity_model_resolves_to_its_package_folder(tmp_path):
    folder = ModelStore(tmp_path / "models").resolve("alt-profanity-check")
    assert folder.name == "data" and folder.parent.name == "profanity_check"
    assert sorted(p.name for p in folder.glob("*.joblib")) == ["model.joblib", "vectorizer.joblib"]
