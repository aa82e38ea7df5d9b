"""A plugin judge evaluator with its own calibration set (calibration/toy_judge.jsonl next to this file).

``toy_judge`` asks whether an answer is fine; the judge answers ``yes`` (pass) or ``no`` (fail).
Its set's items marked SHOULD-PASS are labelled ``yes``, the others ``no``, so a scripted judge
can answer every item correctly or always answer one label.
"""

from sonar_core import Input, JudgeEvaluator, JudgeVote, hookimpl, judge_metrics, keyword_vote


class ToyJudgeEvaluator(JudgeEvaluator):
    id = "toy_judge"
    display_name = "Toy judge"
    tagline = "A scripted judge answers yes or no."
    required_inputs = (Input.ACTUAL_ANSWER,)
    prompt_template = "Toy judge: is this answer fine? {{ACTUAL_ANSWER}} Answer yes or no."
    labels = ("yes", "no")
    calibration_labels = {True: "yes", False: "no"}
    metrics = judge_metrics(passes=("fine", "Fine"), fails=("not_fine", "Not fine"), retrieval=("rf", "RF"),
                            generation=("gf", "GF"), parse=("pf", "PF"), what="as fine")

    def parse_answer(self, answer: str) -> JudgeVote:
        return keyword_vote(answer, {"yes": True, "no": False})


@hookimpl
def register_evaluators(register):
    register(ToyJudgeEvaluator)
