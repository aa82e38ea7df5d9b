"""Tests of the ROUGE evaluator: identical to rouge-score, hand-computed values, edge cases."""

from __future__ import annotations

import random

import pytest
from nltk.stem import porter
from rouge_score import rouge_scorer
from rouge_score.rouge_scorer import _lcs_table
from rouge_score.tokenize import tokenize as rouge_tokenize

from sonar_core import Input, ParameterError, ResultKind
from sonar_core.testing import make_context, make_row, score_rows
from sonar_plugins.summarization.rouge import RougeEvaluator, lcs_length

KEYS = {"rouge_1": "rouge1", "rouge_2": "rouge2", "rouge_l": "rougeL"}


def reference_scores(reference: str, candidate: str, use_stemmer: bool = True) -> dict[str, float]:
    """rouge-score's F-measures under our metric keys."""
    scorer = rouge_scorer.RougeScorer(list(KEYS.values()), use_stemmer=use_stemmer)
    scores = scorer.score(reference, candidate)
    return {ours: scores[theirs].fmeasure for ours, theirs in KEYS.items()}


def evaluator(**params) -> RougeEvaluator:
    return RougeEvaluator(RougeEvaluator.validate_params(params), make_context())


def row(expected: str, actual: str, model: str = "m1", case: str = "tc1"):
    return make_row(
        key=f"{case}-{model}", expected_output=expected, actual_output=actual, model_key=model, test_case_key=case
    )


# -- declaration -------------------------------------------------------------------------


def test_declaration_follows_the_catalogue():
    assert RougeEvaluator.id == "rouge"
    assert RougeEvaluator.category == "Summarization"
    assert RougeEvaluator.kind is ResultKind.SCORE
    assert RougeEvaluator.required_inputs == (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    assert [m.key for m in RougeEvaluator.metrics] == ["rouge_1", "rouge_2", "rouge_l"]
    assert RougeEvaluator.primary_metric().key == "rouge_l"
    assert sum(m.is_primary for m in RougeEvaluator.metrics) == 1
    for metric in RougeEvaluator.metrics:
        assert metric.threshold == 0.75
        assert metric.higher_is_better
        assert metric.value_range == (0.0, 1.0)
    assert RougeEvaluator.validate_params({})["use_stemmer"] is True
    with pytest.raises(ParameterError, match="parameter 'use_stemmer' of evaluator 'rouge' must be of type bool"):
        RougeEvaluator.validate_params({"use_stemmer": "maybe"})


# -- hand-computed values ----------------------------------------------------------------


def test_hand_computed_pair_with_a_substituted_word():
    # reference tokens: the cat sat on the mat (6); candidate: the cat is on the mat (6)
    # ROUGE-1: clipped matches the:min(2,2)=2 + cat 1 + on 1 + mat 1 = 5; P = R = 5/6 -> F = 5/6
    # ROUGE-2: ref {the cat, cat sat, sat on, on the, the mat}, cand {the cat, cat is, is on,
    #          on the, the mat}: 3 shared of 5 and 5 -> F = 3/5
    # ROUGE-L: LCS "the cat on the mat" = 5 -> P = R = 5/6 -> F = 5/6
    [result] = score_rows(RougeEvaluator, [row("The cat sat on the mat.", "The cat is on the mat")])
    assert result.values == pytest.approx({"rouge_1": 5 / 6, "rouge_2": 3 / 5, "rouge_l": 5 / 6}, abs=1e-15)


def test_hand_computed_pair_of_different_lengths():
    # reference: one two three four five six (6 tokens); candidate: two one three five (4)
    # ROUGE-1: 4 matches; P = 4/4 = 1, R = 4/6; F = 2*1*(2/3) / (1 + 2/3) = (4/3)/(5/3) = 0.8
    # ROUGE-2: cand bigrams {two one, one three, three five} none in the reference -> 0
    # ROUGE-L: LCS "one three five" (or "two three five") = 3; P = 3/4, R = 3/6;
    #          F = 2*0.75*0.5 / 1.25 = 0.6
    [result] = score_rows(RougeEvaluator, [row("one two three four five six", "two one three five")])
    assert result.values == pytest.approx({"rouge_1": 0.8, "rouge_2": 0.0, "rouge_l": 0.6}, abs=1e-15)


def test_stemming_makes_inflections_match_and_can_be_turned_off():
    # Stemmed: "Cats are running quickly" -> cat are run quickli ; "the cat runs quick" -> the cat run quick
    # ROUGE-1: cat, run = 2 of 4 and 4 -> F = 0.5; ROUGE-2: ref {cat are, are run, run quickli}
    # vs {the cat, cat run, run quick}: 0; ROUGE-L: "cat run" = 2 -> F = 0.5
    reference, candidate = "Cats are running quickly", "the cat runs quick"
    [stemmed] = score_rows(RougeEvaluator, [row(reference, candidate)])
    assert stemmed.values == {"rouge_1": 0.5, "rouge_2": 0.0, "rouge_l": 0.5}
    # Unstemmed: cats/are/running/quickly vs the/cat/runs/quick share nothing.
    [plain] = score_rows(RougeEvaluator, [row(reference, candidate)], use_stemmer=False)
    assert plain.values == {"rouge_1": 0.0, "rouge_2": 0.0, "rouge_l": 0.0}
    assert stemmed.values == reference_scores(reference, candidate, True)
    assert plain.values == reference_scores(reference, candidate, False)


def test_identical_texts_score_one_whatever_the_case_and_punctuation():
    [result] = score_rows(RougeEvaluator, [row("Hello, World! Line two.", "hello world\nline   TWO")])
    assert result.values == {"rouge_1": 1.0, "rouge_2": 1.0, "rouge_l": 1.0}


# -- edge cases --------------------------------------------------------------------------


def test_empty_and_token_free_answers_score_zero():
    rows = [row("The cat sat.", ""), row("The cat sat.", "   \n\t"), row("The cat sat.", "!!! ... ???")]
    for result in score_rows(RougeEvaluator, rows):
        assert result.values == {"rouge_1": 0.0, "rouge_2": 0.0, "rouge_l": 0.0}
    assert reference_scores("The cat sat.", "!!! ... ???") == {"rouge_1": 0.0, "rouge_2": 0.0, "rouge_l": 0.0}


def test_empty_reference_scores_zero():
    assert evaluator().score_texts("", "some answer") == {"rouge_1": 0.0, "rouge_2": 0.0, "rouge_l": 0.0}


def test_one_token_texts_have_no_bigrams():
    # One shared token: ROUGE-1 = ROUGE-L = 1; no bigrams on either side -> 0/max(0,1) = 0.
    assert evaluator().score_texts("Paris", "paris.") == {"rouge_1": 1.0, "rouge_2": 0.0, "rouge_l": 1.0}


def test_unicode_is_tokenised_like_rouge_score():
    # Everything outside [a-z0-9] after lower() separates tokens: "Café" -> "caf", "naïve" ->
    # "na", "ve"; the Kelvin sign lower-cases to "k"; full-width letters vanish.
    ours = evaluator()
    text = "Café CAFÉ naïve İstanbul \u212aelvin ＡＢＣ１２３ 日本語 x\ny"
    assert ours.tokenize(text) == ["caf", "caf", "na", "ve", "i", "stanbul", "kelvin", "x", "y"]
    assert ours.tokenize(text) == rouge_tokenize(text, porter.PorterStemmer())
    assert ours.score_texts(text, "naïve café in Istanbul") == reference_scores(text, "naïve café in Istanbul")


# -- equality with rouge-score on generated pairs -----------------------------------------

_VOCAB = (
    "the a of and to cat cats running runs ran quickly quick generously caresses ponies "
    "relational conditional 42 3.14 2024 1,000 don't it's e-mail U.S.A. ... !! ? ; : ( ) -- "
    "Über naïve café İstanbul \u212aelvin ＡＢＣ 日本語 émigré straße 😀 \t \n"
).split(" ")


def _random_text(rng: random.Random) -> str:
    shape = rng.random()
    if shape < 0.05:
        return ""
    if shape < 0.1:
        return " ".join([rng.choice(_VOCAB)] * rng.randint(1, 30))  # one token repeated
    length = rng.choice([1, 2, 3, 5, 10, 40, 150, 400])
    return " ".join(rng.choice(_VOCAB) for _ in range(length))


@pytest.mark.parametrize("use_stemmer", [True, False])
def test_identical_to_rouge_score_on_generated_pairs(use_stemmer):
    rng = random.Random(20240611 + use_stemmer)
    scorer = rouge_scorer.RougeScorer(list(KEYS.values()), use_stemmer=use_stemmer)
    references = [_random_text(rng) for _ in range(80)]
    rows = []
    for case, reference in enumerate(references):
        for model in ("m1", "m2", "m3"):
            # Candidates sometimes copy-edit the reference so long LCSs occur, too.
            candidate = _random_text(rng) if rng.random() < 0.6 else reference + " " + _random_text(rng)
            rows.append(row(reference, candidate, model, f"tc{case}"))
    rng.shuffle(rows)  # rows of one reference are not adjacent; cached references must still fit each row
    results = score_rows(RougeEvaluator, rows, use_stemmer=use_stemmer)
    for r, result in zip(rows, results):
        want = scorer.score(r.expected_output, r.actual_output)
        # Exact equality: same tokens, same integer counts, same float arithmetic.
        assert result.values == {ours: want[theirs].fmeasure for ours, theirs in KEYS.items()}, (r.key,)


def test_lcs_length_matches_the_dynamic_programming_table():
    rng = random.Random(7)
    for _ in range(400):
        a = [rng.choice("abcdef") for _ in range(rng.randint(0, 90))]
        b = [rng.choice("abcdefg") for _ in range(rng.randint(0, 90))]
        want = _lcs_table(a, b)[-1][-1] if a and b else 0
        assert lcs_length(a, b) == want
    # Longer than the eager-mask limit on one side (lazy byte-array masks).
    a = [rng.choice("abcdefgh") for _ in range(2500)]
    b = [rng.choice("abcdefgh") for _ in range(300)]
    assert lcs_length(a, b) == lcs_length(b, a) == _lcs_table(b, a)[-1][-1]


# -- several models, several batches --------------------------------------------------------


def test_several_models_in_any_row_order_and_across_batches():
    reference = "The committee approved the annual budget after a long debate."
    answers = {
        "exact": "The committee approved the annual budget after a long debate.",
        "close": "After a long debate the committee approved the budget.",
        "off": "Nobody knows what happened.",
    }
    rows = [row(reference, text, model, "tc1") for model, text in answers.items()]
    rows.insert(1, row("Rain is expected tomorrow.", "Tomorrow it rains.", "close", "tc2"))
    ours = evaluator()
    first = [r.values for r in ours.evaluate(rows)]
    second = [r.values for r in ours.evaluate(list(reversed(rows)))]  # cached references
    assert second == list(reversed(first))
    for r, values in zip(rows, first):
        assert values == reference_scores(r.expected_output, r.actual_output)
    exact, close, off = first[0], first[2], first[3]
    assert exact == {"rouge_1": 1.0, "rouge_2": 1.0, "rouge_l": 1.0}
    assert exact["rouge_l"] > close["rouge_l"] > off["rouge_l"] == 0.0


# -- very long answers ----------------------------------------------------------------------

_WORDS = (
    "budget committee debate vote member report year council plan city tax road school "
    "approved rejected discussed long short annual public private new old after before during"
).split()


def _words_text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def test_100kb_answer_equals_rouge_score_against_short_and_long_references():
    rng = random.Random(3)
    answer = _words_text(rng, 15_500)  # ~6.5 characters per word
    assert len(answer) >= 100_000
    short = "The committee approved the annual budget after a long debate."
    longer = _words_text(rng, 120)
    ours = evaluator()
    for reference in (short, longer):
        assert ours.score_texts(reference, answer) == reference_scores(reference, answer)
        # And with the roles swapped: the long text as the reference.
        assert ours.score_texts(answer, reference) == reference_scores(answer, reference)


def _embedded(reference_tokens: int, reference: str, size: int) -> tuple[str, int]:
    """An answer of >= ``size`` characters: numeric filler around one copy of ``reference``.

    Filler tokens are digits only, so the stemmer leaves them alone and none equals a
    reference token. Returns the answer and its token count.
    """
    filler_tokens = size // 7 + 1  # each "1xxxxx " is 7 characters
    half = " ".join(str(100_000 + i % 5000) for i in range(filler_tokens // 2))
    answer = f"{half} {reference} {half}"
    return answer, 2 * (filler_tokens // 2) + reference_tokens


@pytest.mark.parametrize("reference_words", [0, 5000])
def test_1mb_answer_against_values_derived_by_hand(reference_words):
    # The answer is filler + the reference + filler, the filler sharing no token with the
    # reference. With R reference tokens and N answer tokens:
    #   unigram matches = R (each reference token occurs in the answer as often as in the
    #   reference), bigram matches = R - 1 (the copy's bigrams; the two seams contain filler),
    #   LCS = R (the whole reference is a subsequence and LCS <= R). Recall is 1 everywhere:
    #   ROUGE-1 = F(R/N, 1), ROUGE-2 = F((R-1)/(N-1), 1), ROUGE-L = F(R/N, 1), F(p, r) = 2pr/(p+r).
    rng = random.Random(11)
    if reference_words:
        reference = _words_text(rng, reference_words) + "."
    else:
        reference = "The committee approved the annual budget after a long debate."
    ref_tokens = rouge_tokenize(reference, porter.PorterStemmer())
    big_r = len(ref_tokens)
    assert big_r == (reference_words or 10)
    answer, big_n = _embedded(big_r, reference, 1_000_000)
    assert len(answer) >= 1_000_000

    ours = evaluator()
    assert len(ours.tokenize(answer)) == big_n

    def f(p: float, r: float) -> float:
        return 2 * p * r / (p + r)

    got = ours.score_texts(reference, answer)
    assert got == {
        "rouge_1": f(big_r / big_n, 1.0),
        "rouge_2": f((big_r - 1) / (big_n - 1), 1.0),
        "rouge_l": f(big_r / big_n, 1.0),
    }
    # Sanity of the magnitude: ~143k answer tokens, R = 10 -> ROUGE-1 = 20/(N+10) ~ 1.4e-4.
    assert 0 < got["rouge_l"] < 0.1
