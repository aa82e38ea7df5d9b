"""The secret regex suite: every kind with true and false positives, and masking.

Every secret below is fake: documentation examples (AKIAIOSFODNN7EXAMPLE) or made-up
strings that only have the right shape.
"""

import base64
import json
import time

import pytest

from sonar_plugins.privacy.secret_patterns import SECRET_KINDS, SecretMatch, find_secrets, mask_secret


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


JWT = (
    b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    + "."
    + b64url(b'{"sub":"1234567890","name":"Test"}')
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE\n"
    "ZmFrZSBrZXkgZm9yIHRlc3RzIG9ubHk=\n"
    "-----END RSA PRIVATE KEY-----"
)
PEM_CERT = (
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBuTCCASKgAwIBAgIQNdNhtuV5GbNHYZsf+LvM0zANBgkqhkiG9w0BAQUFADAb\n"
    "-----END CERTIFICATE-----"
)
OPENAI_PROJECT = "sk-proj-" + "Ab1_" * 10 + "wxyz"
OPENAI_LEGACY = "sk-" + "a1B2c3D4e5F6g7H8i9J0" + "T3BlbkFJ" + "k1L2m3N4o5P6q7R8s9T0"
H2O_KEY = "sk-Uaq1B5GTqMnvA4BhclZZH8BWOLocxsd5ra3HbBrCjzg"  # 43 characters after "sk-"
GITHUB_CLASSIC = "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345"
GITHUB_FINE = "github_pat_11ABCDEFG0123456789_" + "abcdefghij" * 6
SLACK = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIzaSyA-1234567890abcdefghijklmnopqrstu"  # AIza + 35


@pytest.mark.parametrize(
    "kind,secret",
    [
        ("pem_private_key", PEM_KEY),
        ("pem_private_key", PEM_KEY.replace("RSA PRIVATE KEY", "OPENSSH PRIVATE KEY")),
        ("pem_private_key", PEM_KEY.replace("RSA PRIVATE KEY", "PRIVATE KEY")),
        ("pem_certificate", PEM_CERT),
        ("openai_api_key", OPENAI_PROJECT),
        ("openai_api_key", OPENAI_LEGACY),
        ("h2o_api_key", H2O_KEY),
        ("secret_key", "sk-" + "z" * 32),
        ("aws_access_key_id", "AKIAIOSFODNN7EXAMPLE"),
        ("aws_access_key_id", "ASIAIOSFODNN7EXAMPLE"),
        ("aws_secret_access_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("github_token", GITHUB_CLASSIC),
        ("github_token", GITHUB_CLASSIC.replace("ghp_", "ghs_")),
        ("github_token", GITHUB_FINE),
        ("slack_token", SLACK),
        ("google_api_key", GOOGLE),
        ("jwt", JWT),
        ("windows_product_key", "VK7JG-NPHTM-C97JM-9MPGT-3V66T"),
        ("password", "password: Summer2024!"),
        ("password", "PASSWD=hunter2hunter2"),
    ],
)
def test_each_kind_found(kind, secret):
    text = f"Here you go:\n{secret}\nAnything else?"
    [match] = find_secrets(text)
    assert match.kind == kind
    assert text[match.start : match.end] == secret
    assert kind in SECRET_KINDS


@pytest.mark.parametrize(
    "text",
    [
        "sk-abc is too short",
        "sk-" + "a" * 20,  # 20 characters: shorter than any key format
        "AKIA1234",  # truncated access key id
        "AKIAIOSFODNN7EXAMPLE1",  # 17 characters after AKIA: part of something longer
        "ghp_tooShort123",
        "xoxb-short",
        "AIzaSyA-123",  # too short
        "eyJhbGciOiJIUzI1NiJ9.e30.sig".replace("eyJhbGciOiJIUzI1NiJ9", b64url(b'{"typ":"JWT"}')),  # no alg
        "eyJub3QganNvbg.abc.def",  # header is not JSON
        "XXXXX-XXXXX-XXXXX-XXXXX-XXXXX",  # a placeholder, not a key
        "HELLO-WORLD-THERE-ABCDE-FGHIJ",  # upper-case words
        "A PEM file starts with -----BEGIN CERTIFICATE----- and ends with -----END CERTIFICATE-----.",
        "Your password: must be long",  # the value is prose
        "password: ********",  # already redacted
        "Set PASSWORD=letmein",  # 7 characters and letters only
        "USERNAME=testuser,PASSWORD=[Password]",  # a placeholder
        "password = os.getenv('DB_PASSWORD')",  # code
        "DB_PASSWORD=${DB_PASSWORD}",
        "pwd = os.getcwd()",  # the shell's pwd, not a password
        "password=password,",  # code passing a variable
        "password: Optional[str] = None",  # a type annotation
        "self.master_user_password = cluster.master_user_password",
    ],
)
def test_false_positives_rejected(text):
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "The quick brown fox jumps over the lazy dog.",
        "Use an API key from your account settings; never paste it into a chat.",
        "Tokens such as JWTs have three parts: header.payload.signature.",
        "Windows 11 Pro needs a 25-character product key, e.g. XXXXX-XXXXX-XXXXX-XXXXX-XXXXX.",
        "e.g. this is fine, i.e. no secrets. Version 1.2.3 was released on 2024-05-01.",
        "Risk-free, state-of-the-art, sk-ills and ask-me-anything sessions.",
        "Passwords should be at least 12 characters long.",
    ],
)
def test_ordinary_prose_has_no_secrets(text):
    assert find_secrets(text) == []


def test_password_in_an_environment_variable():
    [match] = find_secrets("export DB_PASSWORD='s3cr3t-Value'")
    # The match starts at the keyword; the variable's prefix is kept out of it.
    assert (match.kind, match.masked) == ("password", "PASSWORD='************")


def test_truncated_pem_key_still_counts():
    truncated = PEM_KEY.split("-----END")[0].rstrip()
    [match] = find_secrets("Sure:\n" + truncated)
    assert match.kind == "pem_private_key"
    # Body: 64 + 32 = 96 base64 characters on two lines.
    assert match.masked == "-----BEGIN RSA PRIVATE KEY----- [96 characters hidden]"


def test_encrypted_pem_with_header_lines():
    key = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        "Proc-Type: 4,ENCRYPTED\n"
        "DEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n"
        "\n"
        "ZmFrZSBlbmNyeXB0ZWQga2V5IGZvciB0ZXN0cyBvbmx5IC0gbm90IHJlYWwh\n"
        "-----END RSA PRIVATE KEY-----"
    )
    [match] = find_secrets(key)
    assert (match.kind, match.start, match.end) == ("pem_private_key", 0, len(key))


def test_pem_on_one_line_and_indented():
    body = "MIIBuTCCASKgAwIBAgIQNdNhtuV5GbNHYZsf+LvM0zANBgkqhkiG9w0BAQUFADAb"
    one_line = f"-----BEGIN CERTIFICATE-----{body}-----END CERTIFICATE-----"
    assert [(m.kind, m.end) for m in find_secrets(one_line)] == [("pem_certificate", len(one_line))]
    indented = f"  -----BEGIN PRIVATE KEY-----\n    {body}\n  -----END PRIVATE KEY-----\n"
    [match] = find_secrets(indented)
    assert indented[match.start : match.end] == indented.strip()


def test_prose_between_begin_and_end_is_not_one_block():
    # The BEGIN line has no base64 body of its own: the END far below does not make the
    # prose in between a key.
    text = (
        "-----BEGIN CERTIFICATE-----\nThis is where the certificate would go, but I will not "
        "print it; ask your administrator for one instead of me.\n-----END CERTIFICATE-----"
    )
    assert find_secrets(text) == []


def test_masks():
    assert mask_secret("aws_access_key_id", "AKIAIOSFODNN7EXAMPLE") == "AKIA************MPLE"
    assert mask_secret("openai_api_key", OPENAI_PROJECT) == "sk-proj-****…wxyz"
    assert mask_secret("h2o_api_key", H2O_KEY) == "sk-****…Cjzg"
    assert mask_secret("github_token", GITHUB_CLASSIC) == "ghp_****…2345"
    assert mask_secret("windows_product_key", "VK7JG-NPHTM-C97JM-9MPGT-3V66T") == "*****-*****-*****-*****-*V66T"
    assert mask_secret("password", "password: Summer2024!") == "password: ***********"
    assert mask_secret("jwt", JWT) == "ey****…sw5c"
    # PEM: 64 + 32 = 96 body characters.
    assert mask_secret("pem_private_key", PEM_KEY) == "-----BEGIN RSA PRIVATE KEY----- [96 characters hidden]"
    assert mask_secret("pem_certificate", PEM_CERT) == "-----BEGIN CERTIFICATE----- [64 characters hidden]"


def test_masked_text_never_contains_the_secret():
    for secret in (OPENAI_PROJECT, OPENAI_LEGACY, H2O_KEY, GITHUB_CLASSIC, SLACK, GOOGLE, JWT, PEM_KEY):
        [match] = find_secrets(secret)
        assert secret not in match.masked
        assert len(match.masked) < len(secret)


def test_several_secrets_sorted_and_unicode_offsets():
    text = f"🔑 Schlüssel: AKIAIOSFODNN7EXAMPLE\nund {GOOGLE} — fertig"
    found = find_secrets(text)
    assert [(m.kind, text[m.start : m.end]) for m in found] == [
        ("aws_access_key_id", "AKIAIOSFODNN7EXAMPLE"),
        ("google_api_key", GOOGLE),
    ]
    # "🔑 Schlüssel: " is 1 + 1 + 10 + 1 = 13 characters (the emoji is one).
    assert found[0] == SecretMatch("aws_access_key_id", 13, 33, "AKIA************MPLE")


def test_one_megabyte_text():
    filler = "Nothing secret in this line, just words and numbers 12345.\n" * 18_000  # 59 x 18,000
    text = filler + f"token={GITHUB_CLASSIC}\n" + filler
    assert len(text) > 2_000_000
    started = time.process_time()  # CPU seconds: time lost to other processes does not count
    found = find_secrets(text)
    assert time.process_time() - started < 5.0
    assert [(m.kind, m.start) for m in found] == [("github_token", len(filler) + len("token="))]


def test_long_runs_are_linear():
    cases = [
        ("a" * 1_000_000, []),
        # Too long for the 48- and 43-character key shapes (they must end there); the generic
        # "sk-" + 32 or more pattern takes the whole run: 3 + 1,000,000 characters.
        ("sk-" + "a" * 1_000_000, [SecretMatch("secret_key", 0, 1_000_003, "sk-****…aaaa")]),
        # BEGIN lines with no base64 body between them: no block.
        ("-----BEGIN CERTIFICATE-----" * 20_000, []),
        # A JWT starts "ew" or "ey": a run of e's is none.
        ("e" * 500_000 + ".", []),
    ]
    for text, expected in cases:
        started = time.process_time()  # CPU seconds: time lost to other processes does not count
        assert find_secrets(text) == expected
        assert time.process_time() - started < 5.0
