"""NLTK's Porter stemmer, loaded without running ``nltk/__init__.py``.

``from nltk.stem import porter`` first runs NLTK's package ``__init__``, which imports nearly all of
NLTK and, where they are installed, scipy.stats, scikit-learn and pandas: about 2 s before a
one-row ROUGE run scores anything. The stemmer module itself needs only ``nltk.redos``,
``nltk.termsec`` and ``nltk.stem.api`` (each light), so this loads exactly those, from NLTK's own
files: the stemmer is NLTK's code, and ROUGE keeps rouge-score's values bit for bit.

While the modules load, ``nltk`` and ``nltk.stem`` are bare package objects (their ``__path__`` only);
every ``nltk`` module this loaded is taken out of ``sys.modules`` afterwards (the stemmer keeps its
own), so a later ``import nltk`` (BLEU, sentence splitting, a third-party library) runs NLTK's real
``__init__`` and gets a complete package, as if this had never run.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Callable

__all__ = ["porter_stemmer"]

_PACKAGES = ("nltk", "nltk.stem")


def _bare_package(name: str) -> types.ModuleType:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        raise ModuleNotFoundError(f"No module named '{name}'", name=name)
    module = types.ModuleType(name)
    module.__path__ = list(spec.submodule_search_locations)
    module.__spec__ = spec
    module.__package__ = name
    return module


def _load_porter() -> types.ModuleType:
    if "nltk" in sys.modules:  # NLTK is loaded already: nothing to save
        return importlib.import_module("nltk.stem.porter")
    before = set(sys.modules)
    try:
        for name in _PACKAGES:
            sys.modules[name] = _bare_package(name)
        return importlib.import_module("nltk.stem.porter")
    finally:
        for name in set(sys.modules) - before:
            if name == "nltk" or name.startswith("nltk."):
                del sys.modules[name]


def porter_stemmer() -> Callable[[str], str]:
    """``PorterStemmer().stem`` (NLTK's default mode), as ``rouge_score.tokenizers`` uses it."""
    return _load_porter().PorterStemmer().stem
