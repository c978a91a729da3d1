"""DataFrame traces (``run.trace_back(row)`` / ``trace_forward(record)`` on a cell whose
last operator is a DataFrame): their rows at every operator, ``dbg.jump_to(t.first())``
(``frame_jumps.py``: to θ's batch, row or group holding the record) and ``t.replay()``
(``frame_replay.py``)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .dataframe import DataFrameLineage
from .frames import Untraced
from .records import Positions
from .trace import TracedRecord, first_on_trace, is_predicate

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["operator", "partition", "position", "record"]


class FrameTrace:
    """A DataFrame trace: its rows at every operator it reached (``at``), the rows it
    ends at (``to_pandas``), what stopped it (``notes``)."""

    def __init__(self, direction: str, lineage: DataFrameLineage,
                 reached: dict[int, Positions], ends: list[int], notes: list[str]) -> None:
        self.direction, self._lineage, self._reached, self._ends = direction, lineage, reached, ends
        self.engine = lineage.engine_name
        self.notes = notes
        self.call = ""
        self.log: Any = lambda call, outputs=None: None

    @property
    def operators(self) -> dict[str, int]:
        dag = self._lineage.graph.dag
        return {dag.node(n).name: sum(len(p) for p in ps.values())
                for n, ps in sorted(self._reached.items())}

    def __len__(self) -> int:
        return self.count()

    def at(self, operator: str) -> pd.DataFrame:
        """The rows on the trace at ``operator``'s output: operator, partition, position, record."""
        return self._frame([self._lineage.graph.dag.node(operator).id])

    def to_pandas(self) -> pd.DataFrame:
        """The rows the trace ends at: source rows (back), output rows (forward)."""
        return self._frame(self._ends)

    def rows(self, operator: str | None = None, start: int = 0,
             size: int | None = None) -> list[TracedRecord]:
        """The rows :meth:`to_pandas` lists (or :meth:`at` ``operator``), a page of them."""
        rows = self._rows(self._nodes(operator))
        return rows[start:] if size is None else rows[start:start + size]

    def count(self, operator: str | None = None) -> int:
        """How many rows :meth:`rows` lists."""
        return sum(len(p) for n in self._nodes(operator)
                   for p in self._reached.get(n, {}).values())

    def _nodes(self, operator: str | None) -> list[int]:
        return self._ends if operator is None else [self._lineage.graph.dag.node(operator).id]

    counts_rows = True  # θ's input positions are rows: jump_to finds the batch of one

    def theta_input(self, traced: Any) -> tuple[int, int]:
        """(partition, row) of θ's input row linked with ``traced`` on this trace: the
        first, if several (θ: a ``mapInPandas``; its batches hold rows in this order)."""
        from .frame_jumps import theta_feed

        feeding = theta_feed(self._lineage.graph)
        node = self._lineage.graph.dag.node(traced.operator).id
        start = {node: {traced.partition: {traced.position}}}
        walk = self._lineage.forward if node <= feeding else self._lineage.back
        first = first_on_trace(walk(start).get(feeding, {}), self._reached.get(feeding))
        if first is None:
            raise LookupError(f"{traced.record!r} at {traced.operator!r} is linked with no "
                              "input row of θ")
        return first

    def theta_group(self, traced: Any) -> dict[str, Any] | None:
        """The grouping columns' values of θ's input group holding ``traced`` (θ: an
        applyInPandas, its record a group), None for another θ (``frame_jumps.py``)."""
        from .frame_jumps import theta_group

        return theta_group(self._lineage, self.theta_input(traced))

    def first(self) -> TracedRecord:
        rows = self._rows(self._ends)
        if not rows:
            raise LookupError(f"the {self.direction} trace ends at no row")
        return rows[0]

    def replay(self) -> list:
        """Titian's selective replay: the rows of the cell's last DataFrame when its
        calls are made again on only the source rows this backward trace ends at."""
        from .frame_replay import replay_frames

        if self.direction != "back":
            raise ValueError("replay re-runs the sources a backward trace ends at: use "
                             "run.trace_back(row).replay()")
        graph = self._lineage.graph
        sources = {n: self._reached.get(n, {}) for n, how in graph.how.items() if how == "source"}
        outputs = replay_frames(graph, sources, self._lineage.output)
        self.log(f"{self.call}.replay()", outputs)
        return outputs

    def _rows(self, nodes: list[int]) -> list[TracedRecord]:
        dag, rows = self._lineage.graph.dag, []
        for node in nodes:
            positions = self._reached.get(node, {})
            records = self._lineage.records(node, positions) if positions else {}
            rows += [TracedRecord(dag.node(node).name, p, x, records.get((p, x)),
                                  self)  # type: ignore[arg-type]
                     for p in sorted(positions) for x in sorted(positions[p])]
        return rows

    def _frame(self, nodes: list[int]) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self._rows(nodes), columns=COLUMNS)

    def __repr__(self) -> str:
        return f"<Trace {self.direction} (DataFrame): {len(self)} rows; {self.operators}>"


def frame_trace_back(lineage: DataFrameLineage, selector: Any,
                     at: tuple[int, int] | None = None) -> FrameTrace:
    """The source rows the selected output rows of the cell's last DataFrame come from."""
    output = lineage.output
    start = {at[0]: {at[1]}} if at is not None else lineage.matching(output, selector)
    if not start:
        raise LookupError(f"no output row of {lineage.graph.dag.node(output).name!r} matches "
                          f"{'the predicate' if is_predicate(selector) else repr(selector)}")
    notes = list(lineage.notes)
    reached = _guarded(lambda: lineage.back({output: start}), notes)
    ends = [n for n in reached if not lineage.graph.parents.get(n) and reached[n]]
    return FrameTrace("back", lineage, reached, sorted(ends), notes)


def frame_trace_forward(lineage: DataFrameLineage, selector: Any,
                        at: tuple[int, int] | None = None,
                        operator: str | None = None) -> FrameTrace:
    """The output rows of the cell's last DataFrame the selected source rows went into."""
    graph = lineage.graph
    sources = [graph.dag.node(operator).id] if operator else \
        [n for n, how in graph.how.items() if how == "source"]
    if at is not None:
        start = {sources[0]: {at[0]: {at[1]}}}
    else:
        start = {s: found for s in sources if (found := lineage.matching(s, selector))}
    if not start:
        raise LookupError(f"no source row matches {'the predicate' if is_predicate(selector) else repr(selector)}")
    notes = list(lineage.notes)
    reached = _guarded(lambda: lineage.forward(start), notes)
    reached.setdefault(lineage.output, {})
    return FrameTrace("forward", lineage, reached, [lineage.output], notes)


def _guarded(walk: Any, notes: list[str]) -> dict[int, Positions]:
    try:
        return walk()
    except Untraced as exc:
        notes.append(f"the trace stops: {exc}")
        return {}


def frame_outputs(lineage: DataFrameLineage) -> tuple[str, list[tuple[int, int, Any]]]:
    """The cell's last DataFrame operator and its rows: (partition, position, row)."""
    rows = lineage.records(lineage.output, None)
    return (lineage.graph.dag.node(lineage.output).name,
            [(part, pos, rows[(part, pos)]) for part, pos in sorted(rows)])
