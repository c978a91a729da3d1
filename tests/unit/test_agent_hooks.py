"""The agent API's per-record hooks: outputs and time, failing records, declining,
alerts, options, timing; none of them costs a worker anything unless overridden."""
import pickle

import pytest
from pyspark import cloudpickle

from icedtea_jupyter import Agent, Operator
from icedtea_jupyter.executor.agent import AgentPlugin
from icedtea_jupyter.executor.wrappers import PartitionFunction

from . import fakes


def run_operator(monkeypatch, agents, kind, f, records, api=None):
    """``f`` as operator ``kind`` on ``records`` in one worker: (outputs, channel)."""
    channel = fakes.RecordingChannel()
    from icedtea_jupyter.executor import host as host_module

    monkeypatch.setattr(host_module, "channel_for", lambda run: channel)
    function = PartitionFunction(fakes.make_spec(agents, api=api or kind), kind, f)
    return list(function(0, iter(records))), channel


class Outputs(Agent):
    seen: list = []

    def observe_outputs(self, record, outputs, seconds):
        assert seconds >= 0
        Outputs.seen.append((record, list(outputs)))


@pytest.mark.parametrize("kind, f, expected", [
    ("map", lambda x: x * 10, [(1, [10]), (2, [20]), (3, [30])]),
    ("filter", lambda x: x != 2, [(1, [1]), (2, []), (3, [3])]),
    ("flatMap", lambda x: [x] * x, [(1, [1]), (2, [2, 2]), (3, [3, 3, 3])]),
    ("mapPartitions", lambda rows: (r + 1 for r in rows), [(None, [2]), (None, [3]),
                                                           (None, [4])]),
])
def test_agents_see_each_records_outputs(monkeypatch, kind, f, expected):
    Outputs.seen = []
    outputs, _ = run_operator(monkeypatch, (Outputs,), kind, f, [1, 2, 3])
    assert [o for _, os in expected for o in os] == outputs
    assert Outputs.seen == expected


class Doubler(Operator):
    def process(self, record):
        yield record
        yield record


def test_an_operator_subclass_is_seen_per_input_record(monkeypatch):
    Outputs.seen = []
    outputs, _ = run_operator(monkeypatch, (Outputs,), "mapPartitions", Doubler(), [5, 6])
    assert outputs == [5, 5, 6, 6] and Outputs.seen == [(5, [5, 5]), (6, [6, 6])]


class TakesOdd(Agent):
    def record_failed(self, record, exception):
        return record % 2 == 1


def fragile(x):
    if x in (3, 4):
        raise ValueError(f"bad {x}")
    return x


def test_a_failing_record_an_agent_takes_is_skipped_and_the_task_goes_on(monkeypatch):
    outputs, channel = run_operator(monkeypatch, (TakesOdd,), "map", fragile, [1, 2, 3, 5])
    assert outputs == [1, 2, 5] and channel.ended[0]["status"] == "ok"
    assert channel.ended[0]["records_in"] == 4 and channel.ended[0]["records_out"] == 3


def test_a_failing_record_no_agent_takes_fails_the_task_as_without_agents(monkeypatch):
    with pytest.raises(ValueError, match="bad 4"):
        run_operator(monkeypatch, (TakesOdd,), "map", fragile, [1, 3, 4, 5])


class Declines(Outputs):
    def observes(self):
        return False


def test_an_agent_that_declines_or_does_not_override_costs_no_wrapper(monkeypatch):
    host, _ = fakes.host_with(monkeypatch, agents=(Declines, Agent))
    plugin = host.plugins.get(AgentPlugin)
    assert not plugin.sees_processing() and not plugin.observers


class Alerting(Agent):
    def observe_record(self, record):
        if record < 0:
            self.alert("negative", record=record, check="op: row >= 0", kind="sign")


def test_an_agents_alert_carries_its_record_check_and_count(monkeypatch):
    _, channel = run_operator(monkeypatch, (Alerting,), "map", abs, [1, -2])
    (alert,) = channel.of_type("alert")
    assert alert["source"] == "Alerting" and alert["check"] == "op: row >= 0"
    assert alert["record"]["repr"] == "-2" and alert["count"] == 1 and alert["kind"] == "sign"


def test_options_make_a_subclass_that_travels_to_the_workers():
    configured = Outputs.with_options(limit=3)
    assert configured.options == {"limit": 3} and Outputs.options == {}
    assert issubclass(configured, Outputs) and configured.agent_name() == "Outputs"
    shipped = pickle.loads(cloudpickle.dumps(configured))
    assert shipped.options == {"limit": 3}


class Timer(Agent):
    times_agents = True


def test_a_timing_agent_makes_the_host_time_every_agents_hooks(monkeypatch):
    host, _ = fakes.host_with(monkeypatch, agents=(Timer, Outputs))
    Outputs.seen = []
    assert list(host.map_records(abs, range(5))) == list(range(5))  # not wrapped: direct
    plugin = host.plugins.get(AgentPlugin)
    plugin.on_outputs(1, [1], 0.0)
    assert plugin.overhead()["Outputs"]["calls"] >= 1


class BrokenOutputs(Agent):
    def observe_outputs(self, record, outputs, seconds):
        if record == 2:
            raise RuntimeError("outputs bug")


@pytest.mark.parametrize("agents", [(BrokenOutputs,), (BrokenOutputs, Outputs)],
                         ids=["alone", "beside another"])
def test_an_agent_failing_on_outputs_is_an_alert_and_the_task_goes_on(monkeypatch, agents):
    Outputs.seen = []
    outputs, channel = run_operator(monkeypatch, agents, "map", abs, [1, 2, 3])
    assert outputs == [1, 2, 3] and channel.ended[0]["status"] == "ok"
    (alert,) = channel.of_type("alert")
    assert alert["source"] == "BrokenOutputs" and "outputs bug" in alert["message"]
    if Outputs in agents:
        assert [r for r, _ in Outputs.seen] == [1, 2, 3]
