"""Agents: small objects living beside a worker, shown every record (Inspector Gadget).

Subclass ``Agent`` and override only the hooks you need; every hook is a no-op
here. The host calls ``observe_record`` only for agents that override it, so an
agent that just reports counts on ``heartbeat`` costs nothing per record. A hook
that raises becomes an alert on the run and the agent is switched off for the
rest of that worker; the Spark task never fails because of an agent.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


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
