"""Perturbators: seeded, reproducible text transformations for perturbed test cases.

Perturbators register through the ``register_perturbators`` hook (Sonar's own included). Use
:func:`perturb` / :func:`perturb_many` to apply one by name, :func:`available` to list them, and
:func:`expand_perturbations` to add a run configuration's ``perturb:`` copies to a test suite.
"""

from .base import Perturbator, derive_seed
from .expand import KEY_SEPARATOR, expand_perturbations, perturbed_key
from .registry import available, get_perturbator, make_perturbator, perturb, perturb_many, perturbators

__all__ = [
    "Perturbator",
    "derive_seed",
    "available",
    "perturbators",
    "get_perturbator",
    "make_perturbator",
    "perturb",
    "perturb_many",
    "expand_perturbations",
    "perturbed_key",
    "KEY_SEPARATOR",
]
