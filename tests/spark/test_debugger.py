"""Post-execution debugging of recorded runs: jumps, steps, checkpoints, regenerated inputs."""
import os
import shutil
import time

import pytest

from icedtea_jupyter import Operator
from icedtea_jupyter.checkpoints.file import CheckpointStore
from icedtea_jupyter.examples import fraud
from icedtea_jupyter.replay.cursor import StepRefused
from icedtea_jupyter.replay.inputs import InputsChanged

pytestmark = pytest.mark.spark

FRAUD_NS = {name: getattr(fraud, name) for name in
            ("PAYMENTS", "FeatureEnrichment", "FraudDetector", "FraudFilter")}


class Tally(Operator):
    """A dict-like state (counts per key) and a scalar, slow enough to be interrupted."""

    def open(self):
        self.by_key = {}
        self.seen = 0

    def process(self, x):
        # the work that periodic interactions (every interact_every seconds while θ runs)
        # interrupt: a lower bound on how long θ runs, so a slower machine only gives more
        # interactions, and the tests check every one
        time.sleep(0.002)
        self.seen += 1
        self.by_key[x % 7] = self.by_key.get(x % 7, 0) + x
        yield x


def test_the_papers_story_jump_step_over_step_into_step_out(record):
    """IcedTea Figures 7, 10 and 11 on the fraud pipeline."""
    run = record(fraud.PIPELINE, FRAUD_NS, interesting="enrich", record_inputs=True,
                 interact_when="row.customer == 'Alice' and row.amount == 60.0")
    dbg = run.debugger()
    snapshot = dbg.jump(1)
    p = next(p for p, rows in dbg.pending().items()
             if rows["enrich"]["records"][:1] and rows["enrich"]["records"][0].amount == 10.0)
    for op in ("enrich", "detect", "filter"):  # the jump gives the recorded snapshot
        assert snapshot.state(op, p) == run.snapshot(1).state(op, p)
    assert dbg.pending(p)["enrich"]["records"][1].currency == "¥"

    over = dbg.step_over(p)  # Chris's $10: enriched, approved
    assert over.outputs == [("Chris", 10.0)]
    assert over.count("enrich", p) == snapshot.count("enrich", p) + 1
    assert over.state("enrich", p)["highest"]["Chris"] == 80.0

    into = dbg.step_into(p, "enrich")  # Bob's ¥5,000 taken for $5,000
    assert into.state("enrich", p)["highest"]["Bob"] == 5000.0
    assert dbg.pending(p)["detect"]["records"] == [("Bob", 5000.0, 5000.0)]
    assert "Bob" not in into.state("detect", p)["blacklist"]
    with pytest.raises(StepRefused, match="step_out"):
        dbg.step_over(p)  # Bob's scope is not finished: the next one would interleave

    frauds = into.state("filter", p)["frauds"]
    out = dbg.step_out(p)  # Bob is blacklisted, the fraud count grows by one
    assert "Bob" in out.state("detect", p)["blacklist"]
    assert out.state("filter", p)["frauds"] == frauds + 1
    assert "blacklist" in out.changed("detect", p)["variables"]
    assert out.outputs == []  # the fraud is filtered out

    again = dbg.jump(1)  # a jump after steps is a fresh jump
    assert again.state("enrich", p) == snapshot.state("enrich", p)
    assert again.state("filter", p) == snapshot.state("filter", p)


def test_every_jump_equals_the_recorded_snapshot_with_regenerated_inputs(record):
    code = ("out = sc.parallelize(range(900), 2).mapPartitions(Tally()).setName('tally')"
            ".map(lambda x: x * 2).setName('double').count()")
    run = record(code, {"Tally": Tally}, interact_every=0.25, checkpoint="offline", tau=0.5)
    assert len(run.interactions) >= 3
    plan = run.manifest["checkpoints"]
    assert plan["plan"] == "offline" and plan["max_jump_seconds"] <= 0.5
    dbg = run.debugger()
    middle = 0
    for k in reversed(range(len(run.interactions))):  # any order
        jumped = dbg.jump(k)
        recorded = run.snapshot(k)
        for p in (0, 1):
            status = recorded.status("tally", p)
            if status in ("running", "finished"):
                assert jumped.state("tally", p) == recorded.state("tally", p), (k, p)
                middle += status == "running"
            assert jumped.count("tally", p) == jumped.state("tally", p)["seen"]
        assert not jumped.notes
    assert middle  # some jumps land in the middle of a partition
    assert set(dbg.inputs.source.values()) == {"regenerated"}


@pytest.mark.parametrize("plan", ["all", "online", "offline"])
def test_checkpointed_jumps_equal_replayed_jumps(record, plan):
    code = "out = sc.parallelize(range(600), 2).mapPartitions(Tally()).setName('tally').count()"
    run = record(code, {"Tally": Tally}, interact_every=0.15, checkpoint=plan, tau=0.7)
    taken = run.manifest["checkpoints"]["checkpoints"]
    running = [i.index for i in run.interactions[1:]
               if any(run.snapshot(i.index).status("tally", p) == "running" for p in (0, 1))]
    if plan == "all":  # every interaction while θ's workers ran (a worker that ends
        # between the request and its next check is marked too, and reports "finished")
        assert set(running) <= set(taken) <= set(range(1, len(run.interactions)))
    elif plan == "online":  # only some: when replay since the last one would exceed τ
        assert taken and len(taken) < len(run.interactions) - 1, (taken, running)
    found = CheckpointStore(run.path).available()
    assert all(any(k in found.get(p, {}) for p in (0, 1)) for k in taken)
    with_checkpoints = run.debugger()
    from icedtea_jupyter.replay.debugger import Debugger
    from icedtea_jupyter.replay.inputs import ReplayInputs
    from icedtea_jupyter.replay.logs import RunLogs

    logs = RunLogs(run)
    from_start = Debugger(logs, ReplayInputs(run, logs))
    restored = set()
    for k in range(len(run.interactions)):
        a, b = with_checkpoints.jump(k), from_start.jump(k)
        restored |= {base for base in with_checkpoints.restored_from.values() if base}
        assert not any(from_start.restored_from.values())
        for p in (0, 1):
            assert a.state("tally", p) == b.state("tally", p)
            assert a.count("tally", p) == b.count("tally", p)
    assert restored  # the jumps did start from checkpoints
    k = len(run.interactions) // 2
    with_checkpoints.jump(k), from_start.jump(k)
    for p in (0, 1):  # steps go on from a restored state as from a replayed one
        if with_checkpoints.pending(p)["tally"]["count"]:
            a, b = with_checkpoints.step_over(p), from_start.step_over(p)
            assert a.state("tally", p) == b.state("tally", p)


def test_a_rewritten_source_is_refused_not_replayed(record, tmp_path):
    source = tmp_path / "numbers.txt"
    source.write_text("\n".join(str(i) for i in range(50)))
    code = (f"out = sc.textFile({str(source)!r}, 2).map(int).setName('parse')"
            ".map(lambda x: x + 1).count()")
    run = record(code, {"Tally": Tally})
    dbg = run.debugger()
    dbg.jump(len(run.interactions) - 1)  # the source is unchanged: fine
    source.write_text("\n".join(str(i + 1) for i in range(50)))
    dbg.jump(0)  # the run's debugger replays the inputs it read and checked before
    staged = os.path.join(run.path, "replay", "inputs")
    assert sorted(os.listdir(staged)) == ["p0.pkl", "p1.pkl"]  # kept in the run store
    from icedtea_jupyter.replay.debugger import Debugger

    shutil.rmtree(staged)
    changed = Debugger.for_run(run)  # one that reads the source now
    with pytest.raises(InputsChanged, match="changed since the run"):
        changed.jump(0)


def test_debugging_a_running_or_unknown_interaction_is_refused(record):
    run = record(fraud.PIPELINE, FRAUD_NS, interesting="enrich", record_inputs=True)
    dbg = run.debugger()
    with pytest.raises(StepRefused, match="jump"):
        dbg.step_over(0)
    with pytest.raises(IndexError, match="I0..I"):
        dbg.jump(len(run.interactions))


def test_the_reduce_side_receives_exactly_what_thetas_partitions_emitted(record):
    code = ("out = sc.parallelize(range(600), 2).mapPartitions(Tally()).setName('tally')"
            ".map(lambda x: (x % 5, x)).setName('pair')"
            ".reduceByKey(lambda a, b: a + b).setName('sum').collect()")
    run = record(code, {"Tally": Tally}, interact_every=0.25, record_inputs=True)
    dbg = run.debugger()
    assert dbg.chain == ["tally", "pair", "sum (combine)", "sum"]
    halves = {0: range(0, 300), 1: range(300, 600)}
    for interaction in run.interactions:
        jumped = dbg.jump(interaction.index)
        ended = [m for m in (0, 1) if dbg.ended(m)]
        merged = {}
        for q in dbg.partitions("sum"):
            merged.update(jumped.state("sum", q)["combiners"])
        expected = {}
        for m in ended:  # only a finished map side has emitted its combiners
            for x in halves[m]:
                expected[x % 5] = expected.get(x % 5, 0) + x
        # a reduce side takes the combiners in the shuffle's logged order: one from a map
        # side that had not ended yet holds back those logged after it
        assert merged.items() <= expected.items(), (interaction.index, ended)
        if len(ended) in (0, 2):
            assert merged == expected, (interaction.index, ended)
    end = jumped  # the last interaction; periodic ones come while θ runs, so step to the end
    for m in (0, 1):
        while not dbg.ended(m):
            end = dbg.step_over(m)
    merged = {k: v for q in dbg.partitions("sum") for k, v in
              end.state("sum", q)["combiners"].items()}
    assert sorted(merged.items()) == sorted(run.namespace["out"])

    middle = next((i for i in run.interactions
                   if 0 < (i.counts[("tally", 0)] or 0) < 300), None)
    assert middle is not None, [i.counts for i in run.interactions]
    # step partition 0 to its end: its combiners cross the shuffle
    dbg.jump(middle.index)
    before = {k: v for q in dbg.partitions("sum") for k, v in
              dbg.state("sum", q)["combiners"].items()}
    while not dbg.ended(0):
        snapshot = dbg.step_over(0)
    after = {k: v for q in dbg.partitions("sum") for k, v in
             snapshot.state("sum", q)["combiners"].items()}
    for key in range(5):
        part0 = sum(x for x in halves[0] if x % 5 == key)
        assert after[key] == before.get(key, 0) + part0


@pytest.mark.parametrize("plan", ["none", "all"])
def test_two_paths_from_theta_replay_each_task_and_feed_the_union(record, plan):
    """IcedTea Figure 13 as PySpark runs it: θ feeds two paths that meet after a union,
    and, uncached, runs once per path (two tasks per partition, which an interaction
    can find at different places). Every jump equals the recorded run, worker by worker."""
    code = """
theta = sc.parallelize(range(300), 2).mapPartitions(Tally()).setName('theta')
up = theta.map(lambda x: x * 10).setName('up')
down = theta.map(lambda x: -x).setName('down')
out = up.union(down).mapPartitions(Tally()).setName('meet').collect()
"""
    run = record(code, {"Tally": Tally}, interesting="theta", interact_every=0.15,
                 checkpoint=plan)
    dbg = run.debugger()
    assert dbg.chain == ["theta", "up", "down", "meet"]
    halves = [list(range(0, 150)), list(range(150, 300))]
    apart = 0  # interactions that found θ's two tasks on a partition at different places
    for interaction in run.interactions:
        k = interaction.index
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        assert not jumped.notes, (k, jumped.notes)
        for p in (0, 1):
            for op in ("theta", "up", "down"):
                if recorded.status(op, p) in ("running", "finished"):
                    assert jumped.state(op, p) == recorded.state(op, p), (k, op, p)
                    assert jumped.count(op, p) == recorded.worker(op, p).count, (k, op, p)
            up_n, down_n = jumped.count("up", p), jumped.count("down", p)
            apart += up_n != down_n
            # θ shows the task still running past its first record, else a finished one
            assert jumped.state("theta", p)["seen"] == jumped.count("theta", p)
            assert jumped.count("theta", p) in (up_n, down_n)
            assert jumped.state("meet", p)["by_key"] == _tally(x * 10 for x in halves[p][:up_n])
            assert jumped.state("meet", p + 2)["by_key"] == _tally(-x for x in halves[p][:down_n])
    assert apart  # the test saw the paths' tasks apart, the case one tree got wrong
    if plan == "all":  # pickled checkpoints are written per task, but the in-kernel engine
        # replays from the start to feed the union (the replay process starts from a fork)
        assert run.manifest["checkpoints"]["checkpoints"]
        from icedtea_jupyter.replay.debugger import Debugger

        in_kernel = Debugger.for_run(run)
        in_kernel.jump(len(run.interactions) - 1)
        assert not any(in_kernel.restored_from.values())
        in_kernel.close()
    dbg.jump(0)
    stepped = dbg.step_over(0)  # θ's first record, and its scope on both paths and after
    assert stepped.count("meet", 0) == stepped.count("meet", 2) == 1
    assert stepped.count("theta", 0) == 1
    assert sorted(stepped.outputs) == [0, 0]  # up's 0 * 10 and down's -0
    assert set(dbg.pending(2)) == {"meet"}  # a partition only the union has
    with pytest.raises(StepRefused, match="partitions"):
        dbg.pending(4)


def test_a_cell_computing_theta_in_two_jobs_says_which_one_replays(record):
    code = ("rdd = sc.parallelize(range(200), 2).mapPartitions(Tally()).setName('tally')\n"
            "first = rdd.count()\nsecond = rdd.collect()")
    run = record(code, {"Tally": Tally}, interact_every=0.1)
    snapshot = run.debugger().jump(len(run.interactions) - 1)
    assert any("several jobs" in note and "last job" in note for note in snapshot.notes)
    assert snapshot.state("tally", 0)["seen"] == snapshot.count("tally", 0)


class Shifted(Operator):
    """Adds ``offset`` (set by the cell) to every record, and sums what it emitted."""

    def __init__(self):
        self.offset = 0

    def open(self):
        self.total = 0

    def process(self, x):
        self.total += x + self.offset
        yield x + self.offset


def test_an_operator_changed_after_its_transformation_replays_as_spark_ran_it(record):
    code = ("shifted = Shifted()\n"
            "rdd = sc.parallelize(range(100), 2).mapPartitions(shifted)\n"
            "shifted.offset = 1000  # after mapPartitions, before the action: Spark runs this\n"
            "out = rdd.collect()")
    run = record(code, {"Shifted": Shifted})
    assert min(run.namespace["out"]) == 1000
    theta = run.dag.interesting.name
    dbg = run.debugger()
    dbg.jump(0)
    for p in (0, 1):
        while not dbg.ended(p):  # replay the whole partition, step by step
            dbg.step_over(p)
        assert dbg.state(theta, p) == run.final_state(theta, p)
        assert dbg.state(theta, p)["total"] == sum(range(50 * p, 50 * p + 50)) + 50 * 1000


def _tally(values):
    by_key = {}
    for x in values:
        by_key[x % 7] = by_key.get(x % 7, 0) + x
    return by_key
