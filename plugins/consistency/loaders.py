"""Loader of the consistency family's SummaC Conv weights (the NLI classifier is the core's shared
:func:`~sonar_core.load_sequence_classifier`). Evaluators call it through ``ctx.load_model``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sonar_core import ModelMissingError

if TYPE_CHECKING:  # pragma: no cover
    from sonar_core import ModelStore

__all__ = ["load_summac_conv"]


def load_summac_conv(store: ModelStore, ref: str, device: str = "cpu") -> dict[str, Any]:
    """SummaC Conv's weights as float tensors: ``mlp.weight`` (1, bins), ``mlp.bias`` (1,),
    ``layer_final.weight`` (2, 3) and ``layer_final.bias`` (2,), loaded once."""

    def load(path: Path, dev: str) -> dict[str, Any]:
        import torch

        if not path.is_file():
            raise ModelMissingError(f"model '{ref}': {path} is a folder, not SummaC Conv's weight file")
        state = torch.load(str(path), map_location=dev, weights_only=True)
        needed = ("mlp.weight", "mlp.bias", "layer_final.weight", "layer_final.bias")
        if not isinstance(state, dict) or any(key not in state for key in needed):
            raise ModelMissingError(f"{path}: not SummaC Conv weights (it needs {', '.join(needed)})")
        return {key: state[key].float() for key in needed}

    return store.load("summac_conv", ref, device, load)
