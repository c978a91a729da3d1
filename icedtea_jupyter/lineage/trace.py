"""Backward and forward traces over a run: where they start.

A trace starts from records the user names — output rows of the cell's last operator
(back) or records of its sources (forward), by value, by a predicate or by id — and
walks the lineage graph one operator at a time (``steps.py``), each step a join in
DuckDB (``engine.py``). It keeps the positions it reached at every operator on the way
(``traced.Trace``); the records at them are regenerated with Spark when asked for
(``records.py``).
"""
from __future__ import annotations

from typing import Any

from .records import Positions
from .steps import Lineage, is_predicate, walk_back, walk_forward
from .traced import Trace, TracedRecord, first_on_trace

__all__ = ["Lineage", "Trace", "TracedRecord", "first_on_trace", "is_predicate", "output_rows",
           "trace_back", "trace_forward"]


def trace_back(lineage: Lineage, selector: Any, operator: str | None = None,
               at: tuple[int, int] | None = None) -> Trace:
    """The records every selected output row of ``operator`` (default: the cell's last)
    comes from, at each operator on the way back to the sources."""
    start = lineage.graph.dag.node(operator) if operator else lineage.graph.output()
    positions = {at[0]: {at[1]}} if at is not None else lineage.matching(start.id, selector)
    if not positions:
        raise LookupError(_no_match(start.name, selector, "output row"))
    lineage.note_cuts()
    reached, ends = walk_back(lineage, {start.id: positions})
    return Trace("back", lineage, reached, ends)


def trace_forward(lineage: Lineage, selector: Any, operator: str | None = None,
                  at: tuple[int, int] | None = None) -> Trace:
    """The output rows that the selected source records (of ``operator``, default every
    source) went into, at each operator on the way."""
    graph = lineage.graph
    lineage.note_cuts()
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
