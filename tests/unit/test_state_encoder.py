"""Incremental state encoding (snapshots sent by workers, debugger steps) equals a full
encoding after every change, and its changes rebuild it."""
from hypothesis import given, settings, strategies as st

from icedtea_jupyter.executor.incremental import IncrementalState
from icedtea_jupyter.executor.state import apply_delta, decode, encode_state

KEYS = st.one_of(st.sampled_from(["a", "b", "c", "$x"]), st.integers(0, 5),
                 st.tuples(st.integers(0, 2), st.text(max_size=2)))
CHANGES = st.lists(st.tuples(st.sampled_from(["set", "append", "delete", "replace", "scalar"]),
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
        assert decode(view) == decode(full)
        rebuilt = apply_delta(rebuilt, change)
        assert decode(rebuilt) == decode(full)


def test_only_changed_keys_travel():
    table = {f"k{i}": float(i) for i in range(1000)}
    tracker = IncrementalState()
    _, first = tracker.update({"table": table, "n": 1})
    assert "full" in first
    table["k5"] = -1.0
    table["k7"] = 7.0  # a new object, the same value: nothing to send
    del table["k6"]
    view, change = tracker.update({"table": table, "n": 1})
    assert change == {"set": {}, "keys": {"table": {"set": {"k5": -1.0}, "del": ["k6"]}},
                      "del": []}
    assert view["table"]["k5"] == -1.0 and "k6" not in view["table"]
