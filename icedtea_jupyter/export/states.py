"""What a debugging move showed, as text that is the same in every kernel.

``shown(snapshot)`` is printed by the exported notebook after each jump or step, and
kept in the run's action log when the move is made: re-running the export must print
the same text. Sets and dict keys are sorted (a set of strings iterates in another
order in another process), floats keep ``repr``'s exact digits.
"""
from __future__ import annotations

from typing import Any


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


def shown(snapshot: Any) -> str:
    """Every worker of the debugger's view: records processed, then its state; the
    outputs of the last step, and where replay noted a difference from the run."""
    lines = []
    if snapshot.outputs:
        lines.append(f"outputs: {stable(list(snapshot.outputs))}")
    for worker in snapshot.workers():
        op, p = worker["operator"], worker["partition"]
        lines.append(f"{op} p{p} after {worker['count']} records: "
                     f"{stable(snapshot.state(op, p))}")
    if getattr(snapshot, "failure", None):
        failure = snapshot.failure
        lines.append(f"failure: {failure.get('operator')} raised {failure.get('exception')}:"
                     f" {failure.get('message')}")
    return "\n".join(lines)
