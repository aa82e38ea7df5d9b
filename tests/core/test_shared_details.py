"""Equal row details are held once (sonar_core/execution/shared_details.py), never across JSON types."""

from sonar_core.execution.shared_details import DetailsPool


def test_equal_details_share_the_first_dict():
    pool = DetailsPool()
    first = {"check": "pii", "matches": [], "count": 0, "decoded": None}
    second = {"check": "pii", "matches": [], "count": 0, "decoded": None}
    assert pool.share(first) is first
    assert pool.share(second) is first
    other = {"check": "pii", "matches": ["a@b.c"], "count": 1, "decoded": None}
    assert pool.share(other) is other


def test_values_equal_in_python_but_not_in_json_are_not_shared():
    pool = DetailsPool()
    as_int, as_bool, as_float = {"v": 1}, {"v": True}, {"v": 1.0}
    assert [pool.share(d) for d in (as_int, as_bool, as_float)] == [as_int, as_bool, as_float]
    assert pool.share({"v": True}) is as_bool and pool.share({"v": 1.0}) is as_float
    zero, negative_zero = {"v": 0.0}, {"v": -0.0}
    assert pool.share(zero) is zero and pool.share(negative_zero) is negative_zero
    nan = {"v": float("nan")}
    assert pool.share(nan) is nan and pool.share({"v": float("nan")}) is nan
    as_list, as_dict = {"v": []}, {"v": {}}
    assert pool.share(as_list) is as_list and pool.share(as_dict) is as_dict
    # the keys' order is part of the JSON text a writer makes
    ab, ba = {"a": 1, "b": 2}, {"b": 2, "a": 1}
    assert pool.share(ab) is ab and pool.share(ba) is ba


def test_values_of_other_types_are_kept_as_they_are():
    pool = DetailsPool()
    first, second = {"span": (1, 2)}, {"span": (1, 2)}
    assert pool.share(first) is first and pool.share(second) is second


def test_a_full_pool_stops_looking():
    pool = DetailsPool(limit=2)
    a, b = {"n": 1}, {"n": 2}
    pool.share(a), pool.share(b)
    late = {"n": 1}
    assert pool.share(late) is late  # two distinct seen: all-different details are not searched any more
