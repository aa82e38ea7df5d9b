"""Evidence packs: ``sonar pack`` writes one zip a reviewer can replay; ``sonar replay`` rebuilds the run.

A pack holds ``pack.json`` (the manifest), ``run/`` (the whole result folder: run.json, the journal,
the report and every evaluator folder) and ``inputs/``: the dataset file, the LLM configuration file
when the run had one, and ``cache.sqlite``, a response cache holding only the entries the run used
(named by the run's cache_keys.json).

Replay extracts nothing but regular files under those names, each checked to stay inside the
output folder (no absolute path, no ``..``, no link: zip-slip safe), runs the packed configuration
again on the packed inputs with the cache in cache-only mode (a miss stops the replay: no model under
test, judge or network is asked), and lists the files of the new run folder that differ from the
packed ones beyond timestamps, durations, the machine's paths (SONAR_HOME's included: a model's
folder) and the cache's own counters
(:mod:`sonar_core.artifacts.folder_diff`). Runs with hosts or extra plugin modules are refused:
replaying them would run code or reach endpoints the pack names.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from . import names
from .errors import ConfigError, SonarError
from .jsontypes import JsonObject
from .llm.calibration import CACHE_FILE as CALIBRATION_FILE, CalibrationRecord
from .models.locations import sonar_home
from .pack_archive import (DEFAULT_MAX_BYTES, INPUTS as _INPUTS, RUN as _RUN, PackedSet, PackError, PackInputs,
                           PackManifest, read_pack, safe_member, sha256_of)

__all__ = ["make_pack", "replay_pack", "safe_member", "PackError", "DEFAULT_MAX_BYTES"]

_CACHE = "inputs/cache.sqlite"


def _calibration_entries(folder: Path, record: JsonObject) -> dict[str, CalibrationRecord]:
    """The calibration cache's results (beside the response cache) that the run took from it.

    A judge whose calibration the run read from that cache asked nothing to calibrate: the answers
    behind it are not among the run's keys, so the result itself must travel. A judge the run
    measured afresh is measured again by the replay, from the packed answers.
    """
    reused = [(c.get("evaluator_id"), c.get("judge"), c.get("set_sha256"), c.get("items"))
              for c in ((entry or {}).get("calibration") for entry in (record.get("judge_calibration") or {}).values())
              if isinstance(c, dict) and c.get("cached")]
    if not reused:
        return {}
    try:
        data = json.loads((folder / CALIBRATION_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {key: value for key, value in data.items() if isinstance(value, dict) and (
        value.get("evaluator_id"), value.get("judge"), value.get("set_sha256"), value.get("items")) in reused}


def _installed_folders() -> list[Path]:
    """Where Sonar's core and built-in plugins are installed: the bundled demo dataset and calibration
    sets are named by these paths in run.json, and differ from machine to machine."""
    import sonar_plugins

    return [Path(__file__).resolve().parent, Path(sonar_plugins.__file__).resolve().parent]


def make_pack(run_dir: Path, target: Path) -> PackManifest:
    """Write the evidence pack of the finished run in ``run_dir`` to ``target``; returns the manifest."""
    from .config import DEMO_DATASET, RunConfig
    from .execution.cache_keys import read_cache_keys
    from .llm.cache import copy_entries

    run_dir = Path(run_dir).resolve()
    try:
        record = json.loads((run_dir / names.RUN_JSON).read_text(encoding="utf-8"))
        params = dict(record["interpretation_parameters"])
        config = RunConfig(**params)
    except (OSError, ValueError, KeyError) as exc:
        raise PackError(f"{run_dir / names.RUN_JSON}: not a readable run record ({str(exc).splitlines()[0]})") from None
    if record.get("status") == "running":
        raise PackError(f"{run_dir}: the run has not finished (resume it first)")
    inputs: PackInputs = {"dataset": None, "llm_configs": None, "cache": None}
    files: list[tuple[Path, str]] = []
    source = config.test_suite or config.dataset
    if source and source != DEMO_DATASET:
        path = config.resolve_path(source)
        if not path.is_file():
            raise PackError(f"{path}: the run's {'test suite' if config.test_suite else 'dataset'} is gone")
        inputs["dataset"] = f"{_INPUTS}/{'suite' if config.test_suite else 'dataset'}{''.join(path.suffixes)}"
        files.append((path, inputs["dataset"]))
    if config.llm_configs:
        path = config.resolve_path(config.llm_configs)
        inputs["llm_configs"] = f"{_INPUTS}/llm-configs.yaml"
        files.append((path, inputs["llm_configs"]))
    calibration_sets: dict[str, PackedSet] = {}
    for position, spec in enumerate(config.evaluators):
        raw = spec.get("params", {}).get("calibration_set") if isinstance(spec, dict) else (
            getattr(spec, "params", {}).get("calibration_set") if not isinstance(spec, str) else None)
        if raw:
            path = config.resolve_path(str(raw))
            if not path.is_file():
                raise PackError(f"{path}: a calibration set the run used is gone")
            member = f"{_INPUTS}/calibration/{position}-{path.name}"
            calibration_sets[str(position)] = {"value": str(raw), "path": str(path), "member": member}
            files.append((path, member))
    keys, rows = read_cache_keys(run_dir)
    with tempfile.TemporaryDirectory() as tmp:
        if keys or rows:
            cache_source = Path((record.get("llm") or {}).get("cache", {}).get("path") or "")
            if not cache_source.is_file():
                raise PackError(f"{cache_source}: the response cache the run used is gone")
            cache_copy = Path(tmp) / "cache.sqlite"
            missing, missing_rows = copy_entries(cache_source, cache_copy, keys, rows)
            if missing or missing_rows:
                raise PackError(f"{cache_source}: {len(missing) + len(missing_rows)} entries the run used are no "
                                "longer in the response cache")
            inputs["cache"] = _CACHE
            files.append((cache_copy, _CACHE))
            calibrations = _calibration_entries(cache_source.parent, record)
            if calibrations:
                # A judge measured from this cache file's results asked nothing this run: its answers
                # are not among the keys, so its result travels (replay finds it beside the cache).
                calibration_copy = Path(tmp) / CALIBRATION_FILE
                calibration_copy.write_text(json.dumps(calibrations, indent=1), encoding="utf-8")
                files.append((calibration_copy, f"{_INPUTS}/{CALIBRATION_FILE}"))
        for path in sorted(run_dir.rglob("*")):
            if path.is_file() and not path.is_symlink() and not path.name.endswith(".tmp"):
                files.append((path, f"{_RUN}/{path.relative_to(run_dir).as_posix()}"))
        manifest: PackManifest = {
            "schema_version": names.PACK_SCHEMA_VERSION, "sonar_version": record["versions"]["sonar"],
            "run_id": record["run_id"], "parameters": params, "original": {
                "dataset": str(config.resolve_path(source)) if inputs["dataset"] else None,
                "llm_configs": str(config.resolve_path(config.llm_configs)) if config.llm_configs else None,
                "cache": (record.get("llm") or {}).get("cache", {}).get("path"),
                "run_dir": str(run_dir), "sonar_home": str(sonar_home()),
                "installed": [str(p) for p in _installed_folders()]},
            "inputs": inputs, "calibration_sets": calibration_sets,
            "cache_entries": {"responses": len(keys), "row_results": len(rows)},
            "files": {name: sha256_of(path) for path, name in files},
            "sizes": {name: path.stat().st_size for path, name in files}}
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(names.PACK_MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False))
            for path, name in files:
                archive.write(path, name)
        os.replace(partial, target)
    return manifest


def _first_missing(folder: Path) -> Path | None:
    """The outermost of ``folder`` and its parents that does not exist yet (None: it exists)."""
    missing = None
    for path in (folder, *folder.parents):
        if path.exists():
            break
        missing = path
    return missing


def replay_pack(pack: Path, out_dir: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[Path, dict[str, list[str]]]:
    """Rebuild the packed run under ``out_dir``; returns the new run folder and the differing files.

    ``max_bytes``: the most the pack's members may hold together, unpacked (:mod:`.pack_archive`). A
    pack refused for any reason (unsafe, damaged, too large, lacking an answer) leaves nothing behind:
    the folders the replay made are removed.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise ConfigError(f"{out_dir}: the output folder is not empty")
    made = _first_missing(out_dir.absolute())
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        return _replay(Path(pack), out_dir, max_bytes)
    except SonarError:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        else:  # an empty folder the user gave: emptied again
            for child in out_dir.iterdir():
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(missing_ok=True)
        raise


def _replay(pack: Path, out_dir: Path, max_bytes: int) -> tuple[Path, dict[str, list[str]]]:
    from .artifacts.folder_diff import compare_folders
    from .config import build_config
    from .execution import execute_run
    from .llm.cache import CACHE_ONLY_ENV

    manifest = read_pack(pack, out_dir / ".pack", max_bytes)
    if not all(isinstance(manifest.get(key), dict) for key in ("parameters", "inputs", "original")) \
            or not isinstance(manifest.get("run_id"), str):
        raise PackError(f"{pack}: {names.PACK_MANIFEST} lacks the run's parameters, inputs or id")
    try:
        params, aliases = _replay_parameters(pack, manifest, out_dir)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:  # a hand-made pack.json
        raise PackError(f"{pack}: {names.PACK_MANIFEST} is not a pack's manifest ({type(exc).__name__}: {exc})") from None
    packed = out_dir.resolve() / ".pack"
    previous = os.environ.get(CACHE_ONLY_ENV)
    os.environ[CACHE_ONLY_ENV] = "1"
    try:
        record = json.loads((packed / _RUN / names.RUN_JSON).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        record = {}
    record = record if isinstance(record, dict) else {}
    # The evaluators the packed run skipped (a model or judge it lacked), skipped again for the same reason.
    replayed = {str(entry["evaluator"]): str(entry["reason"])
                for entry in (record.get("result") or {}).get("incompatible_explainers") or []
                if isinstance(entry, dict) and "evaluator" in entry and "reason" in entry}
    try:
        # The rows stand for the packed run's dataset: the record names it as the packed one does.
        source = ((record.get("result") or {}).get("dataset") or {}).get("source")
        result = execute_run(build_config(params, f"{pack}: {names.PACK_MANIFEST}"), replayed=replayed,
                             dataset_source=source if isinstance(source, str) else None)
    finally:
        if previous is None:
            os.environ.pop(CACHE_ONLY_ENV, None)
        else:
            os.environ[CACHE_ONLY_ENV] = previous
    for entry in result.executed:
        if "no cached answer for request" in (entry.get("error") or ""):
            raise PackError(f"the pack does not hold an answer the run needs ({entry['name']}: "
                            f"{entry['error'].splitlines()[0]})")
    original = manifest["original"]
    installed = list(zip(original.get("installed") if isinstance(original.get("installed"), list) else [],
                         (str(p) for p in _installed_folders())))
    aliases += [(value, new) for value, new in ((original.get("dataset"), params.get("dataset")),
                                               (original.get("llm_configs"), params.get("llm_configs")),
                                               (original.get("cache"), params["llm_cache"]),
                                               (original.get("run_dir"), str(result.run_dir)),
                                               (original.get("sonar_home"), str(sonar_home())), *installed)
                if isinstance(value, str) and value and new]
    return result.run_dir, compare_folders(packed / _RUN, result.run_dir, aliases)


def _replay_parameters(pack: Path, manifest: JsonObject, out_dir: Path) -> tuple[JsonObject, list[tuple[str, str]]]:
    """The packed run's configuration pointed at the pack's inputs, and the (original, replay) path aliases
    of its calibration sets."""
    params = dict(manifest["parameters"])
    if params.get("hosts") or params.get("plugins") or params.get("test_suite"):
        raise PackError(f"{pack}: the run asked models under test or loaded plugin modules; replay runs neither")
    packed = out_dir.resolve() / ".pack"
    aliases: list[tuple[str, str]] = []
    sets = manifest.get("calibration_sets") or {}
    if not isinstance(params.get("evaluators", []), list) or not isinstance(manifest.get("calibration_sets", {}), dict):
        raise PackError(f"{pack}: {names.PACK_MANIFEST}'s evaluators or calibration sets are not readable")
    evaluators = list(params.get("evaluators") or [])
    for position, spec in enumerate(evaluators):
        if isinstance(spec, dict) and "calibration_set" in (spec.get("params") or {}):
            packed_set = sets.get(str(position))
            if not packed_set:
                raise PackError(f"{pack}: evaluator '{spec.get('name') or spec.get('id')}' names a calibration_set "
                                "file the pack does not hold")
            new_path = str(packed / safe_member(packed_set["member"]))
            evaluators[position] = {**spec, "params": {**spec["params"], "calibration_set": new_path}}
            aliases.append((packed_set["path"], new_path))
            value = packed_set["value"]
            # A relative value only as a whole JSON string: bare, it would be replaced inside any longer
            # path that ends with it.
            aliases.append((value, new_path) if Path(value).is_absolute() else (f'"{value}"', f'"{new_path}"'))
    params["evaluators"] = evaluators
    run_id = manifest["run_id"]
    if safe_member(f"{_RUN}/{run_id}").parts != (_RUN, run_id):
        raise PackError(f"{pack}: run id {run_id!r} is not a folder name")
    inputs = manifest["inputs"]
    params.update(output_dir=str(out_dir.resolve()), run_id=run_id, base_dir=str(packed / _INPUTS),
                  no_cache=False, refresh_cache=False,
                  llm_cache=str(packed / _CACHE) if inputs.get("cache") else str(packed / _INPUTS / "empty-cache.sqlite"))
    if inputs.get("dataset"):
        params["dataset"] = str(packed / safe_member(inputs["dataset"]))
    if inputs.get("llm_configs"):
        params["llm_configs"] = str(packed / safe_member(inputs["llm_configs"]))
    return params, aliases
