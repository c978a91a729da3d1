"""The coordinator side of an agent (Inspector Gadget's coordinator; dask's plugin shape).

Every hook is a no-op; the coordinator isolates failures: a hook that raises
becomes an alert on the run and never stops the run.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


class CoordinatorAgent:
    """Receives what the agent's workers send; can send messages back to them."""

    options: dict = {}  # the worker side's ``Agent.options`` (set by the coordinator)

    def __init__(self) -> None:
        self._send: Callable[..., int] | None = None
        self._alert: Callable[[dict], None] | None = None
        self._keep: Callable[[str, list[dict]], None] | None = None

    def init(self, run: Any) -> None:
        """Called when the run starts, with the Run (its dag, path, options)."""

    def receive_message(self, worker: dict, payload: Any) -> None:
        """A payload from the agent beside ``worker`` (operator name, partition, stage...)."""

    def finish(self) -> None:
        """Called once after the run's last worker has ended."""

    def send_to_agents(self, payload: Any, operator: str | None = None,
                       partition: int | None = None) -> int:
        """Send to this agent's workers (all, or one operator's, or one partition's)."""
        return self._send(payload, operator, partition) if self._send else 0

    def alert(self, message: str, operator: str | None = None, check: str | None = None,
              count: int = 1, level: str = "warning", **fields: Any) -> None:
        """An alert on the run's one stream, decided here (a table check, a limit)."""
        if self._alert is not None:
            self._alert({"message": message, "operator": operator, "check": check,
                         "count": count, "level": level, **fields})

    def keep(self, table: str, rows: list[dict]) -> None:
        """Append JSON-able ``rows`` to this run's table ``table`` in the run store
        (``agents/<table>.jsonl``; ``run.agent_table(table)`` reads it)."""
        if self._keep is not None and rows:
            self._keep(table, rows)
