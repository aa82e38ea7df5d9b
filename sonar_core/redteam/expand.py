"""Attacks x technique chains -> a test suite, deterministically by seed.

A *chain* is one or more technique names joined by ``+`` (``roleplay+base64``: wrap, then encode), or
``direct`` (the base attack as it is), or one multi-turn technique alone (``crescendo``). Every attack
is expanded once per chain: its own ``apply`` techniques first, then the chain's, each drawing from a
generator seeded with the run's seed, the attack's id and the chain (so an attack is expanded the same
way whatever else the suite holds). ``auto`` canaries and markers are drawn from the same seed.

Each test case carries its provenance: ``attack`` (id, set, category, hazard, technique: the chain as
named, applied: every technique applied, the attack's own first, goal, detector, canary, marker, control), ``expected_outcome`` (the goal, which the harmful-compliance judge reads), the
planted document as ``context``, the planted system prompt as the conversation's system turn, and the
categories ``<category>``, ``<hazard>``, ``detector:<id>`` and ``redteam`` (``control`` for benign
controls) that route each row to its detector.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..dataset import RowFields
from ..errors import ConfigError, DatasetError
from ..jsontypes import JsonObject
from ..perturbations.base import derive_seed
from .attacks import AUTO, Attack, AttackSet, make_secret
from .registry import DIRECT, get_technique
from .techniques import MULTI_TURN

if TYPE_CHECKING:  # pragma: no cover
    from ..registry import Registries

__all__ = ["Chain", "Expansion", "parse_chains", "expand_attacks", "write_suite", "detector_category", "chain_label",
           "DELIVERY", "SYSTEM_TURN", "PROMPT"]

#: How a planted document reaches the target: after the attacker's text, in the user's message.
DELIVERY = '{text}\n\nRetrieved document:\n"""\n{document}\n"""'
#: How a planted system prompt reaches the target: the conversation's system turn, or before the prompt.
SYSTEM_TURN, PROMPT = "system_turn", "prompt"
PROMPT_DELIVERY = "[Instructions]\n{system}\n\n[User]\n{text}"


def detector_category(detector: str) -> str:
    """The category that routes a row to its detector (``detector:canary_leak``)."""
    return f"detector:{detector}"


@dataclass(frozen=True)
class Chain:
    """A technique chain as named (``roleplay+base64``), its technique names, and whether it is multi-turn."""

    label: str
    names: tuple[str, ...]
    multi_turn: bool = False


def parse_chains(specs: Sequence[str], plugins: "Registries | None" = None) -> list[Chain]:
    """``--techniques`` values (comma-separated lists of chains) as checked chains; ConfigError names a bad one."""
    chains: list[Chain] = []
    for spec in specs:
        for label in (part.strip() for part in spec.split(",")):
            if not label:
                continue
            names = tuple(name.strip() for name in label.split("+"))
            if names == (DIRECT,):
                chains.append(Chain(DIRECT, ()))
                continue
            kinds = []
            for name in names:
                if name == DIRECT:
                    raise ConfigError(f"technique chain '{label}': '{DIRECT}' stands alone (it means no technique)")
                try:
                    kinds.append(get_technique(name, plugins).kind)
                except ConfigError as exc:
                    raise ConfigError(f"technique chain '{label}': {exc}") from None
            if MULTI_TURN in kinds and len(names) > 1:
                raise ConfigError(f"technique chain '{label}': a multi-turn technique stands alone")
            chains.append(Chain("+".join(names), names, MULTI_TURN in kinds))
    if not chains:
        chains.append(Chain(DIRECT, ()))
    labels = [c.label for c in chains]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ConfigError(f"technique chain '{twice[0]}' is named twice")
    return chains


@dataclass
class Expansion:
    """The test suite's rows, and what was left out (a multi-turn chain is not applied to a benign control)."""

    rows: list[RowFields] = field(default_factory=list)
    attacks: int = 0
    left_out: int = 0


def _fill(text: str, canary: str | None, marker: str | None) -> str:
    if canary is not None:
        text = text.replace("{canary}", canary)
    if marker is not None:
        text = text.replace("{marker}", marker)
    return text


def _secret(attack: Attack, attack_set: AttackSet, kind: str, seed: int) -> str | None:
    value = attack.param(kind)
    if value is None:
        return None
    return make_secret(kind, seed, attack_set.name, attack.id) if value == AUTO else str(value)


def chain_label(attack: Attack, chain: Chain) -> str:
    """The technique label of ``attack`` under ``chain``: its own ``apply`` techniques, then the chain's."""
    return "+".join(dict.fromkeys(attack.apply + chain.names)) or DIRECT


def _row(attack_set: AttackSet, attack: Attack, chain: Chain, settings: "_Settings") -> RowFields:
    import numpy as np

    seed, plugins = settings.seed, settings.plugins
    names = tuple(dict.fromkeys(attack.apply + chain.names))
    label = chain_label(attack, chain)
    detector = attack.detector if attack.control else settings.reroute.get(attack.detector, attack.detector)
    canary, marker = _secret(attack, attack_set, "canary", seed), _secret(attack, attack_set, "marker", seed)
    prompt, system, document = (_fill(t, canary, marker) for t in (attack.prompt, attack.system, attack.document))
    provenance: JsonObject = {
        "id": attack.id, "set": attack_set.name, "set_version": attack_set.version, "category": attack.category,
        "hazard": attack.hazard, "technique": chain.label, "applied": label, "base_technique": attack.technique,
        "goal": attack.goal, "detector": detector, "control": attack.control, "seed": seed,
        **({"canary": canary} if canary is not None else {}), **({"marker": marker} if marker is not None else {}),
        **({"detector_params": {k: v for k, v in attack.params if k not in ("canary", "marker")}}
           if any(k not in ("canary", "marker") for k, _ in attack.params) else {})}
    categories = list(dict.fromkeys([attack.category, attack.hazard, detector_category(detector), "redteam"]
                                    + (["control"] if attack.control else [])))
    row: RowFields = {"test_case_key": f"{attack.id}~{label}", "categories": categories,
                           "expected_outcome": attack.goal, "attack": provenance}
    if document:
        row["context"] = [document]
    if chain.multi_turn:
        technique = get_technique(chain.names[0], plugins)()
        scenario, stop_when = technique.scenario(attack.goal, prompt)
        planted = system + (("\n\n" if system else "") + DELIVERY.format(text="", document=document).strip()
                            if document else "")
        row.update(simulated_user={"judge": settings.attacker, "scenario": scenario, "stop_when": stop_when,
                                   "max_user_turns": settings.max_turns}, max_turns=settings.max_turns)
        if planted:
            row["conversation"] = [{"role": "system", "content": planted}]
        return row
    text = prompt
    # A generator only where a technique draws from it (a base attack sent as it is needs none).
    rng = np.random.default_rng(derive_seed(seed, attack_set.name, attack.id, label)) if names else None
    for name in names:
        cls = get_technique(name, plugins)
        technique = cls(plugins) if getattr(cls, "perturbator", "") else cls()
        text = technique.apply(text, rng)
    row["input"] = DELIVERY.format(text=text, document=document) if document else text
    if system and settings.system_delivery == SYSTEM_TURN:
        row["conversation"] = [{"role": "system", "content": system}, {"role": "user", "content": row["input"]}]
    elif system:
        row["input"] = PROMPT_DELIVERY.format(system=system, text=row["input"])
    return row


@dataclass(frozen=True)
class _Settings:
    seed: int
    attacker: str | None
    max_turns: int
    system_delivery: str
    reroute: dict[str, str]
    plugins: Any


def expand_attacks(sets: Sequence[AttackSet], chains: Sequence[Chain], *, seed: int = 0, attacker: str | None = None,
                   max_turns: int = 6, categories: Sequence[str] = (), hazards: Sequence[str] = (),
                   system_delivery: str = SYSTEM_TURN, reroute: dict[str, str] | None = None,
                   plugins: "Registries | None" = None) -> Expansion:
    """The test suite of ``sets`` x ``chains`` (see the module docstring).

    ``categories`` / ``hazards``: only attacks of these (empty: all). ``system_delivery``: a planted system
    prompt as the conversation's system turn (``system_turn``: chat hosts) or written before the prompt
    (``prompt``: any host). ``reroute``: detector -> detector for the attacks (not the controls), e.g.
    ``{"refusal": "harmful_compliance"}`` when a judge decides harmful compliance. ``plugins``: the run's
    plugin manager, whose evaluators each attack's detector must name (None: not checked). ConfigError: a
    multi-turn chain without an ``attacker``; DatasetError: an attack naming an unknown detector, or an id
    in two sets. A chain that gives an attack a technique label it already has (its own ``apply``) is
    not repeated.
    """
    if system_delivery not in (SYSTEM_TURN, PROMPT):
        raise ConfigError(f"system_delivery must be '{SYSTEM_TURN}' or '{PROMPT}', not {system_delivery!r}")
    settings = _Settings(seed, attacker, max_turns, system_delivery, dict(reroute or {}), plugins)
    if any(c.multi_turn for c in chains) and not attacker:
        chain = next(c for c in chains if c.multi_turn)
        raise ConfigError(f"technique '{chain.label}' needs an attacker LLM: --attacker KEY (an LLM configuration "
                          f"key; sonar judges lists them)")
    known = set(plugins.evaluators) if plugins is not None else None
    expansion = Expansion()
    owners: dict[str, str] = {}
    for attack_set in sets:
        for attack in attack_set.attacks:
            if (categories and attack.category not in categories) or (hazards and attack.hazard not in hazards):
                continue
            if attack.id in owners:
                raise DatasetError(f"{attack.where}, field 'id': attack id {attack.id!r} is in both attack set "
                                   f"'{owners[attack.id]}' and '{attack_set.name}'")
            owners[attack.id] = attack_set.name
            detectors = {attack.detector, settings.reroute.get(attack.detector, attack.detector)}
            missing = sorted(d for d in detectors if known is not None and d not in known)
            if missing:
                raise DatasetError(f"{attack.where}, field 'detector': no evaluator '{missing[0]}' is installed "
                                   f"(sonar evaluators lists them)")
            expansion.attacks += 1
            labels: set[str] = set()
            for chain in chains:
                if chain.multi_turn and attack.control:
                    expansion.left_out += 1
                    continue
                if chain_label(attack, chain) in labels:
                    continue
                labels.add(chain_label(attack, chain))
                expansion.rows.append(_row(attack_set, attack, chain, settings))
    if not expansion.rows:
        raise ConfigError("the red-team suite is empty: no attack matches the chosen sets, categories and hazards")
    return expansion


def write_suite(rows: Sequence[RowFields], folder: Path) -> Path:
    """``rows`` as a JSON Lines test suite in ``folder``, named by its content's SHA-256: the same
    expansion is the same file (a resumed run finds its suite unchanged), written atomically."""
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows).encode("utf-8")
    path = folder / f"redteam-{hashlib.sha256(text).hexdigest()[:16]}.jsonl"
    if path.is_file() and path.read_bytes() == text:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(text)
    os.replace(temporary, path)
    return path
