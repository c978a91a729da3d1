"""Exception breakpoints (``--on-error pause``) beyond per-record functions, and their
edits replayed from inputs kept with ``--record-inputs``."""
import time

import pytest

from icedtea_jupyter import Operator
from tests.moments import distinct_moments
from tests.spark.test_live_control import live  # noqa: F401  (the fixture)

pytestmark = pytest.mark.spark


class RunningInverse(Operator):
    """A running sum of 1000 // (x - 13): raises on 13; its total is the state."""

    name = "inverses"

    def open(self):
        self.total = 0

    def process(self, x):
        time.sleep(0.004)
        self.total += 1000 // (x - 13)
        yield self.total


def running(values):
    total, out = 0, []
    for x in values:
        total += 1000 // (x - 13)
        out.append(total)
    return out


@pytest.mark.parametrize("action", ["replace", "skip"])
def test_recorded_inputs_keep_the_raw_culprit_and_jumps_agree_with_the_edit(live, action):  # noqa: F811
    code = "out = sc.parallelize(range(200), 2).mapPartitions(RunningInverse()).collect()"
    run = live(code, {"RunningInverse": RunningInverse}, on_error="pause",
               record_inputs=True, interesting="inverses", interact_every=0.1)
    hit = run.wait_for_hit(120)
    assert (hit.kind, hit.record, hit.partition) == ("error", 13, 0)  # the record that raised
    hit.replace(113) if action == "replace" else hit.skip()
    run.wait(120)
    assert run.status == "finished", run.error
    edited = [113] if action == "replace" else []
    taken = [x for x in range(100) if x != 13]
    taken[13:13] = edited
    assert run.namespace["out"] == running(taken) + running(range(100, 200))
    assert run.recorded_inputs(0)[13] == 13  # kept raw: what Spark gave
    dbg = run.debugger()
    jumps = 0
    for k in distinct_moments(run, 1):
        recorded = run.snapshot(k)
        if recorded.status("inverses", 0) == "running":
            assert dbg.jump(k).state("inverses", 0) == recorded.state("inverses", 0), k
            jumps += 1
    assert jumps >= 2


def inverse_totals(rows):
    """A generator: a running sum of 1000 // (x - 13), raising on 13."""
    total = 0
    for x in rows:
        time.sleep(0.002)
        total += 1000 // (x - 13)
        yield total


@pytest.mark.parametrize("action", ["stop", "resume"])
def test_a_generator_that_raises_pauses_on_its_record_and_offers_resume_or_stop(
        live, action):  # noqa: F811
    code = ("out = sc.parallelize(range(200), 2).mapPartitions(inverse_totals)"
            ".setName('totals').collect()")
    run = live(code, {"inverse_totals": inverse_totals}, on_error="pause")
    hit = run.wait_for_hit(120)
    assert (hit.kind, hit.record, hit.partition) == ("error", 13, 0)  # the record it took last
    assert hit.error["exception"] == "ZeroDivisionError"
    assert hit.state["total"] == sum(1000 // (x - 13) for x in range(13))  # when it raised
    assert hit.actions == ("resume", "stop")
    for refused in (hit.skip, lambda: hit.replace(113)):
        with pytest.raises(ValueError, match="cannot go on.* over the 14 records it took"):
            refused()
    assert hit.pending and run.paused
    getattr(hit, action)()
    if action == "resume":  # Spark's second attempt of the task (local[2,2]) raises too
        again = run.wait_for_hit(120)
        assert (again.record, again.partition, again.actions) == (13, 0, ("resume", "stop"))
        again.resume()
    run.wait(120)
    if action == "stop":
        assert run.status == "stopped" and run.error is None
    else:  # as without --on-error pause: the task fails and the culprit is reported
        assert run.status == "failed" and run.error["exception"] == "ZeroDivisionError"
        assert run.error["partition"] == 0
    assert [h.decision for h in run.breakpoints] == [action] * (1 + (action == "resume"))


def failing_batches(batches):
    """A batch function: raises on the batch holding id 130."""
    for pdf in batches:
        if (pdf["id"] == 130).any():
            raise ValueError("bad batch")
        yield pdf


def test_a_batch_function_that_raises_pauses_on_its_batch(live, spark):  # noqa: F811
    code = ("out = spark.range(0, 200, 1, 2).mapInPandas(failing_batches, 'id long')"
            ".collect()")
    run = live(code, {"failing_batches": failing_batches}, on_error="pause")
    hit = run.wait_for_hit(120)
    assert hit.kind == "error" and hit.error["message"] == "bad batch"
    assert hit.actions == ("resume", "stop") and "cannot go on" in hit.refused
    with pytest.raises(ValueError, match="not offered"):
        hit.skip()
    hit.stop()
    run.wait(120)
    assert run.status == "stopped" and run.error is None
