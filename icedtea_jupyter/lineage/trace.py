"""Backward and forward traces (Titian's ``goBackAll`` and ``goNextAll``) over a run.

A trace starts from records the user names — output rows of the cell's last operator
(back) or records of its sources (forward), by value or by a predicate — and walks the
lineage graph one operator at a time (``graph.py``), each step a join in DuckDB
(``engine.py``). It keeps the positions it reached at every operator on the way; the
records at them are regenerated with Spark when asked for (``records.py``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .graph import KEY, LINKS, NONE, SOURCE, UNION, VALUE, LineageGraph, Step
from .records import Positions, everything, fetch, key_index, key_numbers, untag_combiner
from .spark_engine import engine_for
from .tables import load_links, output_counts

if TYPE_CHECKING:
    import pandas as pd

    from ..session.run import Run

COLUMNS = ["operator", "partition", "position", "record"]
_REGENERATE_KEYS = ("the trace stops at an aggregation's map side: it links by key, among "
                    "records this kernel can no longer regenerate (a reopened run)")
_REGENERATE_JOIN_KEYS = ("the trace stops at a join: it links by key, among records this "
                         "kernel can no longer regenerate (a reopened run)")


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


def is_predicate(selector: Any) -> bool:
    """A selector of output rows is a predicate when callable and not a record: a
    pyspark ``Row`` (a tuple) is callable too, and selects the rows equal to it."""
    return callable(selector) and not isinstance(selector, tuple)


class Lineage:
    """A run's lineage: its graph, its links in DuckDB, its records (cached)."""

    def __init__(self, run: Run) -> None:
        if run.status == "running":
            raise RuntimeError(f"run {run.id} is still running: trace it once it has ended "
                               "(run.wait())")
        self.run = run
        self.graph = LineageGraph(run.dag)
        self.counts = output_counts(run.store)
        links, self.keys = load_links(run.store)
        self.keys.derive = self._key_numbers
        self.engine = engine_for(run.store, links)  # DuckDB, or Spark SQL when large
        self.notes: list[str] = []
        self._records: dict[int, dict[tuple[int, int], Any]] = {}
        self._whole: set[int] = set()
        self._indexes: dict[int, dict[int, dict]] = {}  # node -> partition -> key -> positions

    def records(self, node: int, positions: Positions | None) -> dict[tuple[int, int], Any]:
        """(partition, position) -> record at ``node``'s output (every one if None)."""
        rdd = self.run.output_rdd(node)
        if rdd is None:
            note = ("records are not shown: this kernel no longer has the run's pipeline "
                    "(a reopened run); the trace has the records' positions")
            self._note(note)
            return {}
        cache = self._records.setdefault(node, {})
        if node not in self._whole and self._collected(node, cache):
            self._whole.add(node)
        elif positions is None and node not in self._whole:
            cache.update(self._display(node, fetch(rdd, everything(rdd))))
            self._whole.add(node)
        elif positions is not None and node not in self._whole:
            wanted = {p: sorted(x for x in ps if (p, x) not in cache)
                      for p, ps in positions.items()}
            cache.update(self._display(node, fetch(rdd, {p: w for p, w in wanted.items() if w})))
        if positions is None:
            return dict(cache)
        return {(p, x): cache[(p, x)] for p, ps in positions.items() for x in ps
                if (p, x) in cache}

    def _collected(self, node: int, cache: dict) -> bool:
        """Fill ``cache`` with what the cell's ``collect()`` of ``node`` returned, if it
        did (no Spark job): partition by partition, as many as its workers output."""
        collected = self.run.collected(node)
        counts = self.counts.get(node)
        if collected is None or not counts or sum(counts.values()) != len(collected) \
                or set(counts) != set(range(max(counts) + 1)):
            return False
        records = iter(collected)
        cache.update({(part, pos): next(records)
                      for part in sorted(counts) for pos in range(counts[part])})
        return True

    def _display(self, node: int, records: dict) -> dict:
        if self.graph.steps[node].node.phase == "combine":
            return {k: untag_combiner(v) for k, v in records.items()}
        return records

    def matching(self, node: int, selector: Any) -> Positions:
        """The positions of ``node``'s output records equal to ``selector`` (or for
        which it is true, if it is callable)."""
        if self.run.output_rdd(node) is None:
            raise LookupError(f"run {self.run.id} has no records to compare with {selector!r}: "
                              "this kernel no longer has its pipeline (a reopened run); name "
                              "the record by its id: at=(partition, position)")
        test = selector if is_predicate(selector) else (lambda record: record == selector)
        found: Positions = {}
        for (part, pos), record in self.records(node, None).items():
            if test(record):
                found.setdefault(part, set()).add(pos)
        return found

    # --- steps -------------------------------------------------------------------------
    def back(self, step: Step, positions: Positions) -> dict[int, Positions]:
        if step.how == LINKS and step.node.id in self.keys.joins:
            keys = self._keys_at(step.node.id, positions)
            return {i: self._with_keys(node, keys) for i, node in enumerate(step.inputs)}
        if step.how == LINKS:
            return self.engine.back(step.node.id, positions)
        if step.how == KEY and step.node.id in self.keys.operators:
            return {0: self.keys.back(step.node.id, positions)}
        if step.how == KEY:  # a run recorded before map sides captured their links
            return {0: self._same_key(step.node.id, positions, step.inputs[0])}
        if step.how == UNION and not self._aligned(step):
            return _union_back(step, positions)
        if step.how == VALUE:
            return {0: self._equal(step, step.node.id, positions, step.inputs[0])}
        if step.how == NONE:
            self._stopped(step)
        return {}

    def forward(self, step: Step, index: int, source: int, positions: Positions) -> Positions:
        if step.how == LINKS and step.node.id in self.keys.joins:
            return self._with_keys(step.node.id, self._keys_at(source, positions))
        if step.how == LINKS:
            return self.engine.forward(step.node.id, index, positions)
        if step.how == KEY and step.node.id in self.keys.operators:
            return self.keys.forward(step.node.id, positions)
        if step.how == KEY:
            return self._same_key(source, positions, step.node.id)
        if step.how == UNION and not self._aligned(step):
            offset = sum((step.node.input_partitions or [])[:index])
            return {offset + part: set(ps) for part, ps in positions.items()}
        if step.how == VALUE:
            return self._equal(step, source, positions, step.node.id)
        self._stopped(step)
        return {}

    def _key_numbers(self, node: int, parts: list[int]) -> dict:
        """A map side's links on ``parts``: its inputs' keys numbered as first seen (one
        job over its input's partitions, regenerated with Spark)."""
        rdd = self.run.output_rdd(self.graph.steps[node].inputs[0])
        if rdd is None:
            self._note(_REGENERATE_KEYS)
            return {}
        return key_numbers(rdd, parts)

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def _same_key(self, node: int, positions: Positions, other: int) -> Positions:
        """The positions of ``other``'s records on the same partitions with the keys of
        ``node``'s records at ``positions`` (an aggregation's map side, either way)."""
        here = self._key_index(node, list(positions))
        index = self._key_index(other, list(positions))
        if here is None or index is None:
            self._note(_REGENERATE_KEYS)
            return {}
        found: Positions = {}
        for part, wanted in positions.items():
            keys = [key for key, at in here.get(part, {}).items() if not wanted.isdisjoint(at)]
            found[part] = {pos for key in keys for pos in index.get(part, {}).get(key, ())}
        return found

    def _keys_at(self, node: int, positions: Positions) -> set:
        """The keys of ``node``'s records at ``positions`` (regenerated: a join links by key)."""
        if self.run.output_rdd(node) is None:
            self._note(_REGENERATE_JOIN_KEYS)
        return {record[0] for record in self.records(node, positions).values()}

    def _with_keys(self, node: int, keys: set) -> Positions:
        """The positions of ``node``'s records whose key is one of ``keys`` (Titian's
        key-based links of a join: its output of key K to every input record of key K)."""
        rdd = self.run.output_rdd(node)
        index = self._key_index(node, list(range(rdd.getNumPartitions()))) \
            if keys and rdd is not None else None
        if index is None:
            if keys:
                self._note(_REGENERATE_JOIN_KEYS)
            return {}
        found: Positions = {}
        for part, by_key in index.items():
            hits = {pos for key in keys & by_key.keys() for pos in by_key[key]}
            if hits:
                found[part] = hits
        return found

    def _key_index(self, node: int, parts: list[int]) -> dict[int, dict] | None:
        """Partition -> {key: positions} of ``node``'s output (the map side's links, by
        key): the first time one of ``parts`` is asked for, one job indexes every
        partition (a key's group spans most of them: the next traces need them), kept."""
        rdd = self.run.output_rdd(node)
        if rdd is None:
            return None
        index = self._indexes.setdefault(node, {})
        if any(p not in index for p in parts):
            index.update(key_index(rdd, [p for p in range(rdd.getNumPartitions())
                                         if p not in index]))
        return index

    def _equal(self, step: Step, node: int, positions: Positions, other: int) -> Positions:
        """The positions of ``other``'s records equal to ``node``'s records at
        ``positions``, across ``step`` (a JVM operator that moves records)."""
        note = (f"{step.node.name!r} (a JVM {step.node.api}) is traced by record equality: "
                "records equal to a traced one are linked with it")
        self._note(note)
        wanted = list(self.records(node, positions).values())
        found: Positions = {}
        for (part, pos), record in self.records(other, None).items():
            if any(record == w for w in wanted):
                found.setdefault(part, set()).add(pos)
        return found

    def _aligned(self, step: Step) -> bool:
        """A union of inputs partitioned alike: Spark puts every input's partition p in
        its partition p, one after the other (not traced yet: a note says so)."""
        rdd = self.run.output_rdd(step.node.id)
        if rdd is None or getattr(rdd, "partitioner", None) is None:
            return False
        note = (f"the trace stops at {step.node.name!r}: a union of inputs partitioned alike "
                "(each of its partitions holds every input's) is not traced yet")
        self._note(note)
        return True

    def _stopped(self, step: Step) -> None:
        note = (f"the trace stops at {step.node.name!r}: lineage through a {step.node.kind} "
                f"{step.node.api} is not captured")
        self._note(note)


def _union_back(step: Step, positions: Positions) -> dict[int, Positions]:
    found: dict[int, Positions] = {}
    for part, ps in positions.items():
        first = 0
        for index, count in enumerate(step.node.input_partitions or []):
            if part < first + count:
                found.setdefault(index, {})[part - first] = set(ps)
                break
            first += count
    return found


def _add(into: dict[int, Positions], node: int, positions: Positions) -> None:
    target = into.setdefault(node, {})
    for part, ps in positions.items():
        if ps:
            target.setdefault(part, set()).update(ps)


def walk_back(lineage: Lineage, start: dict[int, Positions]) -> tuple[dict, list[int]]:
    """Every node's positions the ``start`` positions come from, and the nodes where
    the walk ended (sources, or nodes whose lineage is not captured)."""
    graph = lineage.graph
    reached = {node: dict(ps) for node, ps in start.items()}
    pending = {node: dict(ps) for node, ps in start.items()}
    ends: list[int] = []
    for node in sorted(graph.steps, reverse=True):  # a node's parents come before it
        wanted = pending.pop(node, None)
        if not wanted:
            continue
        step = graph.steps[node]
        inputs = lineage.back(step, wanted)
        if not any(inputs.values()):  # a source, or where the trace stops
            ends.append(node)
        for index, found in inputs.items():
            _add(reached, step.inputs[index], found)
            _add(pending, step.inputs[index], found)
    return reached, sorted(ends)


def walk_forward(lineage: Lineage, start: dict[int, Positions]) -> dict[int, Positions]:
    """Every node's positions that the ``start`` positions went into."""
    graph = lineage.graph
    reached = {node: dict(ps) for node, ps in start.items()}
    pending = {node: dict(ps) for node, ps in start.items()}
    for node in sorted(graph.steps):  # a node's children come after it
        wanted = pending.pop(node, None)
        if not wanted:
            continue
        for child, index in graph.children[node]:
            found = lineage.forward(graph.steps[child], index, node, wanted)
            _add(reached, child, found)
            _add(pending, child, found)
    return reached


def trace_back(lineage: Lineage, selector: Any, operator: str | None = None,
               at: tuple[int, int] | None = None) -> Trace:
    """The records every selected output row of ``operator`` (default: the cell's last)
    comes from, at each operator on the way back to the sources."""
    start = lineage.graph.dag.node(operator) if operator else lineage.graph.output()
    positions = {at[0]: {at[1]}} if at is not None else lineage.matching(start.id, selector)
    if not positions:
        raise LookupError(_no_match(start.name, selector, "output row"))
    reached, ends = walk_back(lineage, {start.id: positions})
    return Trace("back", lineage, reached, ends)


def trace_forward(lineage: Lineage, selector: Any, operator: str | None = None,
                  at: tuple[int, int] | None = None) -> Trace:
    """The output rows that the selected source records (of ``operator``, default every
    source) went into, at each operator on the way."""
    graph = lineage.graph
    sources = [graph.dag.node(operator)] if operator else graph.sources()
    if at is not None:
        if len(sources) != 1:
            raise ValueError("trace_forward(at=...) names a record by its id in one source: "
                             f"pass operator= one of {[s.name for s in sources]}")
        start_at = {sources[0].id: {at[0]: {at[1]}}}
        return Trace("forward", lineage, walk_forward(lineage, start_at), [graph.output().id])
    start: dict[int, Positions] = {}
    for source in sources:
        found = lineage.matching(source.id, selector)
        if found:
            start[source.id] = found
    if not start:
        names = ", ".join(repr(s.name) for s in sources)
        raise LookupError(_no_match(names, selector, "source record"))
    return Trace("forward", lineage, walk_forward(lineage, start), [graph.output().id])


def output_rows(lineage: Lineage) -> tuple[str, list[tuple[int, int, Any]]]:
    """The cell's last operator and its output rows: (partition, position, record)."""
    node = lineage.graph.output()
    if lineage.run.output_rdd(node.id) is None:
        raise LookupError(f"run {lineage.run.id} has no output rows to show: this kernel no "
                          "longer has its pipeline (a reopened run); name a row by its id: "
                          "run.trace_back(at=(partition, position))")
    records = lineage.records(node.id, None)
    return node.name, [(part, pos, records[(part, pos)]) for part, pos in sorted(records)]


def _no_match(where: str, selector: Any, what: str) -> str:
    described = "the predicate" if is_predicate(selector) else repr(selector)
    return (f"no {what} of {where} matches {described}: pass a record of it (equal by ==) "
            "or a predicate over its records, e.g. lambda row: row[0] == 'spark'")


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
        self.log: Callable[[str], Any] = lambda call: None

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
        self.log(f"{self.call}.replay()")
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

