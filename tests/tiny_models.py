"""Tiny random-weight models of real architectures, saved as Hugging Face folders, for tests.

Each builder trains a small tokenizer on a few sentences with `tokenizers` (or writes a WordPiece
vocabulary) and saves a randomly initialised model of the named architecture next to it, so the
real loading and inference code of the evaluators runs in milliseconds. Weights are seeded, so a
folder built twice is the same model.
"""

from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "The cat sat on the mat.",
    "Paris is the capital of France.",
    "Stock prices fell sharply on Monday.",
    "The storm caused damage to many homes in the state.",
    "Customers can file a claim online or by phone.",
    "In other words, the answer is yes.",
    "Answer the question based on the conversation between a human and AI.",
    "Rewrite the following text with the same semantics.",
]
WORDS = sorted({w.strip(".,?").lower() for s in SENTENCES for w in s.split()} | {"bad", "good", "hate", "love"})


def _bpe_tokenizer(bos: str | None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<unk>", "<eos>"] + ([bos] if bos else [])
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(SENTENCES * 3, trainer)
    if bos:
        # Like the converted SmolLM2 tokenizer: a BOS token is put in front of every text by default.
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", special_tokens=[(bos, tokenizer.token_to_id(bos))])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", eos_token="<eos>",
                                   bos_token=bos)


def causal_lm_folder(folder: Path, architecture: str = "gpt2") -> Path:
    """A tiny GPT-2 or Llama causal LM with its BPE tokenizer (no pad token; Llama's adds a BOS)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    tokenizer = _bpe_tokenizer("<s>" if architecture == "llama" else None)
    torch.manual_seed(0)
    if architecture == "gpt2":
        model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_positions=256, n_embd=32, n_layer=2,
                                           n_head=2, eos_token_id=tokenizer.eos_token_id,
                                           bos_token_id=tokenizer.eos_token_id))
    else:
        model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                             num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                                             max_position_embeddings=256, eos_token_id=tokenizer.eos_token_id,
                                             bos_token_id=tokenizer.bos_token_id))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _wordpiece_tokenizer(folder: Path):
    from transformers import BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "?", "'"] + WORDS
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)


def classifier_folder(folder: Path, labels: list[str], architecture: str = "bert",
                      bias: list[float] | None = None, max_positions: int = 128) -> Path:
    """A tiny BERT or DistilBERT sequence classifier with a WordPiece tokenizer.

    With ``bias`` the classification head's weights are zero and its bias is ``bias``: every input
    then gets exactly these logits, so a test knows the probabilities the evaluator must report.
    """
    import torch
    from transformers import (BertConfig, BertForSequenceClassification, DistilBertConfig,
                              DistilBertForSequenceClassification)

    tokenizer = _wordpiece_tokenizer(folder)
    id2label = dict(enumerate(labels))
    label2id = {name: i for i, name in id2label.items()}
    torch.manual_seed(0)
    if architecture == "bert":
        model = BertForSequenceClassification(BertConfig(
            vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, max_position_embeddings=max_positions, id2label=id2label, label2id=label2id))
        head = model.classifier
    else:
        model = DistilBertForSequenceClassification(DistilBertConfig(
            vocab_size=len(tokenizer), dim=32, n_layers=2, n_heads=2, hidden_dim=64,
            max_position_embeddings=max_positions, id2label=id2label, label2id=label2id))
        head = model.classifier
    if bias is not None:
        with torch.no_grad():
            head.weight.zero_()
            head.bias.copy_(torch.tensor(bias))
    tokenizer.model_max_length = max_positions
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def bert_encoder_folder(folder: Path, max_positions: int = 128) -> Path:
    """A tiny BERT encoder (``BertModel``, two layers) with a WordPiece tokenizer: token vectors for BERTScore."""
    import torch
    from transformers import BertConfig, BertModel

    tokenizer = _wordpiece_tokenizer(folder)
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                 intermediate_size=64, max_position_embeddings=max_positions))
    tokenizer.model_max_length = max_positions
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def seq2seq_lm_folder(folder: Path) -> Path:
    """A tiny T5 (``T5ForConditionalGeneration``, like flan-t5) with a BPE tokenizer that ends every text
    with ``</s>`` as T5's does; pad (0) is the decoder's start token, as in T5."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "</s>", "<unk>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(SENTENCES * 3, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", tokenizer.token_to_id("</s>"))])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", eos_token="</s>", pad_token="<pad>")
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(T5Config(
        vocab_size=len(fast), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=2,
        pad_token_id=fast.pad_token_id, eos_token_id=fast.eos_token_id, decoder_start_token_id=fast.pad_token_id))
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def tiny_bert_folder(folder: Path, corpus: list[str]) -> Path:
    """A one-layer BERT (hidden size 16) and a fast WordPiece tokenizer trained on ``corpus`` (with a pair template),
    for a sentence-transformers folder built on it (the semantic evaluators' and the ONNX export's tests)."""
    import torch
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors, trainers
    from tokenizers.models import WordPiece
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokenizer = Tokenizer(WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.train_from_iterator(corpus, trainers.WordPieceTrainer(vocab_size=120, special_tokens=specials))
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    tokenizer.decoder = decoders.WordPiece()
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    torch.manual_seed(0)
    bert = BertModel(BertConfig(vocab_size=tokenizer.get_vocab_size(), hidden_size=16, num_hidden_layers=1,
                                num_attention_heads=2, intermediate_size=32, max_position_embeddings=64))
    bert.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder
