"""Where models run: the ``device`` setting (``auto``, ``cpu``, ``cuda``...) made concrete."""

from __future__ import annotations

__all__ = ["pick_device"]


def pick_device(setting: str | None = "auto") -> str:
    """``auto`` means CUDA when torch sees a GPU, else the CPU; any other value is used as given."""
    setting = (setting or "auto").strip().lower()
    if setting != "auto":
        return setting
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"
