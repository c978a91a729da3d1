"""The worker host on plain iterators: counts, culprit records, agents, control messages."""
import pytest

from icedtea_jupyter import Agent, Operator
from icedtea_jupyter.executor import host as host_module

from .fakes import host_with


def test_map_counts_every_record_and_reports_once(monkeypatch):
    host, channel = host_with(monkeypatch)
    assert list(host.map_records(lambda x: x * 2, range(1000))) == [x * 2 for x in range(1000)]
    (end,) = channel.ended
    assert (end["records_in"], end["records_out"], end["status"]) == (1000, 1000, "ok")
    assert end["exhausted"] is True
    assert end["worker"]["partition"] == 3


def test_filter_and_flat_map_count_outputs(monkeypatch):
    host, channel = host_with(monkeypatch)
    assert list(host.filter_records(lambda x: x % 3 == 0, range(10))) == [0, 3, 6, 9]
    host2, channel2 = host_with(monkeypatch)
    assert len(list(host2.flat_map_records(lambda x: [x] * x, range(5)))) == 10
    assert (channel.ended[0]["records_out"], channel2.ended[0]["records_out"]) == (4, 10)


def test_failure_names_the_culprit_record_and_reraises(monkeypatch):
    host, channel = host_with(monkeypatch)

    def parse(x):
        if x == 7:
            raise ValueError("bad amount")
        return x

    with pytest.raises(ValueError):
        list(host.map_records(parse, range(10)))
    (end,) = channel.ended
    assert end["status"] == "failed"
    assert end["error"]["record"]["value"] == 7
    assert end["error"]["exception"] == "ValueError"
    assert "bad amount" in end["error"]["traceback"]
    assert (end["records_in"], end["records_out"]) == (8, 7)


def test_partition_function_failure_finds_the_record_being_processed(monkeypatch):
    class Divide(Operator):
        def process(self, x):
            yield 10 // x

    host, channel = host_with(monkeypatch, api="mapPartitions")
    with pytest.raises(ZeroDivisionError):
        list(host.run_partition(Divide(), iter([5, 2, 0, 1])))
    assert channel.ended[0]["error"]["record"]["value"] == 0
    assert channel.ended[0]["records_in"] == 3


def test_an_exception_from_upstream_is_not_blamed_on_the_downstream_operator(monkeypatch):
    up, up_channel = host_with(monkeypatch)
    down, down_channel = host_with(monkeypatch)

    def boom(x):
        if x == 2:
            raise KeyError("upstream")
        return x

    with pytest.raises(KeyError):
        list(down.map_records(str, up.map_records(boom, range(5))))
    assert up_channel.ended[0]["error"]["record"]["value"] == 2
    assert down_channel.ended[0]["status"] == "failed"
    assert down_channel.ended[0]["error"] is None


def test_early_stop_is_ok_but_not_exhausted(monkeypatch):
    host, channel = host_with(monkeypatch)
    gen = host.map_records(lambda x: x, range(100))
    assert [next(gen) for _ in range(5)] == list(range(5))
    gen.close()
    (end,) = channel.ended
    assert end["status"] == "ok" and end["exhausted"] is False and end["records_in"] == 5


class Tagger(Agent):
    def observe_record(self, record):
        return "even" if record % 2 == 0 else None


class Broken(Agent):
    def observe_record(self, record):
        if record == 3:
            raise RuntimeError("agent bug")


def test_agents_see_every_record_and_a_failing_agent_becomes_an_alert(monkeypatch):
    host, channel = host_with(monkeypatch, agents=(Tagger, Broken))
    assert list(host.map_records(lambda x: x + 1, range(10))) == list(range(1, 11))
    assert channel.ended[0]["tags"] == {"Tagger": {"even": 5}}
    (alert,) = channel.of_type("alert")
    assert alert["source"] == "Broken" and "agent bug" in alert["message"]
    assert channel.ended[0]["status"] == "ok"


class Echo(Agent):
    def init(self, context):
        self.seen = []

    def receive_message(self, message):
        self.seen.append(message)
        self.send_to_coordinator({"echo": message, "at": self.context.counts()["records_in"]})


@pytest.mark.parametrize("function", [lambda x: x, abs], ids=["in blocks", "per record"])
def test_control_messages_are_handled_between_records(monkeypatch, function):
    monkeypatch.setattr(host_module, "CHECK_PERIOD", 0.0)  # blocks of one record
    host, channel = host_with(monkeypatch, agents=(Echo,))
    outputs = host.map_records(function, range(100))
    next(outputs)
    host.deliver({"type": "to_agent", "agent": "Echo", "operator": None, "partition": None,
                  "payload": {"ping": 1}})
    next(outputs)  # the next record checks the mailbox
    (reply,) = [m for m in channel.of_type("agent") if m["agent"] == "Echo"]
    assert reply["payload"] == {"echo": {"ping": 1}, "at": 2}
    list(outputs)


def test_messages_for_another_operator_or_partition_are_ignored(monkeypatch):
    host, channel = host_with(monkeypatch, agents=(Echo,))
    host.deliver({"type": "to_agent", "agent": "Echo", "operator": 5, "payload": 1})
    host.deliver({"type": "to_agent", "agent": "Echo", "partition": 0, "payload": 1})
    list(host.map_records(lambda x: x, range(10)))
    assert not channel.of_type("agent")


def test_heartbeats_reach_agents_while_records_flow(monkeypatch):
    beats = []

    class Beat(Agent):
        def heartbeat(self):
            beats.append(self.context.counts()["records_in"])

    monkeypatch.setattr(host_module, "HEARTBEAT_PERIOD", 0.0)
    monkeypatch.setattr(host_module, "CHECK_PERIOD", 0.0)  # check every record
    host, _ = host_with(monkeypatch, agents=(Beat,))
    list(host.map_records(lambda x: x, range(50)))
    assert len(beats) >= 3 and beats[-1] == 50


def test_batches_count_rows_not_batches(monkeypatch):
    host, channel = host_with(monkeypatch, api="mapInArrow")
    batches = [list(range(10)), list(range(5))]
    out = list(host.run_partition(lambda it: ([x * 2 for x in b] for b in it), iter(batches),
                                  batches=True))
    assert len(out) == 2
    assert (channel.ended[0]["records_in"], channel.ended[0]["records_out"]) == (15, 15)


def test_a_state_too_large_to_send_travels_in_summary_and_the_next_report_is_whole(monkeypatch):
    """A join's reduce side can hold megabytes of values: its snapshot says so in a
    summary instead of failing the task (the message would exceed the frame limit)."""
    from icedtea_jupyter.executor.timetravel import TimeTravel
    from icedtea_jupyter.snapshots.deltas import apply_delta

    host, channel = host_with(monkeypatch, api="mapPartitions")
    big = {key: ["x" * 1_000] * 20 for key in range(100)}  # few values, 2 MB encoded
    host.state = lambda: {"combiners": big, "seen": 7}
    tt = TimeTravel(host)
    report = tt.report(1, "manual", 10, "running")
    view = apply_delta(None, report["delta"])
    assert view["seen"] == 7 and view["combiners"]["$t"] == "summary"
    assert "too large to send" in view["combiners"]["note"] and view["combiners"]["len"] == 100
    big.clear()
    big[1] = [1]
    again = apply_delta(view, tt.report(2, "manual", 11, "running")["delta"])
    assert again == {"combiners": {"$t": "dict", "items": [[1, [1]]]}, "seen": 7}


def test_the_status_table_and_its_wire_strings():
    from icedtea_jupyter.executor.status import WorkerStatus as S

    def run(*events):
        status = S.RUNNING
        for event in events:
            status = status.after(event) or status
        return status, status.wire, status.exhausted

    assert run("exhausted", "ended") == (S.FINISHED, "ok", True)
    assert run("ended") == (S.STOPPED, "ok", False)
    assert run("failed", "exhausted", "ended") == (S.FAILED, "failed", False)
    assert run("ended", "failed", "ended") == (S.STOPPED, "ok", False)  # it stays as it ended
    assert S.RUNNING.after("running") is None and not S.EXHAUSTED.ended


class FailsInInit(Agent):
    def init(self, context):
        raise RuntimeError("init bug")


def test_an_agent_failing_in_init_becomes_an_alert(monkeypatch):
    host, channel = host_with(monkeypatch, agents=(FailsInInit, Tagger))
    assert list(host.map_records(abs, range(5))) == list(range(5))
    (alert,) = channel.of_type("alert")
    assert "init bug" in alert["message"] and alert["source"] == "FailsInInit"
    assert channel.ended[0]["status"] == "ok" and channel.ended[0]["tags"] == {
        "Tagger": {"even": 3}}


def test_a_group_function_takes_the_key_spark_passes_and_calls_with_the_users_arity(
        monkeypatch):
    """Both are shipped as functions of ``(key, frame)``, so Spark passes every group's
    key; a function of the frame alone gets the frame, and its host keeps the key."""
    import inspect

    from icedtea_jupyter.executor.calls import group_function

    from .fakes import make_spec

    host_with(monkeypatch)  # no coordinator: a recording channel
    keyed = group_function(make_spec(api="applyInPandas"), lambda k, rows: (k, len(rows)), 2)
    plain = group_function(make_spec(api="applyInPandas"), len, 1)
    assert [len(inspect.signature(f).parameters) for f in (keyed, plain)] == [2, 2]
    assert keyed("a", [1, 2]) == ("a", 2) and plain(("B",), [1, 2, 3]) == 3
    assert plain.__closure__[0].cell_contents._host.group_key == ("B",)


def test_a_large_report_is_encoded_once_and_arrives_as_the_state(monkeypatch):
    """A map-side combine's final report (tens of thousands of counts) is measured as
    JSON once and that text goes into the frame: the coordinator reads the state."""
    import socket

    from icedtea_jupyter.executor import protocol
    from icedtea_jupyter.executor.timetravel import SPLICED_REPORT_BYTES, TimeTravel
    from icedtea_jupyter.snapshots.deltas import apply_delta

    host, _ = host_with(monkeypatch, api="mapPartitions")
    counts = {f"user{i}": i for i in range(5_000)}
    odd = "\x00" + protocol._SPLICE_MARK + "0"  # a user string shaped like a splice mark
    host.state = lambda: {"combiners": counts, "name": odd}
    report = TimeTravel(host).report(1, "end", 10, "final")
    assert isinstance(report["delta"], protocol.EncodedJSON)
    assert len(report["delta"].text) > SPLICED_REPORT_BYTES
    left, right = socket.socketpair()
    with left, right:
        left.sendall(protocol.encode({"type": "snapshots", "reports": [report, report]}))
        received, _ = protocol.read_frame(right)
    for sent in received["reports"]:
        assert apply_delta(None, sent["delta"]) == {"combiners": counts, "name": odd}
        assert sent["worker"] == report["worker"] and sent["count"] == 10
