"""The live ``waiting`` column of ``run.skew(op).partitions``: the bytes each reduce
partition still has to read, against the bytes its task did read."""
import time

import pytest

from tests.spark.test_live_control import live  # noqa: F401  (the fixture)
from tests.waiting import wait_until

pytestmark = pytest.mark.spark

# partition p of 8 (Python ints hash to themselves) gets 15 * (p + 1) keys: sizes differ
EVENTS = [(k, 1) for p in range(8) for k in range(p, 8 * 15 * (p + 1), 8)] * 20
CODE = """
from operator import add
totals = (sc.parallelize(EVENTS, 4).map(lambda e: e).setName("by key")
            .reduceByKey(add, 8).setName("sum").map(slow_pair).setName("slow").collect())
"""


def slow_pair(pair):
    time.sleep(0.015)
    return pair


def bytes_read(sc, stage):
    """partition -> the shuffle bytes its successful task read (Spark's task metrics)."""
    read = {}
    tasks = sc._jsc.sc().statusStore().taskList(stage, 0, 1000).iterator()
    while tasks.hasNext():
        task = tasks.next()
        if task.status() == "SUCCESS":
            metrics = task.taskMetrics().get().shuffleReadMetrics()
            read[task.index()] = metrics.localBytesRead() + metrics.remoteBytesRead()
    return read


def test_waiting_is_the_shuffle_bytes_a_reduce_partition_has_still_to_read(live, sc):  # noqa: F811
    run = live(CODE, {"EVENTS": EVENTS, "slow_pair": slow_pair}, skew=True)

    def some_done():
        workers = run.partitions("sum") if "sum" in run.dag.names().values() else []
        return any(w["status"] == "ok" for w in workers) and len(workers) < 7
    wait_until(some_done, 120, "a reduce partition done, others not started")
    assert run.pause().complete
    s = run.skew("sum")
    frame = s.partitions.set_index("partition")
    status = {w["partition"]: w["status"] for w in run.partitions("sum")}
    stage = run.partitions("sum")[0]["stage"]
    run.resume()
    run.wait(120)
    assert run.status == "finished", run.error
    read = bytes_read(sc, stage)
    assert sorted(frame.index) == list(range(8)) and s.waiting_note == ""
    waiting = frame["waiting"]
    not_started = [p for p in range(8) if p not in status]
    assert not_started and any(v == "ok" for v in status.values())
    for p in range(8):
        if status.get(p) == "ok":
            assert waiting[p] == 0, p
        elif p in not_started:  # Spark's map output sizes are rounded to within ~10%
            assert waiting[p] == pytest.approx(read[p], rel=0.1), p
        else:
            assert 0 <= waiting[p] <= 1.1 * read[p], p
    assert read[7] > 3 * read[0]  # the sizes differ, and waiting follows them
    final = run.skew("sum").partitions
    assert "waiting" not in final and "running" not in final
