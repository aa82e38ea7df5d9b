"""Obviously fake secrets, in the shapes that secret scanners look for, for the demo's security cases.

The case files name them (``{"secret": "GITHUB_TOKEN"}``) rather than spelling them out, so each value
is written once, next to where it comes from. None is a real credential: the AWS pair and the Windows
key are their vendors' published documentation values, the JWT is jwt.io's example, and the rest are
invented.
"""

from __future__ import annotations

import base64

__all__ = ["SECRETS"]

AWS_ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS documentation example
AWS_SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS documentation example
GITHUB_TOKEN = "ghp_" + "SonarDemoFakeToken0NorthwindMutual42"
SLACK_TOKEN = "xoxb-2048116732-4471920385521-SonarDemoFakeSlackBot7x"
OPENAI_KEY = "sk-proj-N0rthw1ndS0narDem0FakeKeyT3BlbkFJdoNotUse8Qz4Lm2Xv6Rp9Kd"
GOOGLE_KEY = "AIza" + "SyD-SonarDemoFakeMapsKey_Northwind0"
# The well-known example token from jwt.io (HS256, subject "1234567890", name "John Doe").
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
WINDOWS_KEY = "W269N-WFGWX-YVC9B-4J6C9-T83GX"  # Microsoft's published KMS client setup key


def _fake_pem() -> str:
    # The body decodes to a repeated "not a real key" notice, so nobody mistakes it for one.
    notice = base64.b64encode(("SONAR DEMO - THIS IS NOT A REAL PRIVATE KEY. " * 6).encode("utf-8")).decode("ascii")
    body = "MIIEowIBAAKCAQEA" + notice
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"


RSA_KEY = _fake_pem()

# The shapes scanners match on: a GitHub token is "ghp_" and 36 alphanumerics, a Google key 39 characters.
assert len(GITHUB_TOKEN) == 40 and GITHUB_TOKEN[4:].isalnum()
assert len(GOOGLE_KEY) == 39

#: Name -> value, as the case files' ``{"secret": NAME}`` pieces refer to them.
SECRETS: dict[str, str] = {
    "AWS_ACCESS_KEY": AWS_ACCESS_KEY,
    "AWS_SECRET_KEY": AWS_SECRET_KEY,
    "GITHUB_TOKEN": GITHUB_TOKEN,
    "SLACK_TOKEN": SLACK_TOKEN,
    "OPENAI_KEY": OPENAI_KEY,
    "GOOGLE_KEY": GOOGLE_KEY,
    "JWT": JWT,
    "WINDOWS_KEY": WINDOWS_KEY,
    "RSA_KEY": RSA_KEY,
}
