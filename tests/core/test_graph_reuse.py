"""A document graph built again after its documents changed takes the vectors of the chunks its output's
earlier graph already embedded (graph.earlier_vectors, graph.Reusing, generation/run._graph), and gives
the graph a cold build gives."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import sonar_core
from sonar_core.generation.documents import read_corpus
from sonar_core.generation.graph import (GraphSettings, Reusing, build_graph, earlier_vectors, graph_encoder,
                                         read_graph_file, save_graph)
from sonar_core.models.embeddings import EmbeddingService

pytest.importorskip("sentence_transformers")

DEMO = Path(sonar_core.__file__).parent / "demo" / "docs"
FIRST = ["northwind-home-policy.md", "hausrat-merkblatt-de.md"]
ADDED = "northwind-claims-guide.html"


@pytest.fixture(scope="module")
def encoder():
    """The graph's own encoder on the embedded model (ONNX when onnxruntime is installed, torch otherwise)."""
    return graph_encoder(GraphSettings(), EmbeddingService(device="cpu"))


def _counting(embed, seen: list[str]):
    def counted(texts: list[str]) -> np.ndarray:
        seen.extend(texts)
        return embed(texts)
    return counted


def _same_graph(one, other) -> None:
    assert one.chunks == other.chunks and one.links == other.links and one.topics == other.topics
    assert one.duplicates == other.duplicates and one.key == other.key
    assert one.vectors.tobytes() == other.vectors.tobytes()


def test_a_grown_corpus_embeds_only_the_new_chunks_and_gives_the_cold_graph(tmp_path, encoder):
    settings, embed = encoder
    first = build_graph(read_corpus([DEMO / name for name in FIRST]), settings, embed)
    save_graph(first, tmp_path / "suite.graph.json")
    everything = read_corpus([DEMO / name for name in FIRST + [ADDED]])
    cold = build_graph(everything, settings, embed)

    earlier = earlier_vectors(read_graph_file(tmp_path / "suite.graph.json"), settings)
    assert len(earlier) == len(first.chunks) > 0
    asked = []
    encode = Reusing(_counting(embed, asked), earlier)
    again = build_graph(everything, settings, encode)
    _same_graph(again, cold)
    new_texts = {f"{c['heading']}\n{c['text']}" if c["heading"] else c["text"]
                 for c in cold.chunks if c["source"].endswith(ADDED)}
    assert set(asked) == new_texts and len(asked) == len(new_texts) > 0
    assert encode.reused == len(first.chunks)


def test_vectors_of_another_encoder_model_or_version_are_not_taken(tmp_path, encoder):
    settings, embed = encoder
    graph = build_graph(read_corpus([DEMO / FIRST[0]]), settings, embed)
    path = tmp_path / "suite.graph.json"
    save_graph(graph, path)
    stored = read_graph_file(path)
    assert len(earlier_vectors(stored, settings)) == len(graph.chunks)
    other = "torch" if settings.embedding_backend != "torch" else "onnx-v1"
    assert earlier_vectors(stored, GraphSettings(embedding_backend=other)) == {}
    assert earlier_vectors(stored, GraphSettings(embedding_model="paraphrase-MiniLM-L3-v2",
                                                 embedding_backend=settings.embedding_backend)) == {}
    payload = json.loads(path.read_text())
    for change in ({"graph_version": 1}, {"vectors": {"shape": [1, 384], "float32_base64": base64.b64encode(
            np.zeros(384, "<f4").tobytes()).decode()}}):
        (tmp_path / "changed.json").write_text(json.dumps({**payload, **change}))
        assert read_graph_file(tmp_path / "changed.json") is None
        assert earlier_vectors(read_graph_file(tmp_path / "changed.json"), settings) == {}
    (tmp_path / "cut.json").write_text(path.read_text()[:500])
    assert read_graph_file(tmp_path / "cut.json") is None and read_graph_file(tmp_path / "missing.json") is None


def test_a_generation_after_a_document_was_added_says_how_many_vectors_it_kept(tmp_path):
    from generation_script import reply
    from judge_server import JudgeServer, write_llm_configs
    from sonar_core.generate_config import GenerateSpec
    from sonar_core.generation.run import run_generation

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in FIRST:
        shutil.copy(DEMO / name, docs / name)
    with JudgeServer(default=reply) as server:
        configs = write_llm_configs(tmp_path / "llm.yaml", server.base_url, max_concurrency=4, backoff=0.01)
        spec = GenerateSpec.model_validate({
            "docs": [str(docs)], "n": 2, "output": str(tmp_path / "out" / "suite.jsonl"), "llm_configs": str(configs),
            "llm_cache": str(tmp_path / "cache.sqlite"), "calibrate": False, "device": "cpu"})
        first = run_generation(spec)
        assert first.findings.graph["vectors_reused"] == 0
        shutil.copy(DEMO / ADDED, docs / ADDED)
        second = run_generation(spec)
    assert second.findings.graph["reused"] is False
    assert second.findings.graph["vectors_reused"] == first.findings.graph["chunks"]
    page = (tmp_path / "out" / "suite.report.html").read_text(encoding="utf-8")
    assert f"graph built ({first.findings.graph['chunks']} chunk(s) kept their vectors from the earlier graph)." in page
