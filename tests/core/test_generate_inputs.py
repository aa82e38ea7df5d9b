"""sonar generate's inputs and plan, without any model: documents, chunks, languages, duplicates, quotas."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sonar_core.errors import DatasetError
from sonar_core.generation.chunking import count_tokens, split_corpus
from sonar_core.generation.documents import read_corpus
from sonar_core.generation.graph import DocumentGraph
from sonar_core.generation.graph_parts import links, near_duplicates
from sonar_core.generation.language import detect
from sonar_core.generation.parsing import ReplyError, parse_reply
from sonar_core.generation.quality import SELF_REFERENCE
from sonar_core.generation.quotas import largest_remainder, plan_items


def tiny_pdf(text: str) -> bytes:
    """A one-page PDF whose page shows ``text`` in Helvetica (offsets computed, so pypdf reads it)."""
    stream = f"BT /F1 12 Tf 20 100 Td ({text}) Tj ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_every_format_is_read_and_bad_files_are_skipped_with_a_reason(tmp_path):
    from pypdf import PdfWriter

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Cover\n\n## Water\nBurst pipes are covered.\n", encoding="utf-8")
    (docs / "b.txt").write_text("Plain text about fire cover.", encoding="utf-8")
    (docs / "c.html").write_text("<html><head><style>p{}</style><script>alert(1)</script></head><body>"
                                 "<h2>Theft</h2><p>Theft &amp; burglary are covered.</p></body></html>", encoding="utf-8")
    (docs / "d.pdf").write_bytes(tiny_pdf("Glass breakage has no excess."))
    writer = PdfWriter()
    writer.add_blank_page(width=100, height=100)
    writer.encrypt("secret")
    with open(docs / "locked.pdf", "wb") as handle:
        writer.write(handle)
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf at all")
    (docs / "binary.txt").write_bytes(b"\x00\x01\x02binary")
    with open(docs / "huge.txt", "wb") as handle:  # 200 MB, sparse: nothing is read
        handle.truncate(200 * 2**20)
    (docs / "notes.docx").write_bytes(b"ignored: not a format read")
    corpus = read_corpus([docs])
    texts = {d.source: d.text for d in corpus.documents}
    assert sorted(texts) == ["docs/a.md", "docs/b.txt", "docs/c.html", "docs/d.pdf"]
    assert texts["docs/c.html"] == "## Theft\n\nTheft & burglary are covered."
    assert "Glass breakage has no excess." in texts["docs/d.pdf"]
    assert corpus.skipped == [
        {"source": "docs/binary.txt", "reason": "a binary file (NUL bytes), not text"},
        {"source": "docs/broken.pdf", "reason": corpus.skipped[1]["reason"]},
        {"source": "docs/huge.txt", "reason": "too large (200 MB; at most 50 MB a file)"},
        {"source": "docs/locked.pdf", "reason": "an encrypted PDF (it needs a password)"},
    ]
    assert corpus.skipped[1]["reason"].startswith("an unreadable PDF (")


def test_no_usable_document_is_one_line_naming_the_folder_and_why(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetError) as info:
        read_corpus([empty])
    assert str(info.value) == f"{empty}: no documents found (looked for .txt, .md, .markdown, .html, .htm, .pdf, .jsonl)"
    (empty / "x.txt").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(DatasetError) as info:
        read_corpus([empty])
    assert str(info.value) == f"{empty}: no usable document (empty/x.txt: a binary file (NUL bytes), not text)"
    with pytest.raises(DatasetError, match="no such file or folder"):
        read_corpus([tmp_path / "missing"])


@pytest.mark.parametrize("lines, message", [
    ([{"id": "a", "text": "t", "source": "s"}, {"text": "t", "source": "s"}],
     "chunks.jsonl:2, field 'id': missing (every chunk needs its own id)"),
    ([{"id": "a", "text": "t", "source": "s"}, {"id": "b", "text": "u", "source": "s"}, {"id": "a", "text": "v"}],
     "chunks.jsonl:3, field 'id': duplicate id 'a' (first at line 1)"),
])
def test_a_chunk_file_with_missing_or_duplicate_ids_is_an_error_naming_file_and_line(tmp_path, lines, message):
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        read_corpus([path])
    assert str(info.value) == f"{tmp_path}/{message}"


def test_own_chunks_are_kept_as_given(tmp_path):
    path = tmp_path / "chunks.jsonl"
    path.write_text(json.dumps({"id": "p-1", "text": "Hail damage to cars is covered.", "source": "faq.pdf"}) + "\n",
                    encoding="utf-8")
    chunks = split_corpus(read_corpus([path]))
    assert [(c.id, c.source, c.text) for c in chunks] == [("p-1", "faq.pdf", "Hail damage to cars is covered.")]


def test_chunks_follow_headings_then_the_token_count(tmp_path):
    path = tmp_path / "policy.md"
    long_paragraph = " ".join(f"word{i}." for i in range(30))  # 60 tokens: 30 words, 30 full stops
    path.write_text(f"Intro line.\n\n# Home\n\n## Water\nPipes burst.\n\n{long_paragraph}\n\n## Fire\nSmoke too.\n",
                    encoding="utf-8")
    chunks = split_corpus(read_corpus([path]), max_tokens=40)
    # Water: "Pipes burst." (3 tokens) then 30 sentences of 2 tokens, packed greedily up to 40:
    # 3 + 18 x 2 = 39, then the other 12 sentences, 24 tokens.
    assert [(c.id, c.heading, c.tokens) for c in chunks] == [
        ("policy.md#1", "", 3), ("policy.md#2", "Home > Water", 39), ("policy.md#3", "Home > Water", 24),
        ("policy.md#4", "Home > Fire", 3)]
    assert count_tokens("Pipes burst.") == 3


def test_languages_are_detected_offline():
    assert detect("Northwind Mutual ersetzt plötzliche Wasserschäden durch geplatzte Leitungen.") == "de"
    assert detect("Northwind Mutual covers sudden water damage from burst pipes.") == "en"
    assert detect("Hi there") == "und"


def test_languages_of_many_texts_at_once_are_those_of_one_at_a_time(monkeypatch):
    from sonar_core.generation import language

    texts = ["Northwind Mutual ersetzt plötzliche Wasserschäden durch geplatzte Leitungen.", "Hi there", "",
             "Northwind Mutual covers sudden water damage from burst pipes.",
             "NORTHWIND MUTUAL COVERS SUDDEN WATER DAMAGE FROM BURST PIPES.",
             "La garantie couvre les dégâts des eaux causés par une canalisation éclatée.",
             "La póliza cubre los daños por agua causados por una tubería rota en la cocina.",
             "水道管の破裂による突然の水害は補償されます。ご連絡ください。", "ab cd ef 12 34 56"]
    codes = language.detect_many(texts, block=4)  # three blocks, of unequal lengths
    assert codes == [language.detect(text) for text in texts]
    assert codes[:6] == ["de", "und", "und", "en", "en", "fr"]

    class OnlyClassify:  # a py3langid that keeps its model elsewhere: each text is asked in turn
        def classify(self, text):
            return ("xx" if "Mutual" in text else "yy"), 1.0

    monkeypatch.setattr(language, "_IDENTIFIER", OnlyClassify())
    assert language.detect_many(texts[:4]) == ["xx", "und", "und", "xx"]


def test_near_duplicates_keep_the_first_copy():
    vectors = np.array([[1, 0], [0.999, 0.0447], [0, 1], [0.0447, 0.999]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    dropped = near_duplicates(vectors, 0.95)
    assert sorted(dropped) == [1, 3] and dropped[1][0] == 0 and dropped[3][0] == 2


def test_links_by_similarity_and_by_shared_terms():
    vectors = np.eye(3, dtype=np.float32)
    found = links(vectors, [["water", "pipes"], ["water", "pipes", "fire"], ["hail"]], k=1, min_similarity=0.5)
    assert found == [{"a": 0, "b": 1, "similarity": 0.0, "shared_terms": ["pipes", "water"]}]


def test_replies_are_read_and_repaired_or_refused_with_a_reason():
    reply, repairs = parse_reply('Sure! ```json\n{"question": "Q?", "answer": "A.", "chunk_ids": ["x", "y"],}\n```',
                                 ["x"])
    assert (reply.question, reply.answer, reply.chunk_ids, repairs) == ("Q?", "A.", ["x"], ["json", "unknown chunk_ids left out"])
    reply, repairs = parse_reply("Question: Is hail covered?\nAnswer: Yes.", ["x", "z"])
    assert reply.chunk_ids == ["x", "z"] and repairs == ["labelled lines instead of JSON",
                                                        "chunk_ids missing: the item's passages"]
    with pytest.raises(ReplyError, match="no JSON object"):
        parse_reply('{"question": "cut sh', ["x"])
    with pytest.raises(ReplyError, match="field 'answer'"):
        parse_reply('{"question": "Q?", "answer": ""}', ["x"])


def test_self_reference_is_found_in_english_and_german():
    assert SELF_REFERENCE.search("According to the passage, what is covered?")
    assert SELF_REFERENCE.search("Was steht im obigen Text über Hagel?")
    assert not SELF_REFERENCE.search("Is hail damage to a car covered?")


def test_largest_remainder_by_hand():
    assert largest_remainder(10, [4, 2, 1, 1, 2]) == [4, 2, 1, 1, 2]
    assert largest_remainder(6, [4, 2, 1, 1, 2]) == [2, 1, 1, 1, 1]  # 2.4 1.2 .6 .6 1.2: the two .6 get one more
    assert largest_remainder(3, [1, 1]) == [2, 1]


def _graph(sources: dict[str, int], linked: list[tuple[int, int]] = ()) -> DocumentGraph:
    chunks = []
    for source, count in sources.items():
        for position in range(1, count + 1):
            chunks.append({"id": f"{source}#{position}", "source": source, "heading": "", "position": position,
                           "tokens": 50, "text": "x " * 50, "language": "en", "topic": len(chunks) % 2,
                           "terms": []})
    return DocumentGraph(key="k", chunks=chunks, duplicates=[], topics=[],
                         links=[{"a": a, "b": b, "similarity": 0.8, "shared_terms": []} for a, b in linked],
                         vectors=np.zeros((len(chunks), 2), dtype=np.float32))


def test_quotas_by_hand_on_a_small_corpus():
    # Three sources of 4, 2 and 1 usable chunks; 10 items; weights 4,2,1,1,2.
    graph = _graph({"a": 4, "b": 2, "c": 1}, linked=[(0, 4), (1, 2), (5, 6)])
    plan = plan_items(graph, 10, seed=3, spread="sources")
    assert plan.quotas["types"] == {"single_hop": 4, "multi_hop": 2, "comparison": 1, "summary": 1, "unanswerable": 2}
    # Evenly: 10 / 3 -> 4, 3, 3; c has one usable chunk, so its 2 extra go to a and b (by their weights: 1, 1).
    assert plan.quotas["buckets"] == {"a": 4, "b": 3, "c": 3}
    per_source = {s: sum(1 for i in plan.items if i.source == s) for s in "abc"}
    per_type = {t: sum(1 for i in plan.items if i.type == t) for t in plan.quotas["types"]}
    assert per_type == plan.quotas["types"]
    assert per_source == plan.quotas["buckets"]
    assert sum(per_source.values()) == 10
    for item in plan.items:
        if item.type in ("multi_hop", "comparison"):
            rows = [graph.index[c] for c in item.chunk_ids]
            assert len(rows) == 2 and tuple(sorted(rows)) in {(0, 4), (1, 2), (5, 6)}
    assert plan_items(graph, 10, seed=3, spread="sources").items == plan.items  # the seed decides
    assert plan_items(graph, 10, seed=4, spread="sources").items != plan.items


def test_buckets_hand_on_what_they_cannot_use():
    graph = _graph({"a": 4, "b": 2, "c": 1})
    plan = plan_items(graph, 9, seed=0, spread="sources", weights={"single_hop": 1})
    # 9 / 3 = 3 each; b (2 usable chunks) and c (1) give up 1 and 2: the 3 go to a, the one bucket with room.
    per_source = {s: sum(1 for i in plan.items if i.source == s) for s in "abc"}
    assert per_source == plan.quotas["buckets"] == {"a": 6, "b": 2, "c": 1}
    graph = _graph({"a": 2, "b": 2})
    plan = plan_items(graph, 4, seed=0, spread="sources", weights={"single_hop": 1})
    assert sorted(i.chunk_ids[0] for i in plan.items) == ["a#1", "a#2", "b#1", "b#2"]  # no chunk used twice


def test_short_chunks_never_seed_and_an_all_short_corpus_says_why():
    graph = _graph({"a": 2})
    graph.chunks[0]["tokens"] = 5
    plan = plan_items(graph, 3, weights={"single_hop": 1})
    assert {i.chunk_ids[0] for i in plan.items} == {"a#2"} and plan.short_chunks == 1
    assert [i.variant for i in plan.items] == [0, 1, 2]
    graph.chunks[1]["tokens"] = 5
    plan = plan_items(graph, 3)
    assert plan.items == [] and plan.notes == ["every chunk is too short to write a question from (fewer than 25 tokens)"]


def test_without_links_multi_hop_becomes_single_hop_and_the_plan_says_so():
    plan = plan_items(_graph({"a": 3}), 5, weights={"multi_hop": 1, "single_hop": 1})
    assert {i.type for i in plan.items} == {"single_hop"}
    # 5 over weights 1, 1: 2.5 each, the tie to the type listed first: single_hop 3, multi_hop 2.
    assert [i.planned_type for i in plan.items].count("multi_hop") == 2
    assert plan.notes == ["2 multi-hop/comparison item(s) written as single-hop: no two chunks are linked"]


def test_the_report_escapes_what_documents_and_models_wrote(tmp_path):
    from sonar_core.artifacts.generation_report import write_generation_report
    from sonar_core.findings.generation_summary import summarize_generation

    hostile = "<script>alert(1)</script>.pdf"
    items = [{"key": "gen-0001", "type": "single_hop", "source": hostile, "topic": 0, "language": "en",
              "status": "failed", "reason": "no readable reply: <img src=x onerror=alert(2)>", "quality": None}]
    findings = summarize_generation(items, documents={"read": 1, "skipped": [{"source": hostile, "reason": "<b>x</b>"}],
                                                      "sources": [hostile]},
                                    graph={"chunks": 1, "duplicates": 0, "short_chunks": 0, "topics": 1, "links": 0,
                                           "reused": False},
                                    trust={}, costs=None, settings={})
    assert findings.status == "empty" and findings.empty_reason == (
        "every item failed to be written (the first: no readable reply: <img src=x onerror=alert(2)>)")
    paths = write_generation_report(findings, tmp_path, "suite", "suite.jsonl")
    page = paths["report_html"].read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<img" not in page and "<b>x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.pdf" in page and "script-src 'none'" in page
    assert json.loads(paths["report_json"].read_text())["coverage"]["source"][hostile]["failed"] == 1


def test_without_the_generate_extra_the_error_is_one_line(monkeypatch, tmp_path):
    import importlib.util

    from sonar_core.errors import ConfigError
    from sonar_core.generate_config import GenerateSpec
    from sonar_core.generation.run import run_generation

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "py3langid" else real(name, *a))
    with pytest.raises(ConfigError) as info:
        run_generation(GenerateSpec(docs=[str(tmp_path)], output=str(tmp_path / "s.jsonl")))
    assert str(info.value) == ("sonar generate needs the generate extra (pip install 'sonar-eval[generate]'); "
                               "missing: py3langid")
    assert list(tmp_path.iterdir()) == []
