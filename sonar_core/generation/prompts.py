"""What the generator model is asked: one prompt per item (:func:`item_prompt`).

The prompt names the item's type, language, persona and style, quotes its passages with their
chunk ids, and asks for one JSON object ``{"question", "answer", "chunk_ids"}``. Its lines
``TYPE:``, ``LANGUAGE:`` and the passages' ``[[chunk:<id>]]`` markers are fixed, so a scripted
server (tests, benchmarks) can answer it. :data:`PROMPT_VERSION` is stored on every item and
changes whenever a prompt's wording does.
"""

from __future__ import annotations

from typing import Sequence

from .language import language_name

__all__ = ["item_prompt", "PROMPT_VERSION", "TYPE_TASKS", "STYLE_RULES"]

PROMPT_VERSION = "generate-1"

TYPE_TASKS = {
    "single_hop": "Write one question that the passage answers with a specific fact, and its answer.",
    "multi_hop": "Write one question whose answer needs facts from both passages together (neither alone is "
                 "enough), and its answer.",
    "comparison": "Write one question that compares something the two passages describe (a difference or a "
                  "similarity), and its answer.",
    "summary": "Write one request to summarise what the passages say about their subject, and a short summary as "
               "its answer.",
    "unanswerable": "Write one question a reader of these documents could plausibly ask about the same subject, "
                    "but which the passages do NOT answer (a detail they do not give). Its answer must say that the "
                    "documents do not give this information, and nothing else.",
}

STYLE_RULES = {
    "plain": "Write the question as a clear, complete sentence.",
    "misspelt": "Write the question as a hurried user would, with two or three spelling mistakes.",
    "search-box": "Write the question as a few keywords typed into a search box, without a question mark.",
    "long": "Write the question as a longer message of two or three sentences giving some background first.",
}


def item_prompt(kind: str, language: str, passages: Sequence[tuple[str, str]], persona: str | None = None,
                style: str = "plain", note: str | None = None, variant: int = 0) -> str:
    """The prompt of one item: ``passages`` are (chunk id, text) pairs; ``note`` says why an earlier
    reply could not be read (a re-ask); ``variant`` > 0: earlier items were written from the same
    passages and type, so this one asks about another detail."""
    lines = [
        "You write test items for checking an assistant that answers questions from a collection of documents.",
        f"TYPE: {kind}",
        f"LANGUAGE: {language_name(language)} ({language})",
        f"TASK: {TYPE_TASKS[kind]}",
        f"STYLE: {STYLE_RULES.get(style, STYLE_RULES['plain'])}",
    ]
    if persona:
        lines.append(f"PERSONA: the question is asked by {persona}.")
    if variant:
        lines.append(f"VARIANT: {variant + 1} (earlier questions were written from these passages: ask about a "
                     f"different detail than the most obvious one)")
    lines += [
        f"Write the question and the answer in {language_name(language)}.",
        "The question must make sense on its own: never mention 'the passage', 'the text', 'the document' or "
        "'the context'. The answer uses only what the passages say.",
        "",
        "PASSAGES:",
    ]
    for chunk_id, text in passages:
        lines += [f"[[chunk:{chunk_id}]]", text.strip(), ""]
    lines.append('Reply with one JSON object and nothing else: {"question": "...", "answer": "...", '
                 '"chunk_ids": ["the ids of the passages the answer uses"]}')
    if note:
        lines.append(f"(Your previous reply could not be read: {note}. Reply with only the JSON object.)")
    return "\n".join(lines)
