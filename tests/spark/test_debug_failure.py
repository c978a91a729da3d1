"""Debugging a failed run up to its failure: ``dbg.jump_to_failure()`` and the step onto
the culprit record, which reproduces the recorded exception as the partition's end."""
import pytest

from icedtea_jupyter import Operator
from icedtea_jupyter.replay.cursor import StepRefused
from icedtea_jupyter.replay.debugger import Debugger

pytestmark = pytest.mark.spark


class Invert(Operator):
    """Raises ZeroDivisionError on the record 42 (partition 0 of range(100) in two)."""

    def open(self):
        self.total = 0.0
        self.seen = 0

    def process(self, x):
        self.seen += 1
        self.total += 1 / (x - 42)
        yield self.total


def check(x):
    if x == 42:
        raise ValueError(f"bad record {x}")
    return x


INVERT = ("out = sc.parallelize(range(100), 2).mapPartitions(Invert()).setName('invert')"
          ".map(lambda t: round(t, 3)).setName('round').collect()")
CHECKED = ("out = sc.parallelize(range(100), 2).mapPartitions(Invert0()).setName('count')"
           ".map(check).setName('check').collect()")


class Invert0(Invert):
    """Counts like Invert, never raises: θ before a failing map."""

    def process(self, x):
        self.seen += 1
        self.total += x
        yield x


def test_jump_to_failure_gives_the_recorded_states_and_the_step_reproduces_the_exception(record):
    run = record(INVERT, {"Invert": Invert}, interesting="invert",
                 interact_when="row % 10 == 1")
    assert run.status == "failed" and run.error["record"]["value"] == 42
    # the run's snapshot just before the culprit: after θ's input #41 (the record 41)
    before = next(i.index for i in run.interactions if i.counts[("invert", 0)] == 42)
    recorded = run.snapshot(before)
    for dbg in (run.debugger(), Debugger.for_run(run)):  # the replay process, the kernel
        at = dbg.jump_to_failure()
        assert at.partition == 0 and at.failure is None
        assert dbg.pending(0)["invert"]["records"][0] == 42  # the culprit is next
        for op in ("invert", "round"):
            assert at.state(op, 0) == recorded.state(op, 0)
        assert at.state("invert", 0)["seen"] == 42

        end = dbg.step_over(0)  # onto the culprit: the recorded exception, not a ReplayError
        assert end.failure["exception"] == "ZeroDivisionError"
        assert end.failure["operator"] == "invert" and end.failure["partition"] == 0
        assert "self.total += 1 / (x - 42)" in end.failure["traceback"]
        assert end.state("invert", 0) == {"seen": 43, "total": at.state("invert", 0)["total"]}
        assert dbg.ended(0)
        with pytest.raises(StepRefused, match="ended as in the recorded run"):
            dbg.step_over(0)
        if isinstance(dbg, Debugger):
            dbg.close()
    calls = [a["call"] for a in run.actions if a["call"].startswith("dbg.")]  # moves; the
    assert calls[:2] == ["dbg.jump_to_failure()", "dbg.step_over(partition=0)"]  # reads too


def test_a_failure_after_theta_replays_theta_up_to_the_culprits_scope(record):
    run = record(CHECKED, {"Invert0": Invert0, "check": check}, interesting="count",
                 interact_when="row % 10 == 5")
    assert run.status == "failed" and run.error["operator"] == "check"
    dbg = run.debugger()
    at = dbg.jump_to_failure()
    assert at.count("count", 0) == at.count("check", 0) == 42
    assert at.state("count", 0) == {"seen": 42, "total": float(sum(range(42)))}
    end = dbg.step_over(0)
    assert end.failure["operator"] == "check" and end.failure["message"] == "bad record 42"
    assert end.state("count", 0)["seen"] == 43


def flaky(x):
    from pyspark import TaskContext

    if TaskContext.get().attemptNumber() == 0 and x == 5:
        raise RuntimeError("transient failure")
    return x


def test_a_run_whose_retry_succeeded_has_no_failure_to_jump_to(record):
    run = record("out = sc.parallelize(range(20), 2).map(flaky).setName('flaky').collect()",
                 {"flaky": flaky}, interesting="flaky")
    assert run.status == "finished"
    dbg = run.debugger()
    with pytest.raises(StepRefused, match="did not fail: there is no failure to jump to"):
        dbg.jump_to_failure()
    assert dbg.jump(0).state("flaky", 0) == {}  # only the successful attempt replays
    assert dbg.pending(0)["flaky"]["count"] == 10


def test_the_panels_and_the_comms_debug_this_failure_are_the_api_call(record):
    from icedtea_jupyter.comm import target
    from icedtea_jupyter.ui.panel import RunPanel
    from tests.unit.fakes import FakeComm

    run = record(INVERT, {"Invert": Invert}, interesting="invert", interact_every=0.05)
    panel = RunPanel(run)
    panel.refresh()
    assert panel.debug_failure.layout.display == ""  # shown on a failed run's card
    panel.debug_failure.click()
    panel.debug.wait(120)
    assert run.actions[-1] == dict(run.actions[-1], source="panel", call="dbg.jump_to_failure()")
    assert panel.debug.partition.value == 0 and panel.debug.message.value == ""
    assert "Debugger</b> just before the culprit record" in panel.debug.header.value
    panel.debug.step_over.click()
    panel.debug.wait(120)
    assert "ended as in the recorded run" in panel.debug.header.value
    assert "ZeroDivisionError" in panel.debug.header.value

    target.watch_runs()
    comm = FakeComm()
    target._on_open(comm, {})
    try:
        view = comm.request("debug.jump_to_failure", run=run.id)["result"]
        assert view["partition"] == 0 and view["failure"] is None, view
        assert view["pending"]["0"]["invert"]["records"] == [42]  # where the attempt ended
        ended = comm.request("debug.step_over", run=run.id, partition=0)["result"]
        assert ended["failure"]["exception"] == "ZeroDivisionError" and 0 in ended["options"]["ended"]
        assert not comm.problems  # every message as comm/protocol.json says
    finally:
        comm.close()
    assert [(a["source"], a["call"]) for a in run.actions[-2:]] == [
        ("sidebar", "dbg.jump_to_failure()"), ("sidebar", "dbg.step_over(partition=0)")]


def test_a_failed_run_reopened_after_a_restart_jumps_to_its_failure(record):
    """--record-inputs keeps the failed attempt's inputs too: a fresh process (no Spark,
    no pipeline to regenerate them) replays up to the failure."""
    import json
    import os
    import subprocess
    import sys

    run = record(INVERT, {"Invert": Invert}, interesting="invert", record_inputs=True)
    code = (f"import icedtea_jupyter as it, json; d = it.open_run({run.path!r}).debugger();"
            "at = d.jump_to_failure(); end = d.step_over(0);"
            "print(json.dumps([at.state('invert', 0)['seen'], d.pending(0)['invert']['count'],"
            "end.failure['exception']]))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.getcwd(),
                                                                   os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [42, 0, "ZeroDivisionError"]
