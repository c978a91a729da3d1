"""Overhead profiling (``--agent overhead``): the time each agent adds.

Its class sets ``times_agents``: the worker's agent host then times every hook of every
agent (``AgentContext.overhead``). When a worker ends this agent sends those times with
the worker's record count; ``run.agent_overhead()`` gives, per agent and operator, the
seconds in total, the calls and the microseconds per record; when the run ends, the
panel and the sidebar show one line per agent and operator (an ``info`` alert: µs a
record, seconds, calls). What is timed is the agents' own code, on the path the run
takes without this agent (latency's sample of one record in 64 stays); the host's
wrapper that shows records to them is not counted (the bench/agents.py ratios measure
everything).
"""
from __future__ import annotations

from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent


class OverheadCoordinator(CoordinatorAgent):
    """Keeps each worker's times in the run store (``agents/overhead.jsonl``); at the
    end, the totals per agent and operator as alerts."""

    def init(self, run: Any) -> None:
        self.totals: dict[tuple[str, str], list[float]] = {}  # seconds, calls, records

    def receive_message(self, worker: dict, payload: Any) -> None:
        rows = [{"agent": agent, "operator": worker["operator_name"],
                 "partition": worker["partition"], "seconds": spent["seconds"],
                 "calls": spent["calls"], "records": payload["records"]}
                for agent, spent in payload["agents"].items()]
        self.keep("overhead", rows)
        for row in rows:
            total = self.totals.setdefault((row["agent"], row["operator"]), [0.0, 0, 0])
            for i, field in enumerate(("seconds", "calls", "records")):
                total[i] += row[field]

    def finish(self) -> None:
        for (agent, operator), (seconds, calls, records) in sorted(self.totals.items()):
            self.alert(f"{seconds * 1e6 / max(records, 1):.3g} µs a record in {agent}'s "
                       f"hooks ({seconds * 1e3:.3g} ms, {calls:,} calls, {records:,} records)",
                       operator=operator, check=f"{agent}'s cost", level="info",
                       seconds=seconds, calls=calls, records=records)


class OverheadAgent(Agent):
    """Sends the worker's agent times when it ends."""

    name = "overhead"
    coordinator = OverheadCoordinator
    times_agents = True

    def finish(self) -> None:
        if self.context is None:
            return
        spent = {agent: times for agent, times in self.context.overhead().items()
                 if agent != self.name}
        self.send_to_coordinator({"agents": spent,
                                  "records": self.context.counts()["records_in"]})
