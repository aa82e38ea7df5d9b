"""The whole prompt written in base16 or base64, for encoding attacks (see the encoding guardrail).

Deterministic: the seed changes nothing. ``template`` can wrap the encoded text in an instruction; its
``{encoded}`` placeholder is replaced by the encoding of the UTF-8 bytes of the text.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, ClassVar

from ..contract import Param
from .base import Perturbator

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["Base16", "Base64"]

PLACEHOLDER = "{encoded}"


def _has_placeholder(template: str) -> str | None:
    return None if PLACEHOLDER in template else f"the template must contain {PLACEHOLDER}"


def _template_param() -> Param:
    return Param("template", str, PLACEHOLDER,
                 "Text sent instead of the prompt; {encoded} is replaced by the encoded prompt.",
                 check=_has_placeholder)


class Base16(Perturbator):
    description: ClassVar[str] = "The prompt's UTF-8 bytes in base16 (upper-case hex, RFC 4648), optionally in a template."
    parameters: ClassVar[tuple[Param, ...]] = (_template_param(),)
    random: ClassVar[bool] = False

    def apply(self, text: str, rng: np.random.Generator) -> str:
        encoded = base64.b16encode(text.encode("utf-8")).decode("ascii")
        return self.params["template"].replace(PLACEHOLDER, encoded)


class Base64(Perturbator):
    description: ClassVar[str] = "The prompt's UTF-8 bytes in base64 (RFC 4648), optionally in a template."
    parameters: ClassVar[tuple[Param, ...]] = (_template_param(),)
    random: ClassVar[bool] = False

    def apply(self, text: str, rng: np.random.Generator) -> str:
        encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
        return self.params["template"].replace(PLACEHOLDER, encoded)
