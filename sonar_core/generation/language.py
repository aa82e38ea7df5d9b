"""Which language a text is in, offline: py3langid's bundled model (97 languages, no network).

:func:`detect` gives an ISO 639-1 code (``en``, ``de``...); a text too short to tell (fewer than
three letters' words) is ``und`` (undetermined). :func:`detect_many` gives the same codes for many
texts at once (the document graph's thousands of chunks): py3langid walks its byte automaton one byte
at a time in Python, and :func:`detect_many` walks all texts' automata together, one numpy step per
byte position. :func:`language_name` is the English name a prompt uses ("Write the question in German").
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from typing import Sequence

__all__ = ["detect", "detect_many", "language_name", "UNDETERMINED"]

UNDETERMINED = "und"
_WORD = re.compile(r"[^\W\d_]{2,}")
_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "nl": "Dutch",
    "pt": "Portuguese", "pl": "Polish", "cs": "Czech", "sv": "Swedish", "da": "Danish", "no": "Norwegian",
    "fi": "Finnish", "ru": "Russian", "uk": "Ukrainian", "tr": "Turkish", "ja": "Japanese", "zh": "Chinese",
    "ko": "Korean", "ar": "Arabic", "el": "Greek", "hu": "Hungarian", "ro": "Romanian",
}
_LOCK = threading.Lock()
_IDENTIFIER = None


def _identifier():
    global _IDENTIFIER
    with _LOCK:
        if _IDENTIFIER is None:
            try:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier
            except ImportError:  # the generate extra brings py3langid
                from ..errors import ConfigError

                raise ConfigError("language detection needs py3langid (pip install 'sonar-eval[generate]')") from None
            _IDENTIFIER = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        return _IDENTIFIER


def detect(text: str) -> str:
    """The language code of ``text``, or ``und`` when it has fewer than three words."""
    if len(_WORD.findall(text)) < 3:
        return UNDETERMINED
    code, _ = _identifier().classify(text)
    return str(code)


def detect_many(texts: Sequence[str], block: int = 1024) -> list[str]:
    """:func:`detect` of each text, computed together (the same codes, see the module docstring).

    Falls back to :func:`detect` one text at a time when the installed py3langid does not keep its
    model where this function reads it (the automaton ``tk_nextmove``/``tk_row``/``tk_output`` and the
    naive Bayes tables ``nb_ptc``/``nb_pc``, as in py3langid 0.3 and 0.4).
    """
    import numpy as np

    identifier = _identifier()
    try:
        nextmove = np.asarray(identifier.tk_nextmove, dtype=np.int64)
        rowbase = np.asarray(identifier.tk_row, dtype=np.int64) << 8
        output = np.asarray(identifier.tk_output, dtype=np.int64)
        table, prior, classes = identifier.nb_ptc, identifier.nb_pc, identifier.nb_classes
        aliases = list(getattr(identifier, "_alias_pairs", []))
    except (AttributeError, TypeError, ValueError):
        return [detect(text) for text in texts]
    codes = [UNDETERMINED] * len(texts)
    wanted = [row for row, text in enumerate(texts) if len(_WORD.findall(text)) >= 3]
    encoded = {row: _bytes(texts[row]) for row in wanted}
    wanted.sort(key=lambda row: -len(encoded[row]))  # the longest first: active texts are a prefix
    for start in range(0, len(wanted), block):
        rows = wanted[start:start + block]
        lengths = np.array([len(encoded[row]) for row in rows])
        letters = np.zeros((len(rows), int(lengths[0]) if len(rows) else 0), dtype=np.int64)
        for number, row in enumerate(rows):
            letters[number, :lengths[number]] = np.frombuffer(encoded[row], dtype=np.uint8)
        states = np.zeros_like(letters)
        state = np.zeros(len(rows), dtype=np.int64)
        active = len(rows)
        for position in range(letters.shape[1]):
            while lengths[active - 1] <= position:
                active -= 1
            state[:active] = nextmove[rowbase[state[:active]] + letters[:active, position]]
            states[:active, position] = state[:active]
        features = output[states]
        for number, row in enumerate(rows):
            found = features[number, :lengths[number]]
            found = found[found >= 0]
            if not len(found):  # no feature: every language alike, py3langid then answers its first
                scores = np.zeros(len(classes), dtype=np.float32)
            else:
                # The features in order of first appearance with their counts, as py3langid's Counter
                # holds them, so the sums below run in its order and give its exact scores.
                unique, first, counts = np.unique(found, return_index=True, return_counts=True)
                order = np.argsort(first, kind="stable")
                scores = np.log1p(counts[order].astype(np.float32)) @ table[unique[order]] + prior
            codes[row] = _decide(scores, len(encoded[row]), classes, aliases)
    return codes


def _bytes(text: str) -> bytes:
    """The bytes py3langid classifies for ``text``."""
    if text.isupper():
        text = text.lower()
    return unicodedata.normalize("NFC", text).encode("utf8", errors="surrogatepass")


def _decide(scores, size: int, classes, aliases) -> str:
    """py3langid's decision with ``norm_probs``: scaled by the text's length, softmax, aliases folded."""
    import numpy as np

    scores *= 1.0 / math.sqrt(size or 1)
    np.exp(scores - scores.max(), out=scores)
    scores /= scores.sum()
    for first, twin in aliases:
        scores[first] += scores[twin]
        scores[twin] = 0.0
    return str(classes[int(scores.argmax())])


def language_name(code: str) -> str:
    """The English name of a language code (the code itself when unknown)."""
    return _NAMES.get(code, code)
