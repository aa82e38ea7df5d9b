"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

It is a real HTTP server (``http.server.ThreadingHTTPServer``, HTTP/1.1 keep-alive) speaking
``POST /v1/chat/completions``. It answers from a *script*: a list of ``(matcher, answer)`` pairs
tried in order against the prompt (the last user message); the first that matches gives the
answer. A matcher is a substring or a compiled regular expression; an answer is a string or a
callable ``prompt -> str``. Prompts that match nothing get ``default``.

Faults are injected by call number ``n`` (every request to the endpoint counts, from 1, in
arrival order; a retried request is a new call):

=====================  =====================================================================
``rate_limit_every``   every Nth call is a 429 with ``Retry-After`` (``retry_after``, seconds;
                       None: no header)
``max_in_flight_429``  a call that arrives while N calls are being answered is a 429 at once
                       (with ``Retry-After`` as above): a provider's concurrency limit. The
                       refused calls are not in flight: ``max_in_flight`` stays at most N, and
                       ``over_limit`` counts them (their outcome is ``rate_limited``)
``server_error_every`` every Nth call is a 500
``malformed_every``    every Nth call is a 200 whose body is not a chat completion
``timeout_calls``      these calls answer only after ``timeout_delay`` seconds
``drop_calls``         these calls get their connection closed without an answer
``latency``            every call waits this long before answering (seconds)
``echo_authorization`` answers and error bodies repeat the request's Authorization header (a
                       hostile endpoint, for the secret-leak tests)
``ignore_n``           answer one choice whatever ``n`` the request asks for (as some
                       OpenAI-compatible servers do)
``ignore_logprobs``    answer without ``logprobs`` whatever the request asks for
``usage``              how ``usage`` counts tokens: ``words`` (default: the last user message's
                       whitespace words, and the reply's) or ``tokens`` (closer to a real BPE
                       tokenizer: every message's words and punctuation marks, a word past 8
                       characters one token per 8, 3 tokens per message and 3 to prime the reply;
                       see :func:`bpe_like_tokens`), for the cost tests (docs/costs.md)
``raw``                a callable ``Call -> (status, headers, body bytes, truncate)``: every call
                       not faulted gets exactly that response (any status, content type, body);
                       with ``truncate`` half the body is sent and the connection closed (the fuzz
                       suite's arbitrary host and judge responses, tests/fuzz)
=====================  =====================================================================

A chat call with ``"logprobs": true`` gets, per choice, the first answer token's top alternatives
(OpenAI's ``choices[i].logprobs.content[0]``, with ``top_logprobs``): from ``top_logprobs`` (a
callable ``prompt -> [(token, logprob), ...]``, the first pair being the token itself), else the
whole reply as one token of log-probability 0.

A chat call with ``n`` > 1 gets ``n`` choices, each the script's reply (a callable is called once
per choice), as OpenAI answers; its number of choices is kept in the call's ``choices``.

When several faults fall on one call the first in this order wins: drop, timeout, 429, 500,
malformed (``max_in_flight_429`` goes before them all). Every call is recorded in ``requests`` (number, prompt, outcome); ``calls`` counts
them and ``answered`` lists the prompts that got a valid answer.

A chat call is answered with ``message_for(body)`` when that callable is given and returns a message
(``{"role": "assistant", "content": ..., "tool_calls": [...]}``): a scripted agent that calls tools
(its ``finish_reason`` is ``tool_calls`` when the message has some); None falls back to the script.

``POST /v1/rag`` speaks the ``rag_http`` host contract (docs/hosts.md): the body
``{"question": ...}`` is the prompt, scripted and faulted like a chat call (calls count together),
and a valid answer is ``{"answer", "contexts", "usage"}`` with ``contexts`` from
``rag_contexts`` (a list, or a callable ``question -> list``).

``GET /stats`` returns ``{"calls", "outcomes", "max_in_flight", "over_limit"}``. From the command line,
``python tests/judge_server.py --latency 0.2 --default absent`` prints the base URL and serves
until its standard input closes (bench/bench_judge_client.py runs it so).

Use it as the ``judge_server`` fixture (tests/conftest.py) or directly::

    with JudgeServer(script=[("contact information", "absent")], default="true") as server:
        config = {"base_url": server.base_url, "model": "scripted"}

:func:`write_llm_configs` writes an LLM configuration file whose default judge is such a server.
Benchmarks run the server in a process of its own with :func:`served` and read ``/stats`` with
:func:`server_stats`.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Pattern, Union
import urllib.request

__all__ = ["JudgeServer", "Call", "write_llm_configs", "served", "server_stats", "bpe_like_tokens"]

Matcher = Union[str, Pattern[str]]
Reply = Union[str, Callable[[str], str]]


@dataclass
class Call:
    """One request the server received."""

    n: int
    prompt: str
    model: str
    outcome: str = "pending"  # answered, rate_limited, server_error, malformed, timeout, dropped
    choices: int = 1  # the ``n`` the call asked for (1 when absent)
    logprobs: bool = False  # whether the call asked for log-probabilities
    body: dict[str, Any] = field(default_factory=dict)


class JudgeServer:
    """See the module docstring."""

    def __init__(
        self,
        script: Iterable[tuple[Matcher, Reply]] = (),
        default: Reply = "true",
        *,
        latency: float = 0.0,
        rate_limit_every: int | None = None,
        retry_after: str | None = "1",
        max_in_flight_429: int | None = None,
        server_error_every: int | None = None,
        malformed_every: int | None = None,
        timeout_calls: Iterable[int] = (),
        timeout_delay: float = 5.0,
        drop_calls: Iterable[int] = (),
        echo_authorization: bool = False,
        keep_bodies: bool = True,
        rag_contexts: list[str] | Callable[[str], list[str]] = (),
        ignore_n: bool = False,
        top_logprobs: Callable[[str], list[tuple[str, float]]] | None = None,
        ignore_logprobs: bool = False,
        raw: Callable[[Call], tuple[int, dict[str, str], bytes, bool]] | None = None,
        message_for: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
        usage: str = "words",
    ) -> None:
        self.script: list[tuple[Matcher, Reply]] = list(script)
        self.default = default
        self.latency = latency
        self.rate_limit_every = rate_limit_every
        self.retry_after = retry_after
        self.max_in_flight_429 = max_in_flight_429
        #: Calls refused with a 429 because ``max_in_flight_429`` were in flight.
        self.over_limit = 0
        self.server_error_every = server_error_every
        self.malformed_every = malformed_every
        self.timeout_calls = set(timeout_calls)
        self.timeout_delay = timeout_delay
        self.drop_calls = set(drop_calls)
        self.echo_authorization = echo_authorization
        self.keep_bodies = keep_bodies
        self.rag_contexts = rag_contexts
        self.ignore_n = ignore_n
        self.top_logprobs = top_logprobs
        self.ignore_logprobs = ignore_logprobs
        self.raw = raw
        self.message_for = message_for
        self.usage = usage
        self.requests: list[Call] = []
        #: Most requests being handled at once (a client's concurrency bound shows here).
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle ------------------------------------------------------------------------------

    def start(self) -> "JudgeServer":
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="judge-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "JudgeServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- what happened ---------------------------------------------------------------------------

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def answered(self) -> list[str]:
        with self._lock:
            return [c.prompt for c in self.requests if c.outcome == "answered"]

    def outcomes(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        with self._lock:
            for call in self.requests:
                counts[call.outcome] = counts.get(call.outcome, 0) + 1
        return counts

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0
            self.over_limit = 0

    def _enter(self) -> bool:
        """Count a call in flight; False (not counted) when ``max_in_flight_429`` are in flight already."""
        with self._lock:
            if self.max_in_flight_429 is not None and self._in_flight >= self.max_in_flight_429:
                self.over_limit += 1
                return False
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return True

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    # -- answering -------------------------------------------------------------------------------

    def reply_for(self, prompt: str) -> str:
        for matcher, reply in self.script:
            hit = matcher.search(prompt) is not None if isinstance(matcher, re.Pattern) else matcher in prompt
            if hit:
                return reply(prompt) if callable(reply) else reply
        return self.default(prompt) if callable(self.default) else self.default

    def _register(self, prompt: str, model: str, body: dict[str, Any]) -> Call:
        with self._lock:
            choices = body.get("n") if isinstance(body.get("n"), int) and body.get("n") > 1 else 1
            call = Call(n=len(self.requests) + 1, prompt=prompt, model=model, body=body if self.keep_bodies else {},
                        choices=choices, logprobs=body.get("logprobs") is True)
            self.requests.append(call)
            return call

    def fault(self, n: int) -> str | None:
        if n in self.drop_calls:
            return "dropped"
        if n in self.timeout_calls:
            return "timeout"
        for every, outcome in ((self.rate_limit_every, "rate_limited"), (self.server_error_every, "server_error"),
                               (self.malformed_every, "malformed")):
            if every and n % every == 0:
                return outcome
        return None

    def retry_header(self) -> dict[str, str]:
        """A 429's headers: ``Retry-After`` unless ``retry_after`` is None."""
        return {} if self.retry_after is None else {"Retry-After": self.retry_after}

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


class _QuietServer(ThreadingHTTPServer):
    """A client that drops its connection (a timeout, a response it refused) is not the server's error:
    socketserver would print a traceback on stderr, which the fuzz suite reads as Sonar's."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    owner: JudgeServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes: without this, Nagle's algorithm holds the body
        # back until the client's delayed ACK (about 40 ms per answer).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return None

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _send_raw(self, status: int, headers: dict[str, str], body: bytes, truncate: bool) -> None:
        """Exactly this response; ``truncate``: announce the whole body, send half, close the connection."""
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if truncate else body)
        if truncate:
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:  # the client already closed it (a 204 has no body to wait for): ENOTCONN
                pass

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        if self.owner.echo_authorization:
            message += f" (you sent {self.headers.get('Authorization', '')})"
        self._send(status, json.dumps({"error": {"message": message, "type": "test"}}).encode(), headers)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.rstrip("/") == "/stats":
            server = self.owner
            self._send(200, json.dumps({"calls": server.calls, "outcomes": server.outcomes(),
                                        "max_in_flight": server.max_in_flight,
                                        "over_limit": server.over_limit}).encode())
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        server = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        route = self.path.rstrip("/")
        if route not in ("/v1/chat/completions", "/v1/rag"):
            self._error(404, f"no route {self.path}")
            return
        rag = route == "/v1/rag"
        try:
            body = json.loads(raw)
            if rag:
                prompt = body["question"]
                if not isinstance(prompt, str):
                    raise TypeError("question")
            else:
                messages = body["messages"]
                prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        except (ValueError, KeyError, TypeError):
            self._error(400, "expected {\"question\": ...}" if rag else "expected a chat-completions body")
            return
        call = server._register(prompt, "rag" if rag else str(body.get("model", "")), body)
        if not server._enter():
            call.outcome = "rate_limited"
            self._error(429, "too many requests in flight", server.retry_header())
            return
        try:
            self._answer(server, call, prompt, rag, body)
        finally:
            server._leave()

    def _answer(self, server: JudgeServer, call: Call, prompt: str, rag: bool = False,
                body: dict[str, Any] | None = None) -> None:
        fault = server.fault(call.n)
        call.outcome = fault or "answered"
        if fault == "dropped":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        server.wait(server.timeout_delay if fault == "timeout" else server.latency)
        try:
            if fault is None and server.raw is not None:
                self._send_raw(*server.raw(call))
            elif fault == "timeout":
                self._error(504, "answered too late")
            elif fault == "rate_limited":
                self._error(429, "rate limited", server.retry_header())
            elif fault == "server_error":
                self._error(500, "internal error")
            elif fault == "malformed":
                self._send(200, b'{"id": "chatcmpl-broken", "choices": [{"message": ')
            else:
                count = 1 if rag or server.ignore_n else call.choices
                answers = [server.reply_for(prompt) for _ in range(count)]
                if server.echo_authorization:
                    answers = [a + f" {self.headers.get('Authorization', '')}" for a in answers]
                answer = answers[0]
                if rag:
                    contexts = server.rag_contexts(prompt) if callable(server.rag_contexts) else server.rag_contexts
                    self._send(200, json.dumps({
                        "answer": answer, "contexts": list(contexts),
                        "usage": {"input_tokens": len(prompt.split()), "output_tokens": len(answer.split())},
                    }).encode())
                    return
                choices = [{"index": i, "message": {"role": "assistant", "content": a}, "finish_reason": "stop"}
                           for i, a in enumerate(answers)]
                message = server.message_for(body or {}) if server.message_for and not rag else None
                if message is not None:
                    answers = [message.get("content") or ""]
                    choices = [{"index": 0, "message": message,
                                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}]
                if call.logprobs and not server.ignore_logprobs:
                    for choice, a in zip(choices, answers):
                        top = server.top_logprobs(prompt) if server.top_logprobs else [(a, 0.0)]
                        choice["logprobs"] = {"content": [{
                            "token": top[0][0], "logprob": top[0][1],
                            "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top]}]}
                if server.usage == "tokens":
                    prompt_tokens = 3 + sum(3 + bpe_like_tokens(str(m.get("content") or ""))
                                            for m in (body or {}).get("messages", []))
                    completion_tokens = sum(bpe_like_tokens(a) for a in answers)
                else:
                    prompt_tokens, completion_tokens = len(prompt.split()), sum(len(a.split()) for a in answers)
                self._send(200, json.dumps({
                    "id": f"chatcmpl-{call.n}", "object": "chat.completion", "created": int(time.time()),
                    "model": call.model,
                    "choices": choices,
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                              "total_tokens": prompt_tokens + completion_tokens},
                }).encode())
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout): nothing to answer


def bpe_like_tokens(text: str) -> int:
    """Tokens of ``text`` as a BPE tokenizer roughly counts them: each run of word characters (one token
    per 8 characters) and each punctuation mark. Not Sonar's estimate (characters / 4), on purpose."""
    return sum(-(-len(piece) // 8) if piece[0].isalnum() or piece[0] == "_" else 1
               for piece in re.findall(r"\w+|[^\w\s]", text))


def write_llm_configs(path: Path, base_url: str, **settings) -> Path:
    """An LLM configuration file with the judge ``test-judge`` at ``base_url``, the run's default."""
    lines = ["default_judge: test-judge", "llms:", "  test-judge:", f"    base_url: {base_url}",
             "    model: scripted-judge"]
    lines += [f"    {key}: {value}" for key, value in settings.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@contextlib.contextmanager
def served(*args: str, script: str = __file__) -> Iterator[str]:
    """``python script ARGS`` in a process of its own (this module's command line by default): yields the
    base URL it prints first, and stops it by closing its standard input."""
    process = subprocess.Popen([sys.executable, script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    try:
        url = process.stdout.readline().strip()
        if not url:
            raise RuntimeError(f"{script} {' '.join(args)} exited before printing its URL")
        yield url
    finally:
        process.stdin.close()
        process.wait(timeout=10)


def server_stats(base_url: str) -> dict[str, Any]:
    """``GET /stats`` of a server: ``{"calls", "outcomes", "max_in_flight", "over_limit"}``."""
    return json.loads(urllib.request.urlopen(base_url.rsplit("/v1", 1)[0] + "/stats").read())


def main() -> None:
    """Serve from the command line until stdin closes: prints the base URL first. GET /stats counts."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="A scripted chat-completions server on 127.0.0.1.")
    parser.add_argument("--default", default="true", help="the answer to every prompt")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    args = parser.parse_args()
    with JudgeServer(default=args.default, latency=args.latency, keep_bodies=False) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
