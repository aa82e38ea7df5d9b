"""The built-in host kinds: a plugin the plugin manager registers before any other (see
:data:`sonar_core.plugins.BUILT_IN_PLUGINS`), through the same hook as a plugin's."""

from __future__ import annotations

from ..hookspecs import hookimpl
from .hf_causal_lm import HFCausalLMSpec, make_hf_causal_lm_host
from .openai_chat import OpenAIChatSpec, make_openai_chat_host
from .python_callable import PythonSpec, make_python_host
from .rag_http import RAGHTTPSpec, make_rag_http_host
from .factory import spec_factory

#: The name this module is registered under with the plugin manager (`sonar hosts` shows it).
PLUGIN_NAME = "sonar_core"


@hookimpl
def register_host_kinds(register) -> None:
    register("openai_chat", spec_factory(OpenAIChatSpec, make_openai_chat_host))
    register("rag_http", spec_factory(RAGHTTPSpec, make_rag_http_host))
    register("hf_causal_lm", spec_factory(HFCausalLMSpec, make_hf_causal_lm_host))
    register("python", spec_factory(PythonSpec, make_python_host))
