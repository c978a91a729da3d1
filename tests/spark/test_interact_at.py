"""``--interact-at``: interactions taken at θ's given per-partition counts, so interaction
k of a new run shows the states interaction k of an earlier run showed."""
import pytest

from icedtea_jupyter import Operator

pytestmark = pytest.mark.spark

CODE = ("out = sc.parallelize(range(400), 2).mapPartitions(Tally()).setName('tally')"
        ".map(lambda x: x * 2).setName('double').collect()")


class Tally(Operator):
    """Counts and sums per key what it has seen: its state says how far it got."""

    def open(self):
        self.seen = 0
        self.by_key = {}

    def process(self, x):
        self.seen += 1
        self.by_key[x % 5] = self.by_key.get(x % 5, 0) + x
        yield x


def tallied(records):
    by_key = {}
    for x in records:
        by_key[x % 5] = by_key.get(x % 5, 0) + x
    return {"seen": len(records), "by_key": by_key}


def theta_counts(run, k):
    return {p: c for (op, p), c in run.interactions[k].counts.items() if op == "tally"}


def test_each_interaction_is_taken_at_its_counts_and_jumps_land_there(record):
    run = record(CODE, {"Tally": Tally}, interesting="tally",
                 interact_at="0:50 1:0, 0:120 1:end, 1:30")
    assert run.status == "finished"
    assert [i.trigger for i in run.interactions] == ["initial", "pinned", "pinned", "pinned"]
    assert all(i.complete for i in run.interactions)
    assert theta_counts(run, 1) == {0: 50, 1: 0}
    assert theta_counts(run, 2) == {0: 120, 1: 200}
    third = theta_counts(run, 3)
    assert third[1] == 30 and third[0] is not None  # p0 reported where it was then
    partition = {0: list(range(200)), 1: list(range(200, 400))}
    dbg = run.debugger()
    for k in (1, 2, 3):
        for p, count in theta_counts(run, k).items():
            state = run.snapshot(k).state("tally", p)
            if count:  # a partition not started yet has not run open()
                assert state == tallied(partition[p][:count]), (k, p)
            assert dbg.jump(k).state("tally", p) == state, (k, p)


def test_a_count_beyond_the_partition_is_said_and_shows_its_end(record):
    run = record(CODE, {"Tally": Tally}, interesting="tally", interact_at="0:150, 0:500")
    assert theta_counts(run, 2)[0] == 200  # the partition's end
    assert run.snapshot(2).state("tally", 0) == tallied(list(range(200)))
    alerts = run.alerts()
    said = alerts[alerts.tool == "interact-at"]
    assert list(said.partition) == [0] and list(said.level) == ["warning"]
    assert "I2 were pinned at up to 500 records of this partition, which had 200" \
        in said.message.iloc[0]


BATCHES = """
spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "100")
def tally(batches):
    seen = 0
    for batch in batches:
        seen += len(batch)
        yield batch
out = spark.range(0, 1000, numPartitions=2).mapInPandas(tally, 'id long').collect()
"""


def test_a_batch_function_counts_rows_and_is_pinned_at_batch_boundaries(record):
    run = record(BATCHES, interact_at="0:300 1:250, 1:end 0:0")
    assert run.status == "finished", run.error
    counts = [{p: c for (_, p), c in i.counts.items()} for i in run.interactions[1:]]
    assert counts == [{0: 300, 1: 300}, {0: 0, 1: 500}]  # 250 falls inside a batch
    assert [run.snapshot(1).state("tally", p)["seen"] for p in (0, 1)] == [300, 300]
    assert run.snapshot(2).state("tally", 1)["seen"] == 500
