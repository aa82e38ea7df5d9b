"""The run layer: typed run state, orchestration, scoring of jobs, the host pipeline, resume.

:func:`execute_run` runs a configuration and returns a :class:`ExecutionResult`. The pieces:
:mod:`.state` (RunState, Job, ExecutionResult), :mod:`.previous` (a run folder read back for
``--resume``), :mod:`.jobs` (evaluators resolved and checked), :mod:`.services` (the run's LLM
service and hosts), :mod:`.scoring` (one job's rows), :mod:`.pipeline` (hosts answering a test
suite), :mod:`.record` (run.json and index.html from the state), :mod:`.runner` (the order of it all).
"""

from .jobs import NO_HOSTS
from .previous import PreviousRun
from .runner import demo_dataset_path, execute_run
from .state import Job, ExecutionResult

__all__ = ["Job", "NO_HOSTS", "PreviousRun", "ExecutionResult", "demo_dataset_path", "execute_run"]
