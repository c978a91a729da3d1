"""A join's keys captured during the run (issue 12): traces through joins run no Spark job
for them, and a reopened run traces through a join both ways; a map side named θ
with --record-inputs."""
import os
from operator import add

import pandas as pd
import pytest

from icedtea_jupyter.lineage import join_keys
from icedtea_jupyter.session import registry

pytestmark = pytest.mark.spark

ORDERS = [("ann", 10), ("bob", 20), ("ann", 30), ("eve", 40)]  # 2 partitions: 2 + 2
NAMES = [("ann", "Ann A."), ("bob", "Bob B."), ("cid", "Cid C.")]  # 1 + 2
JOIN = """
orders = sc.parallelize(ORDERS, 2)
names = sc.parallelize(NAMES, 2)
joined = orders.join(names, 2).setName("joined").collect()
"""
NS = {"ORDERS": ORDERS, "NAMES": NAMES}


def rows(frame):
    return [tuple(row) for row in frame.itertuples(index=False)]


def _no_job(monkeypatch):
    def refused(wanted):
        raise AssertionError(f"the trace ran a Spark job for keys: {wanted}")
    monkeypatch.setattr(join_keys, "key_columns", refused)


def _reopened(run, monkeypatch):
    with monkeypatch.context() as patched:
        patched.setattr(registry, "runs", lambda: [])  # as after a kernel restart
        return registry.open_run(run.path)


def _at(run, row):
    _, outputs = run.lineage_outputs()
    return next((part, pos) for part, pos, out in outputs if out == row)


def test_the_run_keeps_each_join_inputs_joined_keys_a_pandas_user_can_read(record):
    run = record(JOIN, NS, lineage=True)
    assert run.status == "finished", run.error
    derived = os.path.join(run.path, "lineage", "derived")
    joined = {key for key, _ in run.namespace["joined"]}  # "eve" and "cid": no output
    for node, records in (("parallelize", ORDERS), ("parallelize#2", NAMES)):
        op = run.dag.node(node).id
        halves = [records[:len(records) // 2], records[len(records) // 2:]]  # parallelize's
        for part, half in enumerate(halves):
            keys = pd.read_feather(os.path.join(derived, f"keys-op{op}-p{part}.arrow")).key
            assert [None if pd.isna(k) else k for k in keys] == \
                [key if key in joined else None for key, _ in half]


def test_a_reopened_run_traces_through_a_join_both_ways_with_no_trace_before(
        record, monkeypatch):
    run = record(JOIN, NS, lineage=True)
    _no_job(monkeypatch)
    reopened = _reopened(run, monkeypatch)
    back = reopened.trace_back(at=_at(run, ("ann", (30, "Ann A."))))
    assert [r[:3] for r in rows(back.to_pandas())] == [
        ("parallelize", 0, 0), ("parallelize", 1, 0), ("parallelize#2", 0, 0)]
    assert not any("stops" in note for note in back.notes)
    # "ann" of the names (partition 0, position 0) went into both "ann" outputs
    forward = reopened.trace_forward(at=(0, 0), operator="parallelize#2")
    ann = {_at(run, ("ann", (10, "Ann A."))), _at(run, ("ann", (30, "Ann A.")))}
    assert {(p, x) for _, p, x, _ in forward.rows()} == ann
    eve = reopened.trace_forward(at=(1, 1), operator="parallelize")  # ("eve", 40)
    assert len(eve) == 0 and not any("stops" in note for note in eve.notes)


PIPELINE = """
words = sc.parallelize(LINES, 2).flatMap(lambda line: line.split()).setName("split")
ranks = sc.parallelize([("a", 1), ("b", 2), ("c", 3)], 2)
digits = (words.map(lambda w: (w, 1)).setName("pair").join(ranks).setName("join")
          .map(lambda kv: (kv[1][1] % 2, 1)).setName("odd").reduceByKey(add)
          .setName("count").collect())
"""
LINES = ["a b x", "c a", "b b", "x a c"]  # 2 partitions: lines 0-1, 2-3


def test_a_join_inside_a_pipeline_traces_back_to_the_lines_of_its_keys(record, monkeypatch):
    run = record(PIPELINE, {"LINES": LINES, "add": add}, lineage=True)
    assert sorted(run.namespace["digits"]) == [(0, 3), (1, 5)]  # b: 3; a: 3 and c: 2
    _no_job(monkeypatch)
    odd = run.trace_back((1, 5))  # every "a" and "c": the lines holding one, their ranks
    assert [r[3] for r in rows(odd.to_pandas())] == ["a b x", "c a", "x a c", ("a", 1), ("c", 3)]
    even = run.trace_back((0, 3))  # every "b"
    assert [r[3] for r in rows(even.to_pandas())] == ["a b x", "b b", ("b", 2)]
    assert odd.operators["pair"] == 5 and even.operators["pair"] == 3


def test_keys_not_plain_are_fetched_by_a_job_and_a_reopened_run_says_why_it_stops(
        record, monkeypatch):
    run = record("""
orders = sc.parallelize([(("ann", 1), 10), (("bob", 2), 20)], 2)
names = sc.parallelize([(("ann", 1), "A"), (("bob", 2), "B")], 2)
joined = orders.join(names, 2).setName("joined").collect()
""", lineage=True)
    assert run.status == "finished", run.error
    at = _at(run, (("bob", 2), (20, "B")))
    reopened = _reopened(run, monkeypatch)
    stopped = reopened.trace_back(at=at)
    assert stopped.operators.get("parallelize", 0) == 0
    assert any("stops at 'joined', a join" in note for note in stopped.notes)
    t = run.trace_back((("bob", 2), (20, "B")))  # tuples: fetched with Spark
    assert rows(t.to_pandas()) == [("parallelize", 1, 0, (("bob", 2), 20)),
                                   ("parallelize#2", 1, 0, (("bob", 2), "B"))]


COUNT = """
counts = (sc.parallelize(WORDS, 2).map(lambda w: (w, 1)).setName("pair")
          .reduceByKey(add).setName("count").collect())
"""
WORDS = ["a", "b", "a", "c", "a", "b"]


def test_a_map_side_named_theta_records_its_inputs_and_a_reopened_run_traces_through_it(
        record, monkeypatch):
    # .setName("count") names the map side "count (combine)" after PySpark has shipped it
    run = record(COUNT, {"WORDS": WORDS, "add": add}, interesting="count (combine)",
                 record_inputs=True, lineage=True)
    assert run.status == "finished", run.error
    assert run.dag.require_interesting().name == "count (combine)"
    assert not run.warnings
    for part in range(2):  # θ's inputs: the pairs of its partition, in order
        assert [tuple(r) for r in run.recorded_inputs(part)] == \
            [(w, 1) for w in WORDS[3 * part:3 * part + 3]]
    # no trace crossed the map side in this kernel: a reopened run numbers its keys
    # from the recorded inputs ("a" at positions 0, 2 of partition 0 and 1 of partition 1)
    reopened = _reopened(run, monkeypatch)
    t = reopened.trace_back(at=_at(run, ("a", 3)))
    assert [r[:3] for r in rows(t.to_pandas())] == [("parallelize", 0, 0), ("parallelize", 0, 2),
                                                    ("parallelize", 1, 1)]
    assert not any("map side" in note for note in t.notes)
