"""The coordinator's handlers of worker messages: one per type, unknown types refused."""
import logging

import pytest

from icedtea_jupyter.coordinator.coordinator import Coordinator
from icedtea_jupyter.dag import Dag
from icedtea_jupyter.executor import protocol
from icedtea_jupyter.store.run_store import RunStore

WORKER = {"operator": 0, "partition": 1, "stage": 0, "attempt": 0, "task": 7}


@pytest.fixture
def coordinator(tmp_path):
    dag = Dag()
    dag.add("parse", "python", "map", [])
    emitted = []
    coordinator = Coordinator("run-1", RunStore.create(str(tmp_path), "run-1"), dag, [],
                              lambda event, data: emitted.append((event, data)))
    coordinator.emitted = emitted
    yield coordinator
    coordinator.server.close()


def test_every_worker_message_type_but_the_handshake_has_a_handler(coordinator):
    handled = set(coordinator._handlers)
    assert handled == set(protocol.WORKER_MESSAGES) - {"hello", "progress"}


def test_an_unknown_type_is_refused_with_a_logged_error_and_changes_nothing(coordinator,
                                                                              caplog):
    with caplog.at_level(logging.ERROR, logger="icedtea_jupyter.coordinator.coordinator"):
        coordinator._on_message({"type": "progress", "worker": WORKER, "records_in": 1,
                                 "records_out": 1}, b"", None)
    assert "no handler for a worker's 'progress' message" in caplog.text
    assert not coordinator.workers and not coordinator.alerts and not coordinator.emitted


def test_the_handlers_route_by_type(coordinator):
    coordinator._on_message({"type": "worker_start", "worker": WORKER, "started": 1.0}, b"",
                            None)
    coordinator._on_message({"type": "alert", "worker": WORKER, "source": "a",
                             "message": "m"}, b"", None)
    coordinator._on_message({"type": "snapshots", "reports": []}, b"", None)
    (key, state), = coordinator.worker_states()
    assert state["status"] == "running" and state["task"] == 7
    (alert,) = coordinator.alerts
    assert alert["operator"] == "parse" and alert["message"] == "m"
    assert [event for event, _ in coordinator.emitted] == ["worker", "alert"]
