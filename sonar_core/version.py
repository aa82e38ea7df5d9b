"""The Sonar version: one place, imported by the package and by whatever records it."""

__version__ = "0.1.0"
