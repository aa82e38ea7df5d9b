"""Where model files are found on this machine, without downloading or importing anything heavy.

Sonar's own cache folder, torch hub's checkpoint folder, an installed package's folder, a
snapshot in the local Hugging Face cache, and a safe extraction of a zip archive into a folder.
"""

from __future__ import annotations

import importlib.util
import os
import zipfile
from pathlib import Path

from ..errors import ModelMissingError

__all__ = ["sonar_home", "torch_hub_checkpoints", "package_dir", "hf_cache_folder", "safe_extract"]


def sonar_home() -> Path:
    """Sonar's own cache folder: ``$SONAR_HOME`` or ``~/.cache/sonar``."""
    return Path(os.environ.get("SONAR_HOME") or Path.home() / ".cache" / "sonar").expanduser()


def torch_hub_checkpoints() -> Path | None:
    """torch.hub's checkpoint folder (``$TORCH_HOME/hub/checkpoints``), found without importing torch."""
    torch_home = os.environ.get("TORCH_HOME") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "torch"
    return Path(torch_home).expanduser() / "hub" / "checkpoints"


def package_dir(package: str) -> Path | None:
    """Folder of an installed package, found without importing it (imports may print or be slow)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def safe_extract(archive: zipfile.ZipFile, members: list[str], target: Path) -> None:
    """Extract ``members`` under ``target``, refusing names that would escape it."""
    root = target.resolve()
    for name in members:
        destination = (target / name).resolve()
        if root != destination and root not in destination.parents:
            raise ModelMissingError(f"refusing archive member outside the model folder: {name!r}")
    archive.extractall(target, members)


def hf_cache_folder(repo_id: str) -> Path | None:
    """The snapshot folder of ``repo_id`` in the local HF cache, or None (never downloads)."""
    if repo_id.count("/") > 1:
        return None
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:  # pragma: no cover - huggingface_hub comes with transformers
        return None
    try:
        return Path(snapshot_download(repo_id, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError):
        return None
    except Exception:  # an invalid repo id is a missing model too, whatever the hub library raises
        return None
