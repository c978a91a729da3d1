"""Joins and cogroups while recording: PySpark's own results, one DAG node each, and the
input order their reduce-side merge logs (the shuffle's fetch order)."""
from collections import Counter

import pytest

pytestmark = pytest.mark.spark

LEFT = [(k % 7, k) for k in range(40)]  # keys 0..6
RIGHT = [(k % 5, -k) for k in range(23)] + [(9, "nine")]  # keys 0..4 and 9

CODE = """
left = sc.parallelize(LEFT, 3).map(lambda kv: kv).setName('left')
right = sc.parallelize(RIGHT, 2).map(lambda kv: kv).setName('right')
joined = left.join(right, 4).glom().collect()
grouped = left.cogroup(right).glom().collect()
outer = [left.leftOuterJoin(right).collect(), left.rightOuterJoin(right, 3).collect(),
         left.fullOuterJoin(right).collect()]
three = left.groupWith(right, left).collect()
"""


def multiset(records):
    return Counter(repr(r) for r in records)


def groups(records):
    """Cogroup records with each input's values as a sorted list (their order is the
    shuffle's fetch order, which varies)."""
    return multiset((k, tuple(sorted(vs, key=repr) for vs in value)) for k, value in records)


def combiners(parts, reduce_partitions, p):
    """What one input sends reduce partition ``p``: a combiner per key per map partition
    (the keys are small ints, which Spark's portable_hash leaves as they are)."""
    return sum(len({k for k, _ in part if k % reduce_partitions == p})
               for part in parts)


def totals(order):
    counts = Counter()
    for name, records in order:
        counts[name] += records
    return dict(counts)


def test_joins_and_cogroups_give_pysparks_results_and_log_their_input_order(record, sc):
    run = record(CODE, {"LEFT": LEFT, "RIGHT": RIGHT})
    assert run.status == "finished", run.error
    ns = run.namespace
    left, right = sc.parallelize(LEFT, 3), sc.parallelize(RIGHT, 2)  # not recording: PySpark's
    assert [multiset(p) for p in ns["joined"]] == [
        multiset(p) for p in left.join(right, 4).glom().collect()]
    assert [groups(p) for p in ns["grouped"]] == [
        groups(p) for p in left.cogroup(right).glom().collect()]
    for mine, theirs in zip(ns["outer"], [left.leftOuterJoin(right), left.rightOuterJoin(right, 3),
                                          left.fullOuterJoin(right)]):
        assert multiset(mine) == multiset(theirs.collect())
    assert groups(ns["three"]) == groups(left.groupWith(right, left).collect())

    for api in ("join", "cogroup", "leftOuterJoin", "rightOuterJoin", "fullOuterJoin"):
        assert {(up, down) for up, down in run.dag.edges if down == api} == {
            ("left", api), ("right", api)}
        assert run.dag.node(api).kind == "python"
    left_parts, right_parts = left.glom().collect(), right.glom().collect()
    for name, reducers in (("join", 4), ("cogroup", 5)):
        for p in range(reducers):
            order = run.input_order(name, p)
            assert totals(order) == {"left": combiners(left_parts, reducers, p),
                                     "right": combiners(right_parts, reducers, p)}
            assert all(a[0] != b[0] for a, b in zip(order, order[1:]))  # run-length encoded
            (worker,) = [w for w in run.partitions(name) if w["partition"] == p]
            assert worker["records_in"] == sum(n for _, n in order)
    for p in range(8):  # three inputs of 3 + 2 + 3 partitions
        expected = {"left": 2 * combiners(left_parts, 8, p), "right": combiners(right_parts, 8, p)}
        assert totals(run.input_order("groupWith", p)) == {k: n for k, n in expected.items() if n}
    assert [name for name, _ in run.input_order("left", 1)] == ["parallelize"]  # unchanged
    with pytest.raises(KeyError, match="no operator 'nope'"):
        run.input_order("nope", 0)
    with pytest.raises(LookupError, match="no input order of 'join' on partition 9"):
        run.input_order("join", 9)


def test_a_join_of_inputs_partitioned_alike_reads_each_input_in_turn(record, sc):
    # Both inputs hash-partitioned into 4: the union keeps their partitioning, so PySpark
    # joins without a shuffle and each partition reads the left input, then the right.
    # The join is outside G(θ) here: its input order is logged all the same.
    code = """
left = sc.parallelize(LEFT, 3).partitionBy(4).setName('lp')
right = sc.parallelize(RIGHT, 2).partitionBy(4).setName('rp')
out = left.join(right).map(lambda kv: kv).setName('after').glom().collect()
"""
    run = record(code, {"LEFT": LEFT, "RIGHT": RIGHT}, interesting="after")
    assert run.status == "finished", run.error
    assert not run.dag.node("join").in_g
    expected = sc.parallelize(LEFT, 3).partitionBy(4).join(
        sc.parallelize(RIGHT, 2).partitionBy(4))
    assert expected.getNumPartitions() == 4
    assert [multiset(p) for p in run.namespace["out"]] == [
        multiset(p) for p in expected.glom().collect()]
    for p in range(4):
        keys = {k for k, _ in LEFT}, {k for k, _ in RIGHT}
        assert run.input_order("join", p) == [
            (name, n) for name, n in (("lp", sum(1 for k in keys[0] if k % 4 == p)),
                                      ("rp", sum(1 for k in keys[1] if k % 4 == p))) if n]
