"""Sonar's built-in evaluator plugins, one package per family.

Each family registers through the ``sonar.plugins`` entry-point group, exactly like a
third-party plugin package.
"""
