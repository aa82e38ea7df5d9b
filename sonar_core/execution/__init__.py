"""The run layer: typed run state, orchestration, scoring of jobs, the host pipeline, resume.

:func:`execute_run` runs a configuration and returns a :class:`ExecutionResult`. The pieces:
:mod:`.state` (RunState, Job, ExecutionResult), :mod:`.previous` (a run folder read back for
``--resume``), :mod:`.jobs` (evaluators resolved and checked), :mod:`.services` (the run's LLM
service and hosts), :mod:`.scoring` (one job's rows), :mod:`.pipeline` (hosts answering a test
suite), :mod:`.record` (run.json and index.html from the state), :mod:`.runner` (the order of it all).
"""

#: Served on first use: ``open_run`` imports :mod:`.state` alone, and a reader of a result folder
#: must not load the whole run layer (the runner, hosts, LLM client: ~0.6 s) to read rows.
_LAZY = {"NO_HOSTS": "jobs", "PreviousRun": "previous", "demo_dataset_path": "runner", "execute_run": "runner",
         "Job": "state", "ExecutionResult": "state"}

__all__ = ["Job", "NO_HOSTS", "PreviousRun", "ExecutionResult", "demo_dataset_path", "execute_run"]


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
