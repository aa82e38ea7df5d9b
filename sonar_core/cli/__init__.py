"""The ``sonar`` command line (``sonar = "sonar_core.cli:main"``): the ``cli`` group and the listing commands
in :mod:`.app`, ``sonar run`` in :mod:`.run` (its setting options made from ``RunConfig`` by :mod:`.settings`),
and one module per group of commands (:mod:`.models`, :mod:`.judges`, :mod:`.compare`, :mod:`.pack`,
:mod:`.benchmarks`, :mod:`.traces`, :mod:`.generate`, :mod:`.redteam`); :mod:`.common` holds what they share.
"""

from .app import cli, main

__all__ = ["cli", "main"]
