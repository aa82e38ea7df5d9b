"""Tests of the BLEU evaluator: hand-computed BLEU-1..4, equality with NLTK, edge cases."""

from __future__ import annotations

import math

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from sonar_core import Input, ParameterError, ResultKind
from sonar_core.testing import make_context, make_row, score_rows
from nltk.tokenize import NLTKWordTokenizer

from sonar_plugins.summarization.bleu import BLEU_WEIGHTS, BleuEvaluator, treebank_words

ZEROS = {"bleu_1": 0.0, "bleu_2": 0.0, "bleu_3": 0.0, "bleu_4": 0.0}


def row(expected: str, actual: str, model: str = "m1", case: str = "tc1"):
    return make_row(
        key=f"{case}-{model}", expected_output=expected, actual_output=actual, model_key=model, test_case_key=case
    )


def evaluator(**params) -> BleuEvaluator:
    return BleuEvaluator(BleuEvaluator.validate_params(params), make_context())


def nltk_bleu(reference: list[str], candidate: list[str]) -> dict[str, float]:
    """NLTK's sentence_bleu, called directly, with the documented weights and smoothing."""
    smoothing = SmoothingFunction(epsilon=0.1).method1
    return {
        f"bleu_{n}": sentence_bleu([reference], candidate, weights=weights, smoothing_function=smoothing)
        for n, weights in enumerate(BLEU_WEIGHTS, start=1)
    }


def test_declaration_follows_the_catalogue():
    assert BleuEvaluator.id == "bleu"
    assert BleuEvaluator.category == "Summarization"
    assert BleuEvaluator.kind is ResultKind.SCORE
    assert BleuEvaluator.required_inputs == (Input.EXPECTED_ANSWER, Input.ACTUAL_ANSWER)
    assert [m.key for m in BleuEvaluator.metrics] == ["bleu_1", "bleu_2", "bleu_3", "bleu_4"]
    assert BleuEvaluator.primary_metric().key == "bleu_1"
    assert sum(m.is_primary for m in BleuEvaluator.metrics) == 1
    assert all(m.threshold == 0.75 and m.higher_is_better for m in BleuEvaluator.metrics)
    assert BLEU_WEIGHTS == ((1.0,), (0.5, 0.5), (1 / 3, 1 / 3, 1 / 3), (0.25, 0.25, 0.25, 0.25))
    assert BleuEvaluator.validate_params({})["lowercase"] is False
    with pytest.raises(ParameterError, match="unknown parameter 'smoothing' for evaluator 'bleu'"):
        BleuEvaluator.validate_params({"smoothing": 1})


def test_hand_computed_equal_lengths_no_smoothing_needed():
    # reference: the cat sat on the mat (r = 6); candidate: the cat sat on a mat (c = 6)
    # p1: the(1, clipped to ref's 2 -> 1) cat sat on mat = 5 of 6          -> 5/6
    # p2: {the cat, cat sat, sat on} of {the cat, cat sat, sat on, on a, a mat} -> 3/5
    # p3: {the cat sat, cat sat on} of 4 trigrams                            -> 2/4
    # p4: {the cat sat on} of 3 4-grams                                      -> 1/3
    # BP: c = r -> exp(1 - 6/6) = 1
    # BLEU-1 = 5/6 = 0.83333; BLEU-2 = (5/6 * 3/5)^(1/2) = 0.5^(1/2) = 0.70711
    # BLEU-3 = (5/6 * 3/5 * 1/2)^(1/3) = 0.25^(1/3) = 0.62996
    # BLEU-4 = (5/6 * 3/5 * 1/2 * 1/3)^(1/4) = (1/12)^(1/4) = 0.53728
    [result] = score_rows(BleuEvaluator, [row("the cat sat on the mat", "the cat sat on a mat")])
    assert result.values == pytest.approx(
        {"bleu_1": 5 / 6, "bleu_2": 0.5**0.5, "bleu_3": 0.25 ** (1 / 3), "bleu_4": (1 / 12) ** 0.25}, rel=1e-12
    )
    tokens = "the cat sat on the mat".split(), "the cat sat on a mat".split()
    assert result.values == nltk_bleu(*tokens)


def test_hand_computed_short_answer_with_brevity_penalty_and_smoothing():
    # reference: the quick brown fox jumps over the lazy dog (r = 9); candidate: the quick fox jumps (c = 4)
    # p1: the quick fox jumps all in the reference                 -> 4/4 = 1
    # p2: {the quick, fox jumps} of {the quick, quick fox, fox jumps} -> 2/3
    # p3: none of {the quick fox, quick fox jumps} -> 0, smoothed (0 + 0.1)/2 = 0.05
    # p4: none of {the quick fox jumps}            -> 0, smoothed (0 + 0.1)/1 = 0.1
    # BP: c < r -> exp(1 - 9/4) = exp(-1.25) = 0.286505
    # BLEU-1 = 0.286505 * 1 = 0.286505
    # BLEU-2 = 0.286505 * (1 * 2/3)^(1/2) = 0.286505 * 0.816497 = 0.233930
    # BLEU-3 = 0.286505 * (1 * 2/3 * 0.05)^(1/3) = 0.286505 * 0.321829 = 0.092206
    # BLEU-4 = 0.286505 * (1 * 2/3 * 0.05 * 0.1)^(1/4) = 0.286505 * 0.240281 = 0.068842
    reference, candidate = "the quick brown fox jumps over the lazy dog", "the quick fox jumps"
    [result] = score_rows(BleuEvaluator, [row(reference, candidate)])
    bp = math.exp(-1.25)
    assert result.values == pytest.approx(
        {
            "bleu_1": bp,
            "bleu_2": bp * (2 / 3) ** 0.5,
            "bleu_3": bp * (2 / 3 * 0.05) ** (1 / 3),
            "bleu_4": bp * (2 / 3 * 0.05 * 0.1) ** 0.25,
        },
        rel=1e-12,
    )
    assert result.values == pytest.approx(
        {"bleu_1": 0.286505, "bleu_2": 0.233930, "bleu_3": 0.092206, "bleu_4": 0.068842}, abs=1e-6
    )
    assert result.values == nltk_bleu(reference.split(), candidate.split())


def test_answer_shorter_than_n_uses_its_own_length_as_the_order():
    # candidate "a b" (c = 2) vs reference "a b c" (r = 3): p1 = 2/2, p2 = 1/1, BP = exp(1 - 3/2)
    # BLEU-3 and BLEU-4 use BLEU-2's weights (no trigram can exist), so all four = exp(-0.5).
    [result] = score_rows(BleuEvaluator, [row("a b c", "a b")])
    assert result.values == pytest.approx(dict.fromkeys(result.values, math.exp(-0.5)), rel=1e-12)
    # A one-word exact answer is a perfect answer.
    [exact] = score_rows(BleuEvaluator, [row("Yes", "Yes")])
    assert exact.values == {"bleu_1": 1.0, "bleu_2": 1.0, "bleu_3": 1.0, "bleu_4": 1.0}


def test_empty_answer_reference_and_no_shared_word_score_zero():
    rows = [row("The cat sat.", ""), row("The cat sat.", "  \n "), row("The cat sat", "dogs run")]
    for result in score_rows(BleuEvaluator, rows):
        assert result.values == ZEROS
    assert evaluator().score_texts("", "some answer") == ZEROS


def test_tokens_are_treebank_words_of_each_sentence():
    ours = evaluator()
    # Punctuation and clitics are tokens; the period ending each sentence is split off.
    assert ours.tokenize("Hello, world! Don't stop. It ends.") == [
        "Hello", ",", "world", "!", "Do", "n't", "stop", ".", "It", "ends", ".",
    ]
    assert ours.tokenize("Line one\nline two") == ["Line", "one", "line", "two"]
    assert ours.tokenize("日本語 のテキスト。 Café") == ["日本語", "のテキスト。", "Café"]
    assert ours.tokenize("") == []


def test_case_sensitive_unless_lowercase():
    rows = [row("The Cat sat", "the cat sat")]
    # Case-sensitive: only "sat" matches -> p1 = 1/3; p2 = 0 -> 0.1/2; p3 = 0 -> 0.1/1; BP = 1.
    [plain] = score_rows(BleuEvaluator, rows)
    assert plain.values["bleu_1"] == pytest.approx(1 / 3, rel=1e-12)
    assert plain.values["bleu_2"] == pytest.approx((1 / 3 * 0.05) ** 0.5, rel=1e-12)
    [lowered] = score_rows(BleuEvaluator, rows, lowercase=True)
    assert lowered.values == {"bleu_1": 1.0, "bleu_2": 1.0, "bleu_3": 1.0, "bleu_4": 1.0}


def test_several_models_keep_row_order_and_rank_sensibly():
    reference = "The committee approved the annual budget after a long debate."
    answers = {
        "exact": reference,
        "close": "After a long debate, the committee approved the budget.",
        "off": "Nobody knows what happened.",
    }
    rows = [row(reference, text, model, "tc1") for model, text in answers.items()]
    rows.insert(1, row("Rain is expected tomorrow.", "Rain is expected tomorrow.", "close", "tc2"))
    ours = evaluator()
    results = [r.values for r in ours.evaluate(rows)]
    again = [r.values for r in ours.evaluate(list(reversed(rows)))]
    assert again == list(reversed(results))
    assert results[0] == results[1] == {"bleu_1": 1.0, "bleu_2": 1.0, "bleu_3": 1.0, "bleu_4": 1.0}
    close, off = results[2], results[3]
    assert close == nltk_bleu(ours.tokenize(reference), ours.tokenize(answers["close"]))
    assert 1.0 > close["bleu_1"] > close["bleu_4"] > 0.0
    # "off" (Nobody knows what happened ., c = 5) shares only the final "." with the
    # reference (11 tokens): p1 = 1/5, BP = exp(1 - 11/5) -> BLEU-1 = 0.2 * exp(-1.2) = 0.060239
    assert off["bleu_1"] == pytest.approx(0.2 * math.exp(-1.2), rel=1e-12)
    assert close["bleu_1"] > off["bleu_1"]


def test_one_megabyte_answers_hand_computed_and_equal_to_nltk():
    # Two ~1 MB answers (a model that rambles) next to an exact short answer of another model,
    # against the reference "the cat sat on the mat" (r = 6 tokens: the x2, cat, sat, on, mat).
    # The filler word "lorem" shares no token with the reference, so only the embedded words match.
    reference = "the cat sat on the mat"
    # embedded: 83,331 + 6 + 83,332 = 166,669 tokens; 6 * 83,331 + 23 + 6 * 83,332 = 1,000,001 chars.
    embedded = "lorem " * 83_331 + "the cat sat on the mat " + "lorem " * 83_332
    # fragment: 2 + 166,666 = 166,668 tokens; 8 + 6 * 166,666 = 1,000,004 chars.
    fragment = "cat sat " + "lorem " * 166_666
    assert (len(embedded), len(fragment)) == (1_000_001, 1_000_004)
    rows = [
        row(reference, embedded, "verbose", "tc1"),
        row(reference, reference, "terse", "tc1"),
        row(reference, fragment, "verbose", "tc2"),
    ]
    full, exact, partial = (r.values for r in score_rows(BleuEvaluator, rows))
    assert exact == {"bleu_1": 1.0, "bleu_2": 1.0, "bleu_3": 1.0, "bleu_4": 1.0}

    # embedded, c = 166,669 > r = 6 -> BP = 1.
    # clipped 1-grams: the 2 (ref has 2) + cat + sat + on + mat = 6  -> p1 = 6/166,669
    # 2-grams: the cat, cat sat, sat on, on the, the mat = 5 of c - 1  -> p2 = 5/166,668
    # 3-grams: the cat sat, cat sat on, sat on the, on the mat = 4     -> p3 = 4/166,667
    # 4-grams: the cat sat on, cat sat on the, sat on the mat = 3      -> p4 = 3/166,666
    # (n-grams straddling "lorem" and the reference words match nothing.) Every order has
    # matches, so no smoothing:
    # BLEU-1 = 6/166,669 = 3.59995e-05; BLEU-2 = (p1 p2)^(1/2) = 3.28630e-05
    # BLEU-3 = (p1 p2 p3)^(1/3) = 2.95943e-05; BLEU-4 = (p1 p2 p3 p4)^(1/4) = 2.61351e-05
    c = 166_669
    p = [6 / c, 5 / (c - 1), 4 / (c - 2), 3 / (c - 3)]
    assert full == pytest.approx(
        {"bleu_1": p[0], "bleu_2": (p[0] * p[1]) ** 0.5, "bleu_3": (p[0] * p[1] * p[2]) ** (1 / 3),
         "bleu_4": (p[0] * p[1] * p[2] * p[3]) ** 0.25},
        rel=1e-12,
    )
    assert full == pytest.approx(
        {"bleu_1": 3.59995e-05, "bleu_2": 3.28630e-05, "bleu_3": 2.95943e-05, "bleu_4": 2.61351e-05}, rel=1e-5
    )

    # fragment, c = 166,668 > 6 -> BP = 1.
    # 1-grams: cat + sat = 2 -> p1 = 2/166,668; 2-grams: cat sat = 1 -> p2 = 1/166,667
    # 3-grams: 0 matches -> smoothed 0.1/166,666; 4-grams: 0 -> smoothed 0.1/166,665
    # BLEU-1 = 2/166,668 = 1.19999e-05; BLEU-2 = (p1 p2)^(1/2) = 8.48524e-06
    # BLEU-3 = (p1 p2 0.1/166,666)^(1/3) = 3.50881e-06
    # BLEU-4 = (p1 p2 0.1/166,666 0.1/166,665)^(1/4) = 2.25636e-06
    c = 166_668
    p = [2 / c, 1 / (c - 1), 0.1 / (c - 2), 0.1 / (c - 3)]
    assert partial == pytest.approx(
        {"bleu_1": p[0], "bleu_2": (p[0] * p[1]) ** 0.5, "bleu_3": (p[0] * p[1] * p[2]) ** (1 / 3),
         "bleu_4": (p[0] * p[1] * p[2] * p[3]) ** 0.25},
        rel=1e-12,
    )
    assert partial == pytest.approx(
        {"bleu_1": 1.19999e-05, "bleu_2": 8.48524e-06, "bleu_3": 3.50881e-06, "bleu_4": 2.25636e-06}, rel=1e-5
    )

    # The same numbers, bit for bit, as NLTK's sentence_bleu on the same tokens.
    ours = evaluator()
    for answer, values in ((embedded, full), (fragment, partial)):
        tokens = ours.tokenize(answer)
        assert tokens == answer.split()  # plain words: one token each
        assert values == nltk_bleu(reference.split(), tokens)


# Pieces that exercise every NLTK tokenizer rule: quotes of all kinds, clitics and the
# MacIntyre contractions, ellipses, dashes, brackets, symbols, numbers, unicode and whitespace.
_PIECES = [
    "the", "The", "cat", "sat", "on", "mat", "a", "A", "and", "fox", "Café", "naïve", "日本語", "Привет",
    "don't", "Can't", "I'm", "we'll", "they're", "you've", "she'd", "it's", "O'Neil", "'tis", "'Twas",
    "cannot", "Gimme", "gonna", "gotta", "lemme", "wanna", "d'ye", "more'n", "whaddya",
    ",", ".", "...", "!", "?", ";", ":", "3:30", "1,000", "$3.88", "50%", "#tag", "@user", "a&b", "*",
    "(x)", "[y]", "{z}", "<w>", "--", "—", "–", '"quoted"', "''", "``", "`", "'single'",
    "«chevron»", "“curly”", "‘left’", "„low", "e.g.", "U.S.", "Mr.", "end.", "end.)", 'end."', "\n", "\t",
    "\u00a0", "x\u0301", "🙂",
]


def _random_text(rng, max_words: int) -> str:
    words = [rng.choice(_PIECES) for _ in range(rng.randint(0, max_words))]
    return "".join(w + rng.choice([" ", " ", " ", "", "  ", ". ", "\n"]) for w in words)


def test_fast_path_equals_nltk_word_tokenizer_and_sentence_bleu():
    import random

    rng = random.Random(2024)
    ours = evaluator()
    reference_tokenizer = NLTKWordTokenizer()
    pairs = [("", ""), ("", "a"), ("a", ""), ("Yes", "Yes"), ("Yes", "No"), ("a b", "a"), ("日本語", "日本語 。")]
    pairs += [(_random_text(rng, 30), _random_text(rng, 30)) for _ in range(150)]
    pairs += [(_random_text(rng, 12), _random_text(rng, 3)) for _ in range(50)]  # short answers
    smoothing = SmoothingFunction(epsilon=0.1).method1
    for expected, actual in pairs:
        for text in (expected, actual):
            for sentence in ours.ctx.split_sentences(text):
                assert treebank_words(sentence) == reference_tokenizer.tokenize(sentence), sentence
        ref, cand = ours.tokenize(expected), ours.tokenize(actual)
        got = ours.score_texts(expected, actual)
        if not ref or not cand:
            assert got == ZEROS
            continue
        # NLTK's auto_reweigh idea for every n: an answer of c < n tokens uses BLEU-c's weights.
        weights = [BLEU_WEIGHTS[min(n, len(cand)) - 1] for n in range(1, 5)]
        expected_scores = sentence_bleu([ref], cand, weights=weights, smoothing_function=smoothing)
        assert got == dict(zip(ZEROS, map(float, expected_scores))), (expected, actual)  # bit-identical
    scored = [r.values for r in ours.evaluate([row(e, a, case=f"tc{i}") for i, (e, a) in enumerate(pairs)])]
    assert scored == [ours.score_texts(e, a) for e, a in pairs]
    assert sum(v["bleu_4"] > 0 for v in scored) > 20  # the pairs are not all trivial zeros


def test_batched_matching_equals_nltk_on_many_random_pairs():
    """evaluate() matches a whole batch's n-grams at once (bleu_counts): every value equals NLTK's
    sentence_bleu on NLTK's tokens, for references shared by several rows of the batch, answers that
    repeat n-grams more often than the reference (clipping), answers shorter than 4 tokens (reweighted
    orders), no shared word, empty texts, and plain texts (the tokenizer's one-pass route)."""
    import random

    from nltk.tokenize.punkt import PunktSentenceTokenizer

    rng = random.Random(36)
    punkt, treebank = PunktSentenceTokenizer(), NLTKWordTokenizer()
    smoothing = SmoothingFunction(epsilon=0.1).method1
    small = ["the", "cat", "sat", "on", "mat", "a", "dog", "The", "ran", ",", "and", "it", "3.5", "U.S", "--"]

    def plain_text(words: int) -> str:
        return " ".join(rng.choice(small) for _ in range(words)) + rng.choice(["", ".", ". It ran.", ","])

    references = [plain_text(rng.randint(1, 25)) for _ in range(40)] + [_random_text(rng, 20) for _ in range(20)]
    references += ["", "the the the the", "a"]
    rows = []
    for i in range(900):
        reference = rng.choice(references)
        kind = rng.random()
        if kind < 0.1:
            answer = " ".join(["the"] * rng.randint(1, 8))  # repeats beyond the reference's count
        elif kind < 0.2:
            answer = " ".join(rng.choice(small) for _ in range(rng.randint(0, 3)))  # 0-3 tokens
        elif kind < 0.3:
            answer = _random_text(rng, 15)
        elif kind < 0.35:
            answer = "zebra quokka"  # no shared word
        else:
            answer = plain_text(rng.randint(1, 30))
        rows.append(row(reference, answer, model=f"m{i % 3}", case=f"tc{i // 3}"))
    ours = evaluator()
    got = [r.values for start in range(0, len(rows), 256) for r in ours.evaluate(rows[start:start + 256])]
    # Other batch sizes, a fresh evaluator (no cached tokens) and one row at a time give the same values.
    assert [r.values for r in evaluator().evaluate(rows)] == got
    assert [r.values for r in ours.evaluate(rows[:7])] == got[:7]
    assert [ours.evaluate([one])[0].values for one in rows[:50]] == got[:50]

    def tokens(text: str) -> list[str]:
        return [w for s in punkt.tokenize(text) if s.strip() for w in treebank.tokenize(s)]

    nonzero = 0
    for one, values in zip(rows, got):
        ref, cand = tokens(one.expected_output), tokens(one.actual_output)
        if not ref or not cand:
            assert values == ZEROS
            continue
        weights = [BLEU_WEIGHTS[min(n, len(cand)) - 1] for n in range(1, 5)]
        expected = sentence_bleu([ref], cand, weights=weights, smoothing_function=smoothing)
        assert values == dict(zip(ZEROS, map(float, expected))), (one.expected_output, one.actual_output)
        nonzero += values["bleu_4"] > 0
    assert nonzero > 300


def test_batched_matches_equal_counters_where_ids_are_renumbered_or_too_large(monkeypatch):
    """bleu_counts renumbers n-gram ids before they could leave int64, and counts with Counters where even
    that could not keep them in; every way gives each row's clipped matches, counted here with Counters.
    The limit is lowered so that a small batch takes each way."""
    import random
    from collections import Counter

    from sonar_plugins.summarization import bleu_counts

    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(3000)]
    references = [[rng.choice(vocabulary) for _ in range(rng.randint(0, 40))] for _ in range(30)]
    rows_refs = [references[i % 30] for i in range(120)]
    candidates = [r[: rng.randint(0, 40)] + [rng.choice(vocabulary) for _ in range(5)] + r[:3] for r in rows_refs]

    def by_counters(reference, candidate):
        out = []
        for n in range(1, 5):
            hyp = Counter(tuple(candidate[i:i + n]) for i in range(len(candidate) - n + 1))
            ref = Counter(tuple(reference[i:i + n]) for i in range(len(reference) - n + 1))
            out.append(sum(min(c, ref[g]) for g, c in hyp.items()))
        return out

    expected = [by_counters(r, c) for r, c in zip(rows_refs, candidates)]
    assert sum(m[3] for m in expected) > 20  # 4-grams do match
    assert bleu_counts.clipped_matches(rows_refs, candidates) == expected  # no renumbering needed
    renumbered = []
    real_unique = __import__("numpy").unique
    monkeypatch.setattr(bleu_counts, "_ID_LIMIT", 2 ** 40)  # rows x size^3 passes it: order 4 renumbers
    monkeypatch.setattr("numpy.unique", lambda *a, **k: renumbered.append(k) or real_unique(*a, **k))
    assert bleu_counts.clipped_matches(rows_refs, candidates) == expected
    assert any(k.get("return_inverse") for k in renumbered)
    monkeypatch.setattr(bleu_counts, "_ID_LIMIT", 2 ** 20)  # rows x tokens^2 passes it: Counters
    assert bleu_counts.clipped_matches(rows_refs, candidates) == expected
