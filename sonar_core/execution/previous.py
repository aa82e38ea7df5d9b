"""A run folder's record read back once, for ``--resume``.

``sonar run --resume`` needs three things from the run.json of the run it continues: the
configuration it ran with, the fingerprint of its dataset or test suite (a resumed run must
score the same data), and when it started (a refreshing run keeps what it fetched since).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .. import names
from ..errors import ConfigError
from ..jsontypes import JsonObject

__all__ = ["PreviousRun"]


@dataclass(frozen=True)
class PreviousRun:
    """The folder of a run to resume, and its run.json (empty when the run died before writing it)."""

    run_dir: Path
    record: JsonObject  #: run.json as read (an older run's may lack fields: read with .get)
    #: Whether the folder has a run.json at all (an unreadable one leaves ``record`` empty).
    has_record: bool = False

    @classmethod
    def open(cls, run_dir: str | Path) -> "PreviousRun":
        """The run in ``run_dir``, its run.json read now (once)."""
        run_dir = Path(run_dir)
        path = run_dir / names.RUN_JSON
        record: JsonObject = {}
        if path.is_file():
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                record = {}
        return cls(run_dir, record if isinstance(record, dict) else {}, path.is_file())

    def require_folder(self) -> None:
        """ConfigError when the folder to resume does not exist."""
        if not self.run_dir.is_dir():
            raise ConfigError(f"{self.run_dir}: no such run directory to resume")

    def parameters(self) -> JsonObject:
        """The configuration the run was started with (run.json's ``interpretation_parameters``)."""
        path = self.run_dir / names.RUN_JSON
        if not self.has_record:
            raise ConfigError(f"{self.run_dir}: not a Sonar run directory (no {names.RUN_JSON})")
        try:
            return self.record["interpretation_parameters"]
        except KeyError:
            raise ConfigError(f"{path}: unreadable run record; start a new run instead") from None

    def check_data(self, *, dataset_fingerprint: str | None, suite_fingerprint: str | None) -> None:
        """ConfigError when the dataset (or, for a pipeline run, the test suite) changed since the run began."""
        if not self.record:
            return
        if suite_fingerprint is not None:
            recorded = (self.record.get("pipeline") or {}).get("test_suite_fingerprint")
            if recorded not in (None, suite_fingerprint):
                raise ConfigError(f"{self.run_dir}: the test suite changed since this run started; "
                                  f"start a new run instead")
        else:
            recorded = self.record.get("result", {}).get("dataset", {}).get("fingerprint")
            if recorded not in (None, dataset_fingerprint):
                raise ConfigError(f"{self.run_dir}: the dataset changed since this run started; "
                                  f"start a new run instead")

    def started(self) -> float | None:
        """When the run started (seconds since the epoch), or None when its record does not say."""
        try:
            return datetime.fromisoformat(self.record["created"]).timestamp()
        except (KeyError, TypeError, ValueError):
            return None

    def dataset_source(self) -> str | None:
        """How the run's record names its dataset (``result.dataset.source``), or None."""
        source = ((self.record.get("result") or {}).get("dataset") or {}).get("source")
        return source if isinstance(source, str) else None
