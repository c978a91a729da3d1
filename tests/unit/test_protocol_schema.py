"""The comm's one schema, ``comm/protocol.json``: well formed, the kernel's lists come from
it, and every reply and event the kernel sends conforms to it (``FakeComm`` checks each
message). ``labextension/test/protocolSchema.spec.ts`` checks ``protocol.ts`` against it."""
import os

import pytest

from icedtea_jupyter.comm import messages, target
from icedtea_jupyter.comm.schema import SCHEMA, check, check_result, fields, names
from icedtea_jupyter.dag import Dag
from icedtea_jupyter.executor.state import encode_state
from icedtea_jupyter.replay.logs import Failure
from icedtea_jupyter.session import registry
from icedtea_jupyter.session.run import Run
from icedtea_jupyter.snapshots.deltas import delta
from icedtea_jupyter.snapshots.history import History
from icedtea_jupyter.store.run_store import RunStore
from tests.unit.fakes import FakeComm
from tests.unit.test_comm_lineage import with_lineage_doubles
from tests.unit.test_replay_engine import DATA3, TARGETS3, debugger


def all_types():
    yield from SCHEMA["types"].values()
    for spec in SCHEMA["requests"].values():
        yield spec["params"]
        yield spec["result"]
    yield from SCHEMA["events"].values()


def test_the_schema_defines_every_type_it_uses():
    used = {name for kind in all_types() for name in names(kind)}
    assert used <= set(SCHEMA["types"]), used - set(SCHEMA["types"])
    assert all(set(spec) == {"params", "result"} for spec in SCHEMA["requests"].values())


def test_the_kernels_methods_params_and_events_come_from_the_schema():
    assert list(messages.REQUEST_METHODS) == list(SCHEMA["requests"])
    assert list(messages.EVENT_TYPES) == list(SCHEMA["events"])
    assert messages.REQUEST_METHODS["debug.step_into"] == {"run": str, "partition": int,
                                                           "operator": str}
    assert messages.SOURCES == ("sidebar", "panel")
    assert messages.PROTOCOL_VERSION == SCHEMA["version"] == 1


def test_a_result_with_a_field_added_removed_or_retyped_breaks_the_schema():
    good = {"protocol": 1, "version": "0.1.0"}
    assert check_result("hello", good) == []
    assert check_result("hello", dict(good, extra=1)) == [
        "hello result: field 'extra' is not in the schema"]
    assert check_result("hello", {"protocol": 1}) == ["hello result: no field 'version'"]
    assert check_result("hello", dict(good, protocol="1")) == [
        'hello result.protocol: "1" is not int']
    assert check_result("hello", dict(good, protocol=True)) != []
    progress = {"state": "ready", "done": 0, "of": 0}
    assert check_result("debug.progress", {"progress": progress}) == []
    assert check_result("debug.progress", {"progress": None}) == []
    assert check_result("debug.progress", {"progress": dict(progress, state="asleep")}) != []
    # open objects take other keys; optional fields may be absent
    assert check({"operator": "enrich", "anything": [1]}, "RunError") == []
    assert check({"repr": "1"}, "RecordSample") == []


@pytest.fixture
def theta_run(tmp_path, monkeypatch):
    """A finished run whose θ, ``enrich``, has two interactions with snapshots."""
    store = RunStore.create(str(tmp_path), "run-s")
    dag = Dag()
    dag.add("source", "jvm", "parallelize", [])
    dag.add("enrich", "python", "mapPartitions", [0])
    dag.set_interesting(1)
    manifest = {"id": "run-s", "status": "finished", "started": 1.0, "ended": 3.0,
                "cell": "rdd.mapPartitions(Enrich())", "dag": dag.to_json()}
    store.write_manifest(manifest)
    run = Run(store, manifest, dag)
    bob = {"repr": "Row(customer='Bob')", "type": "Row", "value": {"customer": "Bob"}}
    raw = [{"index": 0, "time": 1.0, "trigger": "initial", "complete": True, "latency": None,
            "record": None},
           {"index": 1, "time": 2.0, "trigger": "condition", "complete": True,
            "latency": 0.01, "record": bob}]
    first = encode_state({"highest": {}, "seen": 0})
    second = encode_state({"highest": {"Bob": 5000.0, ("x", 1): 2}, "seen": 2})
    worker = {"operator": 1, "partition": 0, "task": 7}
    entries = [{"worker": worker, "index": 0, "time": 1.0, "count": 0, "status": "running",
                "delta": delta(None, first)},
               {"worker": worker, "index": 1, "time": 2.0, "count": 2, "status": "running",
                "delta": delta(first, second)}]
    monkeypatch.setattr(run, "history", lambda: History(raw, entries, dag, []))
    monkeypatch.setattr(run, "interact", lambda: raw[1])  # as if it were still recording
    yield run
    if run in registry.runs():
        registry._RUNS.remove(run)


def test_every_reply_and_event_the_kernel_sends_conforms_to_the_schema(theta_run, monkeypatch):
    from icedtea_jupyter.replay import remote

    run = theta_run.id
    with_lineage_doubles(theta_run, monkeypatch)
    target.watch_runs()
    comm = FakeComm()
    target._on_open(comm, {})
    with debugger(DATA3, TARGETS3) as engine:
        # as if the run had failed on partition 0's third record: jump_to_failure goes there
        engine.logs.failure = Failure(0, "best", 2, 2, "ValueError", before=1)

        def debugger_for(run, on_move=None, on_progress=None):
            engine.on_move = on_move
            return engine
        monkeypatch.setattr(remote, "debugger_for", debugger_for)
        registry.add(theta_run)  # run.added
        with_agent_data(theta_run)
        asked = [("hello", {}), ("runs.list", {}), ("run.get", {"run": run}),
                 ("run.partitions", {"run": run, "operator": "enrich"}),
                 ("run.open", {"path": theta_run.path}),
                 ("run.interactions", {"run": run}), ("run.interact", {"run": run}),
                 ("run.snapshot", {"run": run, "index": 1}),
                 ("run.state", {"run": run, "index": 1, "operator": "enrich", "partition": 0}),
                 ("run.page", {"run": run, "index": 1, "operator": "enrich", "partition": 0,
                               "variable": "highest", "start": 0, "size": 10}),
                 ("debug.view", {"run": run}), ("debug.progress", {"run": run}),
                 ("debug.jump", {"run": run, "index": 1, "source": "panel"}),
                 ("debug.jump_to_failure", {"run": run}),
                 ("debug.step_over", {"run": run, "partition": 0}),
                 ("debug.step_into", {"run": run, "partition": 0, "operator": "best"}),
                 ("debug.step_out", {"run": run, "partition": 0}),
                 ("debug.state", {"run": run, "operator": "best", "partition": 0}),
                 ("debug.view", {"run": run}), ("debug.progress", {"run": run}),
                 ("debug.cancel", {"run": run}), ("run.actions", {"run": run}),
                 ("skew.report", {"run": run, "operator": "enrich", "eta": 2.0}),
                 ("lineage.outputs", {"run": run, "start": 0, "size": 2, "filter": "a"}),
                 ("lineage.trace_back", {"run": run, "partition": 0, "position": 1, "size": 5}),
                 ("lineage.trace_forward", {"run": run, "operator": "lines", "partition": 0,
                                            "position": 0, "source": "panel"}),
                 ("lineage.records", {"run": run, "trace": 1, "operator": "lines", "start": 0,
                                      "size": 5}),
                 ("lineage.replay", {"run": run, "trace": 1, "size": 5, "source": "sidebar"}),
                 ("debug.jump_to", {"run": run, "trace": 1, "operator": "lines", "partition": 0,
                                    "position": 0}),
                 ("versions.list", {"run": run}), ("versions.diff", {"run": run, "other": run}),
                 ("run.export", {"run": run,
                                 "path": os.path.join(os.path.dirname(theta_run.path),
                                                      "export.ipynb")}),
                 ("samples.get", {"run": run, "operator": "enrich"}),
                 ("summaries.compare", {"run": run, "other": run}), ("summaries.compare", {"run": run}),
                 ("alerts.groups", {"run": run})]
        for method, params in asked:
            declared = fields(SCHEMA["requests"][method]["params"])
            assert {n for n, (_, required) in declared.items() if required} <= set(params) \
                <= set(declared), method
            reply = comm.request(method, **params)
            assert reply["ok"], (method, reply["error"])
        theta_run.emit("run", {})  # run.progress, run.status
        theta_run.emit("alert", {"agent": "skew", "message": "partition 3 is slow"})
        theta_run.emit("interaction", {"index": 1, "interaction": theta_run.history().raw[1]})
        theta_run.emit("replay", {"state": "preparing", "done": 1, "of": 2})
    comm.close()  # fails if any message broke the schema
    answered = {comm.methods[m["id"]] for m in comm.sent if m["kind"] == "reply" and m["ok"]}
    # live control's requests and event: tests/unit/test_comm_control.py; a live skew
    # view's pushes: tests/unit/test_skew_comm.py
    assert answered == {m for m in SCHEMA["requests"] if not m.startswith("control.")}
    assert {m["event"] for m in comm.sent if m["kind"] == "event"} == \
        set(SCHEMA["events"]) - {"run.control", "skew.changed"}


def with_agent_data(run):
    """``enrich``'s sample and summary, as the samples and summaries agents store them."""
    from icedtea_jupyter.agents.summaries import fold
    from icedtea_jupyter.store.agent_files import write_sample, write_summary

    write_sample(run.path, 1, [{"_1": "Bob", "_2": 5000.0, "_partition": 0}])
    sketches = {}
    fold(sketches, [("Bob", 5000.0), ("Ann", None)])
    write_summary(run.path, 1, {"fields": {n: s.to_json() for n, s in sketches.items()}})


def test_a_reply_that_breaks_the_schema_fails_the_frontends_double(stored_run, monkeypatch):
    from icedtea_jupyter.comm import handlers

    monkeypatch.setitem(target.HANDLERS._handlers, "hello",
                        lambda params: dict(handlers.hello(params), extra=True))
    comm = FakeComm()
    target._on_open(comm, {})
    with pytest.raises(AssertionError, match="field 'extra' is not in the schema"):
        comm.request("hello")
    comm.problems.clear()
    comm.close()
