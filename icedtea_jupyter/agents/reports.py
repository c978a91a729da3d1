"""The coordinator side shared by agents whose workers report once, at their end."""
from __future__ import annotations

import threading
from typing import Any

from ..coordinator.agent import CoordinatorAgent


class PartitionReports(CoordinatorAgent):
    """Keeps each partition's last report (a later job or retry replaces an earlier one);
    ``reports()`` gives those of successful task attempts, by operator."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: dict[tuple[int, int], dict] = {}  # (operator, partition): its report
        self._lock = threading.Lock()
        self.run: Any = None

    def init(self, run: Any) -> None:
        self.run = run

    def receive_message(self, worker: dict, payload: Any) -> None:
        with self._lock:
            self.parts[(worker["operator"], worker["partition"])] = dict(payload, worker=worker)

    def reports(self) -> dict[int, list[dict]]:
        """Operator id → its partitions' reports (each with its ``worker``), in order."""
        ok = successful_attempts(self.run)
        by_operator: dict[int, list[dict]] = {}
        with self._lock:
            for (operator, _), part in sorted(self.parts.items()):
                if ok is None or attempt(part["worker"]) in ok:
                    by_operator.setdefault(operator, []).append(part)
        return by_operator


def successful_attempts(run: Any) -> set[tuple] | None:
    """The task attempts that ended well (None: the run has no coordinator to ask)."""
    coordinator = getattr(run, "coordinator", None)
    if coordinator is None:
        return None
    return {attempt(state) for _, state in coordinator.worker_states()
            if state.get("status") == "ok"}


def attempt(worker: dict) -> tuple:
    return (worker["operator"], worker["partition"], worker["stage"], worker["attempt"],
            worker["task"])
