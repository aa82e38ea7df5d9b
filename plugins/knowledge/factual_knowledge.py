"""Factual knowledge: is the expected fact (or one/all of several) contained in the answer?

After fmeval's Factual Knowledge evaluation (Petroni et al.'s LAMA-style probing). The expected
answer holds one or more target facts joined by a delimiter (``Berlin<OR>Germany``); each
target is looked for inside the actual answer in two ways:

* **exact inclusion** (``factual_knowledge``): the lower-cased target is a substring of the
  lower-cased answer;
* **quasi-exact inclusion** (``factual_knowledge_quasi_exact``): the same test after both sides
  went through the SQuAD/QuAC normalisation of :func:`normalize_quac`.

With the ``OR`` operator a row scores 1 when any target is included, with ``AND`` only when
every target is. Per-row values are 0.0 or 1.0, so a model's mean is the share of its answers
that contain the fact, in [0, 1].
"""

from __future__ import annotations

import dataclasses
import functools
import string
from typing import Any, ClassVar, Iterable, Sequence

from sonar_core import Evaluator, Input, Metric, Param, Row, RowResult

__all__ = ["FactualKnowledgeEvaluator", "normalize_quac"]

# fmeval's protocol deletes ASCII punctuation only (``string.punctuation``); unicode marks such
# as « » or — survive, exactly as they do there. str.translate deletes them in one C-level pass.
_DELETE_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = frozenset(("a", "an", "the"))
_OPERATORS = ("OR", "AND")
# Delimiters whose very name states an operator: using one with the other operator is a mistake.
_OPERATOR_DELIMITERS = ("<OR>", "<AND>")
# Distinct expected answers whose split targets are kept (least recently used dropped first).
_TARGET_CACHE_SIZE = 4096


def normalize_quac(text: str) -> str:
    """SQuAD/QuAC normalisation exactly as fmeval's ``normalize_text_quac_protocol`` does it.

    Lower-case, delete every ASCII punctuation character, split on the space character,
    drop empty pieces and the articles ``a``/``an``/``the``, join with single spaces.

    Like fmeval, only the space character separates words: a newline or tab stays inside
    its word (``"the\\nend"`` is one word and is kept whole), so runs of spaces collapse but
    other whitespace does not.
    """
    words = text.lower().translate(_DELETE_PUNCTUATION).split(" ")
    return " ".join([w for w in words if w and w not in _ARTICLES])


def _check_delimiter(value: Any) -> str | None:
    if value == "":
        return "must not be empty (give a string such as '<OR>' that separates the targets)"
    return None


def _contradiction(delimiter: str, operator: str) -> str | None:
    """Why a named delimiter contradicts the operator (``<OR>`` with ``AND``), or None."""
    if delimiter in _OPERATOR_DELIMITERS and delimiter != f"<{operator}>":
        return (
            f"{delimiter!r} contradicts logical_operator {operator!r} "
            f"(use '<{operator}>' or a delimiter that names no operator)"
        )
    return None


_DELIMITER = Param(
    "target_output_delimiter",
    str,
    "<OR>",
    "String that separates several target facts inside one expected answer "
    "(e.g. `UK<OR>England`). Empty is not allowed; to make the whole expected answer one "
    "target, give a delimiter that never occurs in it. `<OR>` and `<AND>` must agree with "
    "`logical_operator`.",
    check=_check_delimiter,
)


class FactualKnowledgeEvaluator(Evaluator):
    """Exact and quasi-exact inclusion of the expected fact(s) in the actual answer."""

    id = "factual_knowledge"
    display_name: ClassVar[str] = "Factual knowledge"
    tagline: ClassVar[str] = "Does the answer contain the expected fact?"
    description: ClassVar[str] = (
        "Checks whether a model reproduces known facts: the expected answer names one or more "
        "target facts separated by a delimiter (default `<OR>`, e.g. `Berlin<OR>Germany`), and "
        "each target is searched for inside the actual answer.\n\n"
        "- **Factual knowledge** (primary): 1 when the lower-cased target is a substring of the "
        "lower-cased answer, else 0.\n"
        "- **Factual knowledge (quasi-exact)**: the same test after both texts are normalised "
        "the SQuAD/QuAC way: lower-cased, ASCII punctuation removed, the articles *a*, *an*, "
        "*the* dropped and repeated spaces collapsed.\n\n"
        "With `logical_operator` `OR` a row scores 1 when any target is contained, with `AND` "
        "only when all are. A model's score is the share of its answers that contain the fact. "
        "Method after AWS fmeval's Factual Knowledge evaluation."
    )
    required_inputs: ClassVar[tuple[Input, ...]] = (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    parameters: ClassVar[tuple[Param, ...]] = (
        _DELIMITER,
        Param(
            "logical_operator",
            str,
            "OR",
            "`OR`: a row scores 1 when at least one target is contained in the answer; "
            "`AND`: only when every target is.",
            choices=_OPERATORS,
        ),
    )
    # fmeval states no pass threshold; 0.5 (half of the answers hold the fact) is our default.
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric(
            "factual_knowledge",
            "Factual knowledge",
            "Exact inclusion: 1 when the lower-cased target (any target with OR, every target "
            "with AND) is contained in the lower-cased answer, else 0. A model's value is the "
            "share of its answers that contain the fact.",
            value_range=(0.0, 1.0),
            higher_is_better=True,
            threshold=0.5,
            is_primary=True,
        ),
        Metric(
            "factual_knowledge_quasi_exact",
            "Factual knowledge (quasi-exact)",
            "Quasi-exact inclusion: as factual knowledge, but both texts are first lower-cased, "
            "stripped of ASCII punctuation and of the articles a/an/the, and their spaces "
            "collapsed (SQuAD/QuAC protocol).",
            value_range=(0.0, 1.0),
            higher_is_better=True,
            threshold=0.5,
        ),
    )

    @classmethod
    def validate_params(cls, given: dict[str, Any] | None) -> dict[str, Any]:
        """Per-parameter validation, then the delimiter/operator agreement (a cross-parameter rule
        that a single ``Param.check`` cannot see)."""
        params = super().validate_params(given)
        operator = params["logical_operator"]
        # The delimiter's own Param, with the agreement as its check: Param.coerce then words
        # the error exactly like every other parameter error.
        agreeing = dataclasses.replace(_DELIMITER, check=lambda delimiter: _contradiction(delimiter, operator))
        agreeing.coerce(params["target_output_delimiter"], cls.id)
        return params

    def __init__(self, params: dict[str, Any], ctx) -> None:
        super().__init__(params, ctx)
        self._delimiter: str = self.params["target_output_delimiter"]
        self._operator: str = self.params["logical_operator"]
        # expected_output -> (originals, lower-cased, quasi-normalised targets); the same expected
        # answer recurs once per model, so each is split and normalised once while it is cached.
        self._prepare = functools.lru_cache(maxsize=_TARGET_CACHE_SIZE)(self._split_targets)

    def _split_targets(self, expected: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """Split ``expected`` into targets: (originals, lower-cased, quasi-normalised)."""
        # A blank piece (``Berlin<OR>`` or ``a<OR> <OR>b``) would be "contained" in every answer
        # and make OR rows always pass, so blank pieces are dropped (fmeval keeps them).
        originals = tuple(p.strip() for p in expected.split(self._delimiter) if p.strip())
        lowered = tuple(p.lower() for p in originals)
        normalised = tuple(normalize_quac(p) for p in originals)
        return originals, lowered, normalised

    def evaluate(self, rows: Sequence[Row]) -> Iterable[RowResult]:
        use_all = self._operator == "AND"
        results: list[RowResult] = []
        for row in rows:
            originals, lowered, normalised = self._prepare(row.expected_output or "")
            if not originals:
                results.append(
                    RowResult(
                        values={"factual_knowledge": None, "factual_knowledge_quasi_exact": None},
                        error_message=(
                            "expected answer holds no target after splitting on "
                            f"{self._delimiter!r}"
                        ),
                    )
                )
                continue
            answer = row.actual_output or ""
            answer_lower = answer.lower()
            answer_norm = normalize_quac(answer.strip())
            exact_hits = [t in answer_lower for t in lowered]
            # A target that normalises to nothing (e.g. "The" or "?") would be contained in any
            # answer; for it the quasi-exact test falls back to the exact-inclusion result.
            quasi_hits = [(n in answer_norm) if n else e for n, e in zip(normalised, exact_hits)]
            exact = all(exact_hits) if use_all else any(exact_hits)
            quasi = all(quasi_hits) if use_all else any(quasi_hits)
            details = {
                "matched_targets": [o for o, hit in zip(originals, exact_hits) if hit],
                "matched_targets_quasi_exact": [o for o, hit in zip(originals, quasi_hits) if hit],
            }
            message = None
            if not exact:
                missing = [o for o, hit in zip(originals, exact_hits) if not hit]
                if use_all:
                    message = "answer lacks target(s): " + ", ".join(repr(m) for m in missing)
                else:
                    message = "answer contains none of: " + ", ".join(repr(m) for m in missing)
            results.append(
                RowResult(
                    values={
                        "factual_knowledge": 1.0 if exact else 0.0,
                        "factual_knowledge_quasi_exact": 1.0 if quasi else 0.0,
                    },
                    details=details,
                    error_message=message,
                )
            )
        return results
