"""Shared helpers of the privacy suites: masking and overlap resolution."""

from sonar_plugins.privacy.matches import TextMatch, keep_non_overlapping, mask_middle


def test_mask_middle_keeps_ends_and_separators():
    assert mask_middle("4111-1111-1111-1111", 4, 4) == "4111-****-****-1111"
    assert mask_middle("abcdef", 0, 2) == "****ef"
    assert mask_middle("Zürich", 1, 1) == "Z****h"


def test_mask_middle_short_values_keep_only_the_first_character():
    # 2 + 2 >= 4 characters: keeping both ends would hide nothing.
    assert mask_middle("abcd", 2, 2) == "a***"
    assert mask_middle("", 2, 2) == ""


def test_keep_non_overlapping_prefers_priority_then_position():
    priority = {"iban": 0, "phone": 1}
    a = TextMatch("phone", 0, 10, "p1")
    b = TextMatch("iban", 5, 20, "i1")
    c = TextMatch("phone", 20, 25, "p2")  # touches b's end: no overlap
    d = TextMatch("phone", 19, 21, "p3")  # overlaps b and c
    assert keep_non_overlapping([a, b, c, d], priority) == [b, c]


def test_keep_non_overlapping_same_kind_prefers_earlier_then_longer():
    x = TextMatch("phone", 3, 8, "x")
    y = TextMatch("phone", 3, 12, "y")
    z = TextMatch("phone", 10, 14, "z")
    assert keep_non_overlapping([z, x, y], {"phone": 0}) == [y]
    assert keep_non_overlapping([], {}) == []
