"""The replay engine on in-memory logs (no Spark): jumps, steps, log_result, divergence.

The chain replayed in most tests is θ = ``Best`` (an ``Operator`` keeping per-key maxima,
one or two outputs per input, one more on close), then ``double`` (a ``map`` closure over
a mutable counter list), then ``running`` (a generator ``mapPartitions`` function with a
running-total local). Expected states come from ``reference``: plain Python loops over the
same records that never touch the engine.
"""
from __future__ import annotations

import random
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import icedtea_jupyter
from icedtea_jupyter.executor.operator import Operator
from icedtea_jupyter.executor.state import ObjectView, encode
from icedtea_jupyter.executor.wrappers import PartitionFunction
from icedtea_jupyter.replay.cursor import StepRefused
from icedtea_jupyter.replay.debugger import Debugger
from icedtea_jupyter.replay.logs import MemoryLogs, Target
from icedtea_jupyter.replay.worker import ReplayError
from icedtea_jupyter.store.replay_logs import ReplayLog

CHAIN = ["best", "double", "running"]


# --- the operators ------------------------------------------------------------------------
class Best(Operator):
    """Per-key maxima; emits ``v``, plus ``k * 1000 + v`` when ``v`` is a new maximum."""

    def open(self):
        self.best = {}
        self.seen = 0

    def process(self, record):
        key, value = record
        self.seen += 1
        old = self.best.get(key)
        if old is None or value > old:
            self.best[key] = value
            yield value
            yield key * 1000 + value
        else:
            yield value

    def close(self):
        yield len(self.best)


def make_double():
    counter = [0]

    def double(x):
        counter[0] += 1
        return x * 2

    return PartitionFunction(None, "map", double)


def running(records):
    total = 0
    for x in records:
        total += x
        yield total


OPERATORS = {
    "best": lambda: PartitionFunction(None, "mapPartitions", Best()),
    "double": make_double,
    "running": lambda: PartitionFunction(None, "mapPartitions", running),
}


class Inputs:
    """θ's input records per partition (what ReplayInputs gives from a real run)."""

    def __init__(self, data):
        self.data = data

    def records(self, partition):
        return list(self.data[partition])


# --- the reference: plain loops -----------------------------------------------------------
def reference(records, n, finished):
    """``{operator: (count, state)}`` after θ took ``records[:n]`` (all, and closed, if
    ``finished``) and every downstream operator processed their whole scopes.

    ``running``'s state when finished is its locals when its input ran out (kept before
    its frame closed), as in the run's final snapshot.
    """
    if finished:
        n = len(records)
    best, seen, theta_out = {}, 0, []
    for key, value in records[:n]:
        seen += 1
        if key not in best or value > best[key]:
            best[key] = value
            theta_out += [value, key * 1000 + value]
        else:
            theta_out.append(value)
    if finished:
        theta_out.append(len(best))
    doubled = [2 * x for x in theta_out]
    total = 0
    for x in doubled:
        total += x
    running_state = {"total": total}
    if doubled:
        running_state["x"] = doubled[-1]
    return {"best": (n, {"best": best, "seen": seen}),
            "double": (len(theta_out), {"counter": [len(theta_out)]}),
            "running": (len(doubled), running_state)}


def reference_outputs(records, start, stop):
    """What leaves the chain while θ processes ``records[start:stop]`` (not closing)."""
    before = _sink(records[:start])
    return _sink(records[:stop])[len(before):]


def _sink(records):
    best, out = {}, []
    for key, value in records:
        if key not in best or value > best[key]:
            best[key] = value
            out += [value, key * 1000 + value]
        else:
            out.append(value)
    totals, total = [], 0
    for x in out:
        total += 2 * x
        totals.append(total)
    return totals


def plain(state):
    """A state without the generator objects it holds (the ``records`` iterator of a
    generator operator is shown by its repr, which carries a memory address)."""
    return {k: v for k, v in state.items()
            if not (isinstance(v, ObjectView) and v.get("type") == "generator")}


# --- helpers ------------------------------------------------------------------------------
@contextmanager
def debugger(data, targets, chain=CHAIN, operators=OPERATORS, logs=None, worker_counts=None):
    memory = MemoryLogs(chain=list(chain), operators=dict(operators), targets=targets,
                        logs=logs or {}, worker_counts=worker_counts or [])
    dbg = Debugger(memory, Inputs(data))
    try:
        yield dbg
    finally:
        dbg.close()


def assert_matches_reference(snapshot, data, targets, index):
    for p, records in data.items():
        target = targets[index].get(p, Target(0))
        for op, (count, state) in reference(records, target.count, target.finished).items():
            assert snapshot.count(op, p) == count, (op, p, index)
            if state is not None:
                assert plain(snapshot.state(op, p)) == state, (op, p, index)


RECORDS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50)), max_size=10)


@st.composite
def histories(draw):
    """Two partitions of records and θ's targets at I0..In (monotone; once finished,
    always finished)."""
    data = {p: draw(RECORDS) for p in (0, 1)}
    n = draw(st.integers(1, 4))
    targets = [{0: Target(0), 1: Target(0)}]
    per_partition = {}
    for p, records in data.items():
        counts = sorted(draw(st.lists(st.integers(0, len(records)), min_size=n, max_size=n)))
        finished_from = draw(st.integers(0, n))  # n: never finished
        per_partition[p] = [Target(len(records), True) if i >= finished_from else Target(c)
                            for i, c in enumerate(counts)]
    for i in range(n):
        targets.append({p: per_partition[p][i] for p in data})
    return data, targets


EXAMPLE = ({0: [(1, 5), (1, 3), (2, 7), (1, 9), (2, 1)], 1: [(3, 4), (3, 8)]},
           [{0: Target(0), 1: Target(0)}, {0: Target(0), 1: Target(1)},
            {0: Target(3), 1: Target(2, True)}, {0: Target(5), 1: Target(2, True)}])

SETTINGS = settings(max_examples=50, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# --- 1. jumps equal a sequential reference ------------------------------------------------
@SETTINGS
@given(histories())
@example(EXAMPLE)
def test_every_jump_equals_a_sequential_reference(history):
    data, targets = history
    with debugger(data, targets) as dbg:
        for index in range(len(targets)):
            snapshot = dbg.jump(index)
            assert snapshot.index == index
            assert_matches_reference(snapshot, data, targets, index)
            for p in data:  # dbg.state reads the current snapshot
                assert dbg.state("best", p) == snapshot.state("best", p)


def test_jump_to_i0_shows_the_states_after_open():
    data, targets = EXAMPLE
    with debugger(data, targets) as dbg:
        snapshot = dbg.jump(0)
        for p in data:
            assert snapshot.state("best", p) == {"best": {}, "seen": 0}
            assert snapshot.state("double", p) == {"counter": [0]}
            assert plain(snapshot.state("running", p)) == {"total": 0}
            assert [snapshot.count(op, p) for op in CHAIN] == [0, 0, 0]


# --- 2. jumps in any order, repeatedly, after steps -----------------------------------------
STEPS = st.lists(st.sampled_from(["over", "into", "into-down", "out"]), max_size=6)


@SETTINGS
@given(histories(), st.lists(st.tuples(st.integers(0, 10), st.integers(0, 1), STEPS),
                             min_size=1, max_size=6))
@example(EXAMPLE, [(3, 0, ["over"]), (1, 1, []), (1, 0, ["into", "into-down"]), (2, 0, []),
                   (0, 1, ["over", "over"]), (3, 0, [])])
def test_jumps_in_any_order_after_steps_equal_a_fresh_jump(history, plan):
    data, targets = history
    fresh = {}
    for index in range(len(targets)):
        with debugger(data, targets) as one:
            snapshot = one.jump(index)
            fresh[index] = {(op, p): (snapshot.count(op, p), plain(snapshot.state(op, p)))
                            for op in CHAIN for p in data}
    with debugger(data, targets) as dbg:
        for index, partition, steps in plan:
            index %= len(targets)
            snapshot = dbg.jump(index)
            got = {(op, p): (snapshot.count(op, p), plain(snapshot.state(op, p)))
                   for op in CHAIN for p in data}
            assert got == fresh[index]
            assert snapshot.index == index
            for step in steps:  # wander off; the next jump must not care
                try:
                    if step == "over":
                        dbg.step_over(partition)
                    elif step == "into":
                        dbg.step_into(partition, "best")
                    elif step == "into-down":
                        dbg.step_into(partition, "double")
                    else:
                        dbg.step_out(partition)
                except StepRefused:
                    pass
            if steps and dbg.snapshot().index is None:
                assert "partition" in dbg.snapshot().step


# --- 3. step over, step into, step out -------------------------------------------------------
DATA3 = {0: [(1, 5), (1, 3), (2, 7), (1, 9)], 1: [(3, 4), (3, 8)]}
TARGETS3 = [{0: Target(0), 1: Target(0)}, {0: Target(1), 1: Target(1)}]


def test_step_over_processes_the_next_record_and_its_whole_scope():
    with debugger(DATA3, TARGETS3) as dbg:
        before = dbg.jump(1)
        other = before.state("best", 1)
        snapshot = dbg.step_over(0)
        assert snapshot.index is None and "step over" in snapshot.step
        for op, (count, state) in reference(DATA3[0], 2, False).items():
            assert snapshot.count(op, 0) == count
            assert plain(snapshot.state(op, 0)) == state
        assert snapshot.outputs == reference_outputs(DATA3[0], 1, 2)
        # (1, 3) is no new maximum: only `seen` changed in best, and the dict not at all
        assert snapshot.changed("best", 0) == {"variables": ["seen"], "removed": [], "keys": {}}
        assert snapshot.changed("double", 0)["variables"] == ["counter"]
        assert {"total", "x"} <= set(snapshot.changed("running", 0)["variables"])
        # the other partition did not move
        assert snapshot.state("best", 1) == other and snapshot.count("best", 1) == 1
        assert snapshot.changed("best", 1) == {"variables": [], "removed": [], "keys": {}}
        assert all(row["count"] == 0 for name, row in dbg.pending(0).items() if name != "best")


def test_step_into_moves_one_record_one_worker_and_step_out_finishes_the_scope():
    with debugger(DATA3, TARGETS3) as dbg:
        dbg.jump(1)
        dbg.step_over(0)  # θ has now taken (1, 5) and (1, 3)
        start = reference(DATA3[0], 2, False)

        into = dbg.step_into(0, "best")  # (2, 7): a new key, two outputs
        assert into.count("best", 0) == 3
        assert into.count("double", 0) == start["double"][0]  # nothing moved downstream
        assert into.count("running", 0) == start["running"][0]
        assert into.outputs == []
        assert into.changed("best", 0) == {"variables": ["seen"], "removed": [],
                                           "keys": {"best": [2]}}
        assert into.changed("double", 0)["variables"] == []
        waiting = dbg.pending(0)
        assert waiting["best"] == {"count": 1, "records": [(1, 9)], "scopes": [3]}
        assert waiting["double"] == {"count": 2, "records": [7, 2007], "scopes": [2, 2]}
        assert waiting["running"]["count"] == 0

        down = dbg.step_into(0, "double")  # 7 -> 14, now waiting at running
        assert down.count("double", 0) == start["double"][0] + 1
        assert down.state("double", 0) == {"counter": [start["double"][0] + 1]}
        assert down.changed("double", 0)["variables"] == ["counter"]
        assert down.changed("best", 0)["variables"] == []
        assert down.outputs == []
        assert dbg.pending(0)["double"]["records"] == [2007]
        assert dbg.pending(0)["running"] == {"count": 1, "records": [14], "scopes": [2]}

        out = dbg.step_out(0)
        assert "step out" in out.step
        for op, (count, state) in reference(DATA3[0], 3, False).items():
            assert out.count(op, 0) == count
            assert plain(out.state(op, 0)) == state
        assert out.outputs == reference_outputs(DATA3[0], 2, 3)
        assert {"total", "x"} <= set(out.changed("running", 0)["variables"])
        assert out.changed("best", 0)["variables"] == []
        assert all(dbg.pending(0)[op]["count"] == 0 for op in ("double", "running"))


def test_a_finished_partition_passes_thetas_closing_output_down_the_chain():
    with debugger(DATA3, [{0: Target(0)}, {0: Target(4, True)}]) as dbg:
        snapshot = dbg.jump(1)
        # θ closed: its close() output (the number of keys) went down the chain too
        count, _ = reference(DATA3[0], 4, True)["running"]
        assert snapshot.count("running", 0) == count == len(_sink(DATA3[0])) + 1


# --- 4. overlapping scopes refuse a step over ------------------------------------------------
def test_step_over_is_refused_while_a_scope_is_in_progress():
    with debugger(DATA3, TARGETS3) as dbg:
        dbg.jump(1)
        dbg.step_over(0)
        into = dbg.step_into(0, "best")  # θ's input #2, two outputs
        assert dbg.pending(0)["double"]["count"] == 2
        dbg.step_into(0, "double")
        shown = dbg.snapshot()
        with pytest.raises(StepRefused) as refused:
            dbg.step_over(0)
        message = str(refused.value)
        assert "#2" in message and "'double'" in message and "step_out" in message
        assert dbg.snapshot() is shown  # a refused step changes nothing
        assert dbg.pending(0)["best"]["count"] == 1 and into.count("best", 0) == 3

        options = dbg.step_options()
        assert set(options["refused"]) == {0}
        assert "#2" in options["refused"][0] and "'double'" in options["refused"][0]
        assert options["step_over"] == 1  # partition 1 can still step over
        assert dbg.step_over(1).count("best", 1) == 2

        dbg.step_out(0)
        assert dbg.step_options()["refused"] == {}
        over = dbg.step_over(0)
        for op, (count, state) in reference(DATA3[0], 4, False).items():
            assert over.count(op, 0) == count
            assert plain(over.state(op, 0)) == state


# --- 5. bad input -----------------------------------------------------------------------------
def test_everything_before_a_jump_asks_for_a_jump():
    with debugger(DATA3, TARGETS3) as dbg:
        for call in (lambda: dbg.step_over(0), lambda: dbg.step_into(0, "best"),
                     lambda: dbg.step_out(0), lambda: dbg.pending(0), dbg.step_options,
                     dbg.snapshot, lambda: dbg.state("best", 0)):
            with pytest.raises(StepRefused, match="jump"):
                call()


def test_unknown_partition_operator_and_interaction_are_refused_by_name():
    with debugger(DATA3, TARGETS3) as dbg:
        snapshot = dbg.jump(1)
        for call in (lambda: dbg.step_over(7), lambda: dbg.step_out(7),
                     lambda: dbg.step_into(7, "best"), lambda: dbg.pending(7)):
            with pytest.raises(StepRefused, match=r"partition 7 .*\[0, 1\]"):
                call()
        with pytest.raises(StepRefused, match=r"'nope' is not in θ's chain.*best, double, running"):
            dbg.step_into(0, "nope")
        with pytest.raises(KeyError, match="nope"):
            snapshot.state("nope", 0)
        with pytest.raises(KeyError, match="partition 7"):
            snapshot.count("best", 7)
        for index in (-1, 2, 99):
            with pytest.raises(IndexError, match=rf"I{index}.*I0\.\.I1"):
                dbg.jump(index)
        assert dbg.snapshot() is snapshot  # failed calls left the debugger where it was
        with pytest.raises(StepRefused, match="no scope is in progress"):
            dbg.step_out(0)
        with pytest.raises(StepRefused, match="no record waits at 'running'"):
            dbg.step_into(0, "running")


def test_after_thetas_last_input_a_step_over_ends_the_partition_then_steps_are_refused():
    with debugger(DATA3, TARGETS3 + [{0: Target(4), 1: Target(2, True)}]) as dbg:
        dbg.jump(2)
        assert dbg.step_options()["step_over"] == 1  # partition 0 can still end
        assert dbg.step_options()["ended"] == [1]  # partition 1 has nothing left
        with pytest.raises(StepRefused, match="processed all 4 records"):
            dbg.step_into(0, "best")
        ended = dbg.step_over(0)  # the end of partition 0: Best's closing output
        assert dbg.cursors[0].ended and ended.outputs
        for p, n in ((0, 4), (1, 2)):  # all inputs taken and both partitions closed
            with pytest.raises(StepRefused, match=rf"processed all {n} records"):
                dbg.step_over(p)
            with pytest.raises(StepRefused, match=rf"processed all {n} records"):
                dbg.step_into(p, "best")
        assert dbg.step_options()["step_over"] == 0
        assert dbg.step_options()["ended"] == [0, 1]
        dbg.jump(1)
        dbg.step_over(1)  # the last input of partition 1
        dbg.step_over(1)  # its end
        with pytest.raises(StepRefused, match="processed all 2 records"):
            dbg.step_over(1)


# --- 6. log_result ------------------------------------------------------------------------
class Noisy(Operator):
    def open(self):
        self.draws = []

    def process(self, record):
        self.draws.append(icedtea_jupyter.log_result(random.random))
        yield record


def make_tag():
    def tag(x):
        return x, icedtea_jupyter.log_result(random.getrandbits, 64)

    return PartitionFunction(None, "map", tag)


DRAWS = [0.125, 0.25, 0.5]
BITS = [2 ** 60 + 1, 2 ** 63 + 5, 7]  # beyond 2**53: tagged in the log


def noisy_logs():
    return {("noisy", 0): ReplayLog(np.ones(4, np.uint32), 0, [encode(v) for v in DRAWS],
                                    "deviations"),
            ("tag", 0): ReplayLog(np.ones(4, np.uint32), 0, [encode(v) for v in BITS], "ones")}


def test_log_result_replays_the_logged_values_in_order():
    operators = {"noisy": lambda: PartitionFunction(None, "mapPartitions", Noisy()),
                 "tag": make_tag}
    targets = [{0: Target(0)}, {0: Target(1)}, {0: Target(3)}]
    assert encode(BITS[1]) != BITS[1]  # the log holds it tagged
    with debugger({0: [10, 20, 30, 40]}, targets, ["noisy", "tag"], operators,
                  noisy_logs()) as dbg:
        assert dbg.jump(2).state("noisy", 0) == {"draws": DRAWS}
        assert dbg.jump(1).state("noisy", 0) == {"draws": DRAWS[:1]}  # replayed from the start
        snapshot = dbg.step_over(0)
        assert snapshot.state("noisy", 0) == {"draws": DRAWS[:2]}
        assert snapshot.outputs == [(20, BITS[1])]  # each worker reads its own log
        assert dbg.step_over(0).outputs == [(30, BITS[2])]

        with pytest.raises(ReplayError) as failure:  # a 4th value was never logged
            dbg.step_over(0)
        message = str(failure.value)
        assert "'noisy'" in message and "log_result" in message
        assert "3 calls were logged" in message


def test_a_jump_needing_more_logged_values_than_exist_raises():
    operators = {"noisy": lambda: PartitionFunction(None, "mapPartitions", Noisy()),
                 "tag": make_tag}
    targets = [{0: Target(0)}, {0: Target(4)}]
    with debugger({0: [10, 20, 30, 40]}, targets, ["noisy", "tag"], operators,
                  noisy_logs()) as dbg:
        with pytest.raises(ReplayError, match=r"'noisy' on partition 0 calls log_result more "
                                              r"often in replay than in the run \(3 calls"):
            dbg.jump(1)


# --- 7. divergence ---------------------------------------------------------------------------
class Twice(Operator):
    def process(self, record):
        yield record
        yield record


def test_outputs_that_differ_from_the_log_are_noted():
    operators = {"twice": lambda: PartitionFunction(None, "mapPartitions", Twice())}
    logs = {("twice", 0): ReplayLog(np.array([2, 2, 1, 2], np.uint32), 0, [], "deviations")}
    targets = [{0: Target(0)}, {0: Target(2)}, {0: Target(4)}]
    with debugger({0: [1, 2, 3, 4]}, targets, ["twice"], operators, logs) as dbg:
        assert dbg.jump(1).notes == []  # inputs #0, #1 agree with the log
        snapshot = dbg.step_over(0)
        assert len(snapshot.notes) == 1
        note = snapshot.notes[0]
        assert "'twice'" in note and "#2" in note and "2 record(s)" in note and "1 in the run" in note
        assert any("'twice'" in n for n in dbg.jump(2).notes)


def test_counts_that_differ_from_the_logged_worker_counts_are_noted():
    targets = [{0: Target(0)}, {0: Target(1)}]
    counts = [{}, {("best", 0): 1, ("double", 0): 5}]  # the replay gives double 2
    with debugger({0: DATA3[0]}, targets, worker_counts=counts) as dbg:
        notes = dbg.jump(1).notes
        assert any("'double'" in n and "I1" in n and "5" in n for n in notes)
        assert not any("'best'" in n for n in notes)


# --- 8. restorable ---------------------------------------------------------------------------
def test_generator_workers_are_not_restorable_operators_and_maps_are():
    with debugger(DATA3, TARGETS3) as dbg:
        snapshot = dbg.jump(1)
        assert [n for n in snapshot.notes if "generator operator" in n] == [
            "'running' is a generator operator: its local variables cannot be restored from "
            "a checkpoint, so jumps replay its partitions from their start"]
        for p in DATA3:
            workers = dict(zip(dbg.cursors[p].names, dbg.cursors[p].workers))
            assert workers["best"].restorable is True
            assert workers["double"].restorable is True
            assert workers["running"].restorable is False
            # its locals can still be shown
            assert "total" in dbg.state("running", p)


# --- 9. an operator raising during replay ----------------------------------------------------
class Fragile(Operator):
    def open(self):
        self.seen = 0

    def process(self, record):
        self.seen += 1
        if record == 3:
            raise ValueError("cannot take 3")
        yield record


FRAGILE = {"fragile": lambda: PartitionFunction(None, "mapPartitions", Fragile()),
           "double": make_double}


def test_an_operator_raising_during_a_jump_names_the_operator_and_input():
    targets = [{0: Target(0)}, {0: Target(4)}]
    with debugger({0: [1, 2, 3, 4]}, targets, ["fragile", "double"], FRAGILE) as dbg:
        with pytest.raises(ReplayError) as failure:
            dbg.jump(1)
        message = str(failure.value)
        assert "'fragile'" in message and "input #2 of partition 0" in message
        assert "ValueError" in message and "cannot take 3" in message
        assert isinstance(failure.value.__cause__, ValueError)


def test_an_operator_raising_during_a_step_names_the_operator_and_input():
    targets = [{0: Target(0)}, {0: Target(2)}]
    with debugger({0: [1, 2, 3, 4]}, targets, ["fragile", "double"], FRAGILE) as dbg:
        shown = dbg.jump(1)
        with pytest.raises(ReplayError, match=r"'fragile'.*input #2 of partition 0"):
            dbg.step_over(0)
        assert dbg.snapshot() is shown


def test_steps_after_an_operator_raised_do_not_pretend_to_process():
    """After the step that raised, the operator is dead: a further step must refuse (or
    raise again), not count records it never processed."""
    targets = [{0: Target(0)}, {0: Target(2)}]
    with debugger({0: [1, 2, 3, 4, 5]}, targets, ["fragile", "double"], FRAGILE) as dbg:
        dbg.jump(1)
        with pytest.raises(ReplayError):
            dbg.step_over(0)
        try:
            snapshot = dbg.step_over(0)
        except (StepRefused, ReplayError):
            return
        pytest.fail(f"a step after the failure went on: 'fragile' count "
                    f"{snapshot.count('fragile', 0)}, state {snapshot.state('fragile', 0)}, "
                    f"outputs {snapshot.outputs}")


def test_a_failed_jump_leaves_steps_consistent_with_the_snapshot_shown():
    """jump(2) fails on partition 1; the debugger still shows I1, so a step on partition 0
    must either continue from I1 or ask for a jump -- not continue from I2."""
    data = {0: [1, 2, 4, 5], 1: [1, 2, 3]}
    targets = [{0: Target(0), 1: Target(0)}, {0: Target(1), 1: Target(1)},
               {0: Target(3), 1: Target(3)}]
    with debugger(data, targets, ["fragile", "double"], FRAGILE) as dbg:
        shown = dbg.jump(1)
        with pytest.raises(ReplayError, match="partition 1"):
            dbg.jump(2)
        assert dbg.snapshot() is shown
        try:
            after = dbg.step_over(0)
        except StepRefused as refused:
            assert "jump" in str(refused)
            return
        assert after.count("fragile", 0) == shown.count("fragile", 0) + 1


# --- snapshots and re-jumps ------------------------------------------------------------------
def test_jumping_again_to_the_same_interaction_changes_nothing():
    """``changed()`` after a second jump to the same interaction: every worker, the
    generator operator included, is as it was."""
    with debugger(DATA3, TARGETS3) as dbg:
        dbg.jump(1)
        old_cursors = dict(dbg.cursors)  # keep the first replay's objects alive
        again = dbg.jump(1)
        for op in CHAIN:
            for p in DATA3:
                assert again.changed(op, p) == {"variables": [], "removed": [], "keys": {}}, \
                    (op, p, again.state(op, p))
        assert old_cursors


# --- forward: how the replay process jumps from a parked fork ---------------------------------
def unthreaded(data, targets):
    """The engine as the replay process runs it: on the caller's thread (fork copies it)."""
    memory = MemoryLogs(chain=list(CHAIN), operators=dict(OPERATORS), targets=targets)
    return Debugger(memory, Inputs(data), threaded=False)


@SETTINGS
@given(histories(), st.data())
@example(EXAMPLE, None)
def test_going_forward_from_an_interaction_equals_a_jump_from_the_start(history, choices):
    data, targets = history
    n = len(targets)
    start = 0 if choices is None else choices.draw(st.integers(0, n - 1))
    end = n - 1 if choices is None else choices.draw(st.integers(start, n - 1))
    walked, fresh = unthreaded(data, targets), unthreaded(data, targets)
    try:
        walked.jump(start)
        for index in range(start, end + 1):  # the checkpointing pass walks every one
            walked.forward(index, show=index == end)
        expected = fresh.jump(end)
        assert walked.snapshot()._encoded == expected._encoded
        assert walked.snapshot()._counts == expected._counts
        assert walked.snapshot().notes == expected.notes == []
        assert_matches_reference(walked.snapshot(), data, targets, end)
    finally:
        walked.close()
        fresh.close()


def test_going_forward_past_a_worker_the_log_calls_ended_too_early_replays_from_the_start():
    """A worker that did not answer I1 reads as ended there, and answers I2 running:
    the replay process cannot reach I2 from I1 going forward, so it replays from I0."""
    data = {0: [(1, 5), (1, 3), (2, 7), (1, 9)]}
    targets = [{0: Target(0)}, {0: Target(4, True)}, {0: Target(2)}]
    walked, fresh = unthreaded(data, targets), unthreaded(data, targets)
    try:
        walked.jump(0)
        walked.forward(1)
        assert walked.ended(0)
        snapshot = walked.forward(2)
        assert not walked.ended(0) and snapshot.count("best", 0) == 2
        assert snapshot._encoded == fresh.jump(2)._encoded
    finally:
        walked.close()
        fresh.close()


def test_going_back_is_refused():
    data = {0: [(1, 5), (1, 3)]}
    engine = unthreaded(data, [{0: Target(0)}, {0: Target(1)}, {0: Target(2)}])
    try:
        engine.jump(2)
        with pytest.raises(ValueError, match="cannot go forward"):
            engine.forward(1)
    finally:
        engine.close()


def by_partition(records):
    """θ that asks Spark which partition it is on, as operators seeding a generator do."""
    from pyspark import TaskContext

    seen = []
    for x in records:
        seen.append(TaskContext.get().partitionId())
        yield x


def test_a_replayed_operator_sees_its_partitions_task_context_and_the_kernel_none():
    from pyspark import TaskContext

    operators = {"by_partition": lambda: PartitionFunction(None, "mapPartitions", by_partition)}
    data = {0: [1, 2], 1: [3]}
    targets = [{0: Target(0), 1: Target(0)}, {0: Target(2), 1: Target(1)}]
    with debugger(data, targets, chain=["by_partition"], operators=operators) as dbg:
        jumped = dbg.jump(1)
        assert jumped.state("by_partition", 0)["seen"] == [0, 0]
        assert jumped.state("by_partition", 1)["seen"] == [1]
        assert TaskContext.get() is None  # outside the operator: the driver's (none)
