"""Evaluators for the drill-down's withholding test (tests/core/test_drilldown.py).

``leaky`` has sensitive outputs: a card number in the answer fails the row, ``SECRET-CTX-42``
in the retrieved context is a retrieval leak; its messages are masked. ``quoting`` is not
sensitive, but its messages quote the answer, as a classifier's "predicted ..." does.
"""

from sonar_core import Evaluator, Input, Metric, MetricRole, PassFailEvaluator, RowResult, Verdict, hookimpl


class LeakyEvaluator(PassFailEvaluator):
    id = "leaky"
    display_name = "Leaky"
    sensitive_outputs = True
    required_inputs = (Input.ACTUAL_ANSWER,)
    optional_inputs = (Input.RETRIEVED_CONTEXT,)
    metrics = (
        Metric("ok", "OK", "No card number in the answer.", is_primary=True, role=MetricRole.PASS),
        Metric("ctx_leaks", "Context leaks", "A secret in the context.", higher_is_better=False,
               role=MetricRole.RETRIEVAL_FAILURE),
    )

    def check(self, row):
        answer_ok = "4111 1111 1111 1111" not in row.actual_output
        context_ok = ("SECRET-CTX-42" not in " ".join(row.context)) if row.context else None
        messages = [text for text, bad in (("card 4111********1111 in the answer", not answer_ok),
                                           ("secret SECRET-****-** in the context", context_ok is False)) if bad]
        return Verdict(answer_ok=answer_ok, context_ok=context_ok, error_message="; ".join(messages) or None)


class QuotingEvaluator(Evaluator):
    id = "quoting"
    display_name = "Quoting"
    required_inputs = (Input.ACTUAL_ANSWER,)
    metrics = (Metric("v", "V", "Always 0.", is_primary=True),)

    def evaluate(self, rows):
        for row in rows:
            yield RowResult({"v": 0.0}, error_message=f"answer was {row.actual_output!r}")


@hookimpl
def register_evaluators(register):
    register(LeakyEvaluator)
    register(QuotingEvaluator)
