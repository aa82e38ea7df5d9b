"""The document graph's encoder: a sentence-transformers model run by ONNX Runtime on the CPU.

The generation graph embeds every chunk of a corpus once (10,000 chunks and more). ONNX Runtime runs
the same network, exported from the same local model folder, in about 0.8 of torch's CPU time (one
chunk of 143 word pieces on one thread: 55.7 against 71.2 ms; 1,000 chunks: 62.5 against 78.8 CPU s),
and gives the same vectors as the torch
path to float32 rounding (cosine 1 - 1e-7, measured in docs/generate.md). It is used by the
document graph only: the evaluators' embedding service (:mod:`.embeddings`) stays on torch, so a
run's scores do not move.

* **Export** (:func:`onnx_model`): the folder's transformer, mean pooling over the attention mask
  and L2 normalisation, exported once with ``torch.onnx.export`` (no hub, no network) to
  ``$SONAR_HOME/onnx/<folder name>-<content hash>-v<EXPORT_VERSION>.onnx``, written beside and
  renamed into place (a killed export never leaves half a file). The hash is over the folder's
  files, so a changed model is exported again; :data:`EXPORT_VERSION` changes when the export does.
* **Models it takes** (:func:`onnx_supported`): a sentence-transformers folder of exactly a
  Transformer, a mean Pooling and a Normalize module, with a ``tokenizer.json``; any other model
  is encoded by torch.
* **Encoding** (:class:`OnnxEncoder`): like the embedding service, one text per forward pass on one
  intra-op thread, so a text's vector depends on the text and the model alone (not on its
  companions' padding, nor on the thread count); texts are shared among ``sessions`` threads, each
  with its own session and tokenizer (truncated to the model's ``max_seq_length``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from .locations import sonar_home

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["EXPORT_VERSION", "OnnxEncoder", "onnx_available", "onnx_supported", "onnx_model", "model_digest"]

#: Part of every exported file's name: a change in how models are exported exports them again.
EXPORT_VERSION = 1
#: The ONNX opset the export targets (ONNX Runtime 1.16 and later run it).
_OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_DIGESTS: dict[tuple[str, tuple[tuple[str, int, int], ...]], str] = {}
_EXPORT_LOCK = threading.Lock()
#: Texts shared among the sessions at a time (what an interrupted encoding still finishes).
_BLOCK = 256


def onnx_available() -> bool:
    """Whether ONNX Runtime is installed (found without importing it)."""
    return importlib.util.find_spec("onnxruntime") is not None


def onnx_supported(folder: Path) -> str | None:
    """None when ``folder`` is a model this module exports; otherwise why not (one line)."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"{folder.name} has no readable modules.json (not a sentence-transformers folder)"
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules if isinstance(m, dict)]
    if kinds != ["Transformer", "Pooling", "Normalize"]:
        return f"{folder.name}'s modules are {kinds}, not Transformer, Pooling, Normalize"
    pooling_path = next(m.get("path", "") for m in modules if str(m.get("type", "")).endswith("Pooling"))
    try:
        pooling = json.loads((folder / pooling_path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"{folder.name} has no readable pooling configuration"
    # sentence-transformers 5 writes ``"pooling_mode": "mean"``; earlier ones a flag per mode.
    modes = ([str(pooling["pooling_mode"])] if "pooling_mode" in pooling else
             sorted(k.removeprefix("pooling_mode_") for k, v in pooling.items() if k.startswith("pooling_mode") and v))
    if modes not in (["mean"], ["mean_tokens"]):
        return f"{folder.name} pools by {modes}, not by the mean of its tokens"
    if not (folder / "tokenizer.json").is_file():
        return f"{folder.name} has no tokenizer.json"
    if _read(folder / "config_sentence_transformers.json").get("default_prompt_name"):
        return f"{folder.name} puts a default prompt before every text"
    if max_seq_length(folder) is None:
        return f"{folder.name} says nowhere how long an input may be"
    return None


def _read(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def max_seq_length(folder: Path) -> int | None:
    """The longest input, in word pieces, the model reads, where sentence-transformers finds it: the
    folder's ``sentence_bert_config.json`` (before version 5), else the tokenizer's ``model_max_length``."""
    for path, key in (("sentence_bert_config.json", "max_seq_length"), ("tokenizer_config.json", "model_max_length")):
        value = _read(folder / path).get(key)
        if isinstance(value, int) and 0 < value < 1_000_000:  # transformers writes 1e30 for "no limit"
            return value
    return None


def model_digest(folder: Path) -> str:
    """SHA-256 over the names and contents of the folder's files (kept per process while unchanged)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    stamp = tuple((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    key = (str(folder.resolve()), stamp)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        for path in files:
            digest.update(f"{path.relative_to(folder).as_posix()}\0".encode())
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            digest.update(b"\n")
        _DIGESTS[key] = digest.hexdigest()
    return _DIGESTS[key]


def onnx_path(folder: Path, cache: Path | None = None) -> Path:
    """Where the export of ``folder`` is (or will be) kept."""
    return (cache or sonar_home() / "onnx") / f"{folder.name}-{model_digest(folder)[:16]}-v{EXPORT_VERSION}.onnx"


def _export(folder: Path, target: Path) -> None:
    """Export the folder's transformer with mean pooling and L2 normalisation to ``target``."""
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        """What sentence-transformers computes: mean of the token vectors under the mask, normalised."""

        def __init__(self, transformer: torch.nn.Module) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            tokens = self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                      token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    transformer = AutoModel.from_pretrained(str(folder), local_files_only=True, attn_implementation="eager")
    model = Pooled(transformer.eval())
    example = torch.ones((1, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in _INPUTS}
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        import warnings

        with torch.no_grad(), warnings.catch_warnings(), _without_onnx_package():
            warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notes
            torch.onnx.export(model, (example, torch.ones_like(example), torch.zeros_like(example)), str(temporary),
                              input_names=list(_INPUTS), output_names=["embedding"],
                              dynamic_axes={**axes, "embedding": {0: "batch"}}, opset_version=_OPSET,
                              do_constant_folding=True, dynamo=False)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


@contextmanager
def _without_onnx_package():
    """Let torch's TorchScript exporter write its model without the ``onnx`` package when it is missing.

    The exporter serialises the model itself, then hands the bytes to ``onnx`` only to insert
    onnx-script functions, of which this export has none. ``onnx`` needs protobuf 3.20 or later, which
    lmppl (the models extra) refuses, so it is not installed with Sonar: that step is skipped then.
    """
    try:
        from torch.onnx._internal.torchscript_exporter import onnx_proto_utils
    except ImportError:  # another torch: its exporter is used as it is
        yield
        return
    if importlib.util.find_spec("onnx") is not None or not hasattr(onnx_proto_utils, "_add_onnxscript_fn"):
        yield
        return
    original = onnx_proto_utils._add_onnxscript_fn
    onnx_proto_utils._add_onnxscript_fn = lambda model_bytes, custom_opsets: model_bytes
    try:
        yield
    finally:
        onnx_proto_utils._add_onnxscript_fn = original


def onnx_model(folder: Path, cache: Path | None = None, say: Callable[[str], None] = lambda line: None) -> Path:
    """The ONNX file of ``folder``, exported on first use and reused after (see the module docstring)."""
    target = onnx_path(folder, cache)
    with _EXPORT_LOCK:
        if not target.is_file():
            say(f"exporting {folder.name} to ONNX once (kept in {target.parent})")
            _export(folder, target)
    return target


class OnnxEncoder:
    """Normalised float32 sentence vectors of a supported model folder, by ONNX Runtime on the CPU."""

    def __init__(self, folder: Path, sessions: int = 2, cache: Path | None = None,
                 say: Callable[[str], None] = lambda line: None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        why = onnx_supported(folder)
        if why is not None:
            raise ValueError(why)
        self.folder = folder
        self.path = onnx_model(folder, cache, say)
        options = ort.SessionOptions()
        # One thread per session and one text per pass: a text's vector is the same bytes however
        # many sessions share the work (see the module docstring).
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self._sessions = [ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
                          for _ in range(max(1, sessions))]
        length = max_seq_length(folder) or 512
        self._tokenizers = []
        for _ in self._sessions:  # a tokenizer per thread, as the embedding service has
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            tokenizer.enable_truncation(length)
            tokenizer.no_padding()
            self._tokenizers.append(tokenizer)
        self.dimension = int(self._sessions[0].get_outputs()[0].shape[-1] or 0) or None

    def _encode_share(self, number: int, texts: Sequence[str], advance: Callable[[int], None] | None) -> np.ndarray:
        import numpy as np

        session, tokenizer = self._sessions[number], self._tokenizers[number]
        vectors = []
        for count, text in enumerate(texts, 1):
            ids = np.asarray([tokenizer.encode(text).ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
            vectors.append(session.run(None, feed)[0][0])
            if advance is not None and count % 256 == 0:
                advance(256)
        if advance is not None and len(texts) % 256:
            advance(len(texts) % 256)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)

    def encode(self, texts: Sequence[str], advance: Callable[[int], None] | None = None) -> np.ndarray:
        """(n, d) float32 vectors of ``texts``, in order; ``advance(k)`` as texts are done."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        if len(self._sessions) == 1 or len(texts) == 1:
            return self._encode_share(0, texts, advance)
        from concurrent.futures import ThreadPoolExecutor

        lock = threading.Lock()

        def tick(count: int) -> None:  # the threads take turns on the progress bar
            if advance is not None:
                with lock:
                    advance(count)

        parts = []
        # A block at a time: Ctrl-C waits for the block in hand (well under a second a text), not for them all.
        for start in range(0, len(texts), _BLOCK):
            block = texts[start:start + _BLOCK]
            n = min(len(self._sessions), len(block))  # the last block may hold fewer texts than there are sessions
            with ThreadPoolExecutor(n, thread_name_prefix="sonar-onnx") as pool:
                shares = list(pool.map(lambda i: self._encode_share(i, block[i::n], tick), range(n)))
            merged = np.empty((len(block), shares[0].shape[1]), dtype=np.float32)
            for i, share in enumerate(shares):
                merged[i::n] = share
            parts.append(merged)
        return np.concatenate(parts) if len(parts) > 1 else parts[0]
