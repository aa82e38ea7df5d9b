"""The document graph's encoder (sonar_core/models/onnx_encoder.py, graph.graph_encoder): the ONNX export
and its cache, the fallback to torch, the graph's determinism, and closeness to the torch vectors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import sonar_core
from sonar_core.generation.documents import read_corpus
from sonar_core.generation.graph import GraphSettings, build_graph, graph_encoder, graph_key, save_graph
from sonar_core.models import onnx_encoder
from sonar_core.models.embeddings import EmbeddingService
from sonar_core.models.onnx_encoder import EXPORT_VERSION, OnnxEncoder, model_digest, onnx_path, onnx_supported

pytest.importorskip("onnxruntime")
pytest.importorskip("sentence_transformers")

DEMO = Path(sonar_core.__file__).parent / "demo" / "docs"
TEXTS = ["Paris is the capital of France.", "The cat sat on the mat.", "Claims are paid within ten days.",
         "Upload photos of the damage, then click forgot password." * 3, "x"]
#: Least cosine between the ONNX and the torch vector of a text on all-MiniLM-L6-v2. Measured: 0.9999999
#: (1st percentile and minimum) on 10,000 bench chunks and the demo chunks; float32 rounding only.
REAL_COSINE_BOUND = 0.99999


@pytest.fixture(scope="module")
def tiny_st(tmp_path_factory) -> Path:
    """A tiny sentence-transformers folder: random BERT, WordPiece tokenizer, mean pooling, Normalize."""
    from sentence_transformers import SentenceTransformer, models
    from tiny_models import tiny_bert_folder

    root = tmp_path_factory.mktemp("tiny_st")
    tiny_bert_folder(root / "hf", TEXTS)
    encoder = SentenceTransformer(modules=[models.Transformer(str(root / "hf"), max_seq_length=24),
                                           models.Pooling(16, "mean"), models.Normalize()])
    encoder.save(str(root / "tiny-st"))
    return root / "tiny-st"


def torch_vectors(folder: Path, texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu")
    return np.stack([model.encode([t], normalize_embeddings=True, convert_to_numpy=True)[0] for t in texts])


def test_the_export_is_made_once_keyed_by_the_folder_content_and_gives_the_torch_vectors(tiny_st, tmp_path):
    lines: list[str] = []
    encoder = OnnxEncoder(tiny_st, sessions=2, cache=tmp_path / "onnx", say=lines.append)
    expected = tmp_path / "onnx" / f"tiny-st-{model_digest(tiny_st)[:16]}-v{EXPORT_VERSION}.onnx"
    assert encoder.path == expected and expected.is_file()
    assert lines == [f"exporting tiny-st to ONNX once (kept in {tmp_path / 'onnx'})"]
    assert [p.name for p in (tmp_path / "onnx").iterdir()] == [expected.name]  # no temporary file left
    vectors = encoder.encode(TEXTS)
    assert vectors.shape == (5, 16) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    reference = torch_vectors(tiny_st, TEXTS)  # the longest text is cut at max_seq_length 24 by both
    assert np.min(np.sum(vectors * reference, axis=1)) > 0.99999
    # Made once: a second encoder reads the same file and says nothing.
    stamp = expected.stat().st_mtime_ns
    again = OnnxEncoder(tiny_st, sessions=1, cache=tmp_path / "onnx", say=lines.append)
    assert len(lines) == 1 and expected.stat().st_mtime_ns == stamp
    # One session or two, the same bytes (one text per pass on one thread each).
    assert again.encode(TEXTS).tobytes() == vectors.tobytes()
    assert again.encode([]).shape == (0, 16)
    # Texts are shared among the sessions 256 at a time: a last block of one text (fewer than the sessions) too.
    many = [f"{TEXTS[i % 4]} {i}" for i in range(257)]
    shared = encoder.encode(many)
    assert shared.shape == (257, 16)
    assert shared.tobytes() == again.encode(many).tobytes()


def test_a_changed_model_folder_is_exported_again(tiny_st, tmp_path):
    import shutil

    copy = tmp_path / "tiny-st"
    shutil.copytree(tiny_st, copy)
    before = onnx_path(copy, tmp_path / "onnx")
    assert before.name == onnx_path(tiny_st, tmp_path / "onnx").name  # same content, same file
    config = json.loads((copy / "sentence_bert_config.json").read_text())
    (copy / "sentence_bert_config.json").write_text(json.dumps({**config, "max_seq_length": 16}))
    assert onnx_path(copy, tmp_path / "onnx") != before


def test_only_mean_pooled_normalised_folders_with_a_fast_tokenizer_are_exported(tiny_st, tmp_path):
    import shutil

    assert onnx_supported(tiny_st) is None
    folder = tmp_path / "m"
    shutil.copytree(tiny_st, folder)
    pooling = folder / "1_Pooling" / "config.json"
    pooling.write_text(json.dumps({**json.loads(pooling.read_text()), "pooling_mode": "cls"}))
    assert onnx_supported(folder) == "m pools by ['cls'], not by the mean of its tokens"
    pooling.write_text(json.dumps({"word_embedding_dimension": 16, "pooling_mode_mean_tokens": True,
                                   "pooling_mode_max_tokens": True}))  # the flags sentence-transformers 2-4 wrote
    assert onnx_supported(folder) == "m pools by ['max_tokens', 'mean_tokens'], not by the mean of its tokens"
    modules = json.loads((folder / "modules.json").read_text())
    (folder / "modules.json").write_text(json.dumps(modules[:2]))
    assert onnx_supported(folder) == "m's modules are ['Transformer', 'Pooling'], not Transformer, Pooling, Normalize"
    (folder / "modules.json").unlink()
    assert onnx_supported(folder) == "m has no readable modules.json (not a sentence-transformers folder)"
    with pytest.raises(ValueError, match="no readable modules.json"):
        OnnxEncoder(folder, cache=tmp_path / "onnx")


def test_without_onnxruntime_the_graph_embeds_with_torch_and_says_so_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` fails, find_spec finds nothing
    lines: list[str] = []
    service = EmbeddingService(device="cpu")
    settings, embed = graph_encoder(GraphSettings(), service, lines.append)
    assert lines == ["the document graph embeds with torch: onnxruntime is not installed "
                     "(pip install 'sonar-eval[generate]')"]
    assert settings.embedding_backend == "torch"
    vectors = embed(TEXTS[:2])
    assert vectors.tobytes() == service.embed(TEXTS[:2]).tobytes()  # the embedding service's own vectors
    with pytest.raises(ValueError, match="embedding_backend 'tf': expected one of auto, onnx, torch"):
        graph_encoder(GraphSettings(embedding_backend="tf"), service)


def test_torch_is_used_when_asked_and_the_encoder_is_in_the_graph_key():
    service = EmbeddingService(device="cpu")
    lines: list[str] = []
    torch_settings, _ = graph_encoder(GraphSettings(embedding_backend="torch"), service, lines.append)
    onnx_settings, _ = graph_encoder(GraphSettings(), service, lines.append)
    # Nothing to say, each got what it asked for (but the export's own line the first time on a machine).
    assert [line for line in lines if not line.startswith("exporting all-MiniLM-L6-v2 to ONNX once")] == []
    assert (torch_settings.embedding_backend, onnx_settings.embedding_backend) == ("torch", f"onnx-v{EXPORT_VERSION}")
    corpus = read_corpus([DEMO])
    assert graph_key(corpus, torch_settings) != graph_key(corpus, onnx_settings)


def test_the_graph_is_the_same_on_every_build_and_its_vectors_are_torch_s_to_float_rounding(tmp_path, monkeypatch):
    monkeypatch.setattr(onnx_encoder, "_DIGESTS", {})
    corpus = read_corpus([DEMO])
    files = []
    for build in range(2):
        service = EmbeddingService(device="cpu")  # a fresh encoder each time (the export is reused)
        settings, embed = graph_encoder(GraphSettings(), service)
        graph = build_graph(corpus, settings, embed)
        graph.seconds = {}
        save_graph(graph, tmp_path / f"graph{build}.json")
        files.append((tmp_path / f"graph{build}.json").read_bytes())
    assert files[0] == files[1]
    assert graph.settings["embedding_backend"] == f"onnx-v{EXPORT_VERSION}" and len(graph.chunks) >= 10
    torch_graph = build_graph(corpus, GraphSettings(embedding_backend="torch"), EmbeddingService(device="cpu").embed)
    cosines = np.sum(graph.vectors * torch_graph.vectors, axis=1)
    assert cosines.min() > REAL_COSINE_BOUND
    # A text longer than the model's 256 word pieces is cut where sentence-transformers cuts it.
    long = " ".join(["The policy covers storm damage to the roof and the windows."] * 40)
    assert float(embed([long])[0] @ EmbeddingService(device="cpu").embed([long])[0]) > REAL_COSINE_BOUND
    # What the graph decides does not move.
    assert graph.duplicates == torch_graph.duplicates
    assert [c["topic"] for c in graph.chunks] == [c["topic"] for c in torch_graph.chunks]
    assert [(link["a"], link["b"]) for link in graph.links] == [(link["a"], link["b"]) for link in torch_graph.links]


def test_a_failed_export_leaves_the_graph_to_torch_with_one_line(monkeypatch):
    def fail(folder, cache=None, say=None):
        raise RuntimeError("the exporter met an unknown operator")

    monkeypatch.setattr(onnx_encoder, "onnx_model", fail)
    lines: list[str] = []
    settings, _ = graph_encoder(GraphSettings(), EmbeddingService(device="cpu"), lines.append)
    assert settings.embedding_backend == "torch"
    assert lines == ["the document graph embeds with torch: the ONNX export of all-MiniLM-L6-v2 failed "
                     "(RuntimeError: the exporter met an unknown operator)"]
