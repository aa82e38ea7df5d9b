"""The deliberate differences from the H2O Sonar catalogue that several built-in evaluators share.

Each evaluator declares its own ``differences`` (see :class:`sonar_core.contract.Difference`); the ones
that recur (an embedded model standing in for one that is not on the package registry, a retrieved
context that is used when present instead of required) are written once here so that every evaluator
says them in the same words. tests/core/test_catalogue_conformance.py holds the declarations against
the checked catalogue table.
"""

from __future__ import annotations

from sonar_core import Difference

__all__ = ["minilm_for", "smollm_for", "optional_context", "NO_JUDGE_KEY"]


def minilm_for(catalogue_model: str, what: str = "embeddings") -> Difference:
    """The embedded all-MiniLM-L6-v2 standing in for the catalogue's bge-small (``catalogue_model``)."""
    return Difference(
        what=f"{what}: catalogue {catalogue_model}, Sonar all-MiniLM-L6-v2 (embedded)",
        why=f"{catalogue_model} is not embedded and Sonar downloads nothing at run time; the catalogue's 0.75 "
            "thresholds, set for bge-small, are kept",
        action="similarities from MiniLM run lower than bge-small's for the same texts: compare with H2O Sonar's "
               f"numbers only after setting `embedding_model: {catalogue_model}` (a model in the local Hugging "
               "Face cache), or judge failures against MiniLM's own scale",
        field="model",
    )


def smollm_for(catalogue_model: str, param: str) -> Difference:
    """The embedded SmolLM2-135M-Instruct standing in for the catalogue's GPT-2 family model (the evaluator's
    model parameter ``param``)."""
    return Difference(
        what=f"language model: catalogue {catalogue_model}, Sonar SmolLM2-135M-Instruct (embedded)",
        why=f"{catalogue_model} is not embedded and Sonar downloads nothing at run time",
        action=f"values are on SmolLM2's scale, not comparable with H2O Sonar's: set `{param}: {catalogue_model}` "
               "(a model in the local Hugging Face cache) to compare",
        field="model",
    )


def optional_context(what: str = "retrieved context") -> Difference:
    """The catalogue requires the retrieved context; Sonar checks it when present."""
    return Difference(
        what=f"inputs: the catalogue's section requires the {what} (its overview table does not); Sonar requires "
             f"only the actual answer and checks the {what} when a row has one",
        why="an LLM dataset (no retrieval) is still worth checking; `evaluate_retrieved_context` turns the "
            "context check off",
        action="on rows without a retrieved context the retrieval metrics are 0 (nothing leaked from it), not "
               "missing",
        field="inputs",
    )


#: The catalogue lists a judge parameter for some evaluators that ask no judge.
NO_JUDGE_KEY = Difference(
    what="parameter custom_eval_judge_config_key: listed by the catalogue, absent in Sonar",
    why="the evaluator asks no LLM judge (embeddings only), so a judge key would do nothing",
    action="none: remove the parameter from a configuration copied from H2O Sonar",
    field="parameter:custom_eval_judge_config_key",
)
