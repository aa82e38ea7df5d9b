"""Built-in agent evaluators: tool calls and trajectories of conversations (deterministic)."""

from sonar_core import hookimpl


@hookimpl
def register_evaluators(register):
    # Evaluator modules are imported here, on registration, not when the package loads.
    from .tool_call_accuracy import ToolCallAccuracyEvaluator
    from .tool_call_f1 import ToolCallF1Evaluator
    from .trajectory_match import TrajectoryMatchEvaluator

    register(ToolCallAccuracyEvaluator)
    register(ToolCallF1Evaluator)
    register(TrajectoryMatchEvaluator)
