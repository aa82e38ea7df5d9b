"""``python -m sonar_core.cli``: the ``sonar`` command."""

from .app import main

if __name__ == "__main__":  # pragma: no cover (run as python -m; imported alone it does nothing)
    main()
