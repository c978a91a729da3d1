"""The debugger's incremental state view equals a full encoding after every change."""
from hypothesis import given, settings, strategies as st

from icedtea_jupyter.executor.state import decode, encode_state
from icedtea_jupyter.replay.encoding import StateEncoder

KEYS = st.one_of(st.sampled_from(["a", "b", "c", "$x"]), st.integers(0, 5),
                 st.tuples(st.integers(0, 2), st.text(max_size=2)))
CHANGES = st.lists(st.tuples(st.sampled_from(["set", "append", "delete", "replace"]),
                             KEYS, st.integers(-3, 3)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(CHANGES)
def test_every_view_equals_a_full_encoding(changes):
    state = {"table": {}, "count": 0, "items": []}
    encoder = StateEncoder()
    for step, (kind, key, value) in enumerate(changes):
        table = state["table"]
        if kind == "set":
            table[key] = value / 2
        elif kind == "append":  # a mutable value changed in place
            table.setdefault(key, []).append(value) if isinstance(table.get(key, []), list) \
                else table.__setitem__(key, [value])
        elif kind == "delete":
            table.pop(key, None)
        else:
            state["table"] = {k: v for k, v in table.items() if k != key}
        state["count"] += 1
        state["items"].append(value)
        view = encoder.encode(state, step)
        assert decode(view) == decode(encode_state(state))


def test_the_same_version_returns_the_same_view_and_a_new_one_sees_changes():
    table = {f"k{i}": float(i) for i in range(1000)}
    encoder = StateEncoder()
    first = encoder.encode({"table": table}, (0, False))
    assert encoder.encode({"table": table}, (0, False)) is first
    table["k5"] = -1.0
    del table["k6"]
    second = encoder.encode({"table": table}, (1, False))
    assert second["table"]["k5"] == -1.0 and "k6" not in second["table"]
    assert first["table"]["k5"] == 5.0 and "k6" in first["table"]  # earlier views keep theirs
