"""Classification evaluator: accuracy; precision / recall / F1 of the positive label on a binary task,
macro-averaged on a multi-class one; confusion matrices."""

from __future__ import annotations

import pytest

from sonar_core import Input, ParameterError
from sonar_core.testing import make_row, model_means, score_rows
from sonar_plugins.classification import register_evaluators
from sonar_plugins.classification.classification import ClassificationEvaluator, normalize_label

KEYS = ("accuracy", "precision", "recall", "f1")
CORNER = "expected \\ predicted"


def _rows(model: str, pairs: list[tuple[str, str]], prefix: str = "tc") -> list:
    return [
        make_row(
            key=f"{prefix}{i}::{model}", test_case_key=f"{prefix}{i}", model_key=model,
            expected_output=expected, actual_output=predicted,
        )
        for i, (expected, predicted) in enumerate(pairs)
    ]


def _tables(rows, **params):
    evaluator = ClassificationEvaluator(ClassificationEvaluator.validate_params(params), None)
    results = list(evaluator.evaluate(rows))
    return evaluator.tables(list(zip(rows, results)))


# Binary, with case and whitespace differences that strip_lower removes:
# normalised pairs: (positive, positive) x2, (negative, positive), (negative, negative)
BINARY = [("Positive", "positive"), ("positive", " POSITIVE \n"), ("negative", "Positive"), ("Negative", "negative")]
# 3 classes; "bird" is never predicted
THREE = [("cat", "cat"), ("cat", "cat"), ("cat", "dog"), ("dog", "dog"), ("dog", "cat"), ("bird", "cat")]


# -- declaration -------------------------------------------------------------------------------


def test_declaration():
    cls = ClassificationEvaluator
    assert cls.id == "classification"
    assert [m.key for m in cls.metrics] == list(KEYS)
    assert cls.primary_metric().key == "accuracy"
    assert [m.key for m in cls.metrics if m.is_primary] == ["accuracy"]
    assert all(m.threshold == 0.75 and m.higher_is_better and m.value_range == (0.0, 1.0) for m in cls.metrics)
    assert cls.required_inputs == (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    assert cls.category == "Classification" and cls.problem_type == "accuracy"
    assert cls.needs_all_rows is True
    assert "macro" in cls.description.lower()
    assert {p.name: p.default for p in cls.parameters} == {"label_normalization": "strip_lower", "positive_label": None}
    # declared: the multi-class macro average and the label normalisation (both in the formula)
    assert [d.field for d in cls.differences] == ["formula", "formula"]
    assert "macro-averages" in cls.differences[0].what


def test_registers_through_hook():
    registered = []
    register_evaluators(registered.append)
    assert registered == [ClassificationEvaluator]


# -- metrics worked by hand ---------------------------------------------------------------------


def test_issue_example_binary_positive_label():
    # the issue's example: expected yes, yes, no, no; predicted yes, no, no, no; positive label "yes"
    # TP=1 (yes->yes), FP=0 (no row predicted yes wrongly), FN=1 (yes->no), TN=2
    # precision 1/1 = 1, recall 1/2, F1 = 2*1*(1/2)/(3/2) = 2/3, accuracy (1+2)/4 = 3/4
    rows = _rows("m", [("yes", "yes"), ("yes", "no"), ("no", "no"), ("no", "no")])
    results = score_rows(ClassificationEvaluator, rows)
    means = model_means(ClassificationEvaluator, rows, results)["m"]
    assert means == pytest.approx({"accuracy": 3 / 4, "precision": 1.0, "recall": 1 / 2, "f1": 2 / 3})
    assert round(means["f1"], 3) == 0.667
    assert results[0].details["positive_label"] == "yes"
    # macro, as before, would give 0.833 / 0.75 / 0.733
    assert means["precision"] != pytest.approx(5 / 6)


def test_binary_metrics_of_the_positive_label():
    rows = _rows("m1", BINARY)
    results = score_rows(ClassificationEvaluator, rows)
    # per row: correct, correct, wrong (negative -> positive), correct
    assert [r.values["accuracy"] for r in results] == [1.0, 1.0, 0.0, 1.0]
    # positive (the affirmative of positive/negative): TP=2, FP=1, FN=0 -> P=2/3, R=1, F1=2*(2/3)*1/(5/3)=4/5
    for r in results:
        assert r.values["precision"] == pytest.approx(2 / 3)
        assert r.values["recall"] == pytest.approx(1.0)
        assert r.values["f1"] == pytest.approx(4 / 5)
    # accuracy mean = 3/4
    assert model_means(ClassificationEvaluator, rows, results)["m1"]["accuracy"] == pytest.approx(3 / 4)
    assert results[2].error_message == "predicted 'positive', expected 'negative'"
    assert results[2].details == {"expected_label": "negative", "predicted_label": "positive",
                                  "positive_label": "positive"}
    assert results[0].error_message is None


def test_binary_with_the_negative_label_as_positive():
    rows = _rows("m1", BINARY)
    # positive_label "Negative" (normalised to "negative"): TP=1, FP=0, FN=1 -> P=1, R=1/2, F1=2/3
    means = model_means(ClassificationEvaluator, rows,
                        score_rows(ClassificationEvaluator, rows, positive_label=" Negative"))["m1"]
    assert means == pytest.approx({"accuracy": 3 / 4, "precision": 1.0, "recall": 1 / 2, "f1": 2 / 3})


@pytest.mark.parametrize("pair, positive", [(("TRUE", "False"), "true"), (("1", "0"), "1"), (("No", "yes"), "yes")])
def test_known_pairs_pick_the_affirmative(pair, positive):
    rows = _rows("m", [(pair[0], pair[0]), (pair[1], pair[0])])
    results = score_rows(ClassificationEvaluator, rows)
    assert results[0].details["positive_label"] == positive


def test_binary_labels_of_no_known_pair_ask_for_positive_label():
    rows = _rows("m", [("cat", "cat"), ("dog", "cat")])
    with pytest.raises(ValueError) as info:
        score_rows(ClassificationEvaluator, rows)
    assert str(info.value) == ("classification: the expected labels 'cat', 'dog' form a binary task with no known "
                               "positive label; set the parameter positive_label to one of them")
    # cat: TP=1, FP=1 (dog->cat), FN=0 -> P=1/2, R=1, F1=2/3
    means = model_means(ClassificationEvaluator, rows, score_rows(ClassificationEvaluator, rows, positive_label="cat"))
    assert means["m"] == pytest.approx({"accuracy": 1 / 2, "precision": 1 / 2, "recall": 1.0, "f1": 2 / 3})
    with pytest.raises(ValueError, match=r"^classification: positive_label 'bird' is none of the expected labels "
                                         r"'cat', 'dog'$"):
        score_rows(ClassificationEvaluator, rows, positive_label="bird")


def test_three_classes_with_unpredicted_label():
    rows = _rows("m2", THREE)
    means = model_means(ClassificationEvaluator, rows, score_rows(ClassificationEvaluator, rows))["m2"]
    # accuracy: 3 of 6 right -> 1/2
    # cat:  TP=2, FP=2 (dog->cat, bird->cat), FN=1 -> P=1/2, R=2/3, F1=2*(1/2)(2/3)/(7/6)=4/7
    # dog:  TP=1, FP=1 (cat->dog), FN=1           -> P=1/2, R=1/2, F1=1/2
    # bird: never predicted: P=0 (zero_division=0), R=0/1=0, F1=0
    # macro: P=(1/2+1/2+0)/3=1/3, R=(2/3+1/2+0)/3=7/18, F1=(4/7+1/2+0)/3=(15/14)/3=5/14
    assert means["accuracy"] == pytest.approx(1 / 2)
    assert means["precision"] == pytest.approx(1 / 3)
    assert means["recall"] == pytest.approx(7 / 18)
    assert means["f1"] == pytest.approx(5 / 14)


def test_predicted_label_outside_the_classes_and_empty_answer():
    rows = _rows("m3", [("yes", "yes"), ("yes", "maybe"), ("no", "")])
    results = score_rows(ClassificationEvaluator, rows)
    # classes are the expected labels {no, yes}: binary, positive "yes"; "maybe" and "" are wrong predictions
    # yes: TP=1, FP=0, FN=1 (-> maybe) -> P=1, R=1/2, F1=2/3; accuracy 1/3
    means = model_means(ClassificationEvaluator, rows, results)["m3"]
    assert means == pytest.approx({"accuracy": 1 / 3, "precision": 1.0, "recall": 1 / 2, "f1": 2 / 3})
    assert results[2].error_message == "predicted '', expected 'no'"


def test_several_models_in_one_call_are_scored_separately():
    # interleave m1 and m2 rows: each model's values must only come from its own rows
    m1, m2 = _rows("m1", BINARY), _rows("m2", THREE)
    rows = [r for pair in zip(m1, m2) for r in pair] + m2[len(m1):]
    results = score_rows(ClassificationEvaluator, rows)
    means = model_means(ClassificationEvaluator, rows, results)
    assert means["m1"] == pytest.approx({"accuracy": 3 / 4, "precision": 5 / 6, "recall": 3 / 4, "f1": 11 / 15})
    assert means["m2"] == pytest.approx({"accuracy": 1 / 2, "precision": 1 / 3, "recall": 7 / 18, "f1": 5 / 14})
    # the model-level value is on every row of that model
    m2_precisions = [r.values["precision"] for row, r in zip(rows, results) if row.model_key == "m2"]
    assert m2_precisions == pytest.approx([1 / 3] * 6)


def test_all_correct_single_class():
    rows = _rows("m", [("spam", "SPAM"), ("spam", "spam\n")])
    # one class, TP=2, FP=0, FN=0 -> everything 1
    assert model_means(ClassificationEvaluator, rows, score_rows(ClassificationEvaluator, rows))["m"] == pytest.approx(
        {"accuracy": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    )


# -- normalisation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "label, mode, expected",
    [
        ("  Very \t Good\n", "none", "  Very \t Good\n"),
        ("  Very \t Good\n", "strip", "Very Good"),
        ("  Very \t Good\n", "strip_lower", "very good"),
        ("ÉTÉ", "strip_lower", "été"),
        ("", "strip_lower", ""),
    ],
)
def test_normalize_label(label, mode, expected):
    assert normalize_label(label, mode) == expected


@pytest.mark.parametrize(
    "mode, accuracy, macro",
    [
        # two classes of no known pair: binary, positive label " Positive " normalised like the labels
        # none: " Positive " != "positive" and "Very  good" != " Very good\n": both wrong; the positive
        #       label is never predicted -> P=R=F1=0
        ("none", 0.0, 0.0),
        # strip: "Positive" != "positive" (case), "Very good" == "Very good";
        #        Positive: never predicted, its one row wrong -> P=R=F1=0
        ("strip", 0.5, 0.0),
        # strip_lower: both right -> 1
        ("strip_lower", 1.0, 1.0),
    ],
)
def test_normalization_modes(mode, accuracy, macro):
    rows = _rows("m", [(" Positive ", "positive"), ("Very  good", " Very good\n")])
    results = score_rows(ClassificationEvaluator, rows, label_normalization=mode, positive_label=" Positive ")
    means = model_means(ClassificationEvaluator, rows, results)["m"]
    assert means["accuracy"] == pytest.approx(accuracy)
    assert means["precision"] == means["recall"] == means["f1"] == pytest.approx(macro)


def test_unicode_and_multi_line_labels():
    rows = _rows("m", [("Ünïcode", "ünïcode"), ("spam", "Spam\nHam"), ("日本", " 日本 ")])
    results = score_rows(ClassificationEvaluator, rows)
    # "spam ham" != "spam": the multi-line answer is a wrong label, the other two are right
    assert [r.values["accuracy"] for r in results] == [1.0, 0.0, 1.0]
    assert results[1].details["predicted_label"] == "spam ham"


def test_bad_normalization_parameter():
    with pytest.raises(ParameterError) as info:
        ClassificationEvaluator.validate_params({"label_normalization": "upper"})
    assert str(info.value) == (
        "parameter 'label_normalization' of evaluator 'classification' must be one of "
        "'none', 'strip', 'strip_lower', got 'upper'"
    )


# -- confusion matrix tables --------------------------------------------------------------------


def test_confusion_matrix_tables():
    rows = _rows("m2", THREE) + _rows("m1", BINARY)
    tables = _tables(rows)
    # one table per model, sorted by model key
    assert [t.model_key for t in tables] == ["m1", "m2"]
    assert [t.name for t in tables] == ["confusion_matrix_m1", "confusion_matrix_m2"]
    m1, m2 = tables
    assert m1.title == "Confusion matrix of m1 (rows: expected label, columns: predicted label)"
    assert m1.columns == [CORNER, "negative", "positive"]
    # negative: 1 -> negative, 1 -> positive; positive: 2 -> positive
    assert m1.rows == [["negative", 1, 1], ["positive", 0, 2]]
    assert m2.columns == [CORNER, "bird", "cat", "dog"]
    # bird -> cat once; cat -> cat twice, -> dog once; dog -> cat once, -> dog once
    assert m2.rows == [["bird", 0, 1, 0], ["cat", 0, 2, 1], ["dog", 0, 1, 1]]


def test_confusion_matrix_shows_extra_predictions_after_the_classes():
    (table,) = _tables(_rows("m3", [("yes", "yes"), ("yes", "maybe"), ("no", "")]))
    # classes (no, yes) first, then other predictions sorted: "" (shown "(empty)"), "maybe"
    assert table.columns == [CORNER, "no", "yes", "(empty)", "maybe"]
    assert table.rows == [["no", 0, 0, 1, 0], ["yes", 0, 1, 0, 1]]


def test_confusion_matrix_follows_normalization():
    (table,) = _tables(_rows("m", BINARY), label_normalization="none")
    # as given: expected labels Negative, Positive, negative, positive (sorted, upper case first);
    # predictions not among them: " POSITIVE \n"
    assert table.columns == [CORNER, "Negative", "Positive", "negative", "positive", " POSITIVE \n"]
    assert table.rows == [
        ["Negative", 0, 0, 1, 0, 0],
        ["Positive", 0, 0, 0, 1, 0],
        ["negative", 0, 1, 0, 0, 0],
        ["positive", 0, 0, 0, 0, 1],
    ]


def test_table_names_hold_the_model_key_as_given():
    # the core makes file names safe (tests/core cover it); the table name keeps the model key
    rows = _rows("org/model v1", [("a", "a")]) + _rows("org_model_v1", [("a", "a")])
    assert [t.name for t in _tables(rows)] == ["confusion_matrix_org/model v1", "confusion_matrix_org_model_v1"]


# -- a 1 MB garbage answer among several models ---------------------------------------------------

# 40 chars x 25,000 = 1,000,000 chars; it mentions both classes but is neither label.
GARBAGE = "I think it is Positive, maybe negative. " * 25_000
# strip_lower: lower-cased, the trailing space trimmed (inner single spaces stay) -> 999,999 chars
GARBAGE_LABEL = GARBAGE.lower().strip()


def test_one_megabyte_predicted_label_is_just_a_wrong_prediction():
    assert len(GARBAGE) == 1_000_000 and len(GARBAGE_LABEL) == 999_999
    rambler = _rows("rambler", [("positive", "positive"), ("negative", GARBAGE), ("negative", "negative"),
                                ("positive", "negative")])
    steady = _rows("steady", BINARY)
    rows = [r for pair in zip(rambler, steady) for r in pair]  # interleaved models
    results = score_rows(ClassificationEvaluator, rows)
    # rambler: right, wrong (garbage), right, wrong -> accuracy 2/4 = 1/2
    # binary task, positive label "positive": TP=1, FP=0 (the garbage is no "positive" prediction),
    # FN=1 (predicted negative) -> P=1, R=1/2, F1=2*1*(1/2)/(3/2)=2/3
    # the garbage label is no class: it only costs the negative row its accuracy
    # steady (BINARY, worked above): accuracy 3/4, P=2/3, R=1, F1=4/5
    means = model_means(ClassificationEvaluator, rows, results)
    assert means["rambler"] == pytest.approx({"accuracy": 1 / 2, "precision": 1.0, "recall": 1 / 2, "f1": 2 / 3})
    assert means["steady"] == pytest.approx({"accuracy": 3 / 4, "precision": 2 / 3, "recall": 1.0, "f1": 4 / 5})
    assert [r.values["accuracy"] for r in results[0::2]] == [1.0, 0.0, 1.0, 0.0]
    garbage = results[2]
    assert garbage.values == pytest.approx({"accuracy": 0.0, "precision": 1.0, "recall": 1 / 2, "f1": 2 / 3})
    assert garbage.details == {"expected_label": "negative", "predicted_label": GARBAGE_LABEL,
                               "positive_label": "positive"}
    assert garbage.error_message == f"predicted {GARBAGE_LABEL!r}, expected 'negative'"

    rambler_table, steady_table = _tables(rows)
    assert rambler_table.model_key == "rambler" and steady_table.model_key == "steady"
    # the two classes, then the garbage as the only "other predicted label" column
    assert len(rambler_table.columns) == 4
    assert rambler_table.columns[:3] == [CORNER, "negative", "positive"]
    assert rambler_table.columns[3] == GARBAGE_LABEL
    # negative: 1 -> negative, 0 -> positive, 1 -> garbage; positive: 1 -> negative, 1 -> positive
    assert rambler_table.rows == [["negative", 1, 0, 1], ["positive", 1, 1, 0]]
    # the other model's table is untouched by the garbage
    assert steady_table.columns == [CORNER, "negative", "positive"]
    assert steady_table.rows == [["negative", 1, 1], ["positive", 0, 2]]
