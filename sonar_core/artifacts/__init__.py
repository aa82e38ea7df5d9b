"""Writers of the result directory artifacts."""
