"""The run memo: values by namespace and key, least recently used out first, counted per namespace."""

from __future__ import annotations

from sonar_core.testing import make_context
from sonar_core.run_memo import RunMemo


def test_values_are_kept_by_namespace_and_key():
    memo = RunMemo()
    memo.put("ragas", "k1", {"value": 0.5})
    assert memo.get("ragas", "k1") == {"value": 0.5}
    assert memo.get("other", "k1") is None
    assert memo.get("ragas", "k2") is None
    memo.put("ragas", "k1", {"value": 0.75})
    assert memo.get("ragas", "k1") == {"value": 0.75}
    assert memo.summary() == {"ragas": {"put": 2, "reused": 2}}


def test_the_least_recently_used_entry_goes_first_when_full():
    memo = RunMemo(limit=2)
    memo.put("n", "a", 1)
    memo.put("n", "b", 2)
    assert memo.get("n", "a") == 1  # a is now the most recent
    memo.put("n", "c", 3)
    assert (memo.get("n", "a"), memo.get("n", "b"), memo.get("n", "c")) == (1, None, 3)
    assert len(memo) == 2


def test_none_is_not_kept_and_clear_empties():
    memo = RunMemo()
    memo.put("n", "a", None)
    assert len(memo) == 0 and memo.summary() == {}
    memo.put("n", "a", 0)
    assert memo.get("n", "a") == 0
    memo.clear()
    assert memo.get("n", "a") is None


def test_each_test_context_has_its_own_memo():
    first, second = make_context(), make_context()
    first.memo.put("n", "a", 1)
    assert second.memo.get("n", "a") is None
