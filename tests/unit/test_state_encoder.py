"""Incremental state encoding (snapshots sent by workers, debugger steps) equals a full
encoding after every change, and its changes rebuild it."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icedtea_jupyter.executor.incremental import IncrementalState
from icedtea_jupyter.executor.state import decode, encode_state
from icedtea_jupyter.snapshots.deltas import apply_delta

KEYS = st.one_of(st.sampled_from(["a", "b", "c", "$x"]), st.integers(0, 5),
                 st.tuples(st.integers(0, 2), st.text(max_size=2)))
CHANGES = st.lists(st.tuples(st.sampled_from(["set", "int", "append", "delete", "replace",
                                              "scalar"]),
                             KEYS, st.integers(-3, 3)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(CHANGES)
def test_every_view_equals_a_full_encoding_and_the_changes_rebuild_it(changes):
    state = {"table": {}, "count": 0, "items": []}
    tracker = IncrementalState()
    rebuilt = None
    for kind, key, value in changes:
        table = state["table"]
        if kind == "set":
            table[key] = value / 2
        elif kind == "int":  # the same number as another type: 1 == 1.0 == True
            table[key] = value if value % 3 else value == 0
        elif kind == "append":  # a mutable value changed in place
            if isinstance(table.get(key), list):
                table[key].append(value)
            else:
                table[key] = [value]
        elif kind == "delete":
            table.pop(key, None)
        elif kind == "replace":  # a new dict object under the same name
            state["table"] = {k: v for k, v in table.items() if k != key}
        else:  # a variable of another type
            state["other"] = value if value % 2 else {"k": value}
        state["count"] += 1
        state["items"].append(value)
        view, change = tracker.update(state)
        full = encode_state(state)
        assert view == full or decode(view) == decode(full)
        assert [type(v) for _, v in _values(view)] == [type(v) for _, v in _values(full)]
        rebuilt = apply_delta(rebuilt, change)
        assert decode(rebuilt) == decode(full)
        assert sorted(map(repr, _values(rebuilt))) == sorted(map(repr, _values(full)))


def _values(encoded):
    """The encoded values of the table, by key order of a full encoding."""
    table = encoded.get("table", {})
    if isinstance(table, dict) and table.get("$t") == "dict":
        return sorted(((repr(k), v) for k, v in table["items"]), key=lambda kv: kv[0])
    return sorted(((repr(k), v) for k, v in table.items()), key=lambda kv: kv[0])


def test_only_changed_keys_travel():
    table = {f"k{i}": float(i) for i in range(1000)}
    tracker = IncrementalState()
    _, first = tracker.update({"table": table, "n": 1})
    assert "full" in first
    table["k5"] = -1.5
    table["k7"] = 7.0  # a new object, the same value: nothing to send
    del table["k6"]
    view, change = tracker.update({"table": table, "n": 1})
    assert change == {"set": {}, "keys": {"table": {"set": {"k5": -1.5}, "del": ["k6"]}},
                      "del": []}
    assert view["table"]["k5"] == -1.5 and "k6" not in view["table"]


BIG_VALUES = st.one_of(st.integers(-5, 5), st.sampled_from([2 ** 60, True, None, "s", ""]))
BIG_CHANGES = st.lists(st.tuples(st.integers(0, 40), BIG_VALUES, st.booleans()), max_size=60)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=16, max_size=40), BIG_CHANGES, st.booleans())
def test_large_tables_of_scalars_equal_a_full_encoding_after_every_change(first, changes,
                                                                         dollar):
    """Tables of string keys and scalar values take a path of C loops (a map-side
    combine's counts): the same views and changes as key-by-key encoding."""
    table = {f"k{i}": value for i, value in enumerate(first)}
    tracker = IncrementalState()
    rebuilt = None
    for step, (key, value, delete) in enumerate([(0, first[0], False)] + changes):
        name = f"$k{key}" if dollar and step % 7 == 3 else f"k{key}"
        if delete:
            table.pop(name, None)
        else:
            table[name] = value
        if step % 5 == 4:  # many keys change at once, to new objects
            table = {k: (v + 1 if type(v) is int else v) for k, v in table.items()}
        elif step % 5 == 2:
            table = {k: (v + 1 - 1 if type(v) is int else v) for k, v in table.items()}
        view, change = tracker.update({"table": table})
        full = encode_state({"table": table})
        assert view == full or decode(view) == decode(full)
        rebuilt = apply_delta(rebuilt, change)
        assert decode(rebuilt) == decode(full)
        assert sorted(map(repr, _values(rebuilt))) == sorted(map(repr, _values(full)))


def test_a_large_table_sends_only_what_changed_and_whole_counts_stay_ints():
    counts = {f"user{i}": i for i in range(5000)}
    tracker = IncrementalState()
    view, first = tracker.update({"counts": counts})
    assert first == {"full": {"counts": counts}}
    counts = dict(counts, user3=True, user4=4, user9=2 ** 60, fresh=1)
    del counts["user8"]
    view, change = tracker.update({"counts": counts})
    assert change["keys"]["counts"] == {
        "set": {"user3": True, "user9": {"$t": "int", "v": str(2 ** 60)}, "fresh": 1},
        "del": ["user8"]}
    assert view == encode_state({"counts": counts})


@pytest.mark.parametrize("before", [{}, {"n": 1}, None])
def test_a_final_update_sends_a_combiners_dict_as_the_full_encoding_would(before):
    """A worker's last snapshot sends a dict first seen then (a reduce side's counts) as
    it is, without keeping tables: the same view and change as an update that keeps them,
    and the change rebuilds the state."""
    counts = {f"k{i}": i * 37 for i in range(5000)}
    odd = {("t", i): float(i) for i in range(40)}  # not as itself: encoded as before
    results = []
    for final in (False, True):
        tracker = IncrementalState()
        if before is not None:
            tracker.update({"combiners": before, "seen": 0})
        results.append(tracker.update({"combiners": counts, "odd": odd, "seen": 3},
                                      final=final))
    (view, change), (final_view, final_change) = results
    assert final_view == view and final_change == change
    # no per-key tables were built for the counts, unless earlier updates keep them
    assert ("combiners" in tracker.dicts) == (before == {"n": 1}) and "odd" in tracker.dicts
    assert decode(apply_delta(None, final_change) if before is None else
                  apply_delta({"combiners": before, "seen": 0}, final_change)) == \
        {"combiners": counts, "odd": odd, "seen": 3}
