"""A breakpoint armed on a worker's operator (``control.py``'s ``LiveControl`` holds
them): a conditional one's test, its expression inlined in one function, called once a
record (or on lists read ahead, ``breakpoint_scan.py``); a global SUM's step. A handler
gives the record, its replacement, or ``_SKIP`` (drop it)."""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from operator import is_
from typing import TYPE_CHECKING, Any

from .breakpoint_scan import compile_scan
from .control_state import compile_expression

if TYPE_CHECKING:
    from .control import LiveControl

_SKIP = object()  # a watch's "drop this record"
_IS_SKIP = partial(is_, _SKIP)  # in C


class Watch:
    """One armed breakpoint on this worker's operator; ``handler(record)`` (one Python
    call a record) gives the record, its replacement or _SKIP."""

    def __init__(self, item: dict, control: LiveControl) -> None:
        self.item, self.control = item, control
        self.id: int = item["id"]
        self.kind: str = item["kind"]  # condition | count | sum
        self.armed = True  # False once removed, hit (global) or broken
        self.value: float = 0  # a global breakpoint: this worker's count or sum so far
        self.target: float = 0.0  # ... and its local target (0: report at once)
        self.seq = 0  # the coordinator's target message last applied
        self.fn: Callable[[Any], Any] | None = None
        self.handler: Callable[[Any], Any]
        if self.kind == "condition":
            self.handler = _condition_handler(item.get("when") or "False", self, control)
            self.scan = compile_scan(item.get("when") or "False")
        elif self.kind == "count":  # counted by the host: checked at its checks
            self.handler = _identity
        else:
            self.fn = compile_expression(item.get("sum_of") or "0", "breakpoint")
            self.handler = self.sum_step

    def sum_step(self, record: Any) -> Any:
        if self.armed:
            try:
                self.value += self.fn(record)  # type: ignore[misc]
            except Exception as exc:
                return self.control.broken(self, record, exc)
            if self.value >= self.target:
                self.control.reach(self)
        return record


def _identity(record: Any) -> Any:
    return record


_HANDLER = """
def handler(row):
    if _watch.armed:
        try:
            hit = ({expression})
        except Exception as exc:
            return _broken(_watch, row, exc)
        if hit:
            return _hit(_watch, row)
    return row
"""


def _condition_handler(expression: str, watch: Watch, control: LiveControl) -> Callable:
    """A conditional breakpoint's test, its expression inlined: one call a record."""
    compile_expression(expression, "breakpoint")  # a SyntaxError names the expression
    names: dict = {"_watch": watch, "_hit": control.hit, "_broken": control.broken}
    exec(compile(_HANDLER.format(expression=expression), "<breakpoint>", "exec"), names)
    return names["handler"]
