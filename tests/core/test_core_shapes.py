"""The JSON shapes the core declares as TypedDicts are the shapes it writes (issue 37): a key added to a
record without its declaration, or declared and never written, fails here. Each record is made by the real
code and its keys compared with the declaration's required and optional keys by hand-picked cases."""

from __future__ import annotations

import json

from click.testing import CliRunner

from sonar_core import Metric, Row
from sonar_core.cli import cli
from sonar_core.conversation import Turn, parse_conversation
from sonar_core.dataset import DATASET_FIELDS
from sonar_core.dataset_files import RowFields
from sonar_core.evaluator_shapes import MetricMeta
from sonar_core.listing_shapes import (EvaluatorDescription, EvaluatorEntry, EvaluatorsListing, MetricEntry,
                                      ParameterEntry)
from sonar_core.llm.ledger import CostLedger, CostsRecord
from sonar_core.llm.requests import ClientCounts, ClientStats
from sonar_core.llm.tokens import TallyRecord, TokenTally

NO_AUTOLOAD = {"SONAR_DISABLE_PLUGIN_AUTOLOAD": "1", "SONAR_PLUGINS": None}


def _keys(shape) -> set[str]:
    """Every key a TypedDict declares (its bases' too). Under ``from __future__ import annotations`` Python 3.11
    cannot tell NotRequired keys at run time, so the optional ones are named in the tests themselves."""
    return set(shape.__annotations__)


def test_a_row_is_its_declared_fields_and_the_dataset_fields_follow_them():
    assert set(Row(key="k").to_dict()) == _keys(RowFields)
    assert list(DATASET_FIELDS) == list(RowFields.__annotations__)
    # The Python type a file's value must have, read from the declaration (X | None: X; a TypedDict: dict).
    assert (DATASET_FIELDS["context"], DATASET_FIELDS["cost"], DATASET_FIELDS["max_turns"],
            DATASET_FIELDS["simulated_user"], DATASET_FIELDS["attack"], DATASET_FIELDS["key"]) == \
           (list, float, int, dict, dict, str)


def test_a_parsed_turn_has_only_declared_keys():
    turns = parse_conversation('[{"role": "assistant", "content": null, "tool_calls": [{"name": "f", "id": "c1"}]},'
                               ' {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "f"}]', "t.csv: row 1")
    assert turns == [{"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": {}, "id": "c1"}]},
                     {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "f"}]
    assert all(set(turn) <= _keys(Turn) for turn in turns)


def test_a_metric_meta_is_its_declaration():
    meta = Metric("m", "M", "what it measures", value_range=(0.0, float("inf")), higher_is_better=True,
                  threshold=0.5).meta()
    assert set(meta) == _keys(MetricMeta)
    assert meta["value_range"] == [0.0, None] and meta["threshold"] == 0.5


def test_client_counts_write_the_optional_keys_only_when_they_happened():
    stats = ClientStats(requests=2, fetched=2, seconds=1.23456)
    assert stats.as_dict() == {"requests": 2, "cached": 0, "fetched": 2, "failed": 0, "retries": 0,
                               "call_seconds": 1.235}
    assert set(stats.as_dict()) == _keys(ClientCounts) - {"cleaned_text", "shared_calls", "concurrency_limit",
                                                          "input_tokens", "output_tokens", "call_cost"}
    every = ClientStats(requests=3, cleaned=1, shared=1, limit_low=2, limit_high=4, input_tokens=10,
                        output_tokens=5, cost=0.0000015)
    # In the order run.json has always shown them.
    assert list(every.as_dict()) == ["requests", "cached", "fetched", "failed", "retries", "call_seconds",
                                     "cleaned_text", "shared_calls", "concurrency_limit", "input_tokens",
                                     "output_tokens", "call_cost"]
    assert set(every.as_dict()) == _keys(ClientCounts)
    assert every.as_dict()["concurrency_limit"] == {"min": 2, "max": 4}


def test_the_costs_record_is_its_declaration():
    ledger = CostLedger(max_cost=1.0)
    ledger.hosts["h"] = TokenTally()
    ledger.hosts["h"].add(2, 30, 10, 0.002)
    record = ledger.record()
    assert set(record) == _keys(CostsRecord)
    assert record["hosts"] == {"h": {"calls": 2, "input_tokens": 30, "output_tokens": 10, "cost": 0.002}}
    assert set(record["hosts"]["h"]) == _keys(TallyRecord)
    assert record["budget"] == {"max_cost": 1.0, "spent": 0.0, "stopped": False}


def test_the_evaluator_listings_are_their_declarations():
    listing = json.loads(CliRunner().invoke(cli, ["evaluators", "-p", "toy_plugin", "--json"], env=NO_AUTOLOAD).output)
    assert set(listing) == _keys(EvaluatorsListing)
    assert listing["evaluators"] and all(set(entry) == _keys(EvaluatorEntry) for entry in listing["evaluators"])
    described = json.loads(CliRunner().invoke(cli, ["describe", "toy_passfail", "-p", "toy_plugin", "--json"],
                                              env=NO_AUTOLOAD).output)
    assert set(described) == _keys(EvaluatorDescription)
    assert all(set(metric) == _keys(MetricEntry) for metric in described["metrics"])
    assert all(set(param) == _keys(ParameterEntry) for param in described["parameters"])
