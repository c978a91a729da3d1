"""Live control through the ``icedtea`` comm, as the panel and the sidebar drive it: every
request and event conforms to the schema, and each action is recorded as its API call."""
from types import SimpleNamespace

from icedtea_jupyter.comm import target
from icedtea_jupyter.comm.schema import SCHEMA
from icedtea_jupyter.control.api import LiveControlAPI
from icedtea_jupyter.session import registry
from icedtea_jupyter.session.run import Run
from icedtea_jupyter.store.run_store import RunStore
from tests.unit.fakes import FakeComm
from tests.unit.test_live_control import slow_square
from tests.waiting import wait_until

from .live_wire import Wire


class WiredRun(LiveControlAPI, Run):
    """A run recording through a ``Wire`` (its workers are threads of this process)."""

    def __init__(self, store, manifest, wire):
        super().__init__(store, manifest, wire.dag)
        self.wire = wire
        wire.controller.emit = self.emit
        wire.controller.record_action = self._actions.record

    @property
    def coordinator(self):
        return SimpleNamespace(control=self.wire.controller)


def test_the_sidebar_pauses_decides_and_edits_breakpoints_through_the_comm(tmp_path,
                                                                          monkeypatch):
    store = RunStore.create(str(tmp_path), "run-c")
    wire = Wire(monkeypatch, store.path)
    manifest = {"id": "run-c", "status": "running", "started": 1.0, "cell": "",
                "dag": wire.dag.to_json()}
    run = WiredRun(store, manifest, wire)
    target.watch_runs()
    comm = FakeComm()
    target._on_open(comm, {})
    registry.add(run)
    try:
        assert not comm.request("control.add_breakpoint", run="run-c", operator="op0",
                                when="row ==")["ok"]  # refused: nothing armed
        view = comm.request("control.add_breakpoint", run="run-c", operator="op0",
                            when="row == 30")["result"]
        assert [b["when"] for b in view["breakpoints"]] == ["row == 30"]
        wire.run("map", slow_square, range(3000), partition=0)
        wait_until(lambda: comm.request("control.get", run="run-c")["result"]["hits"], 10,
                   "the hit shown")
        view = comm.request("control.get", run="run-c")["result"]
        assert view["paused"] and view["hits"][0]["record"] == 30
        # the run.control event is pushed by the watcher thread: it may follow the reply
        wait_until(lambda: any(e["view"]["hits"] for e in comm.events("run.control")), 10,
                   "the hit pushed to the sidebar")
        assert comm.events("run.control")[-1]["view"]["hits"][0]["decision"] is None
        state = comm.request("control.live_state", run="run-c", operator="op0", partition=0)
        assert state["ok"], state
        decided = comm.request("control.decide", run="run-c", hit=0, action="replace",
                               record=31, source="panel")["result"]
        assert decided["hits"][0]["decision"] == "replace"
        paused = comm.request("control.pause", run="run-c")["result"]
        assert paused["acknowledged"] == 1 and paused["pending"] == 0
        assert comm.request("control.remove_breakpoint", run="run-c", breakpoint=1)["ok"]
        assert comm.request("control.resume", run="run-c")["ok"]
        wire.join()
        assert wire.outputs[0][30] == 31 * 31
        calls = [(a["source"], a["call"]) for a in run.actions]
        assert calls == [("sidebar", "run.add_breakpoint('op0', when='row == 30')"),
                         ("panel", "run.breakpoints[0].replace(31)"),
                         ("sidebar", "run.pause()"), ("sidebar", "run.remove_breakpoint(1)"),
                         ("sidebar", "run.resume()")]
    finally:
        registry._RUNS.remove(run)
        comm.close()  # fails if any message broke the schema
    answered = {comm.methods[m["id"]] for m in comm.sent if m["kind"] == "reply" and m["ok"]}
    assert answered == {m for m in SCHEMA["requests"] if m.startswith("control.")}
    assert "run.control" in {m["event"] for m in comm.sent if m["kind"] == "event"}


def test_the_panels_buttons_pause_resume_and_skip_as_api_calls(tmp_path, monkeypatch):
    from icedtea_jupyter.ui.control import ControlBar

    store = RunStore.create(str(tmp_path), "run-p")
    wire = Wire(monkeypatch, store.path)
    run = WiredRun(store, {"id": "run-p", "status": "running", "started": 1.0, "cell": "",
                           "dag": wire.dag.to_json()}, wire)
    wire.controller.add("op0", when="row == 500")
    wire.run("map", slow_square, range(3000), partition=0)
    bar = ControlBar(run)
    assert bar.widget.children == (bar._bar,)  # no hit: its row is not drawn in the cell
    wait_until(lambda: len(wire.outputs[0]) > 10, 10, "the task producing")
    bar.pause_button.click()
    wait_until(lambda: run.paused and "held" in bar.status.value, 10, "paused from the panel")
    assert bar.pause_button.description == "Resume"
    bar.pause_button.click()
    wait_until(lambda: run.breakpoints, 10, "the hit")
    bar.update()
    assert "op0" in bar.hit.value and "500" in bar.hit.value
    assert bar.widget.children == (bar._bar, bar.hit_row)
    bar.hit_buttons[0].click()  # Skip
    wire.join()
    assert 500 * 500 not in wire.outputs[0] and len(wire.outputs[0]) == 2999
    assert [(a["source"], a["call"]) for a in run.actions] == [
        ("panel", "run.pause()"), ("panel", "run.resume()"),
        ("panel", "run.breakpoints[0].skip()")]
