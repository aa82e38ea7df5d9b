"""The local backend: a causal LM from the model store, chat template applied, greedy by default.

The model is a tiny random-weight Llama with a tokenizer trained here on a few sentences; the real
store, transformers loading and generation paths run on it.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from sonar_core.llm import LLMClient, LLMConfig, LLMRequest, ResponseCache  # noqa: E402

CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")
SENTENCES = [
    "Is the answer safe? Respond with true or false.",
    "The text contains contact information: present or absent.",
    "Paris is the capital of France and Berlin is the capital of Germany.",
    "Summaries should be comprehensive, concise, coherent and independent.",
]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    """Folder of a 2-layer random Llama and its BPE tokenizer with a chat template."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-lm")
    special = ["<unk>", "<s>", "</s>", "<|user|>", "<|assistant|>"]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.train_from_iterator(SENTENCES * 5, trainers.BpeTrainer(vocab_size=300, special_tokens=special,
                                                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    from tokenizers import decoders

    bpe.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                                        pad_token="</s>")
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         bos_token_id=1, eos_token_id=2, pad_token_id=2)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def _greedy_by_hand(folder, messages, steps: int) -> str:
    """Argmax decoding with plain forward passes, on the chat-templated prompt."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    prompt = "".join(f"<|{m['role']}|>{m['content']}\n" for m in messages) + "<|assistant|>"
    ids = tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"]
    new: list[int] = []
    with torch.no_grad():
        for _ in range(steps):
            token = int(model(ids).logits[0, -1].argmax())
            if token == tokenizer.eos_token_id:
                break
            new.append(token)
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    return tokenizer.decode(new, skip_special_tokens=True).strip()


def _config(folder, **overrides) -> LLMConfig:
    return LLMConfig(**{"key": "tiny", "backend": "local", "model": str(folder), "device": "cpu", "max_tokens": 6,
                        **overrides})


def test_local_backend_answers_greedily_with_the_chat_template(tiny_lm, tmp_path):
    messages = [{"role": "user", "content": "Is the answer safe? Respond with true or false."}]
    expected = _greedy_by_hand(tiny_lm, messages, steps=6)
    assert expected  # random weights still produce some text
    client = LLMClient(_config(tiny_lm), cache=ResponseCache(tmp_path / "c.sqlite"))
    assert client.check() is None
    first = client.complete(messages)
    assert first.ok and first.text == expected and not first.cached
    second = client.complete(messages)
    assert second.cached and second.text == expected


def test_local_backend_samples_reproducibly_when_a_temperature_is_set(tiny_lm):
    messages = [{"role": "user", "content": "Paris is the capital of"}]
    requests = [LLMRequest(messages, repeat=r) for r in range(4)]
    first = [c.text for c in LLMClient(_config(tiny_lm, temperature=1.5)).complete_many(requests)]
    again = [c.text for c in LLMClient(_config(tiny_lm, temperature=1.5)).complete_many(requests)]
    assert first == again
    assert len(set(first)) > 1  # the repeats are different draws


def test_a_missing_local_model_is_named_without_a_call(tmp_path):
    client = LLMClient(_config(tmp_path / "no-such-model"))
    assert client.check() == f"model '{tmp_path / 'no-such-model'}': no such folder (give the folder of a saved model)"
    answer = client.complete("Q")
    assert answer.text is None and answer.error.startswith(f"model '{tmp_path / 'no-such-model'}': no such folder")


def _label_scores_by_hand(folder, messages, labels) -> dict[str, float]:
    """Each label's summed log-softmax over its tokens and the end of sequence, one full pass each."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    prompt = "".join(f"<|{m['role']}|>{m['content']}\n" for m in messages) + "<|assistant|>"
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    scores = {}
    with torch.no_grad():
        for label in labels:
            target = tokenizer(label, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            ids = torch.tensor([prompt_ids + target])
            logits = model(ids).logits[0]
            total = 0.0
            for offset, token in enumerate(target):
                position = len(prompt_ids) - 1 + offset  # the logits that predict this token
                total += float(torch.log_softmax(logits[position], dim=-1)[token])
            scores[label] = total
    return scores


def test_local_label_scores_are_the_summed_log_probabilities_of_each_label(tiny_lm):
    from sonar_core.llm.backends import LocalCausalLMBackend

    messages = [{"role": "user", "content": "The text contains contact information: present or absent."}]
    labels = ("present", "absent", "Paris is the capital", "1", "10")
    expected = _label_scores_by_hand(tiny_lm, messages, labels)
    scores = LocalCausalLMBackend(_config(tiny_lm)).label_scores(messages, labels)
    assert list(scores) == list(labels)
    for label in labels:
        assert scores[label] == pytest.approx(expected[label], abs=1e-4)


def test_the_prompt_pass_computes_the_last_positions_logits_only(tiny_lm):
    """The output layer runs on the one position whose logits are read (the scores are those above)."""
    from sonar_core.llm.backends import LocalCausalLMBackend

    backend = LocalCausalLMBackend(_config(tiny_lm))
    model, _ = backend._load()
    widths = []
    handle = model.lm_head.register_forward_hook(lambda module, args, out: widths.append(tuple(out.shape[:2])))
    try:
        backend.label_scores([{"role": "user", "content": "A question of several words."}], ("yes", "no"))
    finally:
        handle.remove()
    assert widths[0] == (1, 1)  # the prompt pass: one row, one position
    assert widths[1][0] == 2  # then the two labels' tokens together


def test_a_labelled_local_request_answers_the_most_probable_label_with_its_softmax_share(tiny_lm, tmp_path):
    import math

    messages = [{"role": "user", "content": "Is the answer safe? Respond with true or false."}]
    labels = ("true", "false", "present")
    expected = _label_scores_by_hand(tiny_lm, messages, labels)
    best = max(labels, key=expected.get)
    share = math.exp(expected[best]) / sum(math.exp(v) for v in expected.values())
    client = LLMClient(_config(tiny_lm), cache=ResponseCache(tmp_path / "c.sqlite"))
    first = client.complete_many([LLMRequest(messages, labels=labels)])[0]
    assert first.text == best and first.confidence == pytest.approx(share, abs=1e-4)
    again = client.complete_many([LLMRequest(messages, labels=labels)])[0]
    assert again.cached and again.text == best and again.confidence == first.confidence


def test_a_sampled_local_label_is_reproducible_per_repeat(tiny_lm):
    messages = [{"role": "user", "content": "Paris is the capital of"}]
    labels = ("France", "Germany", "the", "Paris")
    requests = [LLMRequest(messages, repeat=r, labels=labels) for r in range(8)]
    first = [c.text for c in LLMClient(_config(tiny_lm, temperature=2.0)).complete_many(requests)]
    again = [c.text for c in LLMClient(_config(tiny_lm, temperature=2.0)).complete_many(requests)]
    assert first == again and set(first) <= set(labels)
    assert len(set(first)) > 1  # at a high temperature the repeats differ


def test_a_local_call_without_usage_is_counted_by_the_models_tokenizer(tiny_lm):
    """docs/costs.md: a local model's labelled verdict reports no usage; its tokenizer counts the prompt (chat
    template applied) and the answer, for the client's counters and the run's ledger."""
    from transformers import AutoTokenizer

    from sonar_core.llm.ledger import CostLedger

    messages = [{"role": "user", "content": "Is the answer safe? Respond with true or false."}]
    tokenizer = AutoTokenizer.from_pretrained(tiny_lm)
    prompt = "".join(f"<|{m['role']}|>{m['content']}\n" for m in messages) + "<|assistant|>"
    client = LLMClient(_config(tiny_lm))
    client.ledger = CostLedger()
    answer = client.complete_many([LLMRequest(messages, labels=("true", "false"), tags={"evaluator": "e"})])[0]
    assert answer.ok and answer.text in ("true", "false")
    expected = (len(tokenizer(prompt, add_special_tokens=False)["input_ids"]),
                len(tokenizer(answer.text, add_special_tokens=False)["input_ids"]))
    assert expected[0] > 10
    assert (client.stats.input_tokens, client.stats.output_tokens) == expected
    assert client.ledger.record()["evaluators"]["e"] == {"calls": 1, "input_tokens": expected[0],
                                                          "output_tokens": expected[1], "cost": None}
