"""Agents: small objects living beside a worker, shown every record (Inspector Gadget).

Subclass ``Agent`` and override only the hooks you need; every hook is a no-op
here. The host calls ``observe_record`` only for agents that override it, so an
agent that just reports counts on ``heartbeat`` costs nothing per record. A hook
that raises becomes an alert on the run and the agent is switched off for the
rest of that worker; the Spark task never fails because of an agent. A worker hosts
its agents through one plugin (``AgentPlugin``, see ``plugin.py``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .picks import picked_stream
from .plugin import WorkerPlugin


@dataclass
class AgentContext:
    """What an agent knows about its worker."""

    run_id: str
    operator_id: int
    operator: str
    partition: int
    stage: int
    attempt: int
    counts: Callable[[], dict]  # live records_in, records_out, bytes_in, seconds


class Agent:
    """Worker side of an agent. ``coordinator`` names its coordinator-side class."""

    coordinator: type | None = None

    def __init__(self) -> None:
        self._send: Callable[[dict], None] | None = None
        self.context: AgentContext | None = None

    @classmethod
    def agent_name(cls) -> str:
        return getattr(cls, "name", None) or cls.__name__

    # --- hooks (no-ops) -------------------------------------------------------------
    def init(self, context: AgentContext) -> None:
        """Called once when the worker starts, before its first record."""

    def observe_record(self, record: Any) -> Any:
        """Called with every input record; returns the record's tags (or None)."""
        return None

    def receive_message(self, message: Any) -> None:
        """A message from the coordinator side or from another agent."""

    def heartbeat(self) -> None:
        """Called about four times a second while the worker processes records."""

    def finish(self) -> None:
        """Called once when the worker has processed its last record (or failed)."""

    def input_picks(self) -> Iterator[int] | None:
        """The gaps between the input records this agent wants to see, for a sample by
        skip counts: ``take(record)`` is called with the record after each gap (the
        first gap counts from the start). None (the default): no picks.

        The records passed over cost no Python code (``picks.py``): the worker keeps its
        fast block loop. Called once, after ``init``; keep the gaps' code from raising:
        it runs inside the Spark task."""
        return None

    def take(self, record: Any) -> None:
        """A record of the worker's input this agent picked (``input_picks``)."""

    # --- what an agent can do -----------------------------------------------------
    def send_to_coordinator(self, payload: Any) -> None:
        """Send a JSON-able payload to this agent's coordinator side."""
        if self._send is not None:
            self._send({"payload": payload})

    def send_to_agent(self, operator: str, payload: Any, partition: int | None = None) -> None:
        """Send a payload to this agent's twin beside ``operator`` (via the coordinator)."""
        if self._send is not None:
            self._send({"payload": payload, "forward": {"operator": operator, "partition": partition}})


def overrides(agent: Agent, hook: str) -> bool:
    return getattr(type(agent), hook) is not getattr(Agent, hook)


class AgentPlugin(WorkerPlugin):
    """The run's agents beside one worker (``RunSpec.agents``, the progress agent first).

    Each hook of each agent is wrapped: an agent that raises becomes an alert and is
    switched off for this worker. ``observe_record`` runs only for agents that override
    it, and only then does the worker keep its per-record loop."""

    name = "agents"

    def __init__(self, host: Any) -> None:
        self.host = host
        self.tags: dict[str, dict[str, int]] = {}  # per agent: its tags' counts
        names = host.channel.operator_names
        spec, worker = host.spec, host.worker
        context = AgentContext(
            run_id=spec.run.run_id, operator_id=spec.op_id,
            operator=names.get(spec.op_id, spec.name or str(spec.op_id)),
            partition=worker["partition"], stage=worker["stage"],
            attempt=worker["attempt"], counts=host.counts)
        self.agents: list[Agent] = []
        self.observers: list[Agent] = []  # the agents that override observe_record
        for cls in spec.run.agents:
            try:
                agent = cls()
            except Exception as exc:
                host.alert(cls.agent_name(), "__init__", exc)
                continue
            agent._send = self._sender(cls.agent_name())
            agent.context = context
            self.agents.append(agent)
        for agent in list(self.agents):
            self._call(agent, "init", context)
        self.observers = [a for a in self.agents if overrides(a, "observe_record")]

    def _sender(self, name: str) -> Callable[[dict], None]:
        host = self.host

        def send(fields: dict) -> None:
            host.channel.send({"type": "agent", "worker": host.worker, "agent": name, **fields})
        return send

    def _call(self, agent: Agent, hook: str, *args: Any) -> Any:
        try:
            return getattr(agent, hook)(*args)
        except Exception as exc:
            self.host.alert(agent.agent_name(), hook, exc)
            if agent in self.agents:
                self.agents.remove(agent)
            if agent in self.observers:
                self.observers.remove(agent)
            return None

    # --- hooks -------------------------------------------------------------------------
    def needs_records(self, host: Any) -> bool:
        return bool(self.observers)

    def records(self, host: Any, records: Iterable) -> Iterable:
        records = self.feed_input(host, records) or records
        return self._observe(records) if self.observers else records

    def feed_input(self, host: Any, iterator: Iterable) -> Iterable | None:
        """The worker's input with the agents' picks (``input_picks``), if any."""
        pickers = []
        for agent in list(self.agents):
            if overrides(agent, "input_picks"):
                gaps = self._call(agent, "input_picks")
                if gaps is not None:
                    pickers.append((iter(gaps), self._guarded_take(agent)))
        return picked_stream(iterator, pickers) if pickers else None

    def _guarded_take(self, agent: Agent) -> Callable[[Any], None]:
        def take(record: Any) -> None:
            if agent in self.agents:
                self._call(agent, "take", record)
        return take

    def _observe(self, records: Iterable) -> Iterator:
        for record in records:
            for agent in list(self.observers):
                tag = self._call(agent, "observe_record", record)
                if tag is not None:
                    counts = self.tags.setdefault(agent.agent_name(), {})
                    counts[str(tag)] = counts.get(str(tag), 0) + 1
            yield record

    def beat(self, host: Any) -> None:
        for agent in list(self.agents):
            self._call(agent, "heartbeat")

    def accepts(self, host: Any, message: dict) -> bool:
        return message["type"] == "to_agent"

    def control(self, host: Any, message: dict) -> bool:
        if message["type"] != "to_agent":
            return False
        for agent in self.agents:
            if agent.agent_name() == message["agent"]:
                self._call(agent, "receive_message", message["payload"])
        return True

    def end(self, host: Any, message: dict) -> None:
        """A last beat, then each agent's ``finish``; the tags counted travel in
        ``worker_end``."""
        self.beat(host)
        for agent in list(self.agents):
            self._call(agent, "finish")
        message["tags"] = self.tags
