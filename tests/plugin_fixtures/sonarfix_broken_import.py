"""A plugin that cannot be imported: its module raises at import time (a two-line message)."""

raise RuntimeError("sonarfix_broken_import is broken on purpose\nthis second line must not be shown")
