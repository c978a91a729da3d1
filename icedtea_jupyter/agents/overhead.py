"""Overhead profiling (``--agent overhead``): the time each agent adds.

Its class sets ``times_agents``: the worker's agent host then times every hook of every
agent (``AgentContext.overhead``). When a worker ends this agent sends those times with
the worker's record count; ``run.agent_overhead()`` gives, per agent and operator, the
seconds in total, the calls and the microseconds per record. What is timed is the
agents' own code; the host's wrapper that shows records to them is not counted (the
bench/agents.py ratios measure everything).
"""
from __future__ import annotations

from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent


class OverheadCoordinator(CoordinatorAgent):
    """Keeps each worker's times in the run store (``agents/overhead.jsonl``)."""

    def receive_message(self, worker: dict, payload: Any) -> None:
        self.keep("overhead", [{"agent": agent, "operator": worker["operator_name"],
                                "partition": worker["partition"], "seconds": spent["seconds"],
                                "calls": spent["calls"], "records": payload["records"]}
                               for agent, spent in payload["agents"].items()])


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
