"""RDD pipelines under recording: same results, exact counts, a faithful DAG."""
from operator import add

import pytest
from pyspark.core.rdd import RDD

from icedtea_jupyter import Operator

pytestmark = pytest.mark.spark


class HighestPerKey(Operator):
    def open(self):
        self.highest = {}

    def process(self, pair):
        key, value = pair
        self.highest[key] = max(self.highest.get(key, value), value)
        yield key, self.highest[key]


PIPELINE = """
pairs = sc.parallelize(range(4000), 4).map(lambda x: (x % 7, x))
best = pairs.mapPartitions(HighestPerKey()).setName("best")
kept = best.filter(lambda kv: kv[1] % 2 == 0).setName("even")
result = sorted(kept.reduceByKey(add).setName("total").collect())
"""


def test_results_equal_the_plain_run_and_counts_are_exact(record, sc):
    ns = {"HighestPerKey": HighestPerKey, "add": add}
    plain = dict(ns, sc=sc)
    exec(PIPELINE, plain)
    run = record(PIPELINE, ns)
    assert run.status == "finished", run.error
    assert run.namespace["result"] == plain["result"]
    metrics = run.metrics().groupby("operator")[["records_in", "records_out"]].sum()
    assert metrics.loc["map"].tolist() == [4000, 4000]
    assert metrics.loc["best"].tolist() == [4000, 4000]
    assert metrics.loc["even", "records_in"] == 4000
    assert metrics.loc["even", "records_out"] == sum(
        1 for x in range(4000) if HighestPerKeyReference.output(x) % 2 == 0)
    assert metrics.loc["total", "records_out"] == len(plain["result"])
    assert set(run.metrics()["partition"]) == {0, 1, 2, 3}


class HighestPerKeyReference:
    """What HighestPerKey emits for x, partition by partition (1000 records each)."""

    @staticmethod
    def output(x):
        start = (x // 1000) * 1000
        return max(y for y in range(start, x + 1) if y % 7 == x % 7)


def test_dag_has_names_kinds_edges_and_stages(record):
    run = record(PIPELINE, {"HighestPerKey": HighestPerKey, "add": add})
    names = [op.name for op in run.dag.operators]
    assert names == ["parallelize", "map", "best", "even", "total (combine)", "shuffle", "total"]
    kinds = {op.name: op.kind for op in run.dag.operators}
    assert kinds["parallelize"] == "jvm" and kinds["best"] == "python"
    assert ("best", "even") in run.dag.edges and ("shuffle", "total") in run.dag.edges
    stages = list(run.dag.stages.values())
    assert ["map", "best", "even", "total (combine)"] in stages and ["total"] in stages


def test_the_pyspark_api_is_left_exactly_as_it_was(record):
    before = {name: RDD.__dict__[name] for name in ("map", "filter", "reduceByKey", "setName")}
    record("sc.parallelize([1]).map(str).collect()")
    record("sc.parallelize([1]).map(str).collect(); raise RuntimeError('late')")
    after = {name: RDD.__dict__[name] for name in before}
    assert before == after
    assert "_icedtea" not in repr(RDD.map)


def test_other_threads_are_not_instrumented_while_a_run_records(record, sc):
    import threading

    seen = {}

    def other_thread():
        rdd = sc.parallelize([1, 2]).map(lambda x: x)
        seen["tagged"] = hasattr(rdd, "_icedtea_node")

    code = "t = threading.Thread(target=other); t.start(); t.join(); sc.parallelize([1]).count()"
    run = record(code, {"threading": threading, "other": other_thread})
    assert run.status == "finished" and seen == {"tagged": False}


@pytest.mark.parametrize("code, expected", [
    ("out = sc.parallelize(['a b', 'c']).flatMap(str.split).collect()",
     {"split": (2, 3)}),
    ("out = sc.parallelize(range(10), 2).mapPartitionsWithIndex(lambda i, it: [i * sum(it)])"
     ".collect()", {"mapPartitionsWithIndex": (10, 2)}),
    ("sc.parallelize(range(10), 2).foreach(lambda x: None)", {"foreach": (10, 0)}),
    ("sc.parallelize(range(10), 2).foreachPartition(lambda it: list(it))",
     {"foreachPartition": (10, 0)}),
    ("out = sc.parallelize(range(10)).keyBy(lambda x: x % 2).mapValues(lambda v: v * 10)"
     ".collect()", {"keyBy": (10, 10), "mapValues": (10, 10)}),
    ("out = sc.parallelize([(1, 'a b')]).flatMapValues(str.split).collect()",
     {"split": (1, 2)}),
])
def test_every_record_operator_is_hosted(record, code, expected):
    run = record(code)
    assert run.status == "finished", run.error
    totals = run.metrics().groupby("operator")[["records_in", "records_out"]].sum()
    for name, counts in expected.items():
        assert tuple(totals.loc[name]) == counts


def test_key_based_aggregations_have_a_combine_and_a_merge_side(record):
    code = """
data = sc.parallelize([(k % 3, k) for k in range(30)], 3)
agg = sorted(data.aggregateByKey(0, lambda a, v: a + v, lambda a, b: a + b).collect())
comb = sorted(data.combineByKey(lambda v: [v], lambda c, v: c + [v], lambda a, b: a + b)
              .mapValues(len).collect())
groups = sorted((k, sorted(v)) for k, v in data.groupByKey().collect())
folded = sorted(data.foldByKey(0, add).collect())
"""
    run = record(code, {"add": add})
    assert run.status == "finished", run.error
    ns = run.namespace
    assert ns["agg"] == ns["folded"] == [(k, sum(v for v in range(30) if v % 3 == k))
                                          for k in range(3)]
    assert ns["comb"] == [(0, 10), (1, 10), (2, 10)]
    assert ns["groups"][1] == (1, list(range(1, 30, 3)))
    totals = run.metrics().groupby("operator")[["records_in", "records_out"]].sum()
    assert tuple(totals.loc["aggregateByKey (combine)"]) == (30, 9)
    assert tuple(totals.loc["aggregateByKey"]) == (9, 3)
    assert tuple(totals.loc["groupByKey"]) == (9, 3)


def test_union_join_and_cogroup_are_multi_input_nodes(record):
    code = """
left = sc.parallelize([(1, 'a'), (2, 'b')]).setName('left')
right = sc.parallelize([(1, 'x'), (3, 'y')]).setName('right')
both = left.union(right).map(lambda kv: kv).collect()
joined = left.join(right).collect()
grouped = left.cogroup(right).collect()
"""
    run = record(code)
    assert run.namespace["joined"] == [(1, ("a", "x"))]
    edges = run.dag.edges
    for api in ("union", "join", "cogroup"):
        assert {(up, down) for up, down in edges if down == api} == {("left", api),
                                                                     ("right", api)}


def test_pyspark_s_own_functions_are_not_mistaken_for_operators(record):
    code = "n = sc.parallelize([(1, 2), (3, 4)]).values().map(str).count()"
    run = record(code)
    assert run.namespace["n"] == 2
    assert [op.name for op in run.dag.python_operators] == ["str"]


class Scale(Operator):
    name = "scaler"

    def process(self, x):
        yield x * 2


def test_explicit_names_and_duplicate_names(record):
    from icedtea_jupyter import named

    code = """
out = (sc.parallelize(range(6)).map(named("parse", lambda x: x)).mapPartitions(Scale())
       .map(str).map(str).collect())
"""
    run = record(code, {"named": named, "Scale": Scale})
    assert [op.name for op in run.dag.python_operators] == ["parse", "scaler", "str", "str#2"]
