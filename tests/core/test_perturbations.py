"""Perturbators: fmeval's outputs for the same seed, determinism, each one's documented effect,
the registry hook, and ``perturb:`` expansion of a test suite."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sonar_core.contract import ParameterError
from sonar_core.dataset import Row
from sonar_core.errors import ConfigError
from sonar_core.perturbations import (available, derive_seed, expand_perturbations, make_perturbator, perturb,
                                      perturb_many, perturbators)
from sonar_core.perturbations.fmeval_perturbators import BUTTER_FINGER_KEYS
from sonar_core.plugins import PluginManager

FMEVAL_CASES = json.loads((Path(__file__).parent.parent / "data" / "fmeval_1.2.3_perturbations.json")
                          .read_text(encoding="utf-8"))["cases"]
BUILT_IN_PERTURBATORS = ["base16", "base64", "butter_finger", "char_delete", "char_insert", "char_swap",
                         "homoglyphs", "leetspeak", "qwerty_typos", "random_upper_case", "rot13",
                         "whitespace_add_remove", "word_swap"]
LONG = "The quick brown fox jumps over the lazy dog while seven wizards quietly judge the boxing match."


def test_the_built_in_perturbators_are_registered():
    assert available() == BUILT_IN_PERTURBATORS


@pytest.mark.parametrize("case", FMEVAL_CASES, ids=lambda c: f"{c['perturbator']}-{c['seed']}-{c['params']}")
def test_fmeval_perturbators_give_fmevals_outputs(case):
    # The expected strings are fmeval 1.2.3's own outputs (see the data file's "source").
    got = perturb_many(case["text"], case["perturbator"], case["seed"], case["num_perturbations"], **case["params"])
    assert got == case["outputs"]
    assert perturb(case["text"], case["perturbator"], case["seed"], **case["params"]) == case["outputs"][0]


def test_fmeval_perturbators_equal_fmeval_where_it_is_installed():
    semantic = pytest.importorskip("fmeval.transforms.semantic_perturbations")
    keys = ["a", "b", "c", "d"]
    for seed in (0, 5, 11):
        assert perturb_many(LONG, "butter_finger", seed, 4, perturbation_prob=0.2) == \
            semantic.ButterFinger("x", keys, 4, seed, perturbation_prob=0.2).perturb(LONG)
        assert perturb_many(LONG, "random_upper_case", seed, 4) == \
            semantic.RandomUppercase("x", keys, 4, seed).perturb(LONG)
        assert perturb_many(LONG, "whitespace_add_remove", seed, 4) == \
            semantic.AddRemoveWhitespace("x", keys, 4, seed).perturb(LONG)


def test_fmeval_defaults():
    assert make_perturbator("butter_finger").params == {"perturbation_prob": 0.1}
    assert make_perturbator("random_upper_case").params == {"uppercase_fraction": 0.1}
    assert make_perturbator("whitespace_add_remove").params == {"add_prob": 0.05, "remove_prob": 0.1}


@pytest.mark.parametrize("name", BUILT_IN_PERTURBATORS)
def test_every_perturbator_is_deterministic_under_a_seed(name):
    assert perturb(LONG, name, 3) == perturb(LONG, name, 3)
    assert perturb_many(LONG, name, 3, 4) == perturb_many(LONG, name, 3, 4)
    outputs = {perturb(LONG, name, seed) for seed in range(6)}
    if make_perturbator(name).random:
        assert len(outputs) > 1, "different seeds should give different texts"
    else:
        assert len(outputs) == 1


def test_butter_finger_effect():
    assert perturb(LONG, "butter_finger", 1, perturbation_prob=0.0) == LONG
    text = "Quick, Brown 42!"
    out = perturb(text, "butter_finger", 1, perturbation_prob=1.0)
    assert len(out) == len(text)
    for before, after in zip(text, out):
        if before.lower() in BUTTER_FINGER_KEYS:
            assert after.lower() in BUTTER_FINGER_KEYS[before.lower()]
            assert after.isupper() == before.isupper() or not after.isalpha()
        else:
            assert after == before


def test_random_upper_case_effect():
    text = "abcdefghijklmnopqrst"  # 20 lowercase letters
    out = perturb(text, "random_upper_case", 2, uppercase_fraction=0.25)
    assert out.lower() == text
    assert sum(ch.isupper() for ch in out) == 5  # int(20 * 0.25) distinct positions


def test_whitespace_add_remove_effect():
    assert perturb("a b\tc", "whitespace_add_remove", 0, add_prob=0.0, remove_prob=1.0) == "abc"
    assert perturb("ab c", "whitespace_add_remove", 0, add_prob=1.0, remove_prob=0.0) == "a b  c "


def test_qwerty_typos_effect():
    # Hand-read from a QWERTY keyboard: the keys touching q, g, p and m.
    neighbours = {"q": "asw", "g": "bfhtvy", "p": "lo", "m": "jkn"}
    for letter, near in neighbours.items():
        for seed in range(10):
            assert perturb(letter, "qwerty_typos", seed, typo_prob=1.0) in near
    assert perturb("Q", "qwerty_typos", 4, typo_prob=1.0) in "ASW"
    assert perturb("12 ?", "qwerty_typos", 4, typo_prob=1.0) == "12 ?"
    assert perturb(LONG, "qwerty_typos", 4, typo_prob=0.0) == LONG


def test_char_insert_delete_swap_effects():
    out = perturb("ab c", "char_insert", 5, prob=1.0)
    assert len(out) == 7 and out[0] == "a" and out[2] == "b" and out[4] == " " and out[5] == "c"
    assert out[1].islower() and out[3].islower() and out[6].islower()
    assert perturb("ab c\nd", "char_delete", 5, prob=1.0) == " \n"
    assert perturb(LONG, "char_delete", 5, prob=0.0) == LONG
    assert perturb("abcd efg", "char_swap", 5, prob=1.0) == "badc feg"
    assert perturb(LONG, "char_swap", 5, prob=0.0) == LONG


def test_word_swap_effect():
    assert perturb("one two three four five", "word_swap", 0, prob=1.0) == "two one four three five"
    assert perturb("a  b\nc", "word_swap", 0, prob=1.0) == "b  a\nc"
    out = perturb(LONG, "word_swap", 9, prob=0.5)
    assert sorted(out.split()) == sorted(LONG.split()) and out != LONG


def test_encodings():
    assert perturb("Hi é", "base16", 0) == "486920C3A9"
    assert perturb("Hi", "base64", 0) == "SGk="
    assert perturb("Hi", "base64", 0, template="Decode and answer: {encoded}") == "Decode and answer: SGk="
    with pytest.raises(ParameterError, match=r"^perturbator 'base64': parameter 'template': the template must "
                                             r"contain \{encoded\}$"):
        make_perturbator("base64", {"template": "no placeholder"})


def test_unknown_perturbator_and_parameter():
    with pytest.raises(ConfigError, match=r"^unknown perturbator 'typo' \(known: base16, base64, butter_finger, "):
        perturb("x", "typo", 0)
    with pytest.raises(ParameterError, match=r"^perturbator 'butter_finger' has no parameter 'prob' "
                                             r"\(parameters: perturbation_prob\)$"):
        perturb("x", "butter_finger", 0, prob=0.5)
    with pytest.raises(ParameterError, match=r"must be <= 1.0, got 2.0"):
        perturb("x", "butter_finger", 0, perturbation_prob=2.0)


def test_alias_random_uppercase():
    assert perturb(LONG, "random_uppercase", 5) == perturb(LONG, "random_upper_case", 5)
    assert make_perturbator("random_uppercase").name == "random_upper_case"


def test_plugins_register_perturbators_through_the_hook(monkeypatch):
    """register_perturbators: a plugin's perturbator joins the built-ins; a taken name or a raising hook
    fails that plugin only."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    plugins = PluginManager(extra_modules=[], autoload=False).load()
    import perturbator_plugins

    assert plugins.register_plugin(perturbator_plugins.adding, name="adding") is True
    assert plugins.register_plugin(perturbator_plugins.duplicate, name="duplicate") is False
    assert plugins.register_plugin(perturbator_plugins.raising, name="raising") is False
    assert [p.name for p in plugins.plugins] == ["adding"]
    found = perturbators(plugins)
    assert list(found) == sorted(BUILT_IN_PERTURBATORS + ["reverse"])
    assert found["reverse"] is perturbator_plugins.Reverse
    assert found["butter_finger"].__name__ == "ButterFinger"
    messages = sorted(failure.message() for failure in plugins.failures)
    assert messages == [
        "plugin 'duplicate' failed to register: PluginError: perturbator 'butter_finger' is registered by both "
        "plugin 'sonar.perturbations' and plugin 'duplicate'",
        "plugin 'raising' failed to register: RuntimeError: no perturbators today",
    ]


def test_derive_seed_depends_on_every_part():
    assert derive_seed(7, "tc-1", "typos") == derive_seed(7, "tc-1", "typos")
    assert len({derive_seed(7, "tc-1", "typos"), derive_seed(8, "tc-1", "typos"), derive_seed(7, "tc-2", "typos"),
                derive_seed(7, "tc-1", "case")}) == 4
    assert 0 <= derive_seed(7, "x") < 2 ** 63


# -- perturb: expansion ---------------------------------------------------------------------------

def _suite() -> list[Row]:
    return [
        Row(key="q1", test_case_key="q1", input="What is the capital of France?", categories=["geo"]),
        Row(key="q2", test_case_key="q2", input="Who wrote Hamlet?", categories=["lit"]),
    ]


def test_expand_makes_linked_copies_after_each_original():
    rows = expand_perturbations(_suite(), [{"perturbator": "butter_finger", "seed": 7,
                                            "params": {"perturbation_prob": 0.3}}])
    assert [r.test_case_key for r in rows] == ["q1", "q1~butter_finger", "q2", "q2~butter_finger"]
    copy = rows[1]
    assert copy.key == "q1~butter_finger"
    assert copy.original_test_case_key == "q1" and copy.perturbation == "butter_finger"
    assert copy.relationships == [{"type": "perturbation_of", "target": "q1"}]
    assert copy.categories == ["geo"]
    seed = derive_seed(7, "q1", "butter_finger")
    assert copy.input == perturb("What is the capital of France?", "butter_finger", seed, perturbation_prob=0.3)
    assert copy.input != rows[0].input
    assert rows[0] == _suite()[0]


def test_expand_does_not_depend_on_the_order_of_the_suite():
    config = [{"perturbator": "qwerty_typos", "seed": 3, "params": {"typo_prob": 0.5}}]
    forward = {r.test_case_key: r.input for r in expand_perturbations(_suite(), config)}
    backward = {r.test_case_key: r.input for r in expand_perturbations(_suite()[::-1], config)}
    assert forward == backward


def test_expand_categories_names_and_dict_rows():
    from sonar_core.config import PerturbSpec

    config = [PerturbSpec(perturbator="base64", categories=["lit"]),
              PerturbSpec(perturbator="word_swap", name="swapped", params={"prob": 1.0})]
    rows = expand_perturbations([{"test_case_key": "q1", "input": "a b", "categories": ["geo"]},
                                 {"test_case_key": "q2", "input": "c d", "categories": ["lit"]}], config)
    assert rows == [
        {"test_case_key": "q1", "input": "a b", "categories": ["geo"]},
        {"test_case_key": "q1~swapped", "input": "b a", "categories": ["geo"], "original_test_case_key": "q1",
         "perturbation": "word_swap", "relationships": [{"type": "perturbation_of", "target": "q1"}]},
        {"test_case_key": "q2", "input": "c d", "categories": ["lit"]},
        {"test_case_key": "q2~base64", "input": "YyBk", "categories": ["lit"], "original_test_case_key": "q2",
         "perturbation": "base64", "relationships": [{"type": "perturbation_of", "target": "q2"}]},
        {"test_case_key": "q2~swapped", "input": "d c", "categories": ["lit"], "original_test_case_key": "q2",
         "perturbation": "word_swap", "relationships": [{"type": "perturbation_of", "target": "q2"}]},
    ]


def test_expand_keeps_model_rows_and_skips_copies():
    rows = [Row(key="q1::m", test_case_key="q1", model_key="m", input="abc"),
            Row(key="q1~x::m", test_case_key="q1~x", model_key="m", input="ABC", original_test_case_key="q1",
                perturbation="x")]
    out = expand_perturbations(rows, [{"perturbator": "base16"}])
    assert [(r.key, r.test_case_key, r.input) for r in out] == [
        ("q1::m", "q1", "abc"), ("q1~base16::m", "q1~base16", "616263"), ("q1~x::m", "q1~x", "ABC")]


def test_expand_without_entries_returns_the_rows():
    assert expand_perturbations(_suite(), []) == _suite()
    assert expand_perturbations(_suite(), None) == _suite()


@pytest.mark.parametrize("config, message", [
    ([{"perturbator": "typoz"}], r"^perturb\[0\]: unknown perturbator 'typoz' \(known: base16, "),
    ([{"perturbator": "base16"}, {"perturbator": "char_swap", "params": {"prob": "lots"}}],
     r"^perturb\[1\]: perturbator 'char_swap': parameter 'prob' must be of type float, got 'lots'$"),
    ([{"perturbator": "base16"}, {"perturbator": "base16"}],
     r"^perturb\[1\]: label 'base16' is used twice; give one entry a distinct 'name'$"),
    ([{"perturbator": "base16", "seed": "x"}], r"^perturb\[0\]: 'seed' must be an integer, got 'x'$"),
    ([{"perturbator": "base16", "colour": 1}], r"^perturb\[0\]: unknown key 'colour'$"),
    ([{"seed": 1}], r"^perturb\[0\]: missing required key 'perturbator'$"),
])
def test_expand_rejects_bad_entries(config, message):
    with pytest.raises(ConfigError, match=message):
        expand_perturbations(_suite(), config)


def test_expand_rejects_a_taken_key():
    suite = _suite() + [Row(key="q1~base16", test_case_key="q1~base16", input="x")]
    with pytest.raises(ConfigError, match=r"^perturb: the perturbed copy's test case key 'q1~base16' is taken"):
        expand_perturbations(suite, [{"perturbator": "base16"}])


def test_run_config_accepts_perturb_entries():
    from sonar_core.config import build_config

    suite = {"test_suite": "suite.jsonl", "hosts": [{"key": "m", "kind": "python", "callable": "x:y"}]}
    config = build_config({**suite, "perturb": [{"perturbator": "butter_finger", "seed": 7,
                                                 "params": {"perturbation_prob": 0.1}}]})
    assert config.perturb[0].perturbator == "butter_finger" and config.perturb[0].seed == 7
    with pytest.raises(ConfigError, match=r"^<config>: unknown configuration key 'perturb.0.sed'$"):
        build_config({**suite, "perturb": [{"perturbator": "butter_finger", "sed": 7}]})
    with pytest.raises(ConfigError, match=r"'perturb' needs 'test_suite' and 'hosts' \(perturbed copies are asked "
                                          r"of the models\)$"):
        build_config({"dataset": "x.json", "perturb": [{"perturbator": "butter_finger"}]})


def test_sonar_perturbators_lists_them_with_defaults_and_outputs():
    from click.testing import CliRunner

    from sonar_core.cli import cli

    listing = CliRunner().invoke(cli, ["perturbators"])
    assert listing.exit_code == 0, listing.output
    for name in BUILT_IN_PERTURBATORS:
        assert f"│ {name} " in listing.output
    assert "perturbation_prob=0.1" in listing.output and "add_prob=0.05, remove_prob=0.1" in listing.output
    shown = CliRunner().invoke(cli, ["perturbators", "--text", "[b]ab", "--seed", "3"])
    assert shown.exit_code == 0, shown.output
    # base16 of "[b]ab"; the text is shown as it is, not read as markup.
    assert "5B625D6162" in shown.output
    assert perturb("[b]ab", "char_swap", 3) in shown.output
