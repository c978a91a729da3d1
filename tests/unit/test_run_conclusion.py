"""The end of a run, against a real Coordinator and its store's files: an interaction
asked for while the run concludes is refused, never listed without being stored (and a
worker whose ``--interact-when`` is refused is told at once); one taken before is stored
complete, even when its last report comes after the book was saved; workers that never
reported are stored as ``lost``."""
import dataclasses
import time

import pytest

from icedtea_jupyter.coordinator.coordinator import Coordinator
from icedtea_jupyter.dag import Dag
from icedtea_jupyter.executor import channel as channel_module
from icedtea_jupyter.executor import host as host_module
from icedtea_jupyter.executor import timetravel
from icedtea_jupyter.executor.spec import OperatorSpec
from icedtea_jupyter.executor.wrappers import PartitionFunction
from icedtea_jupyter.session.run import Run
from icedtea_jupyter.snapshots.history import History
from icedtea_jupyter.store.run_store import RunStore
from tests.unit.live_wire import FakeTask


def theta_worker(partition):
    return {"operator": 0, "partition": partition, "stage": 0, "attempt": 0,
            "task": 10 + partition}


@pytest.fixture
def coordinator(tmp_path):
    dag = Dag()
    dag.add("parse", "python", "map", [])
    dag.set_interesting(0)
    coordinator = Coordinator("run-1", RunStore.create(str(tmp_path), "run-1"), dag, [],
                              lambda event, data: None)
    yield coordinator
    coordinator.server.close()


def start(coordinator, partition):
    coordinator._on_message({"type": "worker_start", "worker": theta_worker(partition),
                             "started": 1.0}, b"", None)


def end(coordinator, partition, records=5):
    coordinator._on_message({"type": "worker_end", "worker": theta_worker(partition),
                             "status": "ok", "records_in": records, "records_out": records,
                             "started": 1.0, "ended": 2.0}, b"", None)


def on_flush(coordinator, action):
    """Run ``action`` when ``finish`` asks the workers to flush: while it concludes."""
    broadcast = coordinator.server.broadcast

    def flushing(message):
        if message["type"] == "flush":
            action()
        return broadcast(message)
    coordinator.server.broadcast = flushing


def stored_indices(coordinator):
    return [i["index"] for i in coordinator.store.interactions()]


def listed_indices(coordinator):
    return [i["index"] for i in coordinator.book.copies()[0]]


def test_an_interaction_asked_for_after_the_book_was_saved_is_refused(coordinator):
    coordinator.interact()  # I1, with no θ worker running: complete at once
    save = coordinator.book.save
    refusals = []

    def save_then_interact():  # the race: after finish() saved, before the run ended
        save()
        with pytest.raises(RuntimeError) as refused:
            coordinator.interact()
        refusals.append(str(refused.value))
    coordinator.book.save = save_then_interact
    coordinator.finish(timeout=0.1)
    assert refusals and refusals[0].startswith("the run is finishing: its last "
                                               "interaction is I1")
    assert stored_indices(coordinator) == listed_indices(coordinator) == [0, 1]


def test_interactions_asked_for_while_workers_flush_are_refused_and_not_listed(coordinator):
    start(coordinator, 0)
    refusals = []

    def interact_while_flushing():
        with pytest.raises(RuntimeError, match="the run is finishing: its last interaction "
                                               "is I0") as refused:
            coordinator.interact()
        refusals.append(refused.value)
        coordinator._on_message({"type": "interact_request", "worker": theta_worker(0),
                                 "trigger": "condition", "request": 1}, b"", None)
        end(coordinator, 0)
    on_flush(coordinator, interact_while_flushing)
    coordinator.finish(timeout=1.0)
    assert refusals
    assert stored_indices(coordinator) == listed_indices(coordinator) == [0]


def test_an_interaction_taken_before_the_end_is_stored_complete(coordinator, tmp_path):
    start(coordinator, 0)
    index = coordinator.interact()
    assert not coordinator.book.interactions[index]["complete"]  # θ's worker is asked

    def worker_reports_then_ends():
        snapshot(coordinator, 0, index, count=3)
        end(coordinator, 0)
    on_flush(coordinator, worker_reports_then_ends)
    coordinator.finish(timeout=1.0)
    stored = coordinator.store.interactions()
    assert [i["index"] for i in stored] == [0, index] and stored[index]["complete"]
    history = History.from_store(coordinator.store, coordinator.dag,
                                 coordinator.store.worker_table().to_pylist())
    assert history.snapshot(index).worker("parse", 0).count == 3


def snapshot(coordinator, partition, index, count):
    coordinator._on_message({"type": "snapshot", "worker": theta_worker(partition),
                             "index": index, "count": count, "status": "running",
                             "delta": {}}, b"", None)


def test_a_report_arriving_after_the_book_was_saved_completes_the_stored_interaction(
        coordinator):
    start(coordinator, 0)
    index = coordinator.interact()
    save = coordinator.book.save

    def save_then_report():  # the race: θ's worker reports after finish() saved
        save()
        snapshot(coordinator, 0, index, count=3)
        end(coordinator, 0)
    coordinator.book.save = save_then_report
    coordinator.finish(timeout=0.05)
    listed = coordinator.book.copies()[0]
    assert listed[index]["complete"]  # the live run's list
    assert coordinator.store.interactions() == listed  # as the store keeps it
    history = History.from_store(coordinator.store, coordinator.dag,
                                 coordinator.store.worker_table().to_pylist())
    assert history.snapshot(index).worker("parse", 0).count == 3


def test_a_worker_whose_interact_when_is_refused_goes_on_at_once(coordinator, monkeypatch):
    """A straggling θ worker's condition holds while the run concludes: the coordinator
    refuses the interaction and says so, and the worker goes on without waiting."""
    monkeypatch.setattr(timetravel, "ANSWER_TIMEOUT", 60.0)  # unanswered, it waits this
    monkeypatch.setattr(channel_module, "_CHANNELS", {})  # a real channel to it
    monkeypatch.setattr(host_module, "_task_context", lambda: FakeTask(10, 0))
    run = dataclasses.replace(coordinator.run_spec, condition="row == 2")
    theta = OperatorSpec(0, run, "map", "parse", theta=True, in_g=True)
    coordinator.book.close()  # the run concludes while this worker still runs
    started = time.monotonic()
    outputs = list(PartitionFunction(theta, "map", lambda x: x * 10)(0, iter(range(5))))
    waited = time.monotonic() - started
    assert outputs == [x * 10 for x in range(5)]
    assert waited < timetravel.ANSWER_TIMEOUT / 2, f"the worker waited {waited:.1f} s"
    assert listed_indices(coordinator) == [0]


def test_workers_that_never_reported_are_stored_as_lost(coordinator):
    start(coordinator, 0)
    start(coordinator, 1)
    end(coordinator, 0, records=5)
    coordinator.finish(timeout=0.05)  # partition 1's worker never reports
    live = {state["partition"]: state["status"] for _, state in coordinator.worker_states()}
    rows = coordinator.store.worker_table().to_pylist()
    assert live == {0: "ok", 1: "lost"}
    assert {row["partition"]: row["status"] for row in rows} == live
    reopened = Run(coordinator.store, {"id": "run-1", "status": "finished"}, coordinator.dag)
    (progress,) = reopened.progress()
    assert (progress["done"], progress["failed"], progress["records_in"]) == (1, 1, 5)
    assert reopened.metrics()["records_in"].tolist() == [5]  # a lost attempt counts nothing


def test_a_worker_whose_task_succeeded_is_waited_for_past_the_timeout(coordinator):
    """The kernel reads a finished worker's end late (busy, or a loaded machine): Spark
    says its task succeeded, so ``finish`` waits for it rather than store it ``lost``
    (its replay log came with the end). A worker of a task Spark does not call a
    success is not waited for."""
    import threading

    start(coordinator, 0)
    start(coordinator, 1)
    asked = []

    def succeeded(keys):  # what Spark's status store says of the workers still running
        asked.append(sorted(key[2] for key in keys))
        threading.Timer(0.5, end, (coordinator, 0, 7)).start()  # read after the timeout
        return {key for key in keys if key[2] == 0}
    started = time.monotonic()
    coordinator.finish(timeout=0.05, succeeded=succeeded)
    assert asked == [[0, 1]]
    assert 0.4 < time.monotonic() - started < 5  # partition 1's worker: not waited for
    live = {state["partition"]: state["status"] for _, state in coordinator.worker_states()}
    assert live == {0: "ok", 1: "lost"}
    rows = coordinator.store.worker_table().to_pylist()
    assert {row["partition"]: (row["status"], row["records_in"]) for row in rows} == \
        {0: ("ok", 7), 1: ("lost", None)}
