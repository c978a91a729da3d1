"""Operators of G(θ) after θ's Python worker, across a shuffle: after a user's
``partitionBy`` and after a join, replay ends each worker as the run ended it, in both
engines, and recording changes no result (the jumps to every interaction are checked
in test_fork_jumps.py's SHAPES). What replay does not compute yet, DataFrame operators
after θ, is named in the notes of every jump, with what to record instead."""
import pytest

from icedtea_jupyter.replay.debugger import Debugger
from tests.moments import distinct_moments
from tests.spark.test_fork_jumps import NAMESPACE, SHAPES

pytestmark = pytest.mark.spark



EDGES = {"partitionBy": [("parallelize", "points"), ("points", "map"), ("map", "partitionBy"),
                         ("partitionBy", "after")],
         "join": [("map", "join"), ("parallelize", "points"), ("parallelize#2", "join"),
                  ("points", "map"), ("join", "after")]}


@pytest.mark.parametrize("engine", ["process", "kernel"])
@pytest.mark.parametrize("shuffle", sorted(EDGES))
def test_after_a_shuffle_replay_ends_as_the_run_ended(record, sc, monkeypatch, shuffle,
                                                      engine):
    monkeypatch.setenv("ICEDTEA_REPLAY", engine)
    code, theta = SHAPES[f"{shuffle} between two generators"]
    run = record(code, NAMESPACE, interesting=theta, interact_every=0.12)
    assert run.status == "finished", run.error
    plain = dict(NAMESPACE, sc=sc)
    exec(code, plain)  # noqa: S102 - the same cell without %%icedtea
    assert sorted(run.namespace["out"]) == sorted(plain["out"])  # the tags change nothing
    assert sorted(run.dag.edges) == sorted(EDGES[shuffle])
    dbg = run.debugger()
    assert isinstance(dbg, Debugger) == (engine == "kernel")
    last = len(run.interactions) - 1
    dbg.jump(last)
    for p in range(3):
        while not dbg.ended(p):
            dbg.step_over(p)
    ended = dbg.snapshot()
    fed = ["after"] + (["join"] if shuffle == "join" else [])
    for name, q in [(op, w["partition"]) for op in fed for w in run.partitions(op)]:
        # 'x', the last record 'after' read, depends on the shuffle's order
        assert ended.state(name, q) == run.final_state(name, q), (name, q)
        assert ended.count(name, q) == next(
            w["records_in"] for w in run.partitions(name) if w["partition"] == q)
    assert not [n for n in ended.notes if "not replayed" in n]
    dbg.close()


CUSTOM_PARTITIONER = (
    "out = sc.parallelize(PURCHASES, 3).mapPartitions(Points()).setName('points')"
    ".map(lambda r: (r[0], r[2])).partitionBy(2, lambda k: int(k[1:]) // 12)"
    ".mapPartitions(running_max).setName('after').collect()")


def test_a_users_partition_function_routes_replay_as_it_routed_the_run(record, sc):
    run = record(CUSTOM_PARTITIONER, NAMESPACE, interesting="points", interact_every=0.12)
    assert run.status == "finished", run.error
    plain = dict(NAMESPACE, sc=sc)
    exec(CUSTOM_PARTITIONER, plain)  # noqa: S102 - the same cell without %%icedtea
    assert sorted(run.namespace["out"]) == sorted(plain["out"])  # the markers change nothing
    dbg = run.debugger()
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for q in (0, 1):
            if recorded.status("after", q) in ("running", "finished"):
                assert jumped.state("after", q) == recorded.state("after", q), (k, q)
                assert jumped.count("after", q) == recorded.count("after", q), (k, q)
    dbg.close()


DATAFRAME = """
def running(batches):
    total = 0.0
    for pdf in batches:
        total += float(pdf.v.sum())
        yield pdf.assign(total=total)
def later(batches):
    seen = 0
    for pdf in batches:
        seen += len(pdf)
        yield pdf
df = spark.range(0, 4000, numPartitions=2).selectExpr("id", "id % 3 AS k", "CAST(id AS DOUBLE) AS v")
theta = df.mapInPandas(running, "id long, k long, v double, total double")
out = theta{between}.mapInPandas(later, "id long, k long, v double, total double").count()
"""


@pytest.mark.parametrize("between", ["", ".repartition(3)"], ids=["pipelined", "exchange"])
def test_dataframe_operators_after_theta_are_replayed_as_their_workers_reported(record,
                                                                               between):
    run = record(DATAFRAME.format(between=between), interesting="running",
                 interact_every=0.1)
    assert run.status == "finished", run.error
    dbg = run.debugger()
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        assert not [n for n in jumped.notes if "not replayed" in n]
        for q in dbg.partitions("later"):
            if recorded.state("later", q) is not None:
                assert jumped.state("later", q) == recorded.state("later", q), (k, q)
    (note,) = [n for n in jumped.notes if "'later' after θ" in n]  # how steps move it
    assert "regenerated with Spark" in note
    assert ("later Spark stage" if between else "a step gives it each batch") in note, note
    dbg.close()


COPARTITIONED = """
class Running:
    def __init__(self):
        self.total = 0
    def __call__(self, v):
        self.total += v
        return (v, self.total)
left = sc.parallelize([(i % 10, i) for i in range(1000)], 2).partitionBy(2)
right = sc.parallelize([(i, i * i) for i in range(10)], 2).partitionBy(2)
theta = left.mapValues(Running()).setName("running")
out = theta.join(right, 2).mapValues(lambda p: p[0][1] + p[1]).setName("after").collect()
"""


def test_a_join_of_inputs_partitioned_alike_replays_once_thetas_partition_ends(record, sc):
    """No shuffle: PySpark's join of two RDDs partitioned alike runs its map-side combine
    and merge in θ's stage, the combine reading all of θ's partition first. Replay
    regenerates the combiners with Spark; a step that ends θ's partition gives them to
    the join, which then ends as the run ended it, and the operator after it too."""
    run = record(COPARTITIONED, {}, interesting="running", interact_every=0.05)
    assert run.status == "finished", run.error
    plain = {"sc": sc}
    exec(COPARTITIONED, plain)  # noqa: S102 - the same cell without %%icedtea
    assert sorted(run.namespace["out"]) == sorted(plain["out"])
    assert run.dag.node("join").copartitioned
    dbg = run.debugger()
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        assert not [n for n in jumped.notes if "not replayed" in n], jumped.notes
        for q in (0, 1):
            if recorded.status("join", q) in ("running", "finished"):
                assert jumped.state("join", q) == recorded.state("join", q), (k, q)
    (note,) = [n for n in dbg.jump(0).notes if "'join' after θ" in n]
    assert "a join of inputs partitioned alike" in note
    for q in (0, 1):
        while not dbg.ended(q):
            snapshot = dbg.step_over(partition=q)
            if not dbg.ended(q):  # its combine has not read all of θ's partition yet
                assert snapshot.count("join", q) == 0
        for name in ("join", "after"):
            assert snapshot.state(name, q) == run.final_state(name, q), (name, q)
        assert snapshot.count("join", q) == 10  # a combiner a key
        assert snapshot.count("join", 1 - q) == (10 if q else 0)
    dbg.close()
