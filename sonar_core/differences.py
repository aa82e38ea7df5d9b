"""How an evaluator says it deliberately differs from the H2O Sonar catalogue (reference 004).

Part of the evaluator contract (re-exported by :mod:`sonar_core.contract` and :mod:`sonar_core`): an
evaluator declares its ``differences``; ``sonar describe``, the catalogue and the report show them, and
tests/core/test_catalogue_conformance.py holds them against the checked catalogue table.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Difference", "FALLBACK_DETAIL"]


@dataclass(frozen=True)
class Difference:
    """One deliberate way an evaluator differs from the H2O Sonar catalogue (reference 004).

    Declared on the evaluator class (``differences``) so that a reader of ``sonar describe``, the
    catalogue and the report is told, and so that the catalogue conformance test knows which of the
    evaluator's departures from the checked table are intended.
    """

    #: What differs, naming the catalogue's value and Sonar's (e.g. "threshold: catalogue 0.5, Sonar inf").
    what: str
    #: Why Sonar differs (e.g. "bge-small is not on the package registry; MiniLM is embedded").
    why: str
    #: What a reader should do about it (e.g. "compare with H2O Sonar's numbers only after ...").
    action: str = ""
    #: The declaration field the difference covers, for the conformance test: "inputs",
    #: "metric:<key>", "threshold:<key>", "parameter:<name>", "model", "formula", or "fallback" (a
    #: substitution made at run time when something is absent; rows it scored carry FALLBACK_DETAIL).
    field: str = "formula"

    def as_dict(self) -> dict[str, str]:
        """The difference as JSON holds it (``sonar describe --json``, the report's evaluator view)."""
        return {"field": self.field, "what": self.what, "why": self.why, "action": self.action}


#: Row detail an evaluator sets on each row it scored with a fallback (a model standing in for an absent
#: one): one sentence saying what was measured and what was not. The core turns it into a LOW problem,
#: a note in the evaluator's section and run.json's ``fallbacks``; ``--strict`` stops the run on it.
FALLBACK_DETAIL = "measured_by_fallback"
