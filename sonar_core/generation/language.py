"""Which language a text is in, offline: py3langid's bundled model (97 languages, no network).

:func:`detect` gives an ISO 639-1 code (``en``, ``de``...); a text too short to tell (fewer than
three letters' words) is ``und`` (undetermined). :func:`language_name` is the English name a
prompt uses ("Write the question in German").
"""

from __future__ import annotations

import re
import threading

__all__ = ["detect", "language_name", "UNDETERMINED"]

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


def language_name(code: str) -> str:
    """The English name of a language code (the code itself when unknown)."""
    return _NAMES.get(code, code)
