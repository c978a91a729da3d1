"""Lineage requests of the ``icedtea`` comm (Titian): the cell's output rows, a backward
trace from one of them, a forward trace from a source record, the pages of a trace's
records, its selective replay, and ``debug.jump_to`` (time travel to where θ received a
traced record).

Handlers call only the Run API (``run.lineage_outputs``, ``run.trace_back``,
``run.trace_forward``, ``t.replay()``, ``dbg.jump_to``). A trace stays in the kernel
under an id (the latest ``KEPT`` of them) so that the sidebar can page through its records and jump to
one of them; records travel as the tagged JSON of ``executor.state.encode``.
"""
from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from typing import Any

from ..executor.state import encode
from ..lineage.tables import NoLineage
from ..lineage.trace import Trace, TracedRecord
from ..session.run import Run
from .handlers import MethodTable, run_of
from .messages import RequestError
from .time_travel import _debugger, debug_view

LINEAGE = MethodTable()  # output rows, traces, their records, jumps to a traced record

PAGE = 50  # records of a page, unless the request says
MAX_PAGE = 1000
KEPT = 32  # traces kept for their pages and jumps, the latest ones
_TRACES: OrderedDict[int, tuple[str, Trace]] = OrderedDict()
_IDS = itertools.count(1)
_LOCK = threading.Lock()


# --- helpers ------------------------------------------------------------------------------
def _optional_int(params: dict, name: str, default: int) -> int:
    value = params.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RequestError(f"parameter {name!r} must be an int")
    return value


def _window(params: dict) -> tuple[int, int]:
    """(start, size) of the page a request asks for."""
    start = max(_optional_int(params, "start", 0), 0)
    return start, min(max(_optional_int(params, "size", PAGE), 0), MAX_PAGE)


def _row(operator: str, partition: int, position: int, record: Any) -> dict:
    return {"operator": operator, "partition": int(partition), "position": int(position),
            "record": encode(record)}


def _traced(run: Run, call: Any) -> Any:
    """What a run's lineage call returned, or why there is none (as a RequestError)."""
    try:
        return call()
    except NoLineage as exc:
        raise RequestError(str(exc), "no_lineage") from None
    except RuntimeError as exc:  # still running
        raise RequestError(str(exc)) from None


def _keep(run: Run, trace: Trace) -> int:
    with _LOCK:
        key = next(_IDS)
        _TRACES[key] = (run.id, trace)
        while len(_TRACES) > KEPT:
            _TRACES.popitem(last=False)
    return key


def _kept(run: Run, key: int) -> Trace:
    with _LOCK:
        kept = _TRACES.get(key)
    if kept is None or kept[0] != run.id:
        raise LookupError(f"trace {key} of run {run.id} is no longer kept: trace the row again")
    return kept[1]


def _page(rows: list, start: int, size: int, operator: str | None) -> dict:
    return {"operator": operator, "total": len(rows), "start": start,
            "rows": [_row(*row[:4]) for row in rows[start:start + size]]}


def _trace_page(trace: Trace, start: int, size: int, operator: str | None) -> dict:
    """A page of a trace's records: only its records are regenerated."""
    return {"operator": operator, "total": trace.count(operator), "start": start,
            "rows": [_row(*row[:4]) for row in trace.rows(operator, start, size)]}


def _trace_result(run: Run, trace: Trace, key: int, start_row: dict, call: str,
                  size: int) -> dict:
    return {"run": run.id, "trace": key, "direction": trace.direction, "engine": trace.engine,
            "from": start_row, "call": call,
            "operators": [{"operator": name, "count": count}
                          for name, count in trace.operators.items()],
            "total": len(trace), "notes": trace.notes,
            "page": _trace_page(trace, 0, size, None)}


# --- requests -----------------------------------------------------------------------------
@LINEAGE.handles("lineage.outputs")
def lineage_outputs(params: dict) -> dict:
    """A page of the cell's last operator's output rows; ``filter``: those whose repr
    contains it (case-insensitive)."""
    run = run_of(params)
    operator, rows = _traced(run, run.lineage_outputs)
    start, size = _window(params)
    wanted = params.get("filter") or ""
    if not isinstance(wanted, str):
        raise RequestError("parameter 'filter' must be a str")
    if wanted:
        rows = [row for row in rows if wanted.lower() in repr(row[2]).lower()]
    page = _page([(operator, *row) for row in rows], start, size, operator)
    return {"run": run.id, "operator": operator, "page": page}


@LINEAGE.handles("lineage.trace_back")
def lineage_trace_back(params: dict) -> dict:
    """The source records of the output row at (partition, position) of the last operator."""
    run = run_of(params)
    at = (params["partition"], params["position"])
    trace = _traced(run, lambda: run.trace_back(at=at))
    operator = next(reversed(trace.operators)) if trace.operators else ""
    record = trace.rows(operator, 0, 1)[0].record if operator else None
    start_row = _row(operator, at[0], at[1], record)
    call = f"run.trace_back(at=({at[0]}, {at[1]}))"
    return _trace_result(run, trace, _keep(run, trace), start_row, call, _window(params)[1])


@LINEAGE.handles("lineage.trace_forward")
def lineage_trace_forward(params: dict) -> dict:
    """The output rows the record at (partition, position) of source ``operator`` went into."""
    run = run_of(params)
    operator, at = params["operator"], (params["partition"], params["position"])
    trace = _traced(run, lambda: run.trace_forward(operator=operator, at=at))
    records = trace.rows(operator, 0, 1)  # the source record: the one it has there
    start_row = _row(operator, at[0], at[1], records[0].record if records else None)
    call = f"run.trace_forward(operator={operator!r}, at=({at[0]}, {at[1]}))"
    return _trace_result(run, trace, _keep(run, trace), start_row, call, _window(params)[1])


@LINEAGE.handles("lineage.records")
def lineage_records(params: dict) -> dict:
    """A page of a kept trace's records: where it ends, or at ``operator`` on the way."""
    run = run_of(params)
    trace = _kept(run, params["trace"])
    operator = params.get("operator")
    if operator is not None and operator not in trace.operators:
        raise LookupError(f"the trace has no records at {operator!r} (it reached "
                          f"{', '.join(trace.operators)})")
    start, size = _window(params)
    return {"run": run.id, "trace": params["trace"],
            "page": _trace_page(trace, start, size, operator)}


@LINEAGE.handles("debug.jump_to")
def debug_jump_to(params: dict) -> dict:
    """The debugger just before θ receives the input record linked with a record of a
    kept trace (``dbg.jump_to(record)``)."""
    run = run_of(params)
    trace = _kept(run, params["trace"])
    target = TracedRecord(params["operator"], params["partition"], params["position"], None,
                          trace)
    dbg = _debugger(run)
    with dbg.lock:
        try:
            dbg.jump_to(target)
        except ValueError as exc:  # too far from an interaction
            raise RequestError(str(exc), "refused") from None
        return debug_view(run, dbg)


@LINEAGE.handles("lineage.replay")
def lineage_replay(params: dict) -> dict:
    """Titian's selective replay of a kept backward trace (``t.replay()``): the cell's
    last operator's outputs re-run on only the trace's source records (``size`` of them)."""
    run = run_of(params)
    trace = _kept(run, params["trace"])
    try:
        outputs = _traced(run, trace.replay)
    except ValueError as exc:  # a forward trace
        raise RequestError(str(exc)) from None
    size = _window(params)[1]
    return {"run": run.id, "trace": params["trace"], "call": f"{trace.call}.replay()",
            "total": len(outputs), "outputs": [encode(output) for output in outputs[:size]]}


# the requests that run Spark jobs or replays: answered from the comm's slow thread
SLOW = frozenset(LINEAGE.handlers)
