"""Standards files: each hazard key's reference score, written by a calibration run (ModelBench's shape).

::

    {
      "_metadata": {"NOTICE": "...", "run_info": {"user": ..., "timestamp": ..., "sonar_version": ...,
                    "python": ..., "platform": ..., "benchmarks": [...], "reference_hosts": [...],
                    "hazard_scores": {host: {hazard_key: score}}, "samples": {host: {hazard_key: n}}}},
      "standards": {"reference_suts": [...], "reference_standards": {hazard_key: score}}
    }

A hazard's reference is the **lowest** score among the reference hosts (as ModelBench's calibration
sets it). Every error reading a file is one line naming the file and the field.
"""

from __future__ import annotations

import getpass
import json
import math
import os
import platform
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TypedDict

from ..errors import ConfigError
from ..jsontypes import JsonObject

#: The standards file's ``_metadata`` (ModelBench's key): the notice and how the references were made.
StandardsMetadata = TypedDict("StandardsMetadata", {"NOTICE": str, "run_info": JsonObject})


class StandardsBody(TypedDict):
    reference_suts: list[str]
    reference_standards: dict[str, float]  #: hazard key -> reference score


#: A standards file (ModelBench's shape).
StandardsFile = TypedDict("StandardsFile", {"_metadata": StandardsMetadata, "standards": StandardsBody})

__all__ = ["Standards", "read_standards", "write_standards", "calibrated_standards"]

NOTICE = ("Reference scores written by `sonar calibrate`: each hazard's reference is the lowest score among "
          "the reference hosts. Runs grade hazards against these (docs/benchmarks.md).")


@dataclass
class Standards:
    """Reference scores by hazard key, the reference hosts, and how they were made."""

    reference: dict[str, float]
    reference_hosts: list[str] = field(default_factory=list)
    run_info: JsonObject = field(default_factory=dict)  #: as the file says (a file of another tool may say more)
    source: str = ""

    def to_json_data(self) -> StandardsFile:
        return {"_metadata": {"NOTICE": NOTICE, "run_info": self.run_info},
                "standards": {"reference_suts": self.reference_hosts, "reference_standards": self.reference}}


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (some containers)
        return os.environ.get("USER", "")


def calibrated_standards(scores: dict[str, dict[str, float | None]], samples: dict[str, dict[str, int]],
                         benchmarks: list[str], sonar_version: str) -> Standards:
    """Standards from a calibration run: ``scores`` is host -> hazard key -> score (None: no scored item).

    Each hazard key's reference is its lowest score over the hosts that scored it; a hazard no host
    scored gets no reference (a later run says so and how to calibrate it).
    """
    keys = list(dict.fromkeys(key for per_host in scores.values() for key in per_host))
    reference: dict[str, float] = {}
    for key in keys:
        values = [per_host[key] for per_host in scores.values() if per_host.get(key) is not None]
        if values:
            reference[key] = min(values)
    run_info: JsonObject = {
        "user": _user(), "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "sonar_version": sonar_version, "python": platform.python_version(), "platform": platform.platform(),
        "benchmarks": benchmarks, "reference_hosts": sorted(scores), "hazard_scores": scores, "samples": samples,
    }
    return Standards(reference=reference, reference_hosts=sorted(scores), run_info=run_info)


def write_standards(path: str | Path, standards: Standards) -> None:
    """Write ``standards`` as JSON (indented, keys in insertion order)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(standards.to_json_data(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read_standards(path: str | Path) -> Standards:
    """Read a standards file; ConfigError, one line naming the file and the field, when it is bad."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: standards file not found (write one with sonar calibrate)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: standards file is not JSON: {str(exc).splitlines()[0]}") from None
    body = data.get("standards") if isinstance(data, dict) else None
    if not isinstance(body, dict):
        raise ConfigError(f"{path}: field 'standards': missing, or not a mapping")
    reference = body.get("reference_standards")
    if not isinstance(reference, dict):
        raise ConfigError(f"{path}: field 'standards.reference_standards': missing, or not a mapping")
    for key, value in reference.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not 0.0 <= value <= 1.0:
            raise ConfigError(f"{path}: field 'standards.reference_standards.{key}': "
                              f"{value!r} is not a score between 0 and 1")
    hosts = body.get("reference_suts", [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise ConfigError(f"{path}: field 'standards.reference_suts': not a list of host keys")
    metadata = data.get("_metadata") if isinstance(data.get("_metadata"), dict) else {}
    run_info = metadata.get("run_info") if isinstance(metadata.get("run_info"), dict) else {}
    return Standards(reference={k: float(v) for k, v in reference.items()}, reference_hosts=list(hosts),
                     run_info=run_info, source=str(path))
