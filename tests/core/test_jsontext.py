"""The indented JSON writer: the json module's exact text, reused fragments, lists copied from files."""

from __future__ import annotations

import enum
import io
import json
import math
from pathlib import Path

import pytest

from sonar_core.artifacts.jsontext import Fragments, compact_encoder, dumps_indented, write_indented


class Colour(str, enum.Enum):
    RED = 'r"ed'


class Level(enum.IntEnum):
    HIGH = 3


VALUES = [
    {},
    [],
    "",
    {"a": [], "b": {}, "c": [[]], "d": [{}]},
    {"text": 'ünï "quoted" \\ back\nline\ttab\x00\u2028 <script>', "emoji": "✓"},
    [0, -1, 10**30, 0.1 + 0.2, -0.0, 1e-310, 2.5e300, 1.0, True, False, None],
    {"keys": {7: "int", 2.5: "float", True: "bool", None: "none", Colour.RED: "enum"}},
    [Colour.RED, Level.HIGH, Path("/tmp/x")],  # str enum, int enum, and default=str
    {"problem_attrs": {"dataset_row_keys": [["tc-1", "m"], ["tc-2", "m"]], "test_case_keys": ["tc-1", "tc-2"]}},
    [[["deep"]], [[[]]], [{"x": [1, [2, [3]]]}]],
]


@pytest.mark.parametrize("value", VALUES)
def test_same_text_as_json_dumps(value):
    expected = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False, default=str)
    assert dumps_indented(value) == expected


def test_hand_written_text():
    assert dumps_indented({"a": [1, "x"], "b": {}, "c": []}) == '{\n  "a": [\n    1,\n    "x"\n  ],\n  "b": {},\n  "c": []\n}'


@pytest.mark.parametrize("value", [math.nan, [math.inf], {"a": -math.inf}])
def test_nan_and_infinity_are_refused(value):
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        dumps_indented(value)


def test_fragments_are_encoded_once_and_reindented():
    problem = {"severity": "HIGH", "problem_attrs": {"test_case_keys": ["a", "b"]}}
    fragments = Fragments()
    fragments.keep(problem)
    document = {"problems": [problem], "run": {"result": {"problems": [problem]}}}
    assert dumps_indented(document, fragments) == json.dumps(document, indent=2, ensure_ascii=False)
    # The cached text is the object's own top-level text.
    ((_, text),) = fragments._texts.values()
    assert text == json.dumps(problem, indent=2, ensure_ascii=False)


def test_compact_encoder_matches_json_dumps():
    encode = compact_encoder(item_separator=", ", key_separator=": ", sort_keys=True, allow_nan=True)
    value = {"b": [1.5, "ü", None, math.nan], "a": {"z": True, "y": []}}
    assert encode(value) == json.dumps(value, ensure_ascii=False, sort_keys=True)
    strict = compact_encoder(item_separator=",", key_separator=":", sort_keys=False, allow_nan=False)
    assert strict({"b": 1, "a": "x"}) == '{"b":1,"a":"x"}'
    with pytest.raises(ValueError):
        strict([math.inf])
    with pytest.raises(TypeError, match="not JSON serializable"):
        strict({"x": object()})


def test_streamed_output_is_the_same_text(monkeypatch):
    import sonar_core.artifacts.jsontext as jsontext

    # Tiny limits: pieces are flushed mid-list and cached fragments written in 5-character blocks.
    monkeypatch.setattr(jsontext, "_PENDING_PARTS", 3)
    monkeypatch.setattr(jsontext, "_WRITE_BLOCK", 5)
    problem = {"description": "x\ny", "problem_attrs": {"dataset_row_keys": [["a", "m"], ["b", "m"]]}}
    fragments = Fragments()
    fragments.keep(problem)
    document = {"problems": [problem, problem], "view": {"problems": [problem]}, "rows": [[1, 2]] * 10}
    handle = io.StringIO()
    write_indented(handle, document, fragments)
    assert handle.getvalue() == json.dumps(document, indent=2, ensure_ascii=False)
