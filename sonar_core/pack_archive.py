"""Opening an evidence pack safely: every check made before a byte is written, and each member checked
while it streams (``sonar replay``, :mod:`.evidence_pack`).

A pack is a zip someone else made; opening it must not fill the disk, write outside the output
folder or leave anything behind when it is refused. In order:

1. every member's name is a relative path under ``run/`` or ``inputs/`` (or ``pack.json``) with no
   ``..``, drive, backslash or NUL, no member is a link and no name appears twice;
2. ``pack.json`` (at most :data:`MANIFEST_LIMIT` bytes) is read and its schema and Sonar version
   checked;
3. the members are exactly the files ``pack.json`` lists (an unlisted member is refused, not skipped),
   and the sizes it declares add up to at most the limit (``--max-size``, default
   :data:`DEFAULT_MAX_BYTES`);
   and the zip's own header of each gives the same size;
4. only then is each member written, streamed: reading stops one byte past its declared size (a
   member that holds more is refused there, whatever its compressed size or header says), and its
   size and SHA-256 are checked against ``pack.json`` when it ends.

A refused pack raises :class:`PackError`; the caller removes what step 4 wrote
(:func:`sonar_core.evidence_pack.replay_pack` removes the whole output folder it made).
"""

from __future__ import annotations

import hashlib
import json
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import TypedDict

from . import names
from .errors import SonarError
from .jsontypes import JsonObject

__all__ = ["PackManifest", "PackInputs", "PackError", "safe_member", "read_pack", "sha256_of", "DEFAULT_MAX_BYTES",
           "MANIFEST_LIMIT", "RUN", "INPUTS"]

RUN, INPUTS = "run", "inputs"
#: The most the members of a pack may hold together, unpacked, unless ``--max-size`` says otherwise: a
#: quickstart pack holds about 20 MB, a 50,000-row judge run's cache a few hundred.
DEFAULT_MAX_BYTES = 4 << 30
#: The most ``pack.json`` may hold (it lists names, digests and the run's parameters).
MANIFEST_LIMIT = 16 << 20
_BLOCK = 1 << 20


class PackError(SonarError):
    """A pack cannot be written or replayed; one line."""

    exit_code = 3


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def safe_member(name: str) -> PurePosixPath:
    """``name`` as a relative path that stays inside the folder it is extracted to, or PackError."""
    path = PurePosixPath(name)
    if (not name or "\\" in name or "\x00" in name or path.is_absolute() or ":" in path.parts[0]
            or any(part in ("", ".", "..") for part in path.parts)
            or path.parts[0] not in (RUN, INPUTS, names.PACK_MANIFEST)):
        raise PackError(f"pack member {name!r} would be written outside the output folder; refusing the pack")
    return path


def _bounded(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes | None:
    """The member's bytes, or None past ``limit`` (read no further than one byte past it)."""
    with archive.open(info) as source:
        data = source.read(limit + 1)
    return data if len(data) <= limit else None


class PackInputs(TypedDict):
    """The pack's members that are the run's inputs (None: the run had none of that kind)."""
    dataset: str | None
    llm_configs: str | None
    cache: str | None


class PackOriginal(TypedDict):
    """Where the run found things on the machine that packed it (the replay's path aliases)."""
    dataset: str | None
    llm_configs: str | None
    cache: str | None
    run_dir: str
    sonar_home: str
    installed: list[str]


class PackedSet(TypedDict):
    """A calibration set the run used: what the configuration said, where it was, its member."""
    value: str
    path: str
    member: str


class CacheEntries(TypedDict):
    responses: int
    row_results: int


class PackManifest(TypedDict):
    """``pack.json`` as :func:`~sonar_core.evidence_pack.make_pack` writes it. A pack read back is checked
    field by field as it is used (it comes from outside): :func:`read_pack` gives it as plain JSON."""
    schema_version: str
    sonar_version: str
    run_id: str
    parameters: JsonObject  #: run.json's ``interpretation_parameters``
    original: PackOriginal
    inputs: PackInputs
    calibration_sets: dict[str, PackedSet]  #: by the evaluator's position in the configuration
    cache_entries: CacheEntries
    files: dict[str, str]  #: member -> SHA-256
    sizes: dict[str, int]  #: member -> bytes


def _manifest(pack: Path, archive: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo]) -> JsonObject:
    from .version import __version__

    info = infos.get(names.PACK_MANIFEST)
    data = _bounded(archive, info, MANIFEST_LIMIT) if info is not None else b""
    if data is None:
        raise PackError(f"{pack}: {names.PACK_MANIFEST} is larger than {MANIFEST_LIMIT} bytes; refusing the pack")
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PackError(f"the pack has no readable {names.PACK_MANIFEST} ({exc})") from None
    if not isinstance(manifest, dict):
        raise PackError(f"the pack has no readable {names.PACK_MANIFEST} (not a JSON object)")
    if manifest.get("schema_version") != names.PACK_SCHEMA_VERSION:
        raise PackError(f"{pack}: pack schema {manifest.get('schema_version')!r}, this Sonar reads "
                        f"{names.PACK_SCHEMA_VERSION!r}")
    if manifest.get("sonar_version") != __version__:
        raise PackError(f"{pack}: packed by Sonar {manifest.get('sonar_version')}, this is {__version__}")
    return manifest


def _listed(pack: Path, manifest: JsonObject, infos: dict[str, zipfile.ZipInfo],
            max_bytes: int) -> dict[str, tuple[str, int]]:
    """name -> (SHA-256, size) of every member, checked against the zip's members and the limit."""
    files, sizes = manifest.get("files"), manifest.get("sizes")
    if not isinstance(files, dict) or not isinstance(sizes, dict):
        raise PackError(f"{pack}: {names.PACK_MANIFEST} lists no files with their sizes; refusing the pack")
    listed: dict[str, tuple[str, int]] = {}
    for name, digest in files.items():
        size = sizes.get(name)
        safe_member(name)
        if not isinstance(digest, str) or isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise PackError(f"{pack}: {names.PACK_MANIFEST} gives member {name!r} no SHA-256 and size; refusing the pack")
        if name not in infos:
            raise PackError(f"{pack}: member {name!r} is missing or damaged (its SHA-256 differs from pack.json's)")
        if infos[name].file_size != size:
            raise PackError(f"{pack}: member {name!r} holds {infos[name].file_size} bytes, {names.PACK_MANIFEST} "
                            f"gives it {size}; refusing the pack")
        listed[name] = (digest, size)
    for name in infos:
        if name != names.PACK_MANIFEST and name not in listed:
            raise PackError(f"{pack}: member {name!r} is not listed in {names.PACK_MANIFEST}; refusing the pack")
    total = sum(size for _, size in listed.values())
    if total > max_bytes:
        raise PackError(f"{pack}: its members hold {total} bytes unpacked, more than the limit of {max_bytes} "
                        "(--max-size); refusing the pack")
    return listed


def _write_member(pack: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path,
                  digest: str, size: int) -> None:
    """Stream one member to ``target``, stopping one byte past ``size``; PackError unless it is exactly
    ``size`` bytes with SHA-256 ``digest``."""
    sha, written = hashlib.sha256(), 0
    with archive.open(info) as source:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            sink = open(target, "xb")
        except OSError as exc:
            raise PackError(f"{target}: cannot be written ({exc.strerror or type(exc).__name__})") from None
        with sink:
            while True:
                block = source.read(min(_BLOCK, size - written + 1))
                if not block:
                    break
                written += len(block)
                if written > size:
                    raise PackError(f"{pack}: member {info.filename!r} holds more than the {size} bytes "
                                    f"{names.PACK_MANIFEST} gives it; refusing the pack")
                sha.update(block)
                try:
                    sink.write(block)
                except OSError as exc:
                    raise PackError(f"{target}: cannot be written ({exc.strerror or type(exc).__name__})") from None
    if written != size or sha.hexdigest() != digest:
        raise PackError(f"{pack}: member {info.filename!r} is missing or damaged (its SHA-256 differs from pack.json's)")


def read_pack(pack: Path, folder: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> JsonObject:
    """Check ``pack`` and write its members under ``folder`` (steps 1-4 of the module docstring); returns
    its manifest. Raises PackError, having written nothing before step 4; the caller removes ``folder``."""
    try:
        with zipfile.ZipFile(pack) as archive:
            infos: dict[str, zipfile.ZipInfo] = {}
            for info in archive.infolist():
                safe_member(info.filename.rstrip("/") if info.is_dir() else info.filename)
                if stat.S_ISLNK(info.external_attr >> 16):
                    raise PackError(f"pack member {info.filename!r} is a link; refusing the pack")
                if info.is_dir():
                    continue
                if info.filename in infos:
                    raise PackError(f"{pack}: member {info.filename!r} appears twice; refusing the pack")
                infos[info.filename] = info
            manifest = _manifest(pack, archive, infos)
            listed = _listed(pack, manifest, infos, max_bytes)
            root = folder.resolve()
            for name, (digest, size) in sorted(listed.items()):
                target = root.joinpath(*safe_member(name).parts)
                if not target.resolve().is_relative_to(root):  # a folder of the output that is a link
                    raise PackError(f"pack member {name!r} would be written outside the output folder; refusing the pack")
                _write_member(pack, archive, infos[name], target, digest, size)
    except (OSError, zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, RuntimeError) as exc:
        # A damaged or encrypted member, or a compression method zipfile cannot read.
        raise PackError(f"{pack}: not a readable zip file ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    return manifest
