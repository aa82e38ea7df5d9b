"""What a perturbator is: a named, parameterised, seeded text transformation.

A perturbator class declares its parameters (the evaluator contract's :class:`~sonar_core.Param`, so
values are validated the same way) and implements :meth:`Perturbator.apply`, which draws every random
choice from the numpy ``Generator`` it is given. The caller owns the generator, so the same seed gives
the same text whatever else the run does, and several perturbed copies can come from one generator
(fmeval draws its ``num_perturbations`` copies of a text from one generator in turn).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, ClassVar

from ..contract import Param, ParameterError
from ..jsontypes import JsonObject
from ..params import ParamValues

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # a run without perturbations never imports numpy for them

__all__ = ["Perturbator", "derive_seed"]


class Perturbator:
    """Base class of every perturbator; subclasses declare the class attributes and ``apply``."""

    #: The registered name (``butter_finger``); set by the registry from ``register(name, cls)``.
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[tuple[Param, ...]] = ()
    #: False for deterministic transformations (encodings): the seed changes nothing.
    random: ClassVar[bool] = True

    def __init__(self, params: ParamValues) -> None:
        self.params = params

    @classmethod
    def validate_params(cls, given: JsonObject | None, name: str = "") -> ParamValues:
        """Declared defaults overlaid with ``given``, each value checked; unknown names are errors."""
        label = name or cls.name
        given = dict(given or {})
        declared = {p.name: p for p in cls.parameters}
        unknown = sorted(set(given) - set(declared))
        if unknown:
            known = ", ".join(declared) or "none"
            raise ParameterError(f"perturbator '{label}' has no parameter '{unknown[0]}' (parameters: {known})")
        values = {}
        for param in cls.parameters:
            value = given.get(param.name, param.default)
            try:
                values[param.name] = param.coerce(value)
            except ParameterError as exc:
                raise ParameterError(f"perturbator '{label}': {exc}") from None
        return values

    def apply(self, text: str, rng: np.random.Generator) -> str:
        """One perturbed copy of ``text``, drawing its random choices from ``rng``."""
        raise NotImplementedError


def derive_seed(seed: int, *parts: str) -> int:
    """A 63-bit seed from a run's ``seed`` and names (test case key, perturbator name).

    Seeding each test case from its own key (not from a generator shared along the suite) makes its
    perturbed text independent of the order and number of the other test cases.
    """
    digest = hashlib.sha256("\x1f".join([str(int(seed)), *parts]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1
