"""``sonar view``: a local, read-only viewer of result folders (docs/view.md)."""
