"""Shared helpers of the privacy suites: masking, overlap resolution and splicing."""

from sonar_plugins.privacy.decoding import DecodedPart
from sonar_plugins.privacy.matches import TextMatch, keep_non_overlapping, mask_middle, splice


def test_mask_middle_keeps_ends_and_separators():
    assert mask_middle("4111-1111-1111-1111", 4, 4) == "4111-****-****-1111"
    assert mask_middle("abcdef", 0, 2) == "****ef"
    assert mask_middle("Zürich", 1, 1) == "Z****h"


def test_mask_middle_short_values_keep_only_the_first_character():
    # 2 + 2 >= 4 characters: keeping both ends would hide nothing.
    assert mask_middle("abcd", 2, 2) == "a***"
    assert mask_middle("", 2, 2) == ""


def test_keep_non_overlapping_prefers_rank_then_position():
    priority = {"iban": 0, "phone": 1}.__getitem__
    a = TextMatch("phone", 0, 10, "p1")
    b = TextMatch("iban", 5, 20, "i1")
    c = TextMatch("phone", 20, 25, "p2")  # touches b's end: no overlap
    d = TextMatch("phone", 19, 21, "p3")  # overlaps b and c
    assert keep_non_overlapping([a, b, c, d], lambda m: priority(m.kind)) == [b, c]


def test_keep_non_overlapping_same_kind_prefers_earlier_then_longer():
    x = TextMatch("phone", 3, 8, "x")
    y = TextMatch("phone", 3, 12, "y")
    z = TextMatch("phone", 10, 14, "z")
    # Without a rank all candidates rank the same.
    assert keep_non_overlapping([z, x, y]) == [y]
    assert keep_non_overlapping([]) == []


def test_keep_non_overlapping_takes_any_span():
    # Decoded parts have no kind: rank them by encoding, hex first.
    hex_part = DecodedPart("base16", 4, 16, "hello!")
    b64_part = DecodedPart("base64", 0, 8, "ignored")  # overlaps the hex part
    later = DecodedPart("base64", 16, 24, "world!")  # starts where the hex part ends
    rank = {"base16": 0, "base64": 1}
    assert keep_non_overlapping([b64_part, later, hex_part], lambda p: rank[p.encoding]) == [hex_part, later]
    # Ranked the other way round, the base64 part wins its overlap.
    assert keep_non_overlapping([b64_part, later, hex_part], lambda p: -rank[p.encoding]) == [b64_part, later]


def test_splice():
    assert splice("call 555-1234 or mail a@b.io", [(5, 13, "***-1234"), (22, 28, "a***@b.io")]) == (
        "call ***-1234 or mail a***@b.io"
    )
    # Replacements may change the length; offsets always refer to the original text.
    assert splice("abcdef", [(0, 1, "XYZ"), (3, 5, "")]) == "XYZbcf"
    assert splice("é – ü", [(2, 3, "-")]) == "é - ü"
    assert splice("unchanged", []) == "unchanged"
    assert splice("", []) == ""
