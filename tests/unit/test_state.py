"""Worker state: capture by name, a safe encoding, deltas with changed keys only."""
import copy
import datetime
import decimal
import json

from hypothesis import given
from hypothesis import strategies as st

from icedtea_jupyter import Operator
from icedtea_jupyter.executor import state as st_mod
from icedtea_jupyter.snapshots import deltas


class Enrich(Operator):
    def open(self):
        self.highest = {}
        self._private = 1

    def process(self, row):
        yield row


def test_capture_operator_attributes_generator_locals_and_closures():
    op = Enrich()
    op.open()
    op.highest["bob"] = 5000
    assert st_mod.capture(op) == {"highest": {"bob": 5000}}

    def counting(records):
        seen = 0
        for r in records:
            seen += 1
            yield r

    gen = counting(iter([1, 2, 3]))
    next(gen), next(gen)
    assert st_mod.capture(None, generator=gen)["seen"] == 2

    threshold = 10

    def above(x):
        return x > threshold

    assert st_mod.capture(above) == {"threshold": 10}


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(), children, max_size=4)
    | st.dictionaries(st.integers(), children, max_size=4)
    | st.tuples(children, children),
    max_leaves=20)


@given(values)
def test_encode_then_decode_gives_the_value_back(value):
    encoded = st_mod.encode(value)
    assert st_mod.decode(json.loads(json.dumps(encoded))) == value


def test_other_types_survive_or_are_described():
    value = {("bob", 1): {1, 2}, "when": datetime.date(2026, 1, 2),
             "amount": decimal.Decimal("5000.10"), "raw": b"\x00\x01", "big": 10 ** 30,
             "nan": float("nan")}
    back = st_mod.decode(st_mod.encode(value))
    assert back[("bob", 1)] == {1, 2} and back["amount"] == decimal.Decimal("5000.10")
    assert back["raw"] == b"\x00\x01" and back["big"] == 10 ** 30
    assert back["when"] == datetime.date(2026, 1, 2) and back["nan"] != back["nan"]

    class Model:
        def __init__(self):
            self.weights = [0.5, 0.25]

    view = st_mod.decode(st_mod.encode(Model()))
    assert view["attrs"] == {"weights": [0.5, 0.25]} and "Model" in view["type"]


def test_huge_values_are_summarised_with_a_note(monkeypatch):
    monkeypatch.setattr(st_mod, "MAX_ITEMS", 100)
    summary = st_mod.decode(st_mod.encode({"keys": {str(i): i for i in range(500)}}))["keys"]
    assert isinstance(summary, st_mod.Summary)
    assert summary["len"] == 500 and "more than 100" in summary["note"]
    assert len(summary["sample"]) == st_mod.SAMPLE


def test_deltas_carry_only_changed_keys_and_rebuild_the_state():
    first = st_mod.encode_state({"highest": {"alice": 10, "bob": 20}, "count": 1,
                                 "by_id": {1: "a", 2: "b"}})
    second = st_mod.encode_state({"highest": {"alice": 10, "bob": 5000}, "count": 1,
                                  "by_id": {1: "a", 3: "c"}})
    change = deltas.delta(first, second)
    assert change["keys"]["highest"] == {"set": {"bob": 5000}, "del": []}
    assert "count" not in change["set"]
    assert deltas.apply_delta(first, change) == {**second, "by_id": deltas.apply_delta(
        first, change)["by_id"]}
    rebuilt = st_mod.decode(deltas.apply_delta(first, change))
    assert rebuilt == {"highest": {"alice": 10, "bob": 5000}, "count": 1, "by_id": {1: "a", 3: "c"}}
    assert deltas.apply_delta(None, deltas.delta(None, first)) == first


def test_a_number_that_changes_type_is_a_change():
    before = st_mod.encode_state({"flag": 1, "table": {"a": 1, 2: 0}})
    after = st_mod.encode_state({"flag": True, "table": {"a": 1.0, 2: False}})
    seen = deltas.changes(before, after)
    assert seen["variables"] == ["flag"]
    assert seen["keys"] == {"table": ["a", 2]}
    rebuilt = deltas.apply_delta(before, deltas.delta(before, after))
    assert json.dumps(rebuilt, sort_keys=True) == json.dumps(after, sort_keys=True)


def test_a_variable_holding_too_many_values_is_reported_in_summary_without_encoding_them():
    from icedtea_jupyter.executor.state import approximate_values, bounded_state, encode_state

    groups = {key: [(0, v) for v in range(30_000)] for key in range(10)}  # ~900,000 values
    assert approximate_values(groups) > 200_000 > approximate_values({k: 1 for k in range(999)})
    bounded = bounded_state({"combiners": groups, "seen": 3, "small": {"a": [1, 2]}})
    encoded = encode_state(bounded)
    assert encoded["seen"] == 3 and encoded["small"] == {"a": [1, 2]}
    assert encoded["combiners"]["$t"] == "summary" and encoded["combiners"]["len"] == 10
    assert "too many to send at every interaction" in encoded["combiners"]["note"]


def test_a_huge_set_is_summarised_from_a_few_members_not_the_repr_of_all():
    class Member:
        reprs = 0

        def __repr__(self):
            Member.reprs += 1
            return "m"

    members = {Member() for _ in range(st_mod.MAX_ITEMS + 1)}
    summary = st_mod.decode(st_mod.encode({"users": members}))["users"]
    assert summary["len"] == st_mod.MAX_ITEMS + 1 and summary["sample"] == ["m"] * st_mod.SAMPLE
    assert Member.reprs == st_mod.SAMPLE  # an interaction costs microseconds, not the set's size


def test_an_objects_state_is_the_same_in_two_processes_its_address_left_out():
    import pyarrow as pa

    class Plain:
        pass

    for value in (pa.array([1.5, 2.0]), Plain()):
        shown = st_mod.encode(value)["repr"]
        assert " at 0x" not in shown and shown == st_mod.encode(copy.copy(value))["repr"]
    assert "1.5" in st_mod.encode(pa.array([1.5, 2.0]))["repr"]


def test_a_long_container_of_plain_scalars_encodes_as_its_items_in_one_pass():
    """Sets, lists and tuples of strings, booleans, None or exact ints pass whole (a
    snapshot of a 20,000-user set is a copy, not 20,000 calls); any other item makes
    the container encode item by item, as before."""
    def item_by_item(value):
        items = [st_mod.encode(v, 1) for v in value]
        return items if isinstance(value, list) else \
            {"$t": "tuple" if isinstance(value, tuple) else "set", "v": items}

    users = {f"u{i}" for i in range(st_mod.MAX_ITEMS)}
    big = 2 ** 53
    for value in (users, list(range(100)), tuple([True, None, "a"] * 10), frozenset(range(50)),
                  list(range(big - 20, big + 1)), [1.0] * 20, [1, 2.5] * 10, [1, True] * 10,
                  [b"x"] * 20, [{"a": 1}] * 20):
        assert st_mod.encode(value) == item_by_item(value)
        assert st_mod.decode(json.loads(json.dumps(st_mod.encode(value)))) == value
    assert st_mod.encode([big] * 20) == [{"$t": "int", "v": str(big)}] * 20


def test_long_encoded_lists_compare_as_json_does():
    ones = [1] * 20
    assert st_mod.same(ones, [1] * 20) and not st_mod.same(ones, [1] * 19 + [2])
    assert not st_mod.same(ones, [True] * 20) and not st_mod.same(ones, [1.5] * 20)
    assert not st_mod.same(["a"] * 20, ["a"] * 19 + [None])
    assert st_mod.same([0.5, "a"] * 10, [0.5, "a"] * 10)
