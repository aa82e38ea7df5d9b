"""LLM configurations: the YAML file, its errors, the built-in judge and the API key's variable."""

from __future__ import annotations

import pytest

from sonar_core.errors import ConfigError
from sonar_core.llm import BUILT_IN_CONFIGS, DEFAULT_JUDGE, default_configs_path, load_llm_configs
from sonar_core.llm.secrets import REDACTED, Redactor, api_key_for


def _write(tmp_path, text: str):
    path = tmp_path / "llm.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_file_adds_configurations_to_the_built_in_judge(tmp_path):
    path = _write(tmp_path, """
default_judge: vllm
llms:
  vllm:
    base_url: http://127.0.0.1:8000/v1
    model: llama-3.1-8b
    requests_per_minute: 120
    max_concurrency: 4
  openai-mini:
    backend: openai
    model: gpt-4o-mini
    api_key_env: OPENAI_API_KEY
    temperature: 0.2
""")
    configs = load_llm_configs(path)
    assert sorted(configs.configs) == ["local-smollm2", "openai-mini", "vllm"]
    assert configs.default_judge == "vllm" and configs.source == path
    vllm = configs.get("vllm")
    assert (vllm.key, vllm.backend, vllm.base_url, vllm.model) == ("vllm", "openai", "http://127.0.0.1:8000/v1",
                                                                    "llama-3.1-8b")
    assert (vllm.requests_per_minute, vllm.max_concurrency, vllm.temperature, vllm.max_tokens, vllm.retries) == \
        (120.0, 4, 0.0, 256, 5)
    assert configs.get("openai-mini").api_key_env == "OPENAI_API_KEY"
    assert configs.get(DEFAULT_JUDGE) == BUILT_IN_CONFIGS[DEFAULT_JUDGE]


def test_built_in_judge_is_the_local_smollm2():
    config = BUILT_IN_CONFIGS["local-smollm2"]
    assert (config.backend, config.model, config.temperature) == ("local", "smollm2", 0.0)
    assert "small and often wrong" in config.description


def test_identity_leaves_out_key_name_secret_and_client_limits(tmp_path):
    path = _write(tmp_path, """
llms:
  a: {base_url: "http://h/v1/", model: m, api_key_env: A_KEY, max_concurrency: 2, timeout: 5}
  b: {base_url: "http://h/v1", model: m, api_key_env: B_KEY, requests_per_minute: 10}
""")
    configs = load_llm_configs(path)
    assert configs.get("a").identity() == configs.get("b").identity() == \
        {"backend": "openai", "base_url": "http://h/v1", "model": "m"}


@pytest.mark.parametrize("text, message", [
    ("llms:\n  j: {model: m, api_key: sk-live-123}\n",
     "LLM configuration 'j': unknown key 'api_key' (name the environment variable that holds the key with api_key_env)"),
    ("llms:\n  j: {base_url: http://x}\n", "LLM configuration 'j': missing required key 'model'"),
    ("llms:\n  j: {model: m, temperature: 5}\n",
     "LLM configuration 'j': key 'temperature': Input should be less than or equal to 2"),
    ("llms:\n  j: {model: m, backend: grpc}\n",
     "LLM configuration 'j': key 'backend': Input should be 'openai' or 'local'"),
    ("judges: {}\n", "unknown key 'judges' (expected 'llms' and 'default_judge')"),
    ("default_judge: nope\nllms: {}\n", "unknown LLM configuration 'nope' in {path} (known: local-smollm2)"),
    ("llms: [a, b]\n", "'llms' must map configuration keys to their settings"),
    ("llms:\n  j: {model: m\n", "invalid YAML at line 3"),
])
def test_bad_files_name_file_configuration_and_key(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        load_llm_configs(path)
    assert str(error.value).startswith(f"{path}: ") or message.startswith("unknown LLM")
    assert message.format(path=path) in str(error.value)
    assert "sk-live-123" not in str(error.value)


def test_missing_named_file_is_an_error_but_missing_default_file_is_not(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="llm.yaml: LLM configuration file not found"):
        load_llm_configs(tmp_path / "llm.yaml", required=True)
    monkeypatch.setenv("SONAR_LLM_CONFIGS", str(tmp_path / "absent.yaml"))
    assert default_configs_path() == tmp_path / "absent.yaml"
    configs = load_llm_configs()
    assert list(configs.configs) == ["local-smollm2"] and configs.source is None


def test_default_path_follows_xdg_config_home(tmp_path, monkeypatch):
    monkeypatch.delenv("SONAR_LLM_CONFIGS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_configs_path() == tmp_path / "sonar" / "llm-configs.yaml"


def test_api_key_comes_from_the_named_variable(tmp_path, monkeypatch):
    config = load_llm_configs(_write(tmp_path, "llms:\n  j: {model: m, api_key_env: SONAR_TEST_KEY}\n")).get("j")
    monkeypatch.delenv("SONAR_TEST_KEY", raising=False)
    with pytest.raises(ConfigError) as error:
        api_key_for(config)
    assert str(error.value) == "LLM configuration 'j': environment variable SONAR_TEST_KEY (its API key) is not set"
    monkeypatch.setenv("SONAR_TEST_KEY", "sk-abc-123")
    assert api_key_for(config) == "sk-abc-123"


def test_redactor_replaces_every_registered_secret():
    redact = Redactor()
    redact.add("sk-abc-123")
    redact.add("sk-abc-123-longer")
    redact.add("ab")  # too short to redact without garbling answers
    assert redact("Bearer sk-abc-123-longer and sk-abc-123, ab") == f"Bearer {REDACTED} and {REDACTED}, ab"
    assert redact(None) is None
