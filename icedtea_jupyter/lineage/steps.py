"""A run's lineage and the walks over it (Titian's ``goBackAll`` and ``goNextAll``).

``Lineage`` holds a run's graph (``graph.py``), its links in DuckDB or Spark SQL
(``engine.py``, ``spark_engine.py``) and the records it regenerated; it takes one step
of a trace across one operator, back or forward, by the way that operator links
(links, key, union, value). ``walk_back`` and ``walk_forward`` take every step from a
set of positions to the sources or to the outputs. The entry points are in
``trace.py``, the traces they return in ``traced.py``.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..executor.lineage_jobs import KeyNumbers
from .graph import KEY, LINKS, NONE, PLACE, SOURCE, UNION, VALUE, LineageGraph, Step
from .join_keys import JoinKeys
from .records import (
    Positions,
    everything,
    fetch,
    key_index,
    key_numbers,
    tapped_key_numbers,
    untag_combiner,
)
from .spark_engine import engine_for
from .tables import load_links, output_counts

if TYPE_CHECKING:
    from ..session.run import Run


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
        self.join_keys = JoinKeys(run.store.path, run.output_rdd, self.keys.join_files)
        self.notes: list[str] = []
        self._records: dict[int, dict[tuple[int, int], Any]] = {}
        self._whole: set[int] = set()
        self._indexes: dict[int, dict[int, dict]] = {}  # node -> partition -> key -> positions

    def derive_ahead(self, stop: threading.Event) -> None:
        """Derive the map sides' key numbers a trace would (``KeyLinks.prepare``), when
        the run ends (``frames_ahead.py``): the first trace runs no job for them."""
        self.keys.derive_every(stop)

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
            return self._join_back(step, positions)
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
        if step.how == PLACE:
            return {0: {part: set(ps) for part, ps in positions.items()}}
        if step.how == NONE:
            self._stopped(step)
        if step.how == SOURCE and step.node.api == "source" and step.node.kind == "jvm":
            self._note(f"the trace ends at {step.node.name!r}: the cell did not make it, so "
                       "its records are where this cell's lineage starts")
        return {}

    def forward(self, step: Step, index: int, source: int, positions: Positions) -> Positions:
        if step.how == LINKS and step.node.id in self.keys.joins:
            return self._join_forward(step, source, positions)
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
        if step.how == PLACE:
            return {part: set(ps) for part, ps in positions.items()}
        self._stopped(step)
        return {}

    def _key_numbers(self, node: int, parts: list[int]) -> dict:
        """A map side's links on ``parts``: its inputs' keys numbered as first seen, its
        inputs regenerated with Spark (one job over ``parts``); nothing in a reopened
        run (the links an earlier trace derived are read from the store instead)."""
        rdd = self.run.output_rdd(self.graph.steps[node].inputs[0])
        if rdd is None:
            recorded = self._recorded_key_numbers(node, parts)
            if recorded is None:
                self._note(self._map_side_note(node))
            return recorded or {}
        after_join = self._after_join(self.graph.steps[node].inputs[0])
        if after_join is None:
            return key_numbers(rdd, parts)
        upstream, function, join = after_join
        found = tapped_key_numbers(upstream, function, parts)
        for part, (_, keys) in found.items():  # the join's keys, kept in the same pass
            self.join_keys.add(join, part, keys)
        return {part: numbers for part, (numbers, _) in found.items()}

    def _recorded_key_numbers(self, node: int, parts: list[int]) -> dict | None:
        """A map side's links on ``parts`` from its inputs recorded in the run (θ, with
        --record-inputs), no Spark job; None if they were not recorded."""
        theta = self.graph.dag.interesting
        if theta is None or theta.id != node:
            return None
        found = {}
        for part in parts:
            records = self.run.store.recorded_inputs(node, part)
            if records is None:
                return None
            _, numbers = next(KeyNumbers()(part, records))
            found[part] = pa.Array.from_buffers(pa.uint32(), len(numbers),
                                                [None, pa.py_buffer(numbers)])
        return found

    def _after_join(self, node: int) -> tuple[Any, Any, int] | None:
        """(the join's output RDD, ``node``'s partition function, the join) when
        ``node`` is a Python operator reading a join's outputs in the same task."""
        recorder, inputs = self.run.rebuild_parts(), self.graph.steps[node].inputs
        if recorder is None or node not in recorder.kept or len(inputs) != 1 \
                or inputs[0] not in self.keys.joins \
                or recorder.upstreams.get(node) is not self.run.output_rdd(inputs[0]):
            return None
        return recorder.upstreams[node], recorder.kept[node], inputs[0]

    def _map_side_note(self, node: int) -> str:
        name = self.graph.dag.node(node).name
        return (f"the trace stops at {name!r}, an aggregation's map side: it links its inputs "
                "to their combiners by key, derived from its inputs, and this reopened run has "
                "neither those links (no trace crossed it in the kernel that recorded the run) "
                "nor its inputs (--record-inputs keeps θ's inputs only); what works: a trace "
                "through it in the kernel that recorded the run keeps its links in the store "
                "(lineage/derived/) for every later trace, reopened runs too, and a run "
                f"recorded with --record-inputs --interesting {name!r} keeps its inputs")

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def _same_key(self, node: int, positions: Positions, other: int) -> Positions:
        """The positions of ``other``'s records on the same partitions with the keys of
        ``node``'s records at ``positions`` (an aggregation's map side, either way)."""
        here = self._key_index(node, list(positions))
        index = self._key_index(other, list(positions))
        if here is None or index is None:
            self._note(self._map_side_note(node if self.graph.steps[node].how == KEY else other))
            return {}
        found: Positions = {}
        for part, wanted in positions.items():
            keys = [key for key, at in here.get(part, {}).items() if not wanted.isdisjoint(at)]
            found[part] = {pos for key in keys for pos in index.get(part, {}).get(key, ())}
        return found

    def _join_back(self, step: Step, positions: Positions) -> dict[int, Positions]:
        """Each input's records with the keys of the join's outputs at ``positions``
        (Titian's key-based links of a join)."""
        join_keys, wanted = self.join_keys, {node: None for node in step.inputs}
        if not join_keys.prepare({**wanted, step.node.id: list(positions)}):
            self._note(self._join_note(step))
            return {}
        keys = join_keys.keys_at(step.node.id, positions)
        return {i: join_keys.with_keys(node, keys) for i, node in enumerate(step.inputs)}

    def _join_forward(self, step: Step, source: int, positions: Positions) -> Positions:
        """The join's outputs with the keys of its input ``source``'s records at ``positions``."""
        if not self.join_keys.prepare({step.node.id: None, source: list(positions)}):
            self._note(self._join_note(step))
            return {}
        return self.join_keys.with_keys(step.node.id, self.join_keys.keys_at(source, positions))

    def _join_note(self, step: Step) -> str:
        return (f"the trace stops at {step.node.name!r}, a join: it links by key, and this "
                "reopened run has neither its records' keys (no trace crossed it this way in "
                "the kernel that recorded the run) nor its pipeline to regenerate them; what "
                "works: a trace through it in the kernel that recorded the run keeps the keys "
                "in the store (lineage/derived/) for every later trace, reopened runs too")

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
        equal = _equality(wanted)
        found: Positions = {}
        for (part, pos), record in self.records(other, None).items():
            if equal(record):
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

    def note_cuts(self) -> None:
        """A trace of a run whose DAG is cut says where."""
        for node in self.graph.cuts():
            self._note(f"the DAG is cut at {node.name!r}: PySpark built it by a call the "
                       "recorder does not follow, so what comes before it is not linked to "
                       "what reads it")

    def _stopped(self, step: Step) -> None:
        note = (f"the trace stops at {step.node.name!r}: lineage through a {step.node.kind} "
                f"{step.node.api} is not captured")
        self._note(note)


def _equality(wanted: list) -> Callable[[Any], bool]:
    """Whether a record equals one of ``wanted``: by hash when they all have one (a sort
    of 200,000 records traced for 80,000 of them), else one by one."""
    try:
        kept = set(wanted)
    except TypeError:  # a list or dict among them
        return lambda record: any(record == w for w in wanted)

    def equal(record: Any) -> bool:
        try:
            return record in kept
        except TypeError:
            return any(record == w for w in wanted)
    return equal


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


