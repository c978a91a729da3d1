"""``run.snapshot(k)``: the states of G(θ)'s workers at one interaction, as recorded."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..executor.state import Summary, decode
from .deltas import changes

if TYPE_CHECKING:
    from .history import History, Interaction, WorkerView


class Snapshot:
    """The states of G(θ)'s workers at one interaction."""

    def __init__(self, history: History, interaction: Interaction) -> None:
        self.history = history
        self.interaction = interaction

    @property
    def index(self) -> int:
        return self.interaction.index

    def _view(self, operator: str, partition: int) -> WorkerView:
        node = self.history.dag.node(operator)
        if not node.in_g:
            names = ", ".join(n.name for n in self.history.dag.g_theta) or "none"
            raise KeyError(f"{operator!r} is not in G(θ); snapshots hold {names}")
        return self.history.view(self.index, node, partition)

    def worker(self, operator: str, partition: int) -> WorkerView:
        """The worker at this interaction: status, count and state as tagged JSON."""
        return self._view(operator, partition)

    def state(self, operator: str, partition: int) -> dict | None:
        """The worker's state variables by name. A worker that had not started shows its
        initial state (the operator before its first record, as ``dbg.state`` does);
        None only for one that never reported a state (outside θ's chain, or lost)."""
        view = self._view(operator, partition)
        return None if view.encoded is None else decode(view.encoded)

    def page(self, operator: str, partition: int, variable: str, start: int = 0,
             size: int = 100) -> dict:
        """One page of a large state variable: ``{"total", "start", "items"}``; items are
        (key, value) pairs of a dict-like value, values of a list, set or tuple."""
        state = self.state(operator, partition) or {}
        if variable not in state:
            raise KeyError(f"{operator!r} on partition {partition} has no state variable "
                           f"{variable!r} (it has: {', '.join(sorted(state)) or 'none'})")
        value = state[variable]
        if isinstance(value, Summary):
            return {"total": value.get("len"), "start": 0, "items": value.get("sample", []),
                    "note": value.get("note")}
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, (list, tuple, set, frozenset)):
            items = list(value)
        else:
            items = [value]
        return {"total": len(items), "start": start, "items": items[start:start + size]}

    def status(self, operator: str, partition: int) -> str:
        return self._view(operator, partition).status

    def changed(self, operator: str, partition: int) -> dict:
        """What changed since the previous interaction: variables, and keys of dict-like ones."""
        current = self._view(operator, partition).encoded or {}
        previous = {}
        if self.index > 0:
            previous = self.history.view(self.index - 1, self.history.dag.node(operator),
                                         partition).encoded or {}
        return changes(previous, current)

    def workers(self) -> list[dict]:
        """Every worker of G(θ) at this interaction, one row per operator and partition."""
        return [{"operator": v.operator, "partition": v.partition, "status": v.status,
                 "count": v.count} for v in self.history.views(self.index, states=False)]

    def task_chains(self) -> dict[int, list[dict]]:
        """The workers that reported, grouped by Spark task: each group is one chain of
        operators pulling records through each other, snapshotted at one moment. (An
        operator on two paths to a union runs in two tasks, one per path.)"""
        when = self.history.interaction_time(self.index)
        chains: dict[int, list[dict]] = {}
        for (op, part, task), chain in sorted(self.history._chains.items(), key=lambda c: c[0][2]):
            node = self.history.dag.node(op)
            view = self.history._from_chain(chain, self.index, node.name, part, when)
            if view is not None and view.status == "running":
                chains.setdefault(task, []).append({"operator": node.name, "partition": part,
                                                    "count": view.count})
        return chains

    def __repr__(self) -> str:
        return f"<Snapshot I{self.index} ({self.interaction.trigger})>"

