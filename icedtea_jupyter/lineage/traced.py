"""A trace's result: the records it reached at every operator (``Trace``), each one
a ``TracedRecord`` that time travel can jump to."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .graph import LINKS, SOURCE
from .records import Positions
from .steps import walk_back, walk_forward

if TYPE_CHECKING:
    import pandas as pd

    from .steps import Lineage

COLUMNS = ["operator", "partition", "position", "record"]


class TracedRecord(tuple):
    """One record on a trace: ``(operator, partition, position, record)``, at
    ``operator``'s output. ``dbg.jump_to(it)`` moves the debugger to the moment θ
    received the record of θ's input it is linked with (``theta_input``)."""

    trace: Trace

    def __new__(cls, operator: str, partition: int, position: int, record: Any,
                trace: Trace) -> TracedRecord:
        self = super().__new__(cls, (operator, partition, position, record))
        self.trace = trace
        return self

    operator = property(lambda self: self[0])
    partition = property(lambda self: self[1])
    position = property(lambda self: self[2])
    record = property(lambda self: self[3])

    def theta_input(self) -> tuple[int, int]:
        """(partition, position) of θ's input record linked with this record on its trace."""
        return self.trace.theta_input(self)


class Trace:
    """A trace's records at every operator it reached. ``len(t)``: how many records it
    ends at (source records for a backward trace, output rows for a forward one)."""

    def __init__(self, direction: str, lineage: Lineage, reached: dict[int, Positions],
                 ends: list[int]) -> None:
        self.direction = direction
        self._lineage = lineage
        self._reached = reached
        self._ends = ends
        self.engine = lineage.engine.name
        self.call = ""  # the API call it is, and how to log a call on it (set by its run)
        self.log: Callable[..., Any] = lambda call, outputs=None: None

    @property
    def notes(self) -> list[str]:
        """What could not be traced, and how links were made where they were not captured."""
        return list(self._lineage.notes)

    @property
    def operators(self) -> dict[str, int]:
        """Operator -> the number of its records on the trace, in the DAG's order."""
        dag = self._lineage.graph.dag
        return {dag.node(node).name: _count(ps) for node, ps in sorted(self._reached.items())}

    def __len__(self) -> int:
        return sum(_count(self._reached.get(node, {})) for node in self._ends)

    def at(self, operator: str) -> pd.DataFrame:
        """The records on the trace at ``operator``'s output: operator, partition,
        position, record."""
        node = self._lineage.graph.dag.node(operator)
        return self._frame([node.id])

    def to_pandas(self) -> pd.DataFrame:
        """The records the trace ends at: the source records of a backward trace, the
        output rows of a forward one (none: the record was filtered out)."""
        return self._frame(self._ends)

    def rows(self, operator: str | None = None, start: int = 0,
             size: int | None = None) -> list[TracedRecord]:
        """The records :meth:`to_pandas` lists (or :meth:`at` ``operator``), as tuples;
        ``start`` and ``size``: a page of them (only its records are regenerated)."""
        return self._rows(self._nodes(operator), start, size)

    def count(self, operator: str | None = None) -> int:
        """How many records :meth:`rows` lists."""
        return sum(_count(self._reached.get(node, {})) for node in self._nodes(operator))

    def _nodes(self, operator: str | None) -> list[int]:
        if operator is None:
            return self._ends
        return [self._lineage.graph.dag.node(operator).id]

    def first(self) -> TracedRecord:
        """The first record :meth:`to_pandas` lists."""
        rows = self._rows(self._ends)
        if not rows:
            raise LookupError(f"the {self.direction} trace ends at no record "
                              "(its notes say why, if anything stopped it)")
        return rows[0]

    def replay(self) -> list:
        """Titian's selective replay: the cell's last operator's outputs when its
        operators re-run with Spark on only the source records of this backward trace."""
        from .replay import replay

        if self.direction != "back":
            raise ValueError("replay re-runs the sources a backward trace ends at: use "
                             "run.trace_back(row).replay()")
        graph = self._lineage.graph
        sources = {node: self._reached[node] for node in self._ends
                   if graph.steps[node].how == SOURCE}
        outputs = replay(graph, self._lineage.run, sources, graph.output().id)
        self.log(f"{self.call}.replay()", outputs)
        return outputs

    def theta_input(self, traced: TracedRecord) -> tuple[int, int]:
        """(partition, position) of θ's input record that ``traced`` is linked with on
        this trace: the first, if it is linked with several."""
        graph = self._lineage.graph
        theta = graph.dag.require_interesting()
        step = graph.steps[theta.id]
        if step.how != LINKS or len(step.inputs) != 1 or theta.phase == "merge":
            raise LookupError(f"θ ({theta.name!r}) reads a shuffle or several inputs: "
                              "jump_to needs a θ pipelined after its input")
        feeding = step.inputs[0]  # θ's input positions are this node's output positions
        node = graph.dag.node(traced.operator).id
        start = {node: {traced.partition: {traced.position}}}
        found = walk_forward(self._lineage, start).get(feeding) or \
            walk_back(self._lineage, start)[0].get(feeding) or {}
        first = first_on_trace(found, self._reached.get(feeding))
        if first is None:
            raise LookupError(f"{traced.record!r} at {traced.operator!r} is linked with no "
                              f"input record of θ ({theta.name!r})")
        return first

    def _rows(self, nodes: list[int], start: int = 0,
              size: int | None = None) -> list[TracedRecord]:
        ids = [(node, part, pos) for node in nodes
               for part, ps in sorted(self._reached.get(node, {}).items()) for pos in sorted(ps)]
        ids = ids[start:] if size is None else ids[start:start + size]
        wanted: dict[int, Positions] = {}
        for node, part, pos in ids:
            wanted.setdefault(node, {}).setdefault(part, set()).add(pos)
        records = {node: self._lineage.records(node, ps) for node, ps in wanted.items()}
        name = self._lineage.graph.dag.node
        return [TracedRecord(name(node).name, part, pos, records[node].get((part, pos)), self)
                for node, part, pos in ids]

    def _frame(self, nodes: list[int]) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self._rows(nodes), columns=COLUMNS)

    def __repr__(self) -> str:
        path = " ← " if self.direction == "back" else " → "
        steps = [f"{name} ({n})" for name, n in self.operators.items()]
        if self.direction == "back":
            steps.reverse()
        return f"<Trace {self.direction}: {len(self)} records; {path.join(steps)}>"


def first_on_trace(found: Positions, on_trace: Positions | None) -> tuple[int, int] | None:
    """The first (partition, position) of ``found`` that the trace reached too (all of
    them if it reached none there); None if there is none."""
    if on_trace:
        found = {p: ps & on_trace.get(p, set()) for p, ps in found.items()}
    candidates = [(p, x) for p, ps in found.items() for x in ps]
    return min(candidates) if candidates else None


def _count(positions: Positions) -> int:
    return sum(len(ps) for ps in positions.values())

