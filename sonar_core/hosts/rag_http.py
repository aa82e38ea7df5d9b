"""``rag_http``: a RAG service over HTTP that returns its answer and the chunks it retrieved.

The contract (docs/hosts.md): Sonar sends ``POST <url>`` with ``Content-Type: application/json``
and the body ``{"question": "<the test case's input>"}``; the service answers 200 with
``{"answer": "<text>", "contexts": ["<chunk>", ...]}`` and, optionally, ``"usage":
{"input_tokens": n, "output_tokens": m}`` for the price table. 408, 409, 429 (with
``Retry-After``) and 5xx are retried, like a body that does not follow the contract; any other
status fails the item at once.
"""

from __future__ import annotations

import json
import os
import socket

from ..jsontypes import JsonObject
from ..llm.backends import Answer, PermanentError, TransientError
from ..llm.configs import LLMConfig
from ..llm.rate_limit import retry_after_seconds
from .client_host import ClientHost, HostSpec

__all__ = ["RAGHTTPSpec", "RAGHTTPBackend", "make_rag_http_host"]

_QUOTE = 200


class RAGHTTPSpec(HostSpec):
    """A RAG service over HTTP: POST {"question"}, answer {"answer", "contexts", "usage"}."""

    url: str
    #: Name of an environment variable whose value is sent as ``Authorization: Bearer <value>``.
    api_key_env: str | None = None


def parse_rag_body(body: str) -> Answer:
    """Answer from a contract body, or TransientError naming what is wrong with it."""
    try:
        data = json.loads(body)
    except ValueError:
        raise TransientError("malformed", f"response is not JSON: {body[:_QUOTE]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("answer"), str):
        raise TransientError("malformed", f"response has no string 'answer': {body[:_QUOTE]!r}")
    contexts = data.get("contexts", [])
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise TransientError("malformed", f"response 'contexts' is not a list of strings: {body[:_QUOTE]!r}")
    meta: JsonObject = {"contexts": contexts}
    if isinstance(data.get("usage"), dict):
        meta["usage"] = data["usage"]
    return Answer(text=data["answer"], meta=meta)


class RAGHTTPBackend:
    """One POST per question (urllib: no dependency beyond the standard library)."""

    def __init__(self, url: str, timeout: float, api_key: str | None = None) -> None:
        self.url = url
        self.timeout = timeout
        self._api_key = api_key

    def check(self) -> None:
        return None

    def complete(self, messages: list[dict[str, str]], temperature: float, max_tokens: int, seed: int) -> Answer:
        # Here, not at the top: every run registers this host kind, few use it (urllib.request
        # brings http.client and ssl, about 10 ms).
        import urllib.error
        import urllib.request

        question = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=json.dumps({"question": question}).encode("utf-8"),
                                         headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body = response.read().decode("utf-8", errors="replace")
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", errors="replace")[:_QUOTE]
            message = f"HTTP {exc.code}: {text}".rstrip(": ")
            if exc.code in (408, 409, 429) or exc.code >= 500:
                kind = "rate_limit" if exc.code == 429 else "server_error" if exc.code >= 500 else "timeout"
                raise TransientError(kind, message, retry_after_seconds(dict(exc.headers or {}))) from None
            raise PermanentError(message) from None
        except (socket.timeout, TimeoutError):
            raise TransientError("timeout", f"no answer within {self.timeout:g} s") from None
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise TransientError("timeout", f"no answer within {self.timeout:g} s") from None
            raise TransientError("connection", f"connection failed: {type(reason).__name__}: {reason}") from None
        return parse_rag_body(body)

    def close(self) -> None:
        return None


def make_rag_http_host(spec: RAGHTTPSpec, services) -> ClientHost:
    api_key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
    if spec.api_key_env and not api_key:
        from ..errors import ConfigError

        raise ConfigError(f"host '{spec.key}': environment variable {spec.api_key_env} is not set")
    services.redact.add(api_key)
    config = LLMConfig(key=spec.key, base_url=spec.url, model="rag", timeout=spec.timeout, retries=spec.retries,
                       backoff=spec.backoff, max_concurrency=spec.max_concurrency,
                       requests_per_minute=spec.requests_per_minute, description=spec.description)
    return ClientHost(spec, backend=RAGHTTPBackend(spec.url, spec.timeout, api_key), config=config,
                      identity={"url": spec.url}, services=services, deterministic=False)
