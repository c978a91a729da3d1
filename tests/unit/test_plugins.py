"""Worker plugins (executor/plugin.py): the host calls their hooks at its checks and at its
end, in blocks and per record, and a failing plugin is an alert, never a failed task."""
import pytest

from icedtea_jupyter.executor import host as host_module
from icedtea_jupyter.executor.plugin import WorkerPlugin

from .fakes import host_with


class Counting(WorkerPlugin):
    """Sees every record when ``per_record``; notes what the host told it."""

    def __init__(self, per_record=False):
        self.per_record, self.seen, self.calls, self.boundaries = per_record, [], [], []

    def needs_records(self, host):
        return self.per_record

    def records(self, host, records):
        for record in records:
            self.seen.append(record)
            yield record

    def first_record(self, host):
        self.calls.append(("first_record", host.processed))

    def boundary(self, host, inputs, outputs):
        self.boundaries.append((inputs, outputs))

    def end(self, host, message):
        self.calls.append(("end", host.status.wire, message["records_in"]))
        message["counted"] = len(self.seen)


@pytest.mark.parametrize("function", [lambda x: x, abs], ids=["in blocks", "per record"])
@pytest.mark.parametrize("per_record", [False, True])
def test_a_plugin_sees_the_checks_the_end_and_every_record_if_it_asks(
        monkeypatch, function, per_record):
    monkeypatch.setattr(host_module, "CHECK_PERIOD", 0.0)  # a check at every record
    host, channel = host_with(monkeypatch)
    plugin = Counting(per_record)
    host.plugins.add(plugin)
    assert list(host.map_records(function, range(20))) == list(range(20))
    assert plugin.calls == [("first_record", 0), ("end", "ok", 20)]
    assert plugin.seen == (list(range(20)) if per_record or function is abs else [])
    assert channel.ended[0]["counted"] == len(plugin.seen)
    inputs = [n for n, _ in plugin.boundaries]
    assert inputs == sorted(inputs) and inputs[-1] >= 19
    assert all(out == n for n, out in plugin.boundaries)  # a map: one output per input


class Broken(WorkerPlugin):
    name = "broken"

    def boundary(self, host, inputs, outputs):
        raise RuntimeError("plugin bug")

    def end(self, host, message):
        message["broken"] = True


def test_a_failing_plugin_becomes_an_alert_and_is_switched_off(monkeypatch):
    host, channel = host_with(monkeypatch)
    host.plugins.add(Broken())
    assert list(host.map_records(abs, range(10))) == list(range(10))
    (alert,) = channel.of_type("alert")
    assert alert["source"] == "broken" and "plugin 'broken' failed in boundary" in alert["message"]
    (end,) = channel.ended
    assert end["status"] == "ok" and "broken" not in end
    assert host.plugins.get(Broken) is None


class Essential(Broken):
    essential = True


def test_an_essential_plugin_fails_the_task_as_time_travel_does(monkeypatch):
    host, channel = host_with(monkeypatch)
    host.plugins.add(Essential())
    with pytest.raises(RuntimeError, match="plugin bug"):
        list(host.map_records(abs, range(10)))
    assert not channel.of_type("alert")


class Listener(WorkerPlugin):
    def __init__(self):
        self.messages = []

    def accepts(self, host, message):
        return message["type"] == "pause"

    def control(self, host, message):
        self.messages.append((message, host.processed))
        return True


def test_control_messages_reach_the_plugin_that_accepts_them_between_records(monkeypatch):
    host, _ = host_with(monkeypatch)
    listener = Listener()
    host.plugins.add(listener)
    outputs = host.map_records(abs, range(100))
    next(outputs)
    host.deliver({"type": "pause"})
    host.deliver({"type": "something else"})
    assert list(outputs) == list(range(1, 100))
    assert listener.messages == [({"type": "pause"}, 1)]  # at the next record, one done
