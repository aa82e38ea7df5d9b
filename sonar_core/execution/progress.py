"""Progress bars for a run, or none: the run reports progress the same way either way."""

from __future__ import annotations

from typing import Callable

__all__ = ["ProgressSink"]


class ProgressSink:
    """Adapter so the runner can report progress with or without rich."""

    def __init__(self, enabled: bool) -> None:
        self.progress = None
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), transient=False)

    def __enter__(self):
        if self.progress:
            self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self.progress:
            self.progress.__exit__(*exc)

    def task(self, label: str, total: int) -> Callable[[int], None]:
        if not self.progress:
            return lambda n: None
        task_id = self.progress.add_task(label, total=total)
        return lambda n: self.progress.advance(task_id, n)
