"""Agents' messages travel live both ways; agent failures never fail a task."""
import time

import pytest

from icedtea_jupyter import Agent, CoordinatorAgent
from icedtea_jupyter.session.execution import RunOptions, start_run
from tests.waiting import wait_until

pytestmark = pytest.mark.spark


class SlowDown:
    """x -> x after ``seconds`` of work; record ``at`` of each partition (of ``size``
    records) waits at ``gate``. Work goes on after the gate only if ``after_gate``."""

    def __init__(self, seconds, gate, size, at=100, after_gate=True):
        self.seconds, self.gate, self.size, self.at = seconds, gate, size, at
        self.after_gate = after_gate

    def __call__(self, x):
        if x % self.size == self.at:
            self.gate.wait(f"p{x // self.size}")
        if self.after_gate or not self.gate.is_open():
            # 0.5 s of work before the gate: the heartbeat (every 0.25 s) is sent first
            time.sleep(self.seconds)
        return x


class LargeValueCoordinator(CoordinatorAgent):
    gate = None  # opened once the threshold is sent: the workers wait there for it

    def init(self, run):
        self.reports, self.told = [], False

    def receive_message(self, worker, payload):
        self.reports.append((worker["operator_name"], worker["partition"], payload))
        if not self.told:
            self.told = True
            self.send_to_agents({"threshold": 100}, operator="slow")
            self.gate.open()


class LargeValues(Agent):
    """Counts values above a threshold that the coordinator side sets while running."""

    coordinator = LargeValueCoordinator

    def init(self, context):
        self.threshold, self.large, self.changed_at = None, 0, None

    def observe_record(self, record):
        if self.threshold is not None and record > self.threshold:
            self.large += 1
            return "large"
        return None

    def heartbeat(self):
        self.send_to_coordinator({"seen": self.context.counts()["records_in"]})

    def receive_message(self, message):
        self.threshold = message["threshold"]
        self.changed_at = self.context.counts()["records_in"]

    def finish(self):
        self.send_to_coordinator({"large": self.large, "changed_at": self.changed_at})


def test_messages_flow_both_ways_while_tasks_run(record, gate, monkeypatch):
    # Each partition waits at its 100th record until the coordinator has sent the
    # threshold (after a heartbeat), then works 99 records more (0.5 s): the message
    # only has to cross the loopback socket to the worker in that time.
    monkeypatch.setattr(LargeValueCoordinator, "gate", gate)
    code = ("out = sc.parallelize(range(400), 2).map(SlowDown(0.005, gate, 200))"
            ".setName('slow').collect()")
    run = record(code, {"SlowDown": SlowDown, "gate": gate}, agents=[LargeValues])
    assert run.status == "finished", run.error
    coordinator = run.coordinator.agent("LargeValues")
    finals = [p for name, _, p in coordinator.reports if name == "slow" and "large" in p]
    assert len(finals) == 2
    changed = [p["changed_at"] for p in finals if p["changed_at"] is not None]
    assert changed and all(0 < c < 200 for c in changed)  # arrived mid-partition
    assert sum(p["large"] for p in finals) > 0


class Crashing(Agent):
    def observe_record(self, record):
        raise ZeroDivisionError("agent bug")


class CrashingCoordinator(CoordinatorAgent):
    def finish(self):
        raise KeyError("coordinator bug")


class CrashingWithCoordinator(Agent):
    coordinator = CrashingCoordinator


def test_failing_agents_become_alerts_and_the_job_succeeds(record):
    run = record("out = sc.parallelize(range(10), 2).map(lambda x: x * 3).collect()",
                 agents=[Crashing, CrashingWithCoordinator])
    assert run.status == "finished" and run.namespace["out"] == [x * 3 for x in range(10)]
    messages = list(run.alerts()["message"])
    assert sum("agent bug" in m for m in messages) == 2  # one per worker, then switched off
    assert any("coordinator bug" in m for m in messages)
    assert len(run.store.alerts()) == len(run.alerts())


def test_counts_arrive_while_the_job_runs(spark, tmp_path, gate):
    # each partition waits at its 100th record (after 0.5 s of work) until counts came
    code = ("out = sc.parallelize(range(600), 2).map(SlowDown(0.005, gate, 300, "
            "after_gate=False)).setName('slow').collect()")
    ns = {"sc": spark.sparkContext, "SlowDown": SlowDown, "gate": gate}
    run = start_run(code, ns, RunOptions(store=str(tmp_path / "runs")))
    assert run.status == "running"

    def live_count():
        row = next((r for r in run.progress() if r["operator"] == "slow"), None)
        if run.status == "running" and row and row["running"] and row["records_in"]:
            return row["records_in"]
    try:
        seen = [wait_until(live_count, 60, "live counts of 'slow' while it waits at the gate")]
    finally:
        gate.open()
    run.wait(60)
    assert any(0 < n < 600 for n in seen), seen
    assert run.progress()[0]["records_in"] == 600
