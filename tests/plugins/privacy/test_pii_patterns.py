"""The PII regex suite: true positives, false positives, validation rules and masking."""

import time

import pytest

from sonar_plugins.privacy.pii_patterns import PiiMatch, find_pii, iban_ok, luhn_ok, mask, ssn_ok


def kinds(text):
    return [(m.kind, text[m.start : m.end]) for m in find_pii(text)]


# -- credit cards --------------------------------------------------------------------------


def test_luhn_by_hand():
    # 4111111111111111: from the right, every second digit doubled: seven 1s -> 2 each (14)
    # and the leading 4 -> 8; the other eight digits are 1s (8). 14 + 8 + 8 = 30, 30 % 10 == 0.
    assert luhn_ok("4111111111111111")
    # Last digit 2 instead of 1: total 31, not a multiple of 10.
    assert not luhn_ok("4111111111111112")
    # 79927398713 is the textbook example: 70 % 10 == 0.
    assert luhn_ok("79927398713")
    assert not luhn_ok("79927398710")


@pytest.mark.parametrize(
    "card",
    [
        "4111111111111111",  # Visa, 16 digits
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "5555555555554444",  # Mastercard
        "378282246310005",  # Amex, 15 digits
        "3782 822463 10005",  # Amex grouping 4-6-5
        "4222222222222",  # 13 digits
        "6221260000000000001",  # 19 digits
    ],
)
def test_card_found(card):
    text = f"Card: {card}. Thanks"
    assert kinds(text) == [("credit_card", card)]


@pytest.mark.parametrize(
    "text",
    [
        "4111111111111112",  # fails Luhn
        "4111 1111 1111 1112",  # fails Luhn, grouped
        "4111-1111 1111-1111",  # mixed separators
        "0000000000000000",  # passes Luhn but starts with 0
        "411111111111",  # 12 digits: too short
        "41111111111111111111",  # 20 digits: too long
        "4111 1111 1111 1111 1",  # a fifth group that is not part of any card format
        "x4111111111111111",  # glued to a word
        "lgamma 5 -> 3.1780538303479458",  # decimals of a number (Luhn-valid by chance)
        "4111111111111111.5",
        "ecs-svc/5191625155316533644",  # an ID in a path (Luhn-valid by chance)
        "creationTime: 1433189873898",  # a millisecond timestamp: cards never start with 1
        "8358592947469418495",  # nor with 8
        "5105105105102",  # 13 digits, Luhn-valid, but only Visa (4) issued 13-digit cards
    ],
)
def test_card_rejected(text):
    assert [k for k, _ in kinds(text) if k == "credit_card"] == []


def test_card_mask_keeps_first_and_last_four_digits():
    assert mask("credit_card", "4111 1111 1111 1111") == "4111********1111"
    # 15 digits: 4 kept + 7 hidden + 4 kept.
    assert mask("credit_card", "378282246310005") == "3782*******0005"
    [match] = find_pii("pay with 4111-1111-1111-1111 today")
    assert match == PiiMatch("credit_card", 9, 28, "4111********1111")


# -- SSNs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("ssn", ["123-45-6789", "078-05-1120", "899-99-9999", "123 45 6789"])
def test_ssn_found(ssn):
    assert kinds(f"SSN {ssn}.") == [("ssn", ssn)]


@pytest.mark.parametrize(
    "ssn",
    [
        "000-12-3456",  # area 000
        "666-12-3456",  # area 666
        "900-12-3456",  # area 9xx
        "999-12-3456",
        "123-00-4567",  # group 00
        "123-45-0000",  # serial 0000
        "123-45 6789",  # mixed separators
        "123456789",  # bare digits are not reported
        "1123-45-6789",  # part of a longer number
        "0.123-45-6789",
    ],
)
def test_ssn_rejected(ssn):
    assert kinds(f"SSN {ssn}.") == []


def test_ssn_rules():
    assert ssn_ok("123", "45", "6789")
    assert not ssn_ok("666", "45", "6789")
    assert not ssn_ok("950", "45", "6789")
    assert mask("ssn", "123-45-6789") == "***-**-6789"


# -- emails --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "email",
    ["john.doe@example.com", "a+tag@mail.co.uk", "x_y-z@sub-domain.example.org", "josé@exämple.de"],
)
def test_email_found(email):
    assert kinds(f"Write to <{email}>.") == [("email", email)]


@pytest.mark.parametrize("text", ["user@localhost", "@handle on social", "a@b", "version 1.2@3.4", "me@example.c"])
def test_email_rejected(text):
    assert kinds(text) == []


def test_email_mask():
    assert mask("email", "john.doe@example.com") == "j***@example.com"
    assert find_pii("mail: jane@corp.io")[0].masked == "j***@corp.io"


# -- phones --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "phone",
    [
        "(415) 555-2671",
        "415-555-2671",
        "415.555.2671",
        "415 555 2671",
        "+1 415 555 2671",
        "1-800-555-0199",
        "+44 20 7946 0958",
        "+49 30 901820",
        "+33 1 23 45 67 89",
    ],
)
def test_phone_found(phone):
    assert kinds(f"Call {phone} today") == [("phone", phone)]


@pytest.mark.parametrize(
    "text",
    [
        "Call 123-456-7890",  # area code starting with 1
        "Call 415-155-2671",  # exchange starting with 1
        "Call 4155552671",  # no separators
        "+12 345",  # too few digits
        "+1234567890123456",  # 16 digits: over the E.164 limit
        "+01115551212",  # no country code starts with 0
        "Dial 911",
        "3 + 4 = 7",
    ],
)
def test_phone_rejected(text):
    assert kinds(text) == []


def test_phone_mask_keeps_last_four():
    assert mask("phone", "(415) 555-2671") == "(***) ***-2671"
    assert mask("phone", "+44 20 7946 0958") == "+** ** **** 0958"
    # The last four digits, not characters: a space inside them is kept, not counted.
    assert mask("phone", "+33 1 23 45 67 89") == "+** * ** ** 67 89"


# -- IBANs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "iban",
    [
        "DE89370400440532013000",
        "DE89 3704 0044 0532 0130 00",
        "GB82WEST12345698765432",
        "GB82 WEST 1234 5698 7654 32",
        "FR1420041010050500013M02606",
        "NL91ABNA0417164300",
        "NO9386011117947",  # shortest registered length, 15
    ],
)
def test_iban_found(iban):
    assert kinds(f"IBAN: {iban}.") == [("iban", iban)]


def test_iban_mod97_by_hand():
    # GB82WEST12345698765432 -> WEST12345698765432GB82 -> W=32 E=14 S=28 T=29, G=16 B=11:
    # 3214282912345698765432161182 mod 97 == 1.
    assert int("3214282912345698765432161182") % 97 == 1
    assert iban_ok("GB82WEST12345698765432")
    assert not iban_ok("GB82WEST12345698765433")  # bad checksum
    assert not iban_ok("DE89370400440532013001")  # bad checksum
    assert not iban_ok("DE8937040044053201300")  # 21 characters, Germany has 22
    assert not iban_ok("ZZ89370400440532013000")  # no such country


def test_iban_rejected_in_text_and_trailing_word_dropped():
    assert kinds("IBAN DE89370400440532013001 please") == []
    text = "Pay DE89 3704 0044 0532 0130 00 CASH"
    assert kinds(text) == [("iban", "DE89 3704 0044 0532 0130 00")]
    assert find_pii(text)[0].masked == "DE89**************3000"


# -- the suite as a whole -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "The meeting is on 2024-01-15 at 10:30 in room 1234.",
        "The population grew from 1,234,567 to 2,345,678 in 2020.",
        "ISBN 978-3-16-148410-0; pi is 3.14159265358979.",
        "IP 192.168.100.200, port 8080, coordinates 40.7128, -74.0060.",
        "Paris is the capital of France. Its area is 105.4 km².",
    ],
)
def test_ordinary_prose_has_no_pii(text):
    assert find_pii(text) == []


def test_several_kinds_multiline_unicode_sorted_by_position():
    text = (
        "Kunde: Jürgen Müller 👋\n"
        "E-Mail: jurgen@example.de\n"
        "Karte: 5555 5555 5555 4444\n"
        "SSN 123-45-6789, Tel. +49 30 901820\n"
    )
    found = find_pii(text)
    assert [(m.kind, m.masked) for m in found] == [
        ("email", "j***@example.de"),
        ("credit_card", "5555********4444"),
        ("ssn", "***-**-6789"),
        ("phone", "+** ** **1820"),
    ]
    # Offsets are character offsets (the emoji counts as one).
    assert [text[m.start : m.end] for m in found] == [
        "jurgen@example.de",
        "5555 5555 5555 4444",
        "123-45-6789",
        "+49 30 901820",
    ]


def test_overlapping_kinds_reported_once():
    # "+3782 822463 10005" is both an international phone number (15 digits) and, without
    # the plus, an Amex card (Luhn-valid): the card kind ranks first and is the one reported.
    assert kinds("+3782 822463 10005") == [("credit_card", "3782 822463 10005")]


def test_one_megabyte_text_is_fast_and_exact():
    filler = "All quiet here, nothing personal at all. " * 25_000  # 41 characters x 25,000
    text = filler + "Reach me at jane@example.com or 415-555-2671." + filler
    assert len(text) > 2_000_000
    started = time.process_time()  # CPU seconds: time lost to other processes does not count
    found = find_pii(text)
    elapsed = time.process_time() - started
    assert [(m.kind, m.masked) for m in found] == [("email", "j***@example.com"), ("phone", "***-***-2671")]
    assert found[0].start == len(filler) + len("Reach me at ")
    assert elapsed < 5.0


def test_long_runs_without_pii_are_linear():
    # Worst cases for naive patterns: one huge word, one huge digit run, many dots.
    for text in ("a" * 1_000_000, "9" * 1_000_000, "a." * 500_000, "1 " * 500_000):
        started = time.process_time()  # CPU seconds: time lost to other processes does not count
        assert find_pii(text) == []
        assert time.process_time() - started < 5.0
