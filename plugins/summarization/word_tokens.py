"""NLTK's word tokens of a text without importing NLTK: untrained Punkt sentences, Treebank words.

``words(text)`` returns, token for token, what BLEU used to get from NLTK itself::

    [token for sentence in PunktSentenceTokenizer().tokenize(text) if sentence.strip()
           for token in NLTKWordTokenizer().tokenize(sentence)]

Why not call NLTK: ``import nltk`` imports scipy.stats, scikit-learn and pandas (about 0.9 s,
longer than a 5,000-row BLEU run), and NLTK's generic machinery (Punkt's token objects and
generator chains, a wall-clock timer around every regular-expression call) costs several
times the matching itself.

How it stays identical: the regular expressions below are NLTK 3.9/3.10's own, copied verbatim
and compiled the way NLTK compiles them (the ``regex`` engine, same flags; the MacIntyre
contractions with ``re``), and the tests compare every table with NLTK's objects (an NLTK
upgrade that changes one fails there) and the tokens with NLTK's on a large generated corpus.
Punkt is untrained here (no data download): its abbreviation, collocation, sentence-starter
and orthographic tables are empty and stay empty, so its verdict on a candidate break depends
on the break's context string alone; ``_contains_sentbreak`` is that decision with the empty
tables folded in (commented step by step against ``PunktSentenceTokenizer``).
"""

from __future__ import annotations

import re
import string

import regex

__all__ = ["sentences", "treebank_words", "words"]

# ---------------------------------------------------------------------------------------------
# Punkt (nltk.tokenize.punkt.PunktLanguageVars with its defaults)
# ---------------------------------------------------------------------------------------------
_SENT_END_CHARS = (".", "?", "!")
_RE_SENT_END_CHARS = "[%s]" % re.escape("".join(_SENT_END_CHARS))
# Characters that cannot appear within words. NLTK builds the "?!" part from a set, so its
# order varies between processes; the class is the same either way (the tests compare it).
_RE_NON_WORD_CHARS = r"(?:[)\";}\]\*:@\'\({\[\u2018\u2019\u201c\u201d\xab\xbb%s])" % re.escape("?!")
_RE_WORD_START = r"[^\(\"\`{\[:;&\#\*@\)}\]\-,]"
_RE_MULTI_CHAR_PUNCT = r"(?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)"
_WORD_TOKENIZE_FMT = r"""(
        %(MultiChar)s
        |
        (?=%(WordStart)s)\S+?  # Accept word characters until end is found
        (?= # Sequences marking a word's end
            \s|                                 # White-space
            $|                                  # End-of-string
            %(NonWord)s|%(MultiChar)s|          # Punctuation
            ,(?=$|\s|%(NonWord)s|%(MultiChar)s) # Comma if at end of word
        )
        |
        \S
    )"""
_PERIOD_CONTEXT_FMT = r"""
        %(SentEndChars)s             # a potential sentence ending
        (?=(?P<after_tok>
            %(NonWord)s              # either other punctuation
            |
            \s+(?P<next_tok>\S+)     # or whitespace and some other token
        ))"""
_PUNKT_WORD = regex.compile(
    _WORD_TOKENIZE_FMT
    % {"NonWord": _RE_NON_WORD_CHARS, "MultiChar": _RE_MULTI_CHAR_PUNCT, "WordStart": _RE_WORD_START},
    re.UNICODE | re.VERBOSE,
)
_PERIOD_CONTEXT = regex.compile(
    _PERIOD_CONTEXT_FMT % {"NonWord": _RE_NON_WORD_CHARS, "SentEndChars": _RE_SENT_END_CHARS},
    re.UNICODE | re.VERBOSE,
)
_BOUNDARY_REALIGNMENT = regex.compile(r'["\')\]}\u2018\u2019\u201c\u201d\xab\xbb]+?(?:\s+|(?=--)|$)', re.MULTILINE)
# PunktToken's type patterns and PunktSentenceTokenizer.PUNCTUATION.
_RE_ELLIPSIS = regex.compile(r"\.\.+$")
_RE_NUMERIC = regex.compile(r"^-?[\.,]?\d[\d,\.-]*\.?$")
_RE_INITIAL = regex.compile(r"[^\W\d]\.$", re.UNICODE)
_PUNKT_PUNCTUATION = tuple(";:,.!?")

# Verdicts on candidate-break contexts; emptied when full (a few MB at most).
_VERDICT_CACHE_SIZE = 200_000
_verdicts: dict[str, bool] = {}


def _token_breaks(tok: str, next_tok: str) -> bool:
    """Whether Punkt, untrained, marks ``tok`` (followed by ``next_tok``) as a sentence break.

    First pass (``_first_pass_annotation``): ".", "?" and "!" break; a run of periods is an
    ellipsis; any other token ending in one period breaks (no abbreviation is known). Second
    pass (``_second_pass_annotation``) with empty tables: only a period-final initial or
    number can lose its break, when the orthographic heuristic of the next token says "not a
    sentence starter" (the next token is punctuation or starts lower case), or, for an
    initial, when that heuristic is "unknown" and the next token starts upper case. An
    ellipsis never gains a break (the heuristic never answers True without ortho counts).
    """
    if tok in _SENT_END_CHARS:
        return True  # "." itself is neither an initial nor a number: the second pass keeps it
    if _RE_ELLIPSIS.match(tok) or not tok.endswith(".") or tok.endswith(".."):
        return False
    is_initial = _RE_INITIAL.match(tok) is not None
    # type_no_period == "##number##" exactly when the whole lower-cased token is numeric.
    if is_initial or _RE_NUMERIC.sub("##number##", tok.lower()) in ("##number##", "##number##."):
        if next_tok in _PUNKT_PUNCTUATION or next_tok[0].islower():
            return False  # ortho heuristic: False
        if is_initial and next_tok[0].isupper():
            return False  # "unknown" + initial + capitalised next token
    return True


def _contains_sentbreak(context: str) -> bool:
    """``PunktSentenceTokenizer().text_contains_sentbreak(context)``: a break before the last token."""
    verdict = _verdicts.get(context)
    if verdict is None:
        tokens: list[str] = []
        for line in context.split("\n"):  # _tokenize_words: lines, blank ones skipped
            if line.strip():
                tokens += _PUNKT_WORD.findall(line)
        verdict = any(_token_breaks(tokens[i], tokens[i + 1]) for i in range(len(tokens) - 1))
        if len(_verdicts) >= _VERDICT_CACHE_SIZE:
            _verdicts.clear()
        _verdicts[context] = verdict
    return verdict


def _break_matches(text: str) -> list:
    """The candidate-break matches of ``text`` whose context holds a break (Punkt's
    ``_match_potential_end_contexts`` filtered by ``text_contains_sentbreak``), in order."""
    found = []
    previous_start = previous_stop = 0
    # The characters PunktSentenceTokenizer._get_last_whitespace_index looks for are ASCII's
    # six; most texts hold only the space among them.
    other_whitespace = any(c in text for c in string.whitespace[1:])
    previous_match = None
    for match in _PERIOD_CONTEXT.finditer(text):
        start = match.start()
        # The word before the match: after the last ASCII whitespace since the previous word
        # (index 0 of that stretch counts as "none", as in NLTK), else the previous word's start.
        if other_whitespace:
            last = max(text.rfind(c, previous_stop, start) for c in string.whitespace)
        else:
            last = text.rfind(" ", previous_stop, start)
        index = last - previous_stop if last >= 0 else 0
        word_start = index + previous_stop + 1 if index else previous_start
        if previous_match is not None and previous_stop <= word_start:
            if _breaks_after(text[previous_start:previous_stop], previous_match):
                found.append(previous_match)
        previous_match, previous_start, previous_stop = match, word_start, start
    if previous_match is not None and _breaks_after(text[previous_start:previous_stop], previous_match):
        found.append(previous_match)
    return found


def _breaks_after(word: str, match) -> bool:
    """Punkt's verdict on the candidate ``match`` after ``word``: whether its context breaks."""
    if len(word) > 1 and word.isalpha():
        # The commonest case, decided without the context: Punkt's first token is then
        # word + the sentence-end character, a break (a "." after a word of two or more letters
        # is neither an initial nor a number; "?" and "!" always are), and the context holds
        # another token (the punctuation or the next word of after_tok) after it.
        return True
    return _contains_sentbreak(word + match.group() + match.group("after_tok"))


def sentences(text: str) -> list[str]:
    """Untrained Punkt's sentences of ``text`` (``PunktSentenceTokenizer().tokenize``), blank ones
    dropped: what ``EvaluationContext.split_sentences`` returns."""
    if not text or not text.strip():
        return []
    # _slices_from_text
    slices = []
    last_break = 0
    for match in _break_matches(text):
        slices.append((last_break, match.end()))
        last_break = match.start("next_tok") if match.group("next_tok") else match.end()
    slices.append((last_break, len(text.rstrip())))
    # _realign_boundaries: closing quotes and brackets after a break join the sentence before it
    spans = []
    realign = 0
    for i, (start, stop) in enumerate(slices):
        start += realign
        if i + 1 == len(slices):
            if start < stop:
                spans.append((start, stop))
            break
        next_start, next_stop = slices[i + 1]
        m = _BOUNDARY_REALIGNMENT.match(text[next_start:next_stop])
        if m:
            spans.append((start, next_start + len(m.group(0).rstrip())))
            realign = m.end()
        else:
            realign = 0
            if start < stop:
                spans.append((start, stop))
    return [s for s in (text[a:b] for a, b in spans) if s.strip()]


# ---------------------------------------------------------------------------------------------
# Treebank words (nltk.tokenize.destructive.NLTKWordTokenizer, convert_parentheses=False)
# ---------------------------------------------------------------------------------------------
_STARTING_QUOTES = (
    (regex.compile("([«“‘„]|[`]+)", re.U), r" \1 "),
    (regex.compile(r"^\""), r"``"),
    (regex.compile(r"(``)"), r" \1 "),
    (regex.compile(r"([ \(\[{<])(\"|\'{2})"), r"\1 `` "),
    (regex.compile(r"(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)", re.U), r"\1 "),
)
_PUNCTUATION = (
    (regex.compile(r'([^\.])(\.)([\]\)}>"\'' "»”’ " r"]*+)\s*$", re.U), r"\1 \2 \3 "),
    (regex.compile(r"([:,])([^\d])"), r" \1 \2"),
    (regex.compile(r"([:,])$"), r" \1 "),
    (regex.compile(r"\.{2,}", re.U), r" \g<0> "),
    (regex.compile(r"[;@#$%&]"), r" \g<0> "),
    (regex.compile(r"[\u2012-\u2015]", re.UNICODE), r" \g<0> "),
    (regex.compile(r'([^\.])(\.)([\]\)}>"\']*)\s*$'), r"\1 \2\3 "),
    (regex.compile(r"[?!]"), r" \g<0> "),
    (regex.compile(r"([^'])' "), r"\1 ' "),
    (regex.compile(r"[*]", re.U), r" \g<0> "),
)
_PARENS_BRACKETS = (regex.compile(r"[\]\[\(\)\{\}\<\>]"), r" \g<0> ")
_DOUBLE_DASHES = (regex.compile(r"--"), r" -- ")
_ENDING_QUOTES = (
    (regex.compile("([»”’])", re.U), r" \1 "),
    (regex.compile(r"''"), " '' "),
    (regex.compile(r'"'), " '' "),
    (regex.compile(r"\s+"), " "),
    (regex.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 "),
    (regex.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
)
_CONTRACTIONS2 = tuple(map(re.compile, (
    r"(?i)\b(can)(?#X)(not)\b",
    r"(?i)\b(d)(?#X)('ye)\b",
    r"(?i)\b(gim)(?#X)(me)\b",
    r"(?i)\b(gon)(?#X)(na)\b",
    r"(?i)\b(got)(?#X)(ta)\b",
    r"(?i)\b(lem)(?#X)(me)\b",
    r"(?i)\b(more)(?#X)('n)\b",
    r"(?i)\b(wan)(?#X)(na)(?=\s)",
)))
_CONTRACTIONS3 = tuple(map(re.compile, (r"(?i) ('t)(?#X)(is)\b", r"(?i) ('t)(?#X)(was)\b")))

# What a pattern cannot match without (by pattern source): a character of the first string,
# and, where given, the second string itself (e.g. "\\.{2,}" needs ".."). Most sentences hold
# none of these, so most substitutions are skipped. A pattern missing here always runs.
_NEEDS = {
    "([«“‘„]|[`]+)": ("«“‘„`", None), r"^\"": ('"', None), "(``)": ("`", "``"),
    r"([ \(\[{<])(\"|\'{2})": ("\"'", None), r"(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)": ("'", None),
    r'([^\.])(\.)([\]\)}>"\'' "»”’ " r"]*+)\s*$": (".", None), r"([:,])([^\d])": (":,", None),
    r"([:,])$": (":,", None), r"\.{2,}": (".", ".."), r"[;@#$%&]": (";@#$%&", None),
    r"[\u2012-\u2015]": ("\u2012\u2013\u2014\u2015", None), r'([^\.])(\.)([\]\)}>"\']*)\s*$': (".", None),
    r"[?!]": ("?!", None), r"([^'])' ": ("'", None), r"[*]": ("*", None), r"[\]\[\(\)\{\}\<\>]": ("[](){}<>", None),
    r"--": ("-", "--"), "([»”’])": ("»”’", None), r"''": ("'", "''"), r'"': ('"', None),
    r"([^' ])('[sS]|'[mM]|'[dD]|') ": ("'", None), r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ": ("'", None),
}
# The whitespace step of ENDING_QUOTES: it only matters to the clitic patterns after it (they
# need "'") and to the contractions; otherwise the final str.split() gives the same tokens,
# since every character regex's \s matches is one str.split() splits on (the tests check).
_WHITESPACE = r"\s+"


def _steps(pairs) -> tuple[tuple[frozenset[str] | None, str | None, object, str, frozenset[str]], ...]:
    steps = []
    for pattern, replacement in pairs:
        chars, substring = _NEEDS.get(pattern.pattern, (None, None))
        # A substitution can only bring in characters of its replacement text (e.g. '"' -> "''").
        steps.append((frozenset(chars) if chars else None, substring, pattern.sub, replacement, frozenset(replacement)))
    return tuple(steps)


_BEFORE_PADDING = _steps((*_STARTING_QUOTES, *_PUNCTUATION, _PARENS_BRACKETS, _DOUBLE_DASHES))
_AFTER_PADDING = _steps(_ENDING_QUOTES)
_CONTRACTION_SUBS = tuple(p.sub for p in (*_CONTRACTIONS2, *_CONTRACTIONS3))
# Every contraction pattern's match contains its groups' letters verbatim (same engine, same
# case-insensitivity), so when this finds nothing none of the ten can match.
_CONTRACTION_WORDS = ("cannot", "d'ye", "gimme", "gonna", "gotta", "lemme", "more'n", "wanna", "'tis", "'twas")
_ANY_CONTRACTION = re.compile("(?i)" + "|".join(_CONTRACTION_WORDS))


def treebank_words(sentence: str) -> list[str]:
    """``NLTKWordTokenizer().tokenize(sentence)``, token for token."""
    chars = set(sentence)  # a superset of the sentence's characters at every step
    for needs, substring, sub, replacement, adds in _BEFORE_PADDING:
        if (needs is None or not needs.isdisjoint(chars)) and (substring is None or substring in sentence):
            sentence = sub(replacement, sentence)
            chars |= adds
    sentence = " " + sentence + " "
    for needs, substring, sub, replacement, adds in _AFTER_PADDING:
        if needs is None:  # the whitespace step
            if "'" not in sentence and not _ANY_CONTRACTION.search(sentence):
                return sentence.split()  # nothing after it can match: see _WHITESPACE
            sentence = sub(replacement, sentence)
        elif not needs.isdisjoint(chars) and (substring is None or substring in sentence):
            sentence = sub(replacement, sentence)
            chars |= adds
    if _ANY_CONTRACTION.search(sentence):
        for sub in _CONTRACTION_SUBS:
            sentence = sub(r" \1 \2 ", sentence)
    return sentence.split()


# Plain text: ASCII letters and digits, spaces, commas, periods and hyphens (most answers of a
# summarisation dataset). On it only four Treebank rules can act, and all of them either end a
# sentence or stay within a stretch without whitespace, so the whole text is done at once.
_PLAIN = re.compile(r"[A-Za-z0-9 ,.\-]*")
(_COMMA, _COMMA_TO), (_FINAL_COMMA, _FINAL_COMMA_TO), (_ELLIPSIS, _ELLIPSIS_TO) = _PUNCTUATION[1:4]
# _COMMA's " \1 \2" re-emits the character after the comma: unless a comma follows a comma (the first
# one's match then takes the second), padding each comma before a non-digit is the same, and a
# literal replacement spares ``re`` a template expansion per match.
_PLAIN_COMMA = re.compile(r",(?=\D)")
# _PERIOD_CONTEXT on plain text: no "?", "!" or non-word character occurs, and the only whitespace is
# the space, so a candidate break is a period followed by spaces and a token.
_PLAIN_PERIOD_CONTEXT = re.compile(r"\.(?=(?P<after_tok> +(?P<next_tok>\S+)))")


def _plain_break_ends(text: str) -> list[int]:
    """``[m.start() for m in _break_matches(text)]`` for a plain text (only spaces as whitespace)."""
    found = []
    previous_start = previous_stop = 0
    previous_match = None
    for match in _PLAIN_PERIOD_CONTEXT.finditer(text):
        start = match.start()
        last = text.rfind(" ", previous_stop, start)
        index = last - previous_stop if last >= 0 else 0
        word_start = index + previous_stop + 1 if index else previous_start
        if previous_match is not None and previous_stop <= word_start:
            word = text[previous_start:previous_stop]
            # _breaks_after's commonest case first, without the call.
            if (len(word) > 1 and word.isalpha()) or _breaks_after(word, previous_match):
                found.append(previous_stop)
        previous_match, previous_start, previous_stop = match, word_start, start
    if previous_match is not None and _breaks_after(text[previous_start:previous_stop], previous_match):
        found.append(previous_stop)
    return found


def _plain_words(text: str) -> list[str]:
    """``words(text)`` for a plain text without contraction (see _PLAIN), in a few passes.

    Per sentence NLTK pads the final period (when not after another period: PUNCTUATION[0];
    the later final-period rule then only moves spaces), a comma before a non-digit and a
    final comma, runs of periods and double dashes; no other rule has a character to match
    and the whitespace rule only moves spaces. Sentences end in their breaking period, are
    separated by spaces, and none of these matches can span a space, so one pass over the
    text, after padding each sentence's final period, gives the same tokens.
    """
    text = text.rstrip()  # the last sentence ends there
    ends = _plain_break_ends(text)
    if text.endswith("."):
        ends.append(len(text) - 1)
    pieces, last = [], 0
    for end in ends:
        if end == 0 or text[end - 1] != ".":
            pieces += (text[last:end], " . ")
            last = end + 1
    pieces.append(text[last:])
    text = "".join(pieces)
    if "," in text:
        if ",," in text:
            text = _FINAL_COMMA.sub(_FINAL_COMMA_TO, _COMMA.sub(_COMMA_TO, text))
        else:
            text = _PLAIN_COMMA.sub(" , ", text)
            if text.endswith(","):  # _FINAL_COMMA: a comma ending the text (no newline in plain text)
                text = text[:-1] + " , "
    if ".." in text:
        text = _ELLIPSIS.sub(_ELLIPSIS_TO, text)
    if "--" in text:
        text = _DOUBLE_DASHES[0].sub(_DOUBLE_DASHES[1], text)
    return text.split()


def words(text: str) -> list[str]:
    """Treebank words of each untrained-Punkt sentence of ``text``, in order."""
    if _PLAIN.fullmatch(text):
        # ASCII text: _ANY_CONTRACTION's case-insensitive match is a substring of the lower case.
        lowered = text.lower()
        if not any(map(lowered.__contains__, _CONTRACTION_WORDS)):
            return _plain_words(text)
    return [token for sentence in sentences(text) for token in treebank_words(sentence)]
