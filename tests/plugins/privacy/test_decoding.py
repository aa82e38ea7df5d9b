"""Finding and decoding base16 / base64 runs inside answers."""

import base64
import time

import pytest

from sonar_core.testing import make_row
from sonar_plugins.privacy.decoding import DecodedPart, decode_encoded_parts, encodings_of

SECRET = "My email is john.doe@example.com"
B64 = base64.b64encode(SECRET.encode()).decode()
HEX = SECRET.encode().hex()
HEX_SPACED = " ".join(f"{b:02x}" for b in SECRET.encode())


@pytest.mark.parametrize(
    "categories,perturbation,expected",
    [
        (["base64"], "", ("base64",)),
        (["Base16"], "", ("base16",)),
        (["BASE64", "jailbreak"], "", ("base64",)),
        (["encoding_perturbator:encoding_type:base64"], "", ("base64",)),
        ([], "hex", ("base16",)),
        (["base16", "base64"], "", ("base16", "base64")),
        (["encoding_perturbator"], "", ("base16", "base64")),  # encoded, but not said how
        (["typos"], "uppercase", ()),
        (["hexagon", "base640"], "", ()),  # words that merely contain the names
        ([], "", ()),
    ],
)
def test_encodings_of(categories, perturbation, expected):
    assert encodings_of(make_row(actual_output="x", categories=categories, perturbation=perturbation)) == expected


def test_base64_run_decoded_in_place_keeping_the_prose():
    text = f"Sure! Here it is: {B64}. Anything else?"
    decoded = decode_encoded_parts(text, ["base64"])
    assert decoded.text == f"Sure! Here it is: {SECRET}. Anything else?"
    assert decoded.parts == [DecodedPart("base64", 18, 18 + len(B64), SECRET)]


def test_base64_without_padding_and_wrapped_over_lines():
    unpadded = base64.b64encode(b"Hello there").decode().rstrip("=")  # 11 bytes -> 15 chars
    assert len(unpadded) == 15
    assert decode_encoded_parts(unpadded, ["base64"]).text == "Hello there"
    long_text = "Line of text number one. " * 8  # 200 bytes: MIME wraps at 76 characters
    wrapped = base64.encodebytes(long_text.encode()).decode()
    assert wrapped.count("\n") == 4
    assert decode_encoded_parts(f"Output:\n{wrapped}", ["base64"]).text == f"Output:\n{long_text}\n"


def test_base64_line_followed_by_a_prose_line():
    # The run crosses the line break into "Thanks"; joined it is no valid text, so the lines
    # are decoded one by one.
    line = base64.b64encode(b"secret value 42").decode()  # 15 bytes: no padding
    assert "=" not in line
    decoded = decode_encoded_parts(f"{line}\nThanks", ["base64"])
    assert decoded.text == "secret value 42\nThanks"


def test_base64_unicode():
    encoded = base64.b64encode("Zürich ☃ 東京 und São Paulo".encode()).decode()
    assert decode_encoded_parts(f"Résumé: {encoded}", ["base64"]).text == "Résumé: Zürich ☃ 東京 und São Paulo"
    # Mostly multi-byte text needs 18 bytes: "東京大阪名古屋" is 7 x 3 = 21 bytes, "東京" only 6.
    assert decode_encoded_parts(base64.b64encode("東京大阪名古屋".encode()).decode(), ["base64"]).text == "東京大阪名古屋"
    assert decode_encoded_parts(base64.b64encode("東京".encode()).decode(), ["base64"]).parts == []


@pytest.mark.parametrize(
    "text",
    [
        "I cannot help with encoding questions or information requests.",
        "Passwords should be at least twelve characters long.",
        "SGk=",  # "Hi": shorter than the minimum run
        "Ruairidh",  # a name that decodes to valid UTF-8: "F梮'a" (mostly non-ASCII, short)
        "Mispelon",  # decodes to "2+)zZ'", but is spelled like a word
        "a01106c2",  # hex digits only: an ID, not base64
        "Welcome to\nAmazon Web",  # a run over a line break that is only words
        base64.b64encode(b"\x00\x01\x02\x03\x04\x05").decode(),  # control characters
        base64.b64encode(b"\xff\xfe\xfd\xfc\xfb\xfa").decode(),  # not UTF-8
        base64.b64encode(b"!!!!!! ?? ..").decode(),  # no letter or digit
        "abcde",
    ],
)
def test_base64_false_positives_left_alone(text):
    decoded = decode_encoded_parts(text, ["base64"])
    assert decoded.text == text and decoded.parts == []


@pytest.mark.parametrize("encoded", [HEX, HEX.upper(), HEX_SPACED, HEX_SPACED.replace(" ", ":")])
def test_hex_forms(encoded):
    decoded = decode_encoded_parts(f"Hex: {encoded}\nDone.", ["base16"])
    assert decoded.text == f"Hex: {SECRET}\nDone."
    # After "Hex: " (5 characters) up to the end of the encoded run.
    assert decoded.parts == [DecodedPart("base16", 5, 5 + len(encoded), SECRET)]


def test_hex_of_a_number_is_decoded():
    # "4111 1111 1111 1111" in hex holds decimal digits only; it decodes to a number.
    encoded = "4111 1111 1111 1111".encode().hex()
    assert encoded.isdigit()
    assert decode_encoded_parts(encoded, ["base16"]).text == "4111 1111 1111 1111"


def test_hex_with_byte_prefixes():
    prefixed = " ".join(f"0x{b:02x}" for b in b"Hi there")
    escaped = "".join(f"\\x{b:02x}" for b in b"Hi there")
    assert decode_encoded_parts(prefixed, ["base16"]).text == "Hi there"
    assert decode_encoded_parts(escaped, ["base16"]).text == "Hi there"


def test_hex_run_that_swallowed_hex_words_is_trimmed():
    # "de" before and "be ad" after are hex pairs too; the full run decodes to invalid
    # UTF-8, the trimmed one to the secret.
    text = f"de {HEX_SPACED} be ad"
    decoded = decode_encoded_parts(text, ["base16"])
    assert decoded.text == f"de {SECRET} be ad"
    assert decoded.parts == [DecodedPart("base16", 3, 3 + len(HEX_SPACED), SECRET)]


@pytest.mark.parametrize(
    "text",
    [
        "The deadbeef cafebabe values",  # not UTF-8
        "Year 20242025",  # " $ %": no letter
        "4a6f686",  # odd number of digits
        "4a6f686e20",  # "John ": 5 bytes, below the minimum
        "12345678",  # control characters
        "commit 4772256e",  # "Gr%n": 4 bytes, below the minimum of 6
        "hash 5825757e6055513e",  # "X%u~`UQ>": does not read as text
        "313528775154 287466396145",  # decimal digits that "decode" to "15(wQT": a number table
        "223526372128",  # decimal digits that "decode" to '"5&7!(': not a number either
        "token4a6f686e",  # glued to a word
    ],
)
def test_hex_false_positives_left_alone(text):
    assert decode_encoded_parts(text, ["base16"]).parts == []


def test_both_encodings_hex_first_then_base64_elsewhere():
    text = f"A: {HEX}\nB: {B64}"
    decoded = decode_encoded_parts(text, ["base16", "base64"])
    assert decoded.text == f"A: {SECRET}\nB: {SECRET}"
    # 32 bytes -> 64 hex digits after "A: " (3..67); 4 * ceil(32 / 3) = 44 base64 characters
    # after "\nB: " (67 + 4 = 71 .. 115). The hex digits also form a base64 run, left alone.
    assert (len(HEX), len(B64)) == (64, 44)
    assert decoded.parts == [DecodedPart("base16", 3, 67, SECRET), DecodedPart("base64", 71, 115, SECRET)]


def test_only_the_asked_encoding_is_decoded():
    text = f"{HEX} {B64}"
    # 64 hex digits (0..64), a space, 44 base64 characters (65..109).
    assert decode_encoded_parts(text, ["base64"]).parts == [DecodedPart("base64", 65, 109, SECRET)]
    assert decode_encoded_parts(text, ["base16"]).parts == [DecodedPart("base16", 0, 64, SECRET)]
    assert decode_encoded_parts(text, []).text == text
    assert decode_encoded_parts(text, []).parts == []


def test_one_megabyte_of_base64_and_of_prose():
    payload = ("x" * 63 + "\n") * 12_288  # 786,432 bytes -> 1,048,576 base64 characters
    encoded = base64.b64encode(payload.encode()).decode()
    assert len(encoded) == 1_048_576
    started = time.process_time()  # CPU seconds: time lost to other processes does not count
    decoded = decode_encoded_parts(f"Here: {encoded}", ["base16", "base64"])
    prose = decode_encoded_parts("Nothing encoded in this sentence at all. " * 25_000, ["base16", "base64"])
    assert time.process_time() - started < 5.0
    assert decoded.text == f"Here: {payload}"
    assert prose.parts == []
