"""What a debugging move showed, as text that is the same in every kernel.

``shown(snapshot)`` is printed by the exported notebook after each jump or step, and
kept in the run's action log when the move is made: re-running the export must print
the same text. Sets and dict keys are sorted (a set of strings iterates in another
order in another process), floats keep ``repr``'s exact digits.

A view too large to keep whole is kept bounded (``shown(snapshot, bounded=True)``,
``bounded(text)``): each long state as its first ``KEPT`` characters, its length and
the SHA-256 digest of its whole text. The same function prints it again when the
export re-runs, so nbval still compares every state, through its digest.
"""
from __future__ import annotations

import hashlib
from typing import Any

KEPT = 1_000  # characters of a long state kept readable in its bounded form


def stable(value: Any) -> str:
    """``repr`` with the order of sets and dicts fixed."""
    if isinstance(value, dict):
        items = sorted(((stable(k), stable(v)) for k, v in value.items()))
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, (set, frozenset)):
        inner = ", ".join(sorted(stable(v) for v in value))
        return "{" + inner + "}" if value else "set()"
    if isinstance(value, list):
        return "[" + ", ".join(stable(v) for v in value) + "]"
    if isinstance(value, tuple) and not hasattr(value, "_fields") and \
            not hasattr(value, "__fields__"):
        inner = ", ".join(stable(v) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def bounded(text: str, kept: int = KEPT) -> str:
    """``text`` itself, or when longer than ``kept`` its start, its length and the
    SHA-256 digest of all of it (equal digests: equal texts)."""
    if len(text) <= kept:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()
    return f"{text[:kept]}… [{len(text):,} characters, sha256 {digest}]"


def shown(snapshot: Any, bounded_states: bool = False) -> str:
    """Every worker of the debugger's view: records processed, then its state; the
    outputs of the last step, and where replay noted a difference from the run.
    ``bounded_states``: each long state (and the outputs) in its bounded form."""
    def text(value: Any) -> str:
        return bounded(stable(value)) if bounded_states else stable(value)

    lines = []
    if snapshot.outputs:
        lines.append(f"outputs: {text(list(snapshot.outputs))}")
    for worker in snapshot.workers():
        op, p = worker["operator"], worker["partition"]
        lines.append(f"{op} p{p} after {worker['count']} records: "
                     f"{text(snapshot.state(op, p))}")
    if getattr(snapshot, "failure", None):
        failure = snapshot.failure
        lines.append(f"failure: {failure.get('operator')} raised {failure.get('exception')}:"
                     f" {failure.get('message')}")
    return "\n".join(lines)


def traced(trace: Any) -> str:
    """A lineage trace: how many records it reached at each operator, and how many it
    ends at (the same in a re-run of a deterministic pipeline)."""
    counts = ", ".join(f"{op}: {n}" for op, n in trace.operators.items())
    return f"{trace.direction} trace ends at {len(trace)} record(s); {counts}"
