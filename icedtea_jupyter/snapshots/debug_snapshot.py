"""What the debugger shows after a jump or a step: ``DebugSnapshot``."""
from __future__ import annotations

from typing import Any

from ..executor.state import decode
from .deltas import changes


class DebugSnapshot:
    """The states of θ's chain on every partition after a jump or a step.

    ``index`` is the interaction jumped to (None once steps moved away from it);
    ``step`` describes the last step; ``changed()`` compares with the previous view."""

    def __init__(self, encoded: dict[tuple[str, int], dict], counts: dict[tuple[str, int], int],
                 previous: DebugSnapshot | None, index: int | None, step: str,
                 outputs: list | None = None, notes: list[str] | None = None) -> None:
        self._encoded = encoded
        self._counts = counts
        self._previous = previous._encoded if previous is not None else {}
        self.index = index
        self.step = step
        self.outputs = outputs or []  # what reached the end of the chain in this step
        self.notes = notes or []  # where replay diverged from the run, and why
        self.started_from: int | None = None  # a jump's parked fork (replay process only)
        self.preparing: str | None = None  # said by a jump made while forks were placed
        self.partition: int | None = None  # the last step's partition (None after a jump)
        self.operator: str | None = None  # the operator a step-into moved
        # the recorded run's failure, reproduced by replay: operator, partition, index,
        # exception, message, traceback (the partition ended there)
        self.failure: dict | None = None

    def state(self, operator: str, partition: int) -> dict:
        """The worker's state variables by name, as ``Snapshot.state`` gives them."""
        return decode(self._get(operator, partition))

    def encoded_state(self, operator: str, partition: int) -> dict:
        """The worker's state as tagged JSON (``executor.state.encode``), for views."""
        return self._get(operator, partition)

    def count(self, operator: str, partition: int) -> int:
        self._get(operator, partition)
        return self._counts[(operator, partition)]

    def changed(self, operator: str, partition: int) -> dict:
        """What changed since the previous view: variables, and keys of dict-like ones."""
        previous = self._previous.get((operator, partition))
        return changes(previous, self._get(operator, partition))

    def workers(self) -> list[dict]:
        return [{"operator": op, "partition": p, "count": self._counts[(op, p)]}
                for op, p in sorted(self._encoded, key=lambda k: (k[1], k[0]))]

    def _get(self, operator: str, partition: int) -> Any:
        try:
            return self._encoded[(operator, partition)]
        except KeyError:
            known = sorted({op for op, _ in self._encoded})
            parts = sorted({p for _, p in self._encoded})
            raise KeyError(f"the debugger replays θ's chain {known} on partitions {parts}; "
                           f"it has no worker {operator!r} on partition {partition}") from None

    def __repr__(self) -> str:
        where = f"I{self.index}" if self.index is not None else "after steps"
        return f"<DebugSnapshot {where}: {self.step}>"
