"""Time travel through the ``icedtea`` comm and the in-cell panel, on IcedTea's fraud
pipeline: every request goes the comm target's way (a fake comm), every UI action lands
in the run's action log as its Python call."""
import os
import time

import pytest

from icedtea_jupyter import Operator
from icedtea_jupyter.comm import target
from icedtea_jupyter.examples import fraud
from icedtea_jupyter.session import registry
from icedtea_jupyter.session.execution import RunOptions, start_run
from tests.unit.fakes import FakeComm
from tests.waiting import wait_until

pytestmark = pytest.mark.spark

FRAUD_NS = {name: getattr(fraud, name) for name in
            ("PAYMENTS", "FeatureEnrichment", "FraudDetector", "FraudFilter")}
ALICE_60 = "row.customer == 'Alice' and row.amount == 60.0"


def number(x):
    """A number on the wire: whole floats tagged (JSON would make 60.0 read 60)."""
    return {"$t": "float", "v": repr(x)} if isinstance(x, float) and x.is_integer() else x


def row(customer, amount, currency="$"):
    return {"$t": "row", "v": {"customer": customer, "amount": number(amount),
                               "currency": currency}}


def tup(*items):
    return {"$t": "tuple", "v": [number(item) for item in items]}


@pytest.fixture
def frontend():
    """A JupyterLab frontend with the comm open: ``ask(method, **params)`` -> result."""
    target.watch_runs()
    comm = FakeComm()
    target._on_open(comm, {})
    yield comm
    comm.close()


def ask(comm, method, **params):
    reply = comm.request(method, **params)
    assert reply["ok"], reply["error"]
    return reply["result"]


def record_fraud(record):
    run = record(fraud.PIPELINE, FRAUD_NS, interesting="enrich", record_inputs=True,
                 interact_when=ALICE_60)
    assert run.status == "finished", run.error
    return run


def test_the_papers_story_through_the_comm(record, frontend):
    run = record_fraud(record)
    pushed = frontend.events("run.interaction")
    assert [e["interaction"]["index"] for e in pushed if e["run"] == run.id][-1] == 1
    assert pushed[-1]["interaction"]["complete"] is True

    listed = ask(frontend, "run.interactions", run=run.id)["interactions"]
    assert [(i["index"], i["trigger"]) for i in listed] == [(0, "initial"), (1, "condition")]
    assert listed[1]["record"] == row("Alice", 60.0) and listed[1]["complete"]
    snapshot = ask(frontend, "run.snapshot", run=run.id, index=1)
    assert snapshot["trigger"] == "condition"
    assert {(w["operator"], w["partition"]) for w in snapshot["workers"]} == {
        (op, p) for op in ("enrich", "detect", "filter") for p in (0, 1)}
    assert ask(frontend, "debug.view", run=run.id) is None  # no jump yet

    view = ask(frontend, "debug.jump", run=run.id, index=1)
    assert (view["index"], view["step"], view["chain"]) == (1, "jump to I1",
                                                            ["enrich", "detect", "filter"])
    p = next(int(q) for q, ops in view["pending"].items()
             if ops["enrich"]["records"][:1] == [row("Chris", 10.0)])
    assert view["pending"][str(p)]["enrich"]["records"][1] == row("Bob", 5000.0, "¥")
    state = ask(frontend, "run.state", run=run.id, index=1, operator="enrich", partition=p)
    counts = {(w["operator"], w["partition"]): w["count"] for w in view["workers"]}
    assert state["status"] == "running" and state["count"] == counts[("enrich", p)]
    assert state["state"]["highest"]["Alice"] == number(120.0)

    over = ask(frontend, "debug.step_over", run=run.id, partition=p)  # Chris's $10
    assert over["outputs"] == [tup("Chris", 10.0)] and over["index"] is None
    into = ask(frontend, "debug.step_into", run=run.id, partition=p, operator="enrich")
    assert into["pending"][str(p)]["detect"]["records"] == [tup("Bob", 5000.0, 5000.0)]
    assert "step_out" in into["options"]["refused"][str(p)]
    refused = frontend.request("debug.step_over", run=run.id, partition=p)
    assert not refused["ok"] and refused["error"]["type"] == "refused"
    assert "step_out" in refused["error"]["message"]
    ask(frontend, "debug.step_out", run=run.id, partition=p)  # Bob is blacklisted
    detect = ask(frontend, "debug.state", run=run.id, operator="detect", partition=p)
    assert detect["state"]["blacklist"] == {"$t": "set", "v": ["Bob"]}
    assert "blacklist" in detect["changed"]["variables"]

    calls = ["dbg.jump(1)", f"dbg.step_over(partition={p})",
             f"dbg.step_into(partition={p}, operator='enrich')", f"dbg.step_out(partition={p})"]
    actions = ask(frontend, "run.actions", run=run.id)["actions"]
    assert [(a["source"], a["call"]) for a in actions] == [("sidebar", c) for c in calls]
    assert [e["action"]["call"] for e in frontend.events("run.action")] == calls
    moved = [e["view"] for e in frontend.events("debug.moved") if e["run"] == run.id]
    assert [v["step"] for v in moved] == ["jump to I1", f"step over on partition {p}",
                                          f"step into 'enrich' on partition {p}",
                                          f"step out on partition {p}"]
    assert moved[-1] == ask(frontend, "debug.view", run=run.id)


def test_unknown_names_are_not_found_and_a_step_before_a_jump_is_refused(record, frontend):
    run = record_fraud(record)
    before = frontend.request("debug.step_out", run=run.id, partition=0)
    assert before["error"]["type"] == "refused" and "jump" in before["error"]["message"]
    ask(frontend, "debug.jump", run=run.id, index=0)
    for method, params in [("debug.jump", {"index": 9}), ("debug.step_over", {"partition": 7}),
                           ("debug.step_into", {"partition": 0, "operator": "nope"}),
                           ("debug.state", {"operator": "nope", "partition": 0}),
                           ("run.snapshot", {"index": 5}), ("run.actions", {})]:
        reply = frontend.request(method, run=run.id if method != "run.actions" else "nope",
                                 **params)
        assert reply["error"]["type"] == "not_found", (method, reply)
    assert [a["call"] for a in run.actions] == ["dbg.jump(0)"]  # failures are not actions


def test_a_reopened_run_keeps_its_actions_and_debugs_on(record, frontend):
    run = record_fraud(record)
    ask(frontend, "debug.jump", run=run.id, index=1)
    registry._RUNS.remove(run)  # as after a kernel restart
    try:
        reopened = ask(frontend, "run.open", path=run.path)
        assert reopened["id"] == run.id
        again = registry.get(run.id)
        assert again is not run and again.actions == run.actions
        view = ask(frontend, "debug.jump", run=run.id, index=0, source="panel")
        assert frontend.events("debug.moved")[-1] == {"run": run.id, "view": view}
        assert frontend.events("run.action")[-1]["action"]["source"] == "panel"
        assert [(a["source"], a["call"]) for a in again.actions] == [
            ("sidebar", "dbg.jump(1)"), ("panel", "dbg.jump(0)")]
    finally:
        registry._RUNS[:] = [r for r in registry._RUNS if r.id != run.id] + [run]


class Slow(Operator):
    """Its 300th record on each partition of 400 waits at ``gate``: the run records until
    the test opens it. Before the gate, 4 ms of work a record, so that interactions land
    while records flow; none after it."""

    def __init__(self, gate):
        self.gate = gate

    def open(self):
        self.seen = 0

    def process(self, x):
        if x % 400 == 300:
            self.gate.wait(f"p{x // 400}")
        elif not self.gate.is_open():
            time.sleep(0.004)
        self.seen += 1
        yield x


def theta_runs(run):
    assert run.status == "running", run.error
    return any(r["running"] for r in run.progress() if r["operator"] == "slow")


def test_interactions_through_the_comm_while_the_run_records(spark, tmp_path, frontend, gate):
    code = ("out = sc.parallelize(range(800), 2).mapPartitions(Slow(gate)).setName('slow')"
            ".count()")
    run = start_run(code, {"sc": spark.sparkContext, "Slow": Slow, "gate": gate},
                    RunOptions(store=str(tmp_path / "runs"), interesting="slow"))
    try:
        wait_until(lambda: theta_runs(run), 60, "θ's workers to run")
        taken = ask(frontend, "run.interact", run=run.id)["interaction"]
        assert (taken["index"], taken["trigger"]) == (1, "manual")
        refused = frontend.request("debug.jump", run=run.id, index=1)
        assert refused["error"]["type"] == "bad_request" and "still running" in \
            refused["error"]["message"]
        assert ask(frontend, "debug.view", run=run.id) is None
    finally:
        gate.open()
    run.wait(60)
    finished = frontend.request("run.interact", run=run.id)
    assert finished["error"]["type"] == "bad_request"
    pushed = [e["interaction"] for e in frontend.events("run.interaction") if e["run"] == run.id]
    assert pushed[0]["index"] == 1 and pushed[-1]["complete"]
    assert [(a["source"], a["call"]) for a in run.actions] == [("sidebar", "run.interact()")]


def test_the_panel_jumps_and_steps_as_the_panel_and_follows_the_api(record):
    from icedtea_jupyter.ui.panel import RunPanel

    run = record_fraud(record)
    panel = RunPanel(run)
    panel.refresh()
    debug, buttons = panel.debug, panel.timeline_row.buttons
    assert [b.description for b in buttons] == ["I0", "I1"]
    assert not any(b.disabled for b in buttons) and debug.widget.layout.display == "none"
    assert debug.widget.children == ()  # not drawn in the cell before the first jump
    buttons[1].click()
    debug.wait(60)  # moves run off the kernel's thread
    assert debug.widget.layout.display == "" and len(debug.widget.children) == 1
    assert run.actions[-1]["call"] == "dbg.jump(1)" and run.actions[-1]["source"] == "panel"
    assert "at I1" in debug.header.value and buttons[1].button_style == "info"
    dbg = run.debugger()
    p = next(q for q, rows in dbg.pending().items()
             if rows["enrich"]["records"][0].amount == 10.0)
    assert debug.operator.value == "enrich"  # θ, until another operator is chosen
    debug.partition.value = p
    for button in (debug.step_over, debug.step_into, debug.step_over):
        button.click()  # the last is refused: Bob's scope is not finished
        debug.wait(60)
    assert "Refused" in debug.message.value and "step_out" in debug.message.value
    debug.step_out.click()
    debug.wait(60)
    assert debug.message.value == ""
    assert "blacklist" in debug.snapshot.value and "icedtea-changed" in debug.snapshot.value
    assert [(a["source"], a["call"]) for a in run.actions] == [
        ("panel", "dbg.jump(1)"), ("panel", f"dbg.step_over(partition={p})"),
        ("panel", f"dbg.step_into(partition={p}, operator='enrich')"),
        ("panel", f"dbg.step_out(partition={p})")]

    run.debugger().jump(0)  # the user's own code moves the panel too
    assert run.actions[-1]["source"] == "api" and run.actions[-1]["call"] == "dbg.jump(0)"
    assert "at I0" in debug.header.value
    assert [b.button_style for b in panel.timeline_row.buttons] == ["info", ""]


def held_max(gate):
    """A running maximum, 2 ms of work a record (3 s for 1500: periodic interactions
    come every 0.3 s); record 50 waits at ``gate`` (open while the run records)."""
    def slow_max(rows):
        best = None
        for x in rows:
            if x == 50:
                gate.wait(str(os.getpid()))
            end = time.perf_counter() + 0.002
            while time.perf_counter() < end:
                pass
            best = x if best is None else max(best, x)
            yield x
    return slow_max


def test_the_kernel_answers_while_a_long_jump_replays_and_the_jump_can_be_cancelled(
        record, frontend, gate):
    from icedtea_jupyter.replay.remote import RemoteDebugger

    code = "out = sc.parallelize(range(1500), 1).mapPartitions(slow_max).setName('best').count()"
    gate.open()
    run = record(code, {"slow_max": held_max(gate)}, interesting="best", interact_every=0.3)
    run.debugger().close()  # one with only I0 parked: a jump to the end replays it all
    run._debugger = RemoteDebugger(run, run._debugger_moved, prepare_now=False)
    assert ask(frontend, "debug.jump", run=run.id, index=0)["index"] == 0
    last = len(run.interactions) - 1
    gate.close()
    jump = frontend.send_request("debug.jump", run=run.id, index=last)
    # the replay process replays until the gate, and waits: the comm goes on answering
    wait_until(lambda: (busy := run._debugger._busy) is not None and str(busy.pid) in gate.held(),
               60, "the jump's replay process to reach the gate")
    start = time.perf_counter()
    listed = ask(frontend, "run.interactions", run=run.id)["interactions"]
    assert time.perf_counter() - start < 0.5 and len(listed) == last + 1
    assert ask(frontend, "debug.progress", run=run.id)["progress"]["state"] == "waiting"
    assert ask(frontend, "debug.cancel", run=run.id) == {"cancelled": True}
    gate.open()
    reply = frontend.reply(jump)
    assert not reply["ok"] and reply["error"]["type"] == "cancelled", reply
    assert ask(frontend, "debug.view", run=run.id)["index"] == 0  # where it was
    stepped = ask(frontend, "debug.step_over", run=run.id, partition=0)
    assert stepped["step"] == "step over on partition 0"
    assert [w["count"] for w in stepped["workers"] if w["operator"] == "best"] == [1]
    assert ask(frontend, "debug.cancel", run=run.id) == {"cancelled": False}  # nothing runs
    run._debugger.close()
