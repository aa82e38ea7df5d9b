"""Red teaming: attacks as data, techniques as composable transforms, expanded into a test suite.

Attack sets (:class:`AttackSet`, a JSON Lines or CSV file of :class:`Attack` rows) and techniques
(:class:`Technique`: wrappers, encodings, multi-turn attackers) register through the
``register_attack_sets`` and ``register_techniques`` hooks, Sonar's own first (:mod:`.builtin`).
:func:`expand_attacks` turns sets x technique chains into test suite rows carrying their provenance;
the detectors (evaluators in ``sonar_plugins.redteam``) score the answers and
:mod:`sonar_core.findings.redteam` concludes. docs/redteam.md is the guide.
"""

from .attacks import AUTO, CATEGORIES, CONTROL, Attack, AttackSet, compact, load_attack_file, make_secret
from .expand import Chain, Expansion, detector_category, expand_attacks, parse_chains, write_suite
from .registry import DIRECT, attack_sets, get_attack_set, get_technique, techniques
from .techniques import ENCODING, MULTI_TURN, WRAPPER, Technique

__all__ = ["AUTO", "CATEGORIES", "CONTROL", "DIRECT", "ENCODING", "MULTI_TURN", "WRAPPER", "Attack", "AttackSet",
           "Chain", "Expansion", "Technique", "attack_sets", "compact", "detector_category", "expand_attacks",
           "get_attack_set", "get_technique", "load_attack_file", "make_secret", "parse_chains", "techniques",
           "write_suite"]
