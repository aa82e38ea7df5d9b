"""``python``: a function named ``module:function`` in the run configuration is the model under test.

``function(prompt: str)`` returns the answer as a string, or a dict with ``answer`` (a string)
and optionally ``contexts`` (a list of strings) and ``usage`` (``input_tokens``,
``output_tokens``). The module must be importable (installed, or on ``sys.path``; the run
configuration's folder is added): it comes from the configuration, never from a dataset. An
exception fails that item (it is not retried). A call that has not returned within ``timeout``
seconds fails its item as a timeout (retried when ``retries`` allows): the run goes on, and the
function's thread, which Python cannot stop, is left to finish on its own. The response cache is
off unless ``cache: true``: a function changes with its code, which the cache cannot see.

With ``chat: true`` the function is an agent that can be asked conversations (docs/conversations.md):
it is called as ``function(messages, tools)`` with the history as OpenAI chat messages and the
test case's tool declarations, and returns a string or a dict with ``answer`` and optionally
``tool_calls`` (``[{"name": str, "arguments": {...}}]``).
"""

from __future__ import annotations

import importlib
import sys
import threading
from typing import Any, Callable, NotRequired, TypedDict

from pydantic import Field

from ..conversation import ToolCall
from ..errors import ConfigError
from ..jsontypes import JsonObject
from ..llm.backends import TOOLS_ROLE, Answer, PermanentError, TransientError
from ..llm.configs import LLMConfig
from .client_host import ClientHost, HostSpec

__all__ = ["PythonSpec", "PythonBackend", "AgentReply", "load_callable", "make_python_host"]


class AgentReply(TypedDict):
    """What a python host's function may return instead of a plain string (docs/hosts.md)."""
    answer: str
    contexts: NotRequired[list[str]]  #: a RAG function's retrieved contexts
    usage: NotRequired[JsonObject]  #: token usage, as an OpenAI response spells it
    tool_calls: NotRequired[list[ToolCall]]  #: a chat function's calls (``chat: true``)


class _Outcome:
    """What the function's thread hands back: its result, or the exception it raised."""

    __slots__ = ("result", "error")

    def __init__(self) -> None:
        self.result: Any = None
        self.error: BaseException | None = None


class PythonSpec(HostSpec):
    """A Python function named module:function in the run configuration; it returns the answer."""

    callable: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    cache: bool = False
    retries: int = Field(default=0, ge=0)
    max_concurrency: int = Field(default=1, ge=1)
    #: The function takes ``(messages, tools)`` and may call tools: it can be asked conversations.
    chat: bool = False


def load_callable(reference: str, base_dir: str | None = None) -> Callable[[str], Any]:
    """The function ``module:function`` (ConfigError, one line, when it cannot be found)."""
    module_name, _, name = reference.partition(":")
    if base_dir and base_dir not in sys.path:
        sys.path.append(base_dir)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigError(f"cannot import module '{module_name}' of callable '{reference}': "
                          f"{type(exc).__name__}: {exc}".splitlines()[0]) from None
    function = getattr(module, name, None)
    if not callable(function):
        raise ConfigError(f"module '{module_name}' has no function '{name}' (callable '{reference}')")
    return function


class PythonBackend:
    def __init__(self, function: Callable[[str], Any], reference: str, timeout: float, chat: bool = False) -> None:
        self.function = function
        self.reference = reference
        self.timeout = timeout
        self.chat = chat

    def _call(self, prompt: Any) -> Any:
        """The function's result, within the timeout: on a thread of its own, so a hung function costs
        its item, not the run."""
        box = _Outcome()
        done = threading.Event()

        def target() -> None:
            try:
                box.result = self.function(*prompt) if self.chat else self.function(prompt)
            except BaseException as exc:  # handed to the caller's thread
                box.error = exc
            finally:
                done.set()

        threading.Thread(target=target, name=f"python-host {self.reference}", daemon=True).start()
        if not done.wait(self.timeout):
            raise TransientError("timeout", f"{self.reference} did not return within {self.timeout:g} s")
        if box.error is not None:
            raise box.error
        return box.result

    def check(self) -> None:
        return None

    def complete(self, messages: list[dict[str, str]], temperature: float, max_tokens: int, seed: int) -> Answer:
        if self.chat:  # the history and the tools (hosts/chat_turns.py sends them first, when any)
            tools = messages[0]["tools"] if messages and messages[0].get("role") == TOOLS_ROLE else []
            prompt: Any = ([m for m in messages if m.get("role") != TOOLS_ROLE], tools)
        else:
            prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        try:
            result = self._call(prompt)
        except TransientError:
            raise
        except Exception as exc:
            raise PermanentError(f"{self.reference} raised {type(exc).__name__}: {exc}".splitlines()[0]) from None
        if isinstance(result, str):
            return Answer(text=result)
        if isinstance(result, dict) and isinstance(result.get("answer"), str):
            meta: JsonObject = {}
            contexts = result.get("contexts")
            if contexts is not None:
                if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
                    raise PermanentError(f"{self.reference} returned 'contexts' that is not a list of strings")
                meta["contexts"] = contexts
            if isinstance(result.get("usage"), dict):
                meta["usage"] = result["usage"]
            if self.chat and result.get("tool_calls"):
                meta["tool_calls"] = _openai_calls(result["tool_calls"], self.reference)
            return Answer(text=result["answer"], meta=meta)
        raise PermanentError(f"{self.reference} returned {type(result).__name__}, expected a string "
                             f"or a dict with a string 'answer'")

    def close(self) -> None:
        return None


def _openai_calls(calls: Any, reference: str) -> list[JsonObject]:
    """An agent function's tool calls as the OpenAI protocol spells them."""
    import json

    if not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str)
                                              and isinstance(c.get("arguments", {}), dict) for c in calls):
        raise PermanentError(f"{reference} returned 'tool_calls' that is not a list of {{name, arguments}}")
    return [{"id": c.get("id") or f"call_{i}", "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}), sort_keys=True)}}
            for i, c in enumerate(calls)]


def make_python_host(spec: PythonSpec, services) -> ClientHost:
    function = load_callable(spec.callable, services.base_dir)
    config = LLMConfig(key=spec.key, model=spec.callable, timeout=spec.timeout, retries=spec.retries,
                       backoff=spec.backoff, max_concurrency=spec.max_concurrency,
                       requests_per_minute=spec.requests_per_minute, description=spec.description)
    return ClientHost(spec, backend=PythonBackend(function, spec.callable, spec.timeout, spec.chat), config=config,
                      identity={"callable": spec.callable, **({"chat": True} if spec.chat else {})},
                      services=services, deterministic=False)
