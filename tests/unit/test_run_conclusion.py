"""The end of a run, against a real Coordinator and its store's files: an interaction
asked for while the run concludes is refused, never listed without being stored; one
taken before is stored; workers that never reported are stored as ``lost``."""
import pytest

from icedtea_jupyter.coordinator.coordinator import Coordinator
from icedtea_jupyter.dag import Dag
from icedtea_jupyter.session.run import Run
from icedtea_jupyter.snapshots.history import History
from icedtea_jupyter.store.run_store import RunStore


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
        coordinator._on_message({"type": "snapshot", "worker": theta_worker(0),
                                 "index": index, "count": 3, "status": "running",
                                 "delta": {}}, b"", None)
        end(coordinator, 0)
    on_flush(coordinator, worker_reports_then_ends)
    coordinator.finish(timeout=1.0)
    stored = coordinator.store.interactions()
    assert [i["index"] for i in stored] == [0, index] and stored[index]["complete"]
    history = History.from_store(coordinator.store, coordinator.dag,
                                 coordinator.store.worker_table().to_pylist())
    assert history.snapshot(index).worker("parse", 0).count == 3


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
