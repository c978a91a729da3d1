"""Versions without Spark: fingerprints, the result store, the SMT equivalence check."""
import math

import pandas as pd
import pytest

from icedtea_jupyter import Operator
from icedtea_jupyter.versions.equivalence import equivalent
from icedtea_jupyter.versions.fingerprint import Unknown, function_parts, value_fingerprint
from icedtea_jupyter.versions.plans import Segment
from icedtea_jupyter.versions.results import ResultStore, decode, encode

LIMIT = 10


def _scaled(k):
    return lambda x: x * k


def test_a_function_changes_its_fingerprint_by_the_part_that_changed():
    assert function_parts(_scaled(2)) == function_parts(_scaled(2))
    assert {k for k, v in function_parts(_scaled(2)).items()
            if function_parts(_scaled(3))[k] != v} == {"closure"}
    before = function_parts(lambda x: x > LIMIT)
    globals()["LIMIT"] = 11
    try:
        after = function_parts(lambda x: x > LIMIT)
    finally:
        globals()["LIMIT"] = 10
    assert before["code"] == after["code"] and before["globals"] != after["globals"]
    assert function_parts(lambda x: x + 1)["code"] != function_parts(lambda x: x - 1)["code"]


class Totals(Operator):
    def __init__(self, factor):
        self.factor = factor

    def process(self, record):
        yield record * self.factor


def test_an_operator_is_fingerprinted_by_its_class_and_attributes():
    assert function_parts(Totals(2)) == function_parts(Totals(2))
    assert function_parts(Totals(2))["attributes"] != function_parts(Totals(3))["attributes"]


def test_values_by_content_and_the_unknown_never_equal():
    assert value_fingerprint({"b": 1, "a": {2, 3}}) == value_fingerprint({"a": {3, 2}, "b": 1})
    assert value_fingerprint([1, 2]) != value_fingerprint((1, 2))
    assert value_fingerprint(list(range(1000))) != value_fingerprint(list(range(1, 1001)))
    assert value_fingerprint(pd.DataFrame({"a": [1, 2]})) != \
        value_fingerprint(pd.DataFrame({"a": [1, 3]}))
    unknown = Unknown()
    lock = __import__("threading").Lock()
    assert value_fingerprint(lock, unknown) != value_fingerprint(lock, unknown)
    assert len(unknown.reasons) == 2 and "cannot be fingerprinted" in unknown.reasons[0]


def test_a_long_list_of_lines_is_fingerprinted_by_every_character_and_boundary():
    lines = [f"line {i} é" for i in range(1000)]
    fp = value_fingerprint(lines)
    assert value_fingerprint(list(lines)) == fp
    assert value_fingerprint(lines[:-1] + ["line 999 e"]) != fp
    moved = lines[:10] + [lines[10] + lines[11][:1], lines[11][1:]] + lines[12:]
    assert "".join(moved) == "".join(lines) and value_fingerprint(moved) != fp
    assert value_fingerprint(tuple(lines)) != fp

    class Tagged(str):
        pass
    assert value_fingerprint(lines[:-1] + [Tagged(lines[-1])]) != fp


@pytest.mark.parametrize("value, kind", [
    (7, "count"), ([1, None, 3], "values"), ([(1, "a"), (2, None)], "values"),
    ([1, "x", (2,)], "values"), ([{"k": [1]}], "values"), ([], "values"),
    ([1.5, math.inf], "values"), ([True, False], "values"),
])
def test_results_come_back_as_they_went_in(value, kind):
    assert decode(encode(value, kind)) == value


def test_equal_results_are_one_file_and_unreferenced_ones_go(tmp_path):
    store = ResultStore(str(tmp_path))
    a, b = store.put([(1, "a")], "values"), store.put([(1, "a")], "values")
    c = store.put(pd.DataFrame({"x": [1.0]}), "pandas")
    assert a == b and a["digest"] != c["digest"]
    pd.testing.assert_frame_equal(store.get(c["digest"]), pd.DataFrame({"x": [1.0]}))
    assert store.collect_garbage({a["digest"]}) == [c["digest"]]
    with pytest.raises(LookupError, match="not in the store"):
        store.get(c["digest"])


COLS = [("x", "long"), ("y", "double"), ("s", "string")]
X, Y, S = ("var", 0, "long"), ("var", 1, "double"), ("var", 2, "string")


def lit(v, t):
    return ("lit", v, t)


def seg(*predicates, outputs=(("x", "long", X),)):
    return Segment("leaf", COLS, list(predicates), list(outputs))


@pytest.mark.parametrize("a, b, same", [
    (seg(("cmp", ">", X, lit(1, "long")), ("cmp", "<", Y, lit("3.0", "double"))),
     seg(("cmp", "<", Y, lit("3.0", "double")), ("cmp", ">", X, lit(1, "long"))), True),
    (seg(("cmp", ">", X, lit(1, "long"))), seg(("cmp", ">=", X, lit(2, "long"))), True),
    (seg(("cmp", ">", X, lit(1, "long"))), seg(("cmp", ">=", X, lit(1, "long"))), False),
    # NaN is above every double in Spark: y > 3 keeps it, and so does NOT (y <= 3)
    (seg(("cmp", ">", Y, lit("3.0", "double"))),
     seg(("not", ("cmp", "<=", Y, lit("3.0", "double")))), True),
    # ... but NOT (y < 3) also keeps y = 3
    (seg(("cmp", ">", Y, lit("3.0", "double"))),
     seg(("not", ("cmp", "<", Y, lit("3.0", "double")))), False),
    # a tautology in two-valued logic drops the nulls in SQL
    (seg(("or", ("cmp", ">", X, lit(1, "long")), ("not", ("cmp", ">", X, lit(1, "long"))))),
     seg(), False),
    (seg(("isnotnull", X), ("cmp", ">", X, lit(1, "long"))),
     seg(("cmp", ">", X, lit(1, "long"))), True),
    (seg(("cmp", "==", S, lit("a", "string"))), seg(("cmp", "==", S, lit("b", "string"))),
     False),
    # arithmetic is uninterpreted: equal only when built alike
    (seg(outputs=[("z", "long", ("fn", "Add", "long", (X, lit(1, "long"))))]),
     seg(outputs=[("z", "long", ("fn", "Add", "long", (lit(1, "long"), X)))]), False),
    (seg(outputs=[("x", "long", X)]), seg(outputs=[("s", "string", S)]), False),
])
def test_segments_are_equivalent_only_when_proven(a, b, same):
    assert equivalent(a, b) is same


def test_aggregates_compare_their_functions_and_keys():
    count = ("agg", "count", False, (lit(1, "integer"),))
    total = ("agg", "sum", False, (Y,))
    a = Segment("leaf", COLS, [("cmp", ">", X, lit(0, "long"))], [("n", "long", count)], [S])
    b = Segment("leaf", COLS, [("cmp", ">=", X, lit(1, "long"))], [("n", "long", count)], [S])
    c = Segment("leaf", COLS, [("cmp", ">=", X, lit(1, "long"))], [("n", "long", total)], [S])
    assert equivalent(a, b) and not equivalent(a, c)
    assert not equivalent(a, Segment("other leaf", COLS, a.predicates, a.outputs, a.group))
    assert equivalent(a, Segment.from_json(a.to_json()))


def _rate():
    return 2


class Doubler(Operator):
    def process(self, record):
        yield record * _rate()


def test_a_helper_an_operator_or_a_module_function_calls_is_in_its_fingerprint(tmp_path,
                                                                               monkeypatch):
    global _rate
    before = function_parts(Doubler())["class"]
    original = _rate
    _rate = lambda: 3  # noqa: E731 - the helper changed, the class did not
    try:
        assert function_parts(Doubler())["class"] != before
    finally:
        _rate = original
    (tmp_path / "userlib.py").write_text("def clean(x):\n    return x.strip()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    import userlib

    f = eval("lambda x: userlib.clean(x)", {"userlib": userlib})
    first = function_parts(f)["globals"]
    (tmp_path / "userlib.py").write_text("def clean(x):\n    return x.lower()\n")
    importlib.reload(userlib)
    assert function_parts(f)["globals"] != first


def test_a_module_a_function_reads_is_fingerprinted_with_its_version(monkeypatch):
    from icedtea_jupyter.versions.fingerprint import module_version

    f = eval("lambda x: pd.isna(x)", {"pd": pd})
    assert module_version("pandas.core") == f"pandas {pd.__version__}"
    before = function_parts(f)["globals"]
    monkeypatch.setattr(pd, "__version__", "0.0-other")  # as after an upgrade
    module_version.cache_clear()
    try:
        assert function_parts(f)["globals"] != before
    finally:
        monkeypatch.undo()
        module_version.cache_clear()
    assert function_parts(f)["globals"] == before


class Slotted:
    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k


def test_class_attributes_slots_and_local_names_in_fingerprints():
    class Gap(Operator):
        GAP = 10

        def process(self, x):
            yield x > self.GAP

    before = function_parts(Gap())["class"]
    Gap.GAP = 3
    assert function_parts(Gap())["class"] != before
    Gap.GAP = 10
    assert function_parts(Gap())["class"] == before
    assert function_parts(Slotted(2))["attributes"] != function_parts(Slotted(3))["attributes"]

    def named(x):
        doubled = x * 2  # a local's name is not behaviour
        return doubled

    def renamed(x):
        twice = x * 2
        return twice

    assert function_parts(named)["code"] == function_parts(renamed)["code"]


def test_readable_values_name_what_a_user_changed():
    from icedtea_jupyter.versions.values import changed_values, readable_values

    class Gap(Operator):
        GAP = 10

        def __init__(self):
            self.seen = {"b", "a"}

        def process(self, x):
            yield x

    before = readable_values(Gap())
    assert before == {"Gap.GAP": "10", "self.seen": "{'a', 'b'}"}
    Gap.GAP = 3
    assert changed_values(before, readable_values(Gap())) == ["Gap.GAP: 10 → 3"]
    assert readable_values(_scaled(2)) == {"k": "2"}


def test_rows_with_a_null_column_or_mixed_types_are_stored_and_read_back(tmp_path):
    """Found by the pipeline generator: a DataFrame result whose column held only nulls
    was not stored, and --reuse then failed on the result without a digest."""
    from pyspark.sql import Row

    from icedtea_jupyter.versions import catalog

    nulls = [Row(k="k3", v=None), Row(k="k4", v=None)]
    mixed = [Row(k="a", v=1), Row(k="b", v="x")]
    for rows in (nulls, mixed):
        back = decode(encode(rows, "rows"))
        assert back == rows and [r.asDict() for r in back] == [r.asDict() for r in rows]
    run = tmp_path / "run-1"
    run.mkdir()
    (run / "manifest.json").write_text(
        '{"id": "run-1", "status": "finished", "version": "cell 1, v1",'
        ' "results": [{"action": "collect()", "reusable": true, "sink": "s"}]}')
    assert list(catalog.reusable(str(tmp_path), "other")) == []


def test_a_large_value_is_named_by_its_size_not_its_repr():
    from icedtea_jupyter.versions.values import readable_values

    big = set(range(1_000_000))
    f = eval("lambda x: x in BIG", {"BIG": big})
    assert readable_values(f) == {"BIG": "<set of 1,000,000 items>"}
