"""Sonar's own attack set and techniques: a plugin the plugin manager registers before any other (see
:data:`sonar_core.plugins.BUILT_IN_PLUGINS`), through the hooks like a plugin's."""

from __future__ import annotations

from pathlib import Path

from ..hookspecs import hookimpl

#: The name this module is registered under with the plugin manager.
PLUGIN_NAME = "sonar.redteam"
#: The bundled corpus (docs/redteam.md): Sonar's own wording, versioned in its header line.
CORPUS = Path(__file__).parent / "data" / "sonar_attacks.jsonl"


@hookimpl
def register_attack_sets(register):
    register(CORPUS)


@hookimpl
def register_techniques(register):
    from .techniques import Crescendo, Hypothetical, Iterative, PayloadSplitting, RefusalSuppression, Roleplay
    from .techniques import encoding_technique

    register("roleplay", Roleplay)
    register("hypothetical", Hypothetical)
    register("payload_splitting", PayloadSplitting)
    register("refusal_suppression", RefusalSuppression)
    for name in ("base64", "rot13", "leetspeak", "homoglyphs"):
        register(name, encoding_technique(name))
    register("crescendo", Crescendo)
    register("iterative", Iterative)
