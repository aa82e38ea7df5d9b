"""word_tokens (NLTK's untrained-Punkt + Treebank word tokens without importing NLTK) against NLTK itself.

The module copies NLTK's regular expressions and folds untrained Punkt's empty tables into its
break decision; these tests hold it to NLTK: the copied tables equal NLTK's compiled objects, and
on a large seeded corpus of generated texts (words, punctuation, quotes of every kind, brackets,
clitics and contractions, initials and numbers before a period, URLs, unicode, every kind of
whitespace) the sentences and tokens equal NLTK's, list for list.
"""

from __future__ import annotations

import functools
import random
import sys

import regex

from nltk.tokenize import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktLanguageVars, PunktSentenceTokenizer, PunktToken

from sonar_plugins.summarization import word_tokens

# Pieces that exercise every Punkt and Treebank rule: quotes of all kinds, clitics and the
# MacIntyre contractions, initials and numbers before periods (Punkt's second pass), ellipses
# spaced and not, dashes, brackets, symbols, URLs, numbers, unicode and odd whitespace.
_WORDS = [
    "the", "The", "cat", "sat", "on", "mat", "a", "A", "and", "fox", "Café", "naïve", "日本語", "Привет", "İstanbul",
    "ǅemal", "ǆ", "ß", "Σ", "x\u0301", "🙂", "_", "__init__", "café_au_lait", "ok", "OK", "Mr", "Dr", "vs", "etc",
]
_PIECES = _WORDS + [
    "don't", "Can't", "I'm", "we'll", "they're", "you've", "she'd", "it's", "O'Neil", "'tis", "'Twas", "'TWAS",
    "cannot", "CANNOT", "Gimme", "gonna", "gotta", "lemme", "wanna", "wanna.", "d'ye", "more'n", "whaddya", "whatcha",
    "rock'n'roll", "'90s", "ol'", "goin'", "'em", "y'all", "n't", "'s", "'S", "'ll", "'LL", "'re", "'ve", "'d", "'m",
    ",", ".", "..", "...", "....", ". . .", ". .", "!", "?", "?!", "!!!", ";", ":", "3:30", "1,000", "1,", ",5", "$3.88",
    "50%", "#tag", "@user", "a&b", "*", "**bold**", "(x)", "[y]", "{z}", "<w>", "(", ")", "[", "]", "{", "}", "<", ">",
    "--", "---", "-", "-5", "—", "–", "‒", "―", '"quoted"', '"', "''", "``", "`", "'", "'single'", "«chevron»", "«", "»",
    "“curly”", "“", "”", "‘left’", "‘", "’", "„low", "e.g.", "i.e.", "U.S.", "U.S.A.", "Mr.", "Dr.", "etc.", "end.",
    "end.)", 'end."', "end.'", "end.”", "end.»", "end.]", "end.}", "end.>", "end.\"'", "end?)", "end!\"", "A.", "b.",
    "J.", "é.", "_.", "3.", "12.", "1.5.", "-3.", ",3.", "3.x.", "##number##.", "2024.", "No.", "no.", "p.m.",
    "https://example.com/a.b?c=d&e=f", "www.example.org.", "user@example.com.", "v1.2.3", "3.14", "a.b", "a..b",
    "a...b", "a.", ".a", ".", "?.", "!.", ".?", "x.\"", "(a.", "(A.)",
]
_SEPARATORS = [" "] * 12 + ["", "  ", "\n", "\n\n", " \n ", "\t", "\r\n", "\u00a0", "\u2003", "\u3000", "\x0b", "\x0c",
                            "\x1c", "\u2028", "\u0085", ". ", "? ", "! ", ".\n", ", ", " -- ", "\n \n"]


def _text(rng: random.Random, max_pieces: int) -> str:
    """A random text of up to ``max_pieces`` pieces, each followed by a random separator."""
    mode = rng.random()
    out = []
    for _ in range(rng.randint(0, max_pieces)):
        if mode < 0.35:  # mostly plain words: long sentences with the odd period, as answers are
            piece = rng.choice(_WORDS if rng.random() < 0.8 else _PIECES)
        else:
            piece = rng.choice(_PIECES)
        if rng.random() < 0.1:
            piece = piece.capitalize() if rng.random() < 0.5 else piece.upper()
        out.append(piece + rng.choice(_SEPARATORS))
    text = "".join(out)
    if rng.random() < 0.2:
        text = rng.choice(["", " ", "\n", "  \t"]) + text + rng.choice(["", " ", "\n", "  "])
    return text


def _corpus(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = ["", " ", "\n", ".", "..", "?", "a.", "A. B.", "3. the", "3. The", "J. Bach", "J. 5", "x. 日本",
             "Hello, world! Don't stop. It ends.", "(Sent1.) Sent2.", '"Stop." He said.', "Very bad acting!!! I promise."]
    texts += [_text(rng, 30) for _ in range(n)]
    return texts


def _nltk_words(treebank: NLTKWordTokenizer):
    """NLTK's Treebank tokens of a sentence, computed once per distinct sentence: the generated corpora
    repeat many short sentences (about a third of them; NLTK's answer for a sentence does not change),
    and NLTK's tokenizer is most of these tests' time."""
    return functools.cache(treebank.tokenize)


def _nltk_sentences(punkt: PunktSentenceTokenizer, text: str) -> list[str]:
    """EvaluationContext.split_sentences's rule: untrained Punkt, blank sentences dropped."""
    if not text or not text.strip():
        return []
    return [s for s in punkt.tokenize(text) if s.strip()]


def test_copied_tables_are_nltks_own():
    def same(ours, theirs):
        return (ours.pattern, ours.flags) == (theirs._rx.pattern, theirs._rx.flags)

    tokenizer = NLTKWordTokenizer
    pairs = [
        (word_tokens._STARTING_QUOTES, tokenizer.STARTING_QUOTES), (word_tokens._PUNCTUATION, tokenizer.PUNCTUATION),
        ((word_tokens._PARENS_BRACKETS,), (tokenizer.PARENS_BRACKETS,)),
        ((word_tokens._DOUBLE_DASHES,), (tokenizer.DOUBLE_DASHES,)), (word_tokens._ENDING_QUOTES, tokenizer.ENDING_QUOTES),
    ]
    for ours, theirs in pairs:
        assert len(ours) == len(theirs)
        for (pattern, replacement), (nltk_pattern, nltk_replacement) in zip(ours, theirs):
            assert same(pattern, nltk_pattern) and replacement == nltk_replacement, pattern.pattern
    assert [(p.pattern, p.flags) for p in (*word_tokens._CONTRACTIONS2, *word_tokens._CONTRACTIONS3)] == [
        (p.pattern, p.flags) for p in (*tokenizer.CONTRACTIONS2, *tokenizer.CONTRACTIONS3)
    ]
    # Every pattern but the whitespace one (see the next test) has its pre-check.
    unchecked = [sub for needs, _, sub, *_ in (*word_tokens._BEFORE_PADDING, *word_tokens._AFTER_PADDING) if needs is None]
    assert [sub.__self__.pattern for sub in unchecked] == [word_tokens._WHITESPACE]

    lang = PunktLanguageVars()
    # NLTK builds "?!" of its non-word class from a set: either order is the same class.
    for ours, theirs in ((word_tokens._PUNKT_WORD, lang._word_tokenizer_re()),
                         (word_tokens._PERIOD_CONTEXT, lang.period_context_re())):
        assert ours.flags == theirs._rx.flags
        assert ours.pattern in (theirs._rx.pattern, theirs._rx.pattern.replace(r"!\?", r"\?!"))
    assert same(word_tokens._BOUNDARY_REALIGNMENT, lang.re_boundary_realignment)
    assert same(word_tokens._RE_ELLIPSIS, PunktToken._RE_ELLIPSIS)
    assert same(word_tokens._RE_NUMERIC, PunktToken._RE_NUMERIC)
    assert same(word_tokens._RE_INITIAL, PunktToken._RE_INITIAL)
    assert word_tokens._SENT_END_CHARS == lang.sent_end_chars
    assert word_tokens._PUNKT_PUNCTUATION == PunktSentenceTokenizer.PUNCTUATION


def test_whitespace_step_can_be_left_to_str_split():
    # treebank_words skips the whitespace step when nothing after it can match, leaving it to
    # str.split(): equal tokens because every character regex's \s matches is str.isspace().
    whitespace = regex.compile(word_tokens._WHITESPACE)
    assert all(chr(c).isspace() for c in range(sys.maxunicode + 1) if whitespace.match(chr(c)))


def test_hand_checked_sentences_and_words():
    assert word_tokens.sentences("") == word_tokens.sentences("  \n ") == []
    assert word_tokens.sentences("Hello, world! Don't stop. It ends.") == ["Hello, world!", "Don't stop.", "It ends."]
    # An initial or a number before a lower-case word is no break (Punkt's second pass);
    # before a capitalised word an initial is no break either, a number is.
    assert word_tokens.sentences("Call J. Bach now. See 3. the end.") == ["Call J. Bach now.", "See 3. the end."]
    assert word_tokens.sentences("Item 3. Next one.") == ["Item 3.", "Next one."]
    # Closing brackets and quotes after a break stay with their sentence (realignment).
    assert word_tokens.sentences('(Sent1.) "Sent2." Sent3.') == ["(Sent1.)", '"Sent2."', "Sent3."]
    assert word_tokens.words("Hello, world! Don't stop. It ends.") == [
        "Hello", ",", "world", "!", "Do", "n't", "stop", ".", "It", "ends", ".",
    ]
    assert word_tokens.words('She said "gonna win" (e.g. today).') == [
        "She", "said", "``", "gon", "na", "win", "''", "(", "e.g", ".", "today", ")", ".",
    ]


def test_sentences_and_words_equal_nltk_on_a_large_generated_corpus():
    punkt, nltk_words = PunktSentenceTokenizer(), _nltk_words(NLTKWordTokenizer())
    corpus = _corpus(20_000, seed=0)
    breaks = 0
    checked = set()  # treebank_words is a pure function: a sentence seen again is checked once
    for text in corpus:
        expected = _nltk_sentences(punkt, text)
        assert word_tokens.sentences(text) == expected, text
        breaks += len(expected) > 1
        expected_words = []
        for sentence in expected:
            sentence_words = nltk_words(sentence)
            if sentence not in checked:
                assert word_tokens.treebank_words(sentence) == sentence_words, sentence
                checked.add(sentence)
            expected_words += sentence_words
        assert word_tokens.words(text) == expected_words, text
    assert breaks > len(corpus) // 3  # the corpus is not made of one-sentence texts


# Plain texts (ASCII letters and digits, spaces, commas, periods, hyphens) take word_tokens's
# one-pass route: sentence ends, initials and numbers before periods, ellipses, dashes, commas
# before digits and not, contractions (which leave that route) and leading/trailing spaces.
_PLAIN_PIECES = [
    "the", "The", "cat", "sat", "A", "a", "J", "Mr", "state-of-the-art", "x", "12", "2024", "1,000", "3.14", "e.g",
    "U.S", "cannot", "Gonna", "wanna", "-", "--", "---", "-5", "a-", ",", ",,", ".", "..", "...", "a.b", "a,b", ",5",
]
_PLAIN_SEPARATORS = [" "] * 8 + ["", "  ", ". ", ".  ", ", ", ",", ".", "..", ". . ", "-- ", ".,", ",."]


def test_plain_texts_equal_nltk():
    rng = random.Random(11)
    punkt, nltk_words = PunktSentenceTokenizer(), _nltk_words(NLTKWordTokenizer())
    plain = 0
    for _ in range(12_000):
        pieces = [rng.choice(_PLAIN_PIECES) + rng.choice(_PLAIN_SEPARATORS) for _ in range(rng.randint(1, 30))]
        text = rng.choice(["", " ", "  "]) + "".join(pieces) + rng.choice(["", "", " ", "  ", "."])
        plain += word_tokens._PLAIN.fullmatch(text) is not None and not word_tokens._ANY_CONTRACTION.search(text)
        expected = [w for s in _nltk_sentences(punkt, text) for w in nltk_words(s)]
        assert word_tokens.words(text) == expected, text
    assert plain > 3_000  # many took the one-pass route (the rest hold a contraction)


def test_treebank_words_equal_nltk_on_whole_texts():
    # Whole texts (several sentences, every kind of whitespace inside) as one "sentence" each:
    # the character pre-checks must never skip a substitution NLTK would make.
    treebank = NLTKWordTokenizer()
    for text in _corpus(4_000, seed=7):
        assert word_tokens.treebank_words(text) == treebank.tokenize(text), text
