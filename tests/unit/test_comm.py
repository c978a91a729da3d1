"""The icedtea comm: request/reply with ids, errors as replies, one message list per side."""
import logging
import os
import pathlib
import re

import pytest

from icedtea_jupyter.comm import messages
from icedtea_jupyter.comm.handlers import RUNS, HandlerRegistry, MethodTable
from icedtea_jupyter.comm.target import CommChannel, default_handlers, handle
from icedtea_jupyter.session import registry
from icedtea_jupyter.store.run_store import RunStore
from tests.unit.fakes import FakeComm

PROTOCOL_TS = pathlib.Path(__file__).parents[2] / "labextension" / "src" / "comm" / "protocol.ts"


def ts_array(name: str) -> list[str]:
    text = PROTOCOL_TS.read_text()
    match = re.search(rf"export const {name} = \[(.*?)\] as const", text, re.S)
    assert match, f"{name} not found in {PROTOCOL_TS}"
    return re.findall(r"'([^']+)'", match.group(1))


def test_frontend_and_kernel_define_the_same_requests_and_events():
    assert ts_array("REQUEST_METHODS") == list(messages.REQUEST_METHODS)
    assert ts_array("EVENT_TYPES") == list(messages.EVENT_TYPES)


def test_every_request_method_has_exactly_one_handler():
    assert default_handlers().methods() == set(messages.REQUEST_METHODS)


def test_the_registry_refuses_a_second_handler_and_unknown_methods():
    with pytest.raises(ValueError, match="already has a handler"):
        HandlerRegistry().add(RUNS).add(RUNS)
    unknown = MethodTable()
    unknown.handles("run.delete")(lambda params: None)
    with pytest.raises(ValueError, match="not a request method"):
        HandlerRegistry().add(unknown)
    with pytest.raises(ValueError, match="handled twice"):
        RUNS.handles("hello")(lambda params: None)


def test_runs_list_and_run_get_reply_with_the_request_id(stored_run):
    reply = handle({"kind": "request", "id": 7, "method": "runs.list", "params": {}})
    assert reply["id"] == 7 and reply["ok"]
    item = next(r for r in reply["result"]["runs"] if r["id"] == "run-a")
    assert item["cell"] == "rdd = sc.parallelize(x)" and item["operators"] == 1
    reply = handle({"kind": "request", "id": 8, "method": "run.get", "params": {"run": "run-a"}})
    assert reply["ok"] and reply["result"]["dag"]["edges"] == [["source", "enrich"]]


def test_a_reopened_store_without_a_start_time_does_not_break_the_runs_list(stored_run,
                                                                           tmp_path):
    """A manifest written by hand (or damaged) lacks ``started``: the list still answers,
    that run with its folder's time."""
    bare = RunStore.create(str(tmp_path / "bare"), "run-bare")
    bare.write_manifest({"id": "run-bare", "status": "finished"})
    reopened = registry.open_run(bare.path)
    try:
        reply = handle({"kind": "request", "id": 9, "method": "runs.list", "params": {}})
        assert reply["ok"], reply
        item = next(r for r in reply["result"]["runs"] if r["id"] == "run-bare")
        assert abs(item["started"] - os.path.getmtime(bare.path)) < 1
        assert any(r["id"] == "run-a" for r in reply["result"]["runs"])
    finally:
        registry._RUNS.remove(reopened)


@pytest.mark.parametrize("message, kind", [
    ("not even a dict", "bad_request"),
    ({"kind": "request", "method": "hello"}, "bad_request"),
    ({"kind": "request", "id": 1, "method": "run.delete_everything"}, "unknown_method"),
    ({"kind": "request", "id": 1, "method": "run.get", "params": {}}, "bad_request"),
    ({"kind": "request", "id": 1, "method": "run.get", "params": {"run": 5}}, "bad_request"),
    ({"kind": "request", "id": 1, "method": "run.get", "params": {"run": "nope"}}, "not_found"),
    ({"kind": "request", "id": 1, "method": "run.open", "params": {"path": "/nonexistent"}},
     "not_found"),
])
def test_malformed_requests_get_error_replies_and_change_nothing(message, kind):
    before = list(registry.runs())
    reply = handle(message)
    assert reply["ok"] is False and reply["error"]["type"] == kind
    assert registry.runs() == before


def test_run_open_reopens_a_stored_run(stored_run, tmp_path):
    registry._RUNS.remove(stored_run)
    registry._RUNS.append(stored_run)  # keep the fixture's teardown valid
    reply = handle({"kind": "request", "id": 3, "method": "run.open",
                    "params": {"path": stored_run.path}})
    assert reply["ok"] and reply["result"]["id"] == "run-a"


def test_events_must_be_declared():
    assert messages.event("run.added", {"run": {}})["kind"] == "event"
    with pytest.raises(AssertionError):
        messages.event("run.exploded", {})


def test_a_move_whose_reply_cannot_be_sent_is_logged(caplog):
    class ClosedComm(FakeComm):
        def send(self, data):
            raise RuntimeError("the comm is closed")
    comm = ClosedComm()
    channel = CommChannel(comm)
    with caplog.at_level(logging.ERROR, logger="icedtea_jupyter"):
        comm.send_request("debug.jump", run="nope", index=0)  # answered on the moves thread
        channel._moves.shutdown(wait=True)
    assert "could not send the reply to 'debug.jump'" in caplog.text
    assert "the comm is closed" in caplog.text
