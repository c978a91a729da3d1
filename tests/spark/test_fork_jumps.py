"""Jumps from fork checkpoints in the replay process, for every operator shape.

Each pipeline below is one shape users write: an ``Operator``, a generator function, a
closure's state in a ``map``, an aggregation after θ, two paths from θ meeting in a
union, a generator after a shuffle. For every interaction, the jump from the replay
process's parked forks must give the recorded snapshot (where the run could report
one) and exactly what the in-kernel engine gives replaying from I0, worker by worker,
and it must say which fork it started from.
"""
import os
import threading
import time

import pytest

from icedtea_jupyter import Operator
from icedtea_jupyter.replay.client import ReplayCancelled
from icedtea_jupyter.replay.cursor import StepRefused
from icedtea_jupyter.replay.debugger import Debugger
from icedtea_jupyter.replay.inputs import ReplayInputs
from icedtea_jupyter.replay.logs import RunLogs
from icedtea_jupyter.replay.remote import RemoteDebugger
from tests.waiting import wait_until

pytestmark = pytest.mark.spark


def spin(seconds):
    """An operator's work (busy, like real work). It stays: periodic interactions come every
    ``interact_every`` seconds while θ runs, and this is a lower bound on how long θ runs,
    so a slower machine only gives more interactions; the tests check each of them."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class Points(Operator):
    """θ: a dict of running totals."""

    def open(self):
        self.totals = {}

    def process(self, record):
        spin(0.001)
        customer, amount = record
        self.totals[customer] = self.totals.get(customer, 0) + amount
        yield customer, amount, self.totals[customer]


def tier(rows):
    """A generator mapPartitions: the usual way to keep state."""
    gold = set()
    seen = 0
    for customer, _amount, total in rows:
        seen += 1
        if total > 150:
            gold.add(customer)
        yield customer, total, customer in gold


def running_max(rows):
    best = None
    for x in rows:
        spin(0.001)
        best = x if best is None else max(best, x)
        yield x


def make_counter():
    counts = {}

    def count(x):
        spin(0.001)
        counts[x % 5] = counts.get(x % 5, 0) + 1
        return x
    return count


PURCHASES = [(f"c{i % 23}", i % 40) for i in range(900)]
SHAPES = {
    "operator then generator": (
        "out = sc.parallelize(PURCHASES, 3).mapPartitions(Points()).setName('points')"
        ".mapPartitions(tier).setName('tier').filter(lambda r: r[2]).collect()", "points"),
    "generator function": (
        "out = sc.parallelize(range(900), 2).mapPartitions(running_max).setName('best')"
        ".map(lambda x: x + 1).collect()", "best"),
    "closure in a map": (
        "out = sc.parallelize(range(900), 2).map(make_counter()).setName('count')"
        ".collect()", "count"),
    "reduceByKey after theta": (
        "out = sc.parallelize(PURCHASES, 3).mapPartitions(Points()).setName('points')"
        ".map(lambda r: (r[0], r[1])).reduceByKey(lambda a, b: a + b).setName('sum')"
        ".collect()", "points"),
    "union of two paths": (
        "theta = sc.parallelize(PURCHASES, 2).mapPartitions(Points()).setName('points')\n"
        "out = theta.map(lambda r: r[1]).union(theta.map(lambda r: -r[1]))"
        ".mapPartitions(running_max).setName('meet').collect()", "points"),
    "generator after a shuffle": (
        "out = sc.parallelize(PURCHASES, 3).mapPartitions(Points()).setName('points')"
        ".map(lambda r: (r[0], r[1])).reduceByKey(lambda a, b: a + b).setName('sum')"
        ".mapPartitions(running_max).setName('after').collect()", "points"),
    "join between two generators": (
        "theta = sc.parallelize(PURCHASES, 3).mapPartitions(Points()).setName('points')\n"
        "out = theta.map(lambda r: (r[0], r[2])).join(sc.parallelize(OTHER, 2))"
        ".mapPartitions(running_max).setName('after').collect()", "points"),
    "partitionBy between two generators": (
        "out = sc.parallelize(PURCHASES, 3).mapPartitions(Points()).setName('points')"
        ".map(lambda r: (r[0], r[2])).partitionBy(4).mapPartitions(running_max)"
        ".setName('after').collect()", "points"),
}
OTHER = [(f"c{i}", i * 10) for i in range(0, 23, 2)]  # another input of a join
NAMESPACE = {"Points": Points, "tier": tier, "running_max": running_max,
             "make_counter": make_counter, "PURCHASES": PURCHASES, "OTHER": OTHER}


def in_kernel(run):
    logs = RunLogs(run)
    return Debugger(logs, ReplayInputs(run, logs))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_jumps_from_forks_equal_the_run_and_a_replay_from_the_start(record, shape):
    code, theta = SHAPES[shape]
    run = record(code, NAMESPACE, interesting=theta, interact_every=0.12, tau=0.3)
    assert run.status == "finished", run.error
    dbg = run.debugger()
    assert isinstance(dbg, RemoteDebugger)
    plan = dbg.prepare(120)
    assert plan["forks"][0] == 0 and set(plan["forks"]) <= set(range(len(run.interactions)))
    reference = in_kernel(run)
    started = set()
    try:
        for k in reversed(range(len(run.interactions))):
            jumped, replayed, recorded = dbg.jump(k), reference.jump(k), run.snapshot(k)
            assert dbg.started_from == max(f for f in dbg.forks if f <= k)
            started.add(dbg.started_from)
            assert not jumped.notes, (shape, k, dbg.started_from, plan, jumped.notes)
            for op, p in [(w["operator"], w["partition"]) for w in replayed.workers()]:
                assert jumped.state(op, p) == replayed.state(op, p), (shape, k, op, p)
                assert jumped.count(op, p) == replayed.count(op, p), (shape, k, op, p)
                if run.dag.node(op).in_g and recorded.status(op, p) in ("running", "finished"):
                    assert jumped.state(op, p) == recorded.state(op, p), (shape, k, op, p)
    finally:
        reference.close()
    assert started - {0} or len(run.interactions) <= 2, (shape, plan)  # forks were used


@pytest.fixture
def spilling(sc):
    """The run's mergers spill: ``spark.python.worker.memory`` is 1 MB, under any worker."""
    before = sc._conf.get("spark.python.worker.memory")
    sc._conf.set("spark.python.worker.memory", "1m")
    yield
    sc._conf.set("spark.python.worker.memory", before or "512m")


@pytest.mark.parametrize("shape", ["reduceByKey after theta", "join between two generators"])
def test_jumps_feed_the_reduce_side_what_the_run_did_where_the_map_side_spilled(
        record, sc, spilling, shape):
    """A map side that spilled gave its combiners bucket by bucket, and the reduce side
    logged positions in that order; replay merges in memory, so it must reorder them, or
    it feeds the reduce side other keys' combiners (keys of other reduce partitions)."""
    code, theta = SHAPES[shape]
    run = record(code, NAMESPACE, interesting=theta, interact_every=0.12, tau=0.3)
    assert run.status == "finished", run.error
    # reduceByKey: θ's 3 partitions; the join: its inputs' 3 + 2
    reduce_side, n = ("sum", 3) if "reduceByKey" in shape else ("join", 5)
    keys = sorted({c for c, _ in PURCHASES})
    routed = sc.parallelize([(k, None) for k in keys], 3).partitionBy(n).glom() \
        .map(lambda part: [k for k, _ in part]).collect()  # as the workers hash
    dbg, reference = run.debugger(), in_kernel(run)
    merged = 0
    try:
        for k in range(len(run.interactions)):
            jumped, replayed = dbg.jump(k), reference.jump(k)
            for p in range(n):
                state = jumped.state(reduce_side, p)
                assert state == replayed.state(reduce_side, p), (k, p)
                assert set(state["combiners"]) <= set(routed[p]), (k, p, state, routed[p])
                merged += len(state["combiners"])
    finally:
        reference.close()
    assert merged, "no interaction saw the reduce side merging: the test shows nothing"


def test_a_generators_final_state_is_kept_in_the_run_and_in_replay(record):
    code, theta = SHAPES["operator then generator"]
    run = record(code, NAMESPACE, interesting=theta, interact_every=0.12)
    for p in range(3):
        final = run.final_state("tier", p)
        assert final["seen"] == 300 and final["gold"], final  # not {} once the frame closed
    dbg = run.debugger()
    last = dbg.jump(len(run.interactions) - 1)
    for p in range(3):
        if run.snapshot(len(run.interactions) - 1).status("points", p) == "finished":
            assert last.state("tier", p) == run.final_state("tier", p)


def test_a_worker_that_has_not_started_shows_its_initial_state_everywhere(record):
    code = ("out = sc.parallelize(PURCHASES, 6).mapPartitions(Points()).setName('points')"
            ".collect()")
    run = record(code, NAMESPACE, interesting="points", interact_every=0.1)
    first = run.snapshot(1)
    waiting = [p for p in range(6) if first.status("points", p) == "not started"]
    assert waiting, "with 2 cores and 6 partitions some start after I1"
    dbg = run.debugger()
    dbg.jump(1)
    for p in waiting:
        assert first.state("points", p) == {"totals": {}} == dbg.state("points", p)


def held_max(gate):
    """``running_max`` whose record 50 waits at ``gate`` (open while the run records)."""
    def running_max(rows):
        best = None
        for x in rows:
            if x == 50:
                gate.wait(str(os.getpid()))
            spin(0.001)
            best = x if best is None else max(best, x)
            yield x
    return running_max


def test_a_cancelled_jump_leaves_the_debugger_where_it_was(record, gate):
    code = ("out = sc.parallelize(range(1500), 1).mapPartitions(running_max).setName('best')"
            ".collect()")
    slow = {"running_max": held_max(gate), "spin": spin}
    gate.open()
    run = record(code, slow, interesting="best", interact_every=0.2)
    dbg = RemoteDebugger(run, prepare_now=False)  # only I0 is parked: jumps replay
    before = dbg.jump(0)
    last = len(run.interactions) - 1
    errors = []
    gate.close()
    jumping = threading.Thread(target=lambda: _catch(errors, dbg.jump, last))
    jumping.start()
    # the jump's replay process replays up to the gate and waits there (the run's own
    # debugger, which prepares time travel since the run ended, may wait there too)
    wait_until(lambda: dbg._busy is not None and str(dbg._busy.pid) in gate.held(), 60,
               "the jump's replay process to reach the gate")
    assert dbg.cancel()
    gate.open()
    jumping.join(10)
    assert errors and isinstance(errors[0], ReplayCancelled)
    assert dbg.snapshot() is before  # still at I0, and still usable
    stepped = dbg.step_over(0)
    assert stepped.count("best", 0) == 1 and stepped.state("best", 0)["best"] == 0
    assert dbg.jump(1).count("best", 0) == run.snapshot(1).worker("best", 0).count
    dbg.close()


def held_source(gate):
    """θ's input, read through ``gate`` (open while the run records; closed, it holds the
    regeneration of θ's inputs a debugger starts with)."""
    def source(x):
        if x == 0:
            gate.wait(str(os.getpid()))
        return x
    return source


def test_a_jump_cancelled_before_it_reaches_a_replay_process_is_cancelled(record, gate):
    code = ("out = sc.parallelize(range(300), 1).map(source).mapPartitions(running_max)"
            ".setName('best').collect()")
    gate.open()
    run = record(code, {"source": held_source(gate), "running_max": held_max(gate),
                        "spin": spin}, interesting="best", interact_every=0.2)
    gate.close()
    dbg = RemoteDebugger(run, prepare_now=False)  # starts by regenerating θ's inputs
    wait_until(lambda: gate.held(), 60, "the regeneration of θ's inputs to reach the gate")
    errors = []
    jumping = threading.Thread(target=lambda: _catch(errors, dbg.jump, 0))
    jumping.start()
    wait_until(lambda: dbg._moves, 10, "the jump to wait for the replay process")
    assert dbg.cancel()  # no replay process has the request yet: it must not be lost
    jumping.join(10)
    assert errors and isinstance(errors[0], ReplayCancelled)
    gate.open()
    assert dbg.jump(0).count("best", 0) == run.snapshot(0).worker("best", 0).count
    assert dbg.cancel() is False  # nothing under way
    dbg.close()


def _catch(errors, fn, *args):
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001 - the test looks at it
        errors.append(exc)


def test_refusals_and_bad_requests_come_back_as_the_apis_errors(record):
    code, theta = SHAPES["generator function"]
    run = record(code, NAMESPACE, interesting=theta, interact_every=0.2)
    dbg = run.debugger()
    with pytest.raises(StepRefused, match="jump to an interaction first"):
        dbg.step_over(0)
    with pytest.raises(IndexError, match="no interaction I99"):
        dbg.jump(99)
    dbg.jump(0)
    with pytest.raises(StepRefused, match="partition 7"):
        dbg.pending(7)
    with pytest.raises(StepRefused, match="not in θ's chain"):
        dbg.step_into(0, "nonsense")
    assert dbg.step_over(0).count("best", 0) == 1  # and it goes on working


def test_a_run_reopened_after_a_restart_gets_a_fresh_replay_process(record):
    from icedtea_jupyter.dag import Dag
    from icedtea_jupyter.session.run import Run
    from icedtea_jupyter.store.run_store import RunStore

    code, theta = SHAPES["reduceByKey after theta"]
    run = record(code, NAMESPACE, interesting=theta, interact_every=0.12)
    run.debugger().prepare(120)  # regenerated inputs are kept in the run store
    store = RunStore.open(run.path)  # a new kernel: the run as the store has it, no Spark
    manifest = store.read_manifest()
    reopened = Run(store, manifest, Dag.from_json(manifest["dag"]))
    dbg = reopened.debugger()
    assert isinstance(dbg, RemoteDebugger) and dbg is not run.debugger()
    assert dbg.prepare(120)["forks"][0] == 0
    for k in range(len(run.interactions)):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for p in range(3):
            if recorded.status("points", p) in ("running", "finished"):
                assert jumped.state("points", p) == recorded.state("points", p), (k, p)
    reopened.debugger().close()

    import shutil  # without the inputs kept in the store, a new kernel cannot replay: it says why
    shutil.rmtree(os.path.join(run.path, "replay", "inputs"))
    again = Run(store, manifest, Dag.from_json(manifest["dag"])).debugger()
    with pytest.raises(LookupError, match="--record-inputs"):
        again.jump(0)
    again.close()


def test_without_fork_the_debugger_replays_in_the_kernel_and_says_why(record, monkeypatch):
    monkeypatch.setenv("ICEDTEA_REPLAY", "kernel")
    code, theta = SHAPES["operator then generator"]
    run = record(code, NAMESPACE, interesting=theta, interact_every=0.12)
    dbg = run.debugger()
    assert isinstance(dbg, Debugger) and dbg.cancel() is False
    jumped = dbg.jump(1)
    assert any("replays in the kernel" in note for note in jumped.notes)
    for p in range(3):
        if run.snapshot(1).status("points", p) == "running":
            assert jumped.state("points", p) == run.snapshot(1).state("points", p)
    dbg.close()
