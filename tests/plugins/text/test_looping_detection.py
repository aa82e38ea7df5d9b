"""Looping Detection evaluator: hand-computed values of its three metrics."""

from __future__ import annotations

import zlib

import pytest

from sonar_core.contract import Input, ResultKind
from sonar_core.testing import make_row, score_rows

from sonar_plugins.text import register_evaluators
from sonar_plugins.text.looping_detection import LoopingDetectionEvaluator


def score(text: str):
    (result,) = score_rows(LoopingDetectionEvaluator, [make_row(actual_output=text)])
    return result


def zlib_ratio(text: str) -> float:
    """The compression ratio by its definition (zlib level 9 on UTF-8, capped at 1)."""
    raw = text.encode("utf-8")
    return min(1.0, len(zlib.compress(raw, 9)) / len(raw))


def test_declaration():
    cls = LoopingDetectionEvaluator
    assert cls.id == "looping_detection"
    assert cls.kind is ResultKind.SCORE
    assert cls.required_inputs == (Input.ACTUAL_ANSWER,)
    assert [m.key for m in cls.metrics] == ["unique_sentences", "longest_repeated_substring", "compression_ratio"]
    assert cls.primary_metric().key == "unique_sentences"
    assert [m.higher_is_better for m in cls.metrics] == [True, False, True]
    assert all(m.threshold == 0.75 and m.value_range == (0.0, 1.0) for m in cls.metrics)
    registered = []
    register_evaluators(register=registered.append)
    assert cls in registered


# -- edge cases -----------------------------------------------------------------------------


def test_empty_answer_means_no_loop():
    result = score("")
    assert result.values == {"unique_sentences": 1.0, "longest_repeated_substring": 0.0, "compression_ratio": 1.0}
    assert result.details["sentences_counted"] == 0
    assert result.details["longest_repeated_substring_text"] is None
    assert result.details["original_bytes"] == 0


def test_one_character_answer():
    # No sentence of 10+ characters -> 1.0; nothing can repeat -> 0.0;
    # zlib turns 1 byte into 9 (framing), 9/1 capped at 1.0.
    result = score("a")
    assert result.values == {"unique_sentences": 1.0, "longest_repeated_substring": 0.0, "compression_ratio": 1.0}
    assert result.details["compressed_bytes"] == 9 and result.details["original_bytes"] == 1


def test_two_equal_characters():
    # "aa": "a" twice, 1 * 2 / 2 = 1.0.
    assert score("aa").values["longest_repeated_substring"] == 1.0


# -- unique sentences -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected, counted",
    [
        # 3 sentences, 2 distinct: 2/3.
        ("The cat sat on the mat. The cat sat on the mat. A dog barked loudly.", 2 / 3, 3),
        # "Short." (6) and "Tiny one." (9) are under 10 characters: 1 distinct of 2 = 0.5.
        ("Short. Tiny one. This one is long enough. This one is long enough.", 0.5, 2),
        # Multi-line: 3 sentences, 2 distinct.
        ("First line here.\nFirst line here.\nSecond line there.", 2 / 3, 3),
        # Unicode: 3 sentences, 2 distinct.
        ("Das Wetter ist schön. Das Wetter ist schön. Ça va très bien, merci.", 2 / 3, 3),
        # One sentence four times: 1/4.
        ("I repeat myself. " * 4, 0.25, 4),
        # Only short sentences: nothing counted -> 1.0.
        ("Yes. No. Maybe.", 1.0, 0),
        # One long sentence: 1/1.
        ("This single sentence does not repeat.", 1.0, 1),
    ],
)
def test_unique_sentences(text, expected, counted):
    result = score(text)
    assert result.values["unique_sentences"] == pytest.approx(expected, abs=1e-12)
    assert result.details["sentences_counted"] == counted


def test_most_repeated_sentence_in_details():
    result = score("I repeat myself. " * 4)
    assert result.details["most_repeated_sentence"] == "I repeat myself."
    assert result.details["most_repeated_sentence_count"] == 4
    assert score("No repetition here at all.").details["most_repeated_sentence"] is None


# -- longest repeated substring -------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected, repeated, count",
    [
        ("abcabc", 1.0, "abc", 2),  # 3 * 2 / 6
        ("abcab", 0.8, "ab", 2),  # "abc" occurs once; 2 * 2 / 5
        ("banana", 4 / 6, "an", 2),  # "ana" overlaps itself; "an" and "na" tie, "an" first; 2 * 2 / 6
        ("hello world, hello there", 0.5, "hello ", 2),  # 6 * 2 / 24
        ("aaa", 1.0, "a", 3),  # "aa" overlaps itself; 1 * 3 / 3
        ("aaaa", 1.0, "aa", 2),  # 2 * 2 / 4
        ("abcd", 0.0, None, 0),  # no repeated character
        ("I repeat myself. " * 4, 1.0, "I repeat myself. I repeat myself. ", 2),  # 34 * 2 / 68
        ("日本語。日本語。", 1.0, "日本語。", 2),  # 4 * 2 / 8 characters
        ("😀x😀", 2 / 3, "😀", 2),  # code points, not UTF-8 bytes: 1 * 2 / 3
    ],
)
def test_longest_repeated_substring(text, expected, repeated, count):
    result = score(text)
    assert result.values["longest_repeated_substring"] == pytest.approx(expected, abs=1e-12)
    assert result.details["longest_repeated_substring_text"] == repeated
    assert result.details["longest_repeated_substring_count"] == count


# -- compression ratio ----------------------------------------------------------------------


def test_compression_ratio_short_text_is_capped():
    # zlib's 2-byte header and 4-byte checksum make short texts grow: capped at 1.0.
    result = score("abcabc")
    assert result.details["compressed_bytes"] > result.details["original_bytes"] == 6
    assert result.values["compression_ratio"] == 1.0


def test_compression_ratio_repetitive_text():
    text = "I repeat myself. " * 40  # 680 bytes
    result = score(text)
    assert result.details["original_bytes"] == 680
    assert result.values["compression_ratio"] == result.details["compressed_bytes"] / 680 == zlib_ratio(text)
    assert result.values["compression_ratio"] < 0.1


def test_compression_ratio_counts_utf8_bytes():
    text = "日本語の文章です。" * 20  # 9 characters x 3 bytes x 20 = 540 bytes
    result = score(text)
    # A fixed Huffman block (see LOOPING_MODELS below for the costs): the first period's 27
    # bytes are literals, 21 of them >= 0x90 (9 bits) and 6 below (0x81 x 3, 0x87, 0x80,
    # 0x82: 8 bits) = 237 bits; the second period's first byte is a literal too (no match
    # against position 0), 0xE6: 9 bits. The other 512 bytes are copies at distance 27
    # (code 9 + 3 extra bits = 8 bits): 258 (code 285, 8 bits) + 254 (code 284 + 5 extra =
    # 13 bits). 3 + 237 + 9 + (8 + 8) + (13 + 8) + 7 = 293 bits -> 37 bytes + 6 = 43 bytes.
    assert (result.details["original_bytes"], result.details["compressed_bytes"]) == (540, 43)
    assert result.values["compression_ratio"] == 43 / 540 == zlib_ratio(text)


# -- a megabyte ------------------------------------------------------------------------------


def test_one_megabyte_looping_answer():
    period = "The answer is 42. "  # 18 characters
    copies = 58255
    text = period * copies  # 1,048,590 characters
    result = score(text)
    # Every sentence is "The answer is 42.": 1 distinct of 58255.
    assert result.values["unique_sentences"] == pytest.approx(1 / copies, rel=1e-12)
    # With an odd number of copies the longest non-overlapping repeat is (copies - 1) / 2
    # periods = 524,286 characters, found twice: 524286 * 2 / 1048590 = 58254 / 58255.
    assert result.details["longest_repeated_substring_length"] == 18 * (copies - 1) // 2 == 524286
    assert result.details["longest_repeated_substring_count"] == 2
    assert result.details["longest_repeated_substring_text"].startswith("The answer is 42. The answer")
    assert result.values["longest_repeated_substring"] == pytest.approx((copies - 1) / copies, rel=1e-12)
    assert result.values["compression_ratio"] == zlib_ratio(text)
    assert result.values["compression_ratio"] < 0.01


def test_one_megabyte_single_character():
    result = score("a" * 1_000_000)
    # One 1,000,000-character "sentence": 1/1. "a" * 500000 twice: 500000 * 2 / 1e6 = 1.0.
    assert result.values["unique_sentences"] == 1.0
    assert result.values["longest_repeated_substring"] == 1.0
    assert result.details["longest_repeated_substring_length"] == 500_000
    # DEFLATE copies at most 258 bytes per match, and a match costs at least 2 bits (a length
    # and a distance code of 1 bit each at best): after the first byte, ceil(999,999 / 258)
    # = 3,876 matches >= 7,752 bits = 969 bytes, + 6 bytes of zlib framing = 975. With the
    # fixed codes a match costs 13 bits (length code 285: 8, distance 1: 5), about 6,300
    # bytes in all: zlib (which takes the cheaper block) stays well under 10,000.
    compressed = result.details["compressed_bytes"]
    assert 975 <= compressed < 10_000 and result.details["original_bytes"] == 1_000_000
    assert result.values["compression_ratio"] == compressed / 1_000_000 == zlib_ratio("a" * 1_000_000)


# -- several models in one call --------------------------------------------------------------

# Compressed sizes below are worked out from DEFLATE's fixed Huffman block, which zlib level 9
# picks for inputs this small: 2-byte zlib header + 4-byte Adler-32 + ceil(bits / 8) with
# bits = 3 (block header) + 8 per literal byte 0-143 (9 per byte 144-255) + 7 for end of block
# + per match: length code (7 bits for codes 257-279, + extra bits) and distance code (5 bits
# + extra bits). zlib never matches against position 0 of the input (0 is its "no match" mark),
# so a repeat of the very first bytes starts one byte later.
LOOPING_MODELS = {
    ("tc1", "loopy"): (
        "I repeat myself. " * 4,
        # 4 sentences of 16 characters, 1 distinct -> 1/4.
        # "I repeat myself. " * 2 (34 chars) twice, non-overlapping -> 34 * 2 / 68 = 1.0.
        # zlib: 18 literals (the first 17 bytes and the second "I") = 144 bits, then a match of
        # length 50 (code 274 + 3 extra = 10 bits) at distance 17 (code 8 + 3 extra = 8 bits):
        # 3 + 144 + 10 + 8 + 7 = 172 bits -> 22 bytes + 6 = 28; 28 / 68 = 7/17.
        {"unique_sentences": 1 / 4, "longest_repeated_substring": 1.0, "compression_ratio": 7 / 17},
        {"sentences_counted": 4, "longest_repeated_substring_length": 34, "compressed_bytes": 28},
    ),
    ("tc1", "clean"): (
        "The sky is blue. Grass is green.",
        # 2 sentences (16 and 15 characters), both distinct -> 1.0.
        # Longest repeat " is " (4 chars), twice -> 4 * 2 / 32 = 0.25.
        # zlib: 28 literals = 224 bits + " is " as a match of length 4 (code 258, 7 bits) at
        # distance 15 (code 7 + 2 extra = 7 bits): 3 + 224 + 7 + 7 + 7 = 248 bits -> 31 bytes
        # + 6 = 37 > 32 -> capped at 1.0.
        {"unique_sentences": 1.0, "longest_repeated_substring": 0.25, "compression_ratio": 1.0},
        {"sentences_counted": 2, "longest_repeated_substring_length": 4, "compressed_bytes": 37},
    ),
    ("tc1", "silent"): (
        "",
        # empty answer: nothing loops -> 1, 0, 1
        {"unique_sentences": 1.0, "longest_repeated_substring": 0.0, "compression_ratio": 1.0},
        {"sentences_counted": 0, "longest_repeated_substring_length": 0, "compressed_bytes": 0},
    ),
    ("tc2", "loopy"): (
        "Ja. Ja. Ja. Ja.",
        # Four sentences "Ja." of 3 characters, all under 10 -> none counted -> 1.0.
        # "Ja. Ja." (7 chars) at 0 and 8; the 8-char "Ja. Ja. " only at 0 and 4 (overlapping)
        # -> 7 * 2 / 15 = 14/15.
        # zlib: 5 literals "Ja. J" = 40 bits, then a match of length 10 (code 264, 7 bits) at
        # distance 4 (code 3, 5 bits): 3 + 40 + 7 + 5 + 7 = 62 bits -> 8 bytes + 6 = 14; 14/15.
        {"unique_sentences": 1.0, "longest_repeated_substring": 14 / 15, "compression_ratio": 14 / 15},
        {"sentences_counted": 0, "longest_repeated_substring_length": 7, "compressed_bytes": 14},
    ),
    ("tc2", "clean"): (
        "Schöne Grüße aus Köln!",
        # 1 sentence of 22 characters -> 1/1.
        # Longest repeat "e " ("Schöne ", "Grüße "), twice -> 2 * 2 / 22 = 2/11 (characters).
        # UTF-8: 18 ASCII bytes + ö, ü, ß, ö as 2 bytes each = 26 bytes; no 3-byte repeat, so
        # zlib: 18 x 8 + 8 x 9 (bytes 0x9F-0xC3 >= 144) = 216 bits; 3 + 216 + 7 = 226 bits
        # -> 29 bytes + 6 = 35 > 26 -> capped at 1.0.
        {"unique_sentences": 1.0, "longest_repeated_substring": 2 / 11, "compression_ratio": 1.0},
        {"sentences_counted": 1, "longest_repeated_substring_length": 2, "compressed_bytes": 35},
    ),
    ("tc2", "silent"): (
        "OK",
        # No sentence of 10+ characters -> 1.0; no repeated character -> 0.0;
        # zlib: 3 + 16 + 7 = 26 bits -> 4 bytes + 6 = 10 > 2 -> capped at 1.0.
        {"unique_sentences": 1.0, "longest_repeated_substring": 0.0, "compression_ratio": 1.0},
        {"sentences_counted": 0, "longest_repeated_substring_length": 0, "compressed_bytes": 10},
    ),
}


def test_several_models_interleaved_in_one_call():
    # rows interleaved by test case: tc1 loopy, tc1 clean, tc1 silent, tc2 loopy, ...
    keys = list(LOOPING_MODELS)
    rows = [
        make_row(
            key=f"{case}::{model}", test_case_key=case, model_key=model, actual_output=LOOPING_MODELS[case, model][0]
        )
        for case, model in keys
    ]
    results = score_rows(LoopingDetectionEvaluator, rows)
    for (case, model), result in zip(keys, results):
        text, values, facts = LOOPING_MODELS[case, model]
        assert result.values == pytest.approx(values, abs=1e-12), (case, model)
        assert {k: result.details[k] for k in facts} == facts, (case, model)
        if text:
            assert result.values["compression_ratio"] == zlib_ratio(text)
    # each row is scored on its own answer only: the same as scoring it alone
    assert [r.values for r in results] == [score(LOOPING_MODELS[k][0]).values for k in keys]
    assert results[0].details["most_repeated_sentence"] == "I repeat myself."
    assert results[1].details["longest_repeated_substring_text"] == " is "
    assert results[4].details["longest_repeated_substring_text"] == "e "


def test_blank_answer_is_not_a_loop():
    from sonar_core.testing import make_row, score_rows
    from sonar_plugins.text.looping_detection import LoopingDetectionEvaluator

    # "   " is one space repeated three times (1 * 3 / 3 = 1.0) but there is nothing in it:
    # it scores like an empty answer.
    rows = [make_row(test_case_key=f"t{i}", actual_output=text) for i, text in enumerate(["   ", "\n\t \n", ""])]
    for result in score_rows(LoopingDetectionEvaluator, rows):
        assert result.values == {"unique_sentences": 1.0, "longest_repeated_substring": 0.0,
                                 "compression_ratio": 1.0}
