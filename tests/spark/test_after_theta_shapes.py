"""Operators of G(θ) after θ's Python worker: a user's ``partitionBy`` between two of
them replays exactly (the jumps are in test_fork_jumps.py's SHAPES; here the run's end
and the pipeline's results), and what replay does not compute yet is named, with what
to record instead: the operators after a join, and DataFrame operators after θ."""
import pytest

from icedtea_jupyter.replay.debugger import Debugger
from tests.spark.test_fork_jumps import NAMESPACE, SHAPES

pytestmark = pytest.mark.spark

OTHER = [(f"c{i}", i * 10) for i in range(23)]
JOIN = ("theta = sc.parallelize(PURCHASES, 3).mapPartitions(Points()).setName('points')\n"
        "out = theta.map(lambda r: (r[0], r[2])).join(sc.parallelize(OTHER, 2))"
        ".mapPartitions(running_max).setName('after').collect()")


@pytest.mark.parametrize("engine", ["process", "kernel"])
def test_after_a_partition_by_replay_ends_as_the_run_ended(record, sc, monkeypatch, engine):
    monkeypatch.setenv("ICEDTEA_REPLAY", engine)
    code, theta = SHAPES["partitionBy between two generators"]
    run = record(code, NAMESPACE, interesting=theta, interact_every=0.12)
    assert run.status == "finished", run.error
    plain = dict(NAMESPACE, sc=sc)
    exec(code, plain)  # noqa: S102 - the same cell without %%icedtea
    assert sorted(run.namespace["out"]) == sorted(plain["out"])  # the tags change nothing
    assert [(a, b) for a, b in run.dag.edges] == [
        ("parallelize", "points"), ("points", "map"), ("map", "partitionBy"),
        ("partitionBy", "after")]
    dbg = run.debugger()
    assert isinstance(dbg, Debugger) == (engine == "kernel")
    last = len(run.interactions) - 1
    dbg.jump(last)
    for p in range(3):
        while not dbg.ended(p):
            dbg.step_over(p)
    ended = dbg.snapshot()
    for q in range(4):  # 'x', the last record read, depends on the shuffle's order
        assert ended.state("after", q) == run.final_state("after", q), q
        assert ended.count("after", q) == next(
            w["records_in"] for w in run.partitions("after") if w["partition"] == q)
    assert not [n for n in ended.notes if "not replayed" in n]
    dbg.close()


def test_operators_after_a_join_are_named_as_not_replayed(record):
    run = record(JOIN, dict(NAMESPACE, OTHER=OTHER), interesting="points",
                 interact_every=0.12)
    assert run.status == "finished", run.error
    jumped = run.debugger().jump(1)
    (note,) = [n for n in jumped.notes if "not replayed" in n]
    assert "'join', 'after' in G(θ) are not replayed" in note
    assert "--interesting 'join'" in note and "--record-inputs" not in note
    assert jumped.state("points", 0) == run.snapshot(1).state("points", 0)  # θ still is


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
def test_dataframe_operators_after_theta_are_named_with_what_works(record, between):
    run = record(DATAFRAME.format(between=between), interesting="running",
                 interact_every=0.1)
    assert run.status == "finished", run.error
    jumped = run.debugger().jump(0)
    (note,) = [n for n in jumped.notes if "not replayed" in n]
    assert "'later' in G(θ) are not replayed" in note and "own" in note
    assert note.endswith("--interesting 'later'")
