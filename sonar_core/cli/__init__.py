"""The ``sonar`` command line (``sonar = "sonar_core.cli:main"``): the ``cli`` group and the commands of
:mod:`.app` (run, evaluators, describe, plugins, perturbators, hosts, catalogue), and one module per
group of commands (:mod:`.models`, :mod:`.judges`, :mod:`.compare`, :mod:`.pack`, :mod:`.benchmarks`,
:mod:`.traces`, :mod:`.generate`, :mod:`.redteam`); :mod:`.common` holds what they share.
"""

from .app import cli, main

__all__ = ["cli", "main"]
