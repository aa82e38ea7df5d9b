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
    assert result.details["original_bytes"] == 540
    assert result.values["compression_ratio"] == zlib_ratio(text)


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
    assert result.values["compression_ratio"] == zlib_ratio("a" * 1_000_000)
