"""Sentence splitting with its fallbacks, and step extraction: pure text functions, no model."""

from __future__ import annotations

from sonar_core.testing import make_context

from sonar_plugins.semantic.sentences import cached_split, split_text
from sonar_plugins.semantic.steps import (
    context_steps, inline_numbered_steps, list_items, sequence_word_steps, structured_steps, text_steps,
)

SPLIT = make_context().split_sentences


def test_punkt_sentences_and_line_breaks_end_sentences():
    text = "Open the app. Tap Claims!\n- upload photos\n\n  submit it  \n..."
    assert split_text(text, SPLIT) == ("Open the app.", "Tap Claims!", "- upload photos", "submit it")
    # Without the line-break fallback Punkt keeps unpunctuated lines together as one sentence.
    lines = "Open the app\nTap Claims\nUpload photos"
    assert split_text(lines, SPLIT) == ("Open the app", "Tap Claims", "Upload photos")
    assert split_text(lines, SPLIT, split_on_newlines=False) == (lines,)


def test_long_unpunctuated_text_is_cut_every_max_words():
    words = [f"w{i}" for i in range(10)]
    text = " ".join(words)
    assert split_text(text, SPLIT, max_words=4) == ("w0 w1 w2 w3", "w4 w5 w6 w7", "w8 w9")
    assert split_text(text, SPLIT, max_words=0) == (text,)
    assert split_text(text, SPLIT, max_words=10) == (text,)


def test_pieces_without_letters_or_digits_are_dropped():
    assert split_text("... !!! —", SPLIT) == ()
    assert split_text("", SPLIT) == ()
    assert split_text("4", SPLIT) == ("4",)


def test_list_items_with_markers_continuations_and_surrounding_prose():
    text = ("To file a claim:\n"
            "1. Open the app.\n"
            "   You need your policy number.\n"
            "2) Tap Claims.\n"
            "(3) Upload photos.\n"
            "**Step 4:** Submit.\n"
            "- Wait for the call\n"
            "\n"
            "We will contact you.")
    assert list_items(text) == ["Open the app. You need your policy number.", "Tap Claims.", "Upload photos.",
                                "Submit.", "Wait for the call"]
    assert list_items("a) first thing\nb) second thing\n• third") == ["first thing", "second thing", "third"]
    # Decimals and prices are no markers.
    assert list_items("1.5 kg of flour\n2.25 l of milk") == []


def test_inline_numbers_run_one_two_three_and_the_last_step_ends_with_its_sentence():
    text = "To reset it: 1. Open Settings. 2. Tap Security, version 7. 3) Choose Reset. It takes a minute."
    assert inline_numbered_steps(text, SPLIT) == ["Open Settings.", "Tap Security, version 7.", "Choose Reset."]
    assert inline_numbered_steps("Only 1. one step here.", SPLIT) == []
    # 2 without a 1 before it starts nothing.
    assert inline_numbered_steps("Chapter 2. then 3. again", SPLIT) == []


def test_sequence_words_from_the_first_to_the_last_marked_sentence():
    sentences = ["You can do it online.", "First, open the app.", "Tap Claims.", "Then upload photos.",
                 "Finally: submit the form.", "We will call you."]
    assert sequence_word_steps(sentences) == ["open the app.", "Tap Claims.", "upload photos.", "submit the form."]
    assert sequence_word_steps(["First, open the app.", "It is free."]) == []


def test_methods_in_order_and_the_sentence_fallback():
    listed = "Intro. First, do this.\n1. Open the app.\n2. Tap Claims."
    assert structured_steps(listed, SPLIT) == (["Open the app.", "Tap Claims."], "list")
    inline = "First do A. 1. Open the app. 2. Tap Claims."
    assert structured_steps(inline, SPLIT) == (["Open the app.", "Tap Claims."], "inline")
    prose = "Open the app. Tap Claims."
    assert structured_steps(prose, SPLIT) == ([], "")
    assert text_steps(prose, SPLIT) == (["Open the app.", "Tap Claims."], "sentences")
    assert text_steps(prose, SPLIT, sentence_fallback=False) == ([], "none")


def test_context_steps_come_from_enumerated_chunks_only_unless_none_has_one():
    chunks = ["Claims are paid within 10 days.", "1. Open the app.\n2. Tap Claims.", "Then wait. Finally relax."]
    assert context_steps(chunks, SPLIT) == (["Open the app.", "Tap Claims.", "wait.", "relax."], "list+sequence")
    prose = ["Open the app. Tap Claims.", "Upload photos."]
    assert context_steps(prose, SPLIT) == (["Open the app.", "Tap Claims.", "Upload photos."], "sentences")
    assert context_steps(prose, SPLIT, sentence_fallback=False) == ([], "none")


def test_cached_split_splits_a_text_once_per_option_set():
    calls = []

    def counting_split(text):
        calls.append(text)
        return SPLIT(text)

    text = "A text only this test splits. It has two sentences."
    first = cached_split(text, counting_split)
    assert cached_split(text, counting_split) == first == ("A text only this test splits.", "It has two sentences.")
    assert calls == [text]
    assert cached_split(text, counting_split, max_words=3) == ("A text only", "this test splits.", "It has two",
                                                               "sentences.")
    assert calls == [text, text]
