"""Shared by the plugin tests: the helper modules of this folder (``slow_regex``) are importable.

pytest's default (prepend) import mode already puts a conftest's folder on ``sys.path``;
doing it here explicitly keeps the helpers importable under ``--import-mode=importlib`` too.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
