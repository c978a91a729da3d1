"""Time-travel messages of the icedtea comm without Spark: validation, the action log,
one debugger per run, events forwarded to the frontend."""
import json
import threading
import time

import pytest

from icedtea_jupyter.comm import messages, target
from icedtea_jupyter.comm.target import handle
from icedtea_jupyter.comm.time_travel import debug_view, interaction_json
from icedtea_jupyter.replay.cursor import StepRefused
from icedtea_jupyter.session.actions import ActionLog, acting_as
from icedtea_jupyter.session.run import Run
from icedtea_jupyter.store.layout import ACTIONS as FILE
from icedtea_jupyter.store.run_store import RunStore
from tests.unit.fakes import FakeComm
from tests.unit.test_replay_engine import DATA3, TARGETS3, debugger
from tests.waiting import wait_until

CONTRACT_METHODS = ["run.interactions", "run.interact", "run.snapshot", "run.state", "run.page",
                    "debug.view", "debug.jump", "debug.jump_to_failure", "debug.jump_to", "debug.step_over", "debug.step_into",
                    "debug.step_out", "debug.state", "debug.cancel", "debug.progress",
                    "run.actions"]
CONTRACT_EVENTS = ["run.interaction", "debug.moved", "debug.preparing", "run.action"]


def request(method, **params):
    return handle({"kind": "request", "id": 1, "method": method, "params": params})


def test_the_contracts_methods_and_events_come_after_the_old_ones_in_its_order():
    # (live control's come after them: tests/unit/test_comm_control.py)
    assert list(messages.REQUEST_METHODS)[5:5 + len(CONTRACT_METHODS)] == CONTRACT_METHODS
    assert list(messages.EVENT_TYPES)[4:4 + len(CONTRACT_EVENTS)] == CONTRACT_EVENTS
    assert messages.REQUEST_METHODS["run.page"] == {
        "run": str, "index": int, "operator": str, "partition": int, "variable": str,
        "start": int, "size": int}


@pytest.mark.parametrize("method, params, wrong", [
    ("run.snapshot", {"run": "r"}, "index"),
    ("run.snapshot", {"run": "r", "index": "1"}, "index"),
    ("run.snapshot", {"run": "r", "index": True}, "index"),  # JSON true is not an int
    ("run.state", {"run": "r", "index": 1, "operator": "enrich", "partition": 0.5}, "partition"),
    ("run.page", {"run": "r", "index": 1, "operator": "o", "partition": 0, "variable": "v",
                  "start": 0}, "size"),
    ("debug.jump", {"run": "r", "index": None}, "index"),
    ("debug.step_into", {"run": "r", "partition": 0}, "operator"),
    ("debug.step_into", {"run": "r", "partition": 0, "operator": 3}, "operator"),
    ("debug.state", {"run": "r", "operator": "o"}, "partition"),
    ("run.actions", {}, "run"),
])
def test_new_methods_check_their_params(method, params, wrong):
    reply = request(method, **params)
    assert reply["error"]["type"] == "bad_request" and repr(wrong) in reply["error"]["message"]


@pytest.mark.parametrize("source", ["api", "kernel", 3])
def test_the_source_param_is_sidebar_or_panel(source):
    reply = request("run.actions", run="r", source=source)
    assert reply["error"]["type"] == "bad_request" and "source" in reply["error"]["message"]


def test_an_ended_run_takes_no_interaction_and_has_no_view_before_a_jump(stored_run):
    reply = request("run.interact", run="run-a")
    assert reply["error"]["type"] == "bad_request" and "finished" in reply["error"]["message"]
    assert request("debug.view", run="run-a")["result"] is None
    assert request("run.actions", run="run-a")["result"] == {"run": "run-a", "actions": []}
    assert request("run.actions", run="nope")["error"]["type"] == "not_found"


def test_the_action_log_keeps_sources_in_order_and_reloads(stored_run, tmp_path):
    heard = []
    log = ActionLog(stored_run.path, heard.append)
    log.record("run.interact()")
    with acting_as("panel"):
        log.record("dbg.jump(1)")
        with acting_as("sidebar"):
            log.record("dbg.step_out(partition=0)")
        log.record("dbg.jump(0)")
    with pytest.raises(ValueError, match="unknown action source"):
        with acting_as("robot"):
            pass
    expected = [("api", "run.interact()"), ("panel", "dbg.jump(1)"),
                ("sidebar", "dbg.step_out(partition=0)"), ("panel", "dbg.jump(0)")]
    assert [(a["source"], a["call"]) for a in log.list()] == expected
    assert [(a["source"], a["call"]) for a in heard] == expected
    with open(f"{stored_run.path}/{FILE}", "a", encoding="utf-8") as f:
        f.write('{"time": 1, "sour')  # a crash mid-line loses that line only
    reopened = Run(RunStore.open(stored_run.path), stored_run.manifest, stored_run.dag)
    assert [(a["source"], a["call"]) for a in reopened.actions] == expected


def test_sources_are_per_thread():
    seen = {}
    log = ActionLog("/nonexistent-store", lambda action: None)  # unwritable: kept in memory
    all_acting = threading.Barrier(3, timeout=10)  # every thread has set its source

    def act(source):
        with acting_as(source):
            all_acting.wait()
            seen[source] = log.record(source)["source"]
    threads = [threading.Thread(target=act, args=(s,)) for s in ("panel", "sidebar", "api")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"panel": "panel", "sidebar": "sidebar", "api": "api"}
    assert len(log.list()) == 3


def test_one_debugger_per_run_even_when_asked_at_once(stored_run, monkeypatch):
    from icedtea_jupyter.replay import remote as module

    made = []

    class CountingLock:
        """The run's debugger lock, counting the callers that came to it."""

        def __init__(self, lock):
            self.lock, self.callers, self._count = lock, 0, threading.Lock()

        def __enter__(self):
            with self._count:
                self.callers += 1
            return self.lock.__enter__()

        def __exit__(self, *exc):
            return self.lock.__exit__(*exc)

    lock = CountingLock(stored_run._debugger_lock)
    monkeypatch.setattr(stored_run, "_debugger_lock", lock)

    def slow_debugger_for(run, on_move=None, on_progress=None):
        # made while all six callers are in run.debugger(): five wait for this one
        wait_until(lambda: lock.callers == 6, 10, "six callers at the run's debugger lock")
        made.append(object())
        return made[-1]
    monkeypatch.setattr(module, "debugger_for", slow_debugger_for)
    got = []
    threads = [threading.Thread(target=lambda: got.append(stored_run.debugger()))
               for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1 and all(d is made[0] for d in got)
    assert stored_run.current_debugger is made[0]


def test_the_debugger_tells_each_move_as_its_python_call_and_not_refusals():
    with debugger(DATA3, TARGETS3) as dbg:
        moves = []
        dbg.on_move = lambda call, snapshot: moves.append((call, snapshot.step,
                                                           snapshot is dbg.current))
        dbg.jump(1)
        dbg.step_over(0)
        dbg.step_into(0, "best")
        dbg.step_into(0, "double")
        with pytest.raises(StepRefused):
            dbg.step_over(0)
        dbg.step_out(partition=0)
        assert moves == [
            ("dbg.jump(1)", "jump to I1", True),
            ("dbg.step_over(partition=0)", "step over on partition 0", True),
            ("dbg.step_into(partition=0, operator='best')", "step into 'best' on partition 0",
             True),
            ("dbg.step_into(partition=0, operator='double')",
             "step into 'double' on partition 0", True),
            ("dbg.step_out(partition=0)", "step out on partition 0", True)]


def test_moves_from_many_threads_are_told_one_at_a_time():
    with debugger(DATA3, TARGETS3) as dbg:
        inside, overlaps, calls = [0], [], []

        def on_move(call, snapshot):
            inside[0] += 1
            overlaps.append(inside[0] > 1)
            # a listener's work: the test passes whatever it lasts when moves are told one at
            # a time; it only gives moves told at once the time to overlap
            time.sleep(0.002)
            calls.append(call)
            inside[0] -= 1
        dbg.on_move = on_move
        dbg.jump(1)
        threads = [threading.Thread(target=dbg.jump, args=(k % 2,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(calls) == 9 and not any(overlaps)


def test_the_debug_view_is_small_and_json():
    class FakeRun:
        id = "run-x"
    with debugger({0: [(1, k) for k in range(50)]}, [{0: TARGETS3[0][0]}]) as dbg:
        dbg.jump(0)
        view = debug_view(FakeRun(), dbg)
        assert json.loads(json.dumps(view)) == view
        best = view["pending"]["0"]["best"]
        assert best["count"] == 50 and len(best["records"]) == 20
        assert best["records"][0] == {"$t": "tuple", "v": [1, 0]}
        assert view["options"] == {"step_over": 1, "step_into": 1, "refused": {}, "ended": []}
        assert (view["index"], view["step"], view["outputs"]) == (0, "jump to I0", [])


def test_the_debug_view_names_the_partition_and_operator_of_the_last_step():
    class FakeRun:
        id = "run-x"
    with debugger(DATA3, TARGETS3) as dbg:
        dbg.jump(1)
        view = debug_view(FakeRun(), dbg)
        assert (view["partition"], view["operator"]) == (None, None)
        dbg.step_into(1, "best")
        view = debug_view(FakeRun(), dbg)
        assert (view["partition"], view["operator"]) == (1, "best")
        dbg.step_out(partition=1)
        view = debug_view(FakeRun(), dbg)
        assert (view["partition"], view["operator"]) == (1, None)
        dbg.jump(0)
        assert debug_view(FakeRun(), dbg)["partition"] is None


def test_run_events_reach_an_open_frontend(stored_run):
    target.watch_runs()
    comm = FakeComm()
    target._on_open(comm, {})
    try:
        with acting_as("panel"):
            stored_run._actions.record("dbg.jump(2)")
        raw = {"index": 1, "time": 5.0, "trigger": "condition", "complete": False,
               "latency": None, "checkpoint": False,
               "record": {"repr": "Row(customer='Bob')", "type": "Row",
                          "value": {"customer": "Bob"}}}
        stored_run.emit("interaction", {"index": 1, "interaction": raw})
    finally:
        comm.close()
    action = comm.events("run.action")[-1]
    assert action["run"] == "run-a" and action["action"]["call"] == "dbg.jump(2)"
    assert action["action"]["source"] == "panel"
    assert comm.events("run.interaction")[-1] == {"run": "run-a", "interaction": {
        "index": 1, "time": 5.0, "trigger": "condition", "complete": False, "latency": None,
        "record": {"$t": "row", "v": {"customer": "Bob"}}}}


@pytest.mark.parametrize("record, tagged", [
    (None, None),
    ({"repr": "7", "type": "int", "value": 7}, 7),
    ({"repr": "(1, 2)", "type": "tuple", "value": [1, 2]},
     {"$t": "object", "type": "tuple", "repr": "(1, 2)"}),
])
def test_interaction_records_travel_tagged(record, tagged):
    raw = {"index": 2, "time": 1.0, "trigger": "manual", "complete": True, "latency": 0.1,
           "record": record}
    assert interaction_json(raw)["record"] == tagged
