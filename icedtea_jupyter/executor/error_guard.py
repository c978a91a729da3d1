"""``--on-error pause``: a per-record function's exceptions become hits (``control.py``).

A whole-partition function (a ``mapPartitions`` generator, ``mapInPandas``) that raises
becomes a hit too (``guard_outputs``): the record or batch it took last, and its locals
when it raised, are shown; ``resume()`` (the task fails, as without the flag) and
``stop()`` are the actions offered. Skip and replace are refused with the reason
(``GENERATOR_REFUSAL``): Python has closed the generator, and going on would mean running
it again from its partition's first record, exact only for a deterministic function
without side effects, which a worker cannot check.

The guard makes a map a flatMap of one output or none, so that a skipped record gives no
output; a filter's skipped record is dropped, a flatMap's and an ``Operator``'s give
nothing. In replay, a ``SkippedRecord`` (the edits of the run, ``store/control_files.py``)
gives no output either.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .control import _SKIP, LiveControl, SkippedRecord
from .records import NO_RECORD

WHOLE_PARTITION_ACTIONS = ("resume", "stop")
GENERATOR_REFUSAL = (
    "a whole-partition function that raised cannot go on: Python closed it when the "
    "exception left it, and going on without the record would mean running it again from "
    "its partition's first record over the {taken} it took, which gives the same outputs "
    "and state only if it is deterministic and has no side effects; resume() lets the "
    "task fail as without --on-error pause, stop() ends the run; for skip and replace, "
    "write the step as a per-record operator (map, flatMap, an Operator)")


def guard(control: LiveControl, kind: str, f: Callable) -> tuple[str, Callable]:
    """``kind``, ``f`` for the per-record loop: an exception in ``f`` pauses the run and
    the user skips the record, replaces it, or stops."""
    many = kind in ("flatMap", "operator")  # outputs a generator may raise while giving
    call = _on_error(control, f, many) if control.on_error else _replayed(f)
    if kind == "map":
        return "flatMap", _one_or_none(call)
    if kind == "filter":
        return kind, lambda record: _kept(call(record))
    if kind == "flatMap":
        return kind, lambda record: _outputs(call(record))
    return kind, call


def _on_error(control: LiveControl, f: Callable, many: bool) -> Callable:
    def call(record: Any) -> Any:
        try:
            out = f(record)
            return _listed(out) if many else out
        except Exception as exc:
            error = {"exception": type(exc).__name__, "message": str(exc)[:2000]}
            outcome = control.ask("error", record, -1, error)
            if outcome is _SKIP:
                return _SKIP
            if outcome is record:  # resume: the task fails as without the flag
                raise
            return call(outcome)
    return call


def _listed(outputs: Any) -> Any:
    """One record's outputs taken now, so that a generator's exception is this record's."""
    return outputs if outputs is None or isinstance(outputs, (list, tuple)) else list(outputs)


def _replayed(f: Callable) -> Callable:
    def call(record: Any) -> Any:
        return _SKIP if isinstance(record, SkippedRecord) else f(record)
    return call


def _one_or_none(call: Callable) -> Callable:
    def one(record: Any) -> tuple:
        out = call(record)
        return () if out is _SKIP else (out,)
    return one


def _kept(out: Any) -> bool:
    return False if out is _SKIP else bool(out)


def _outputs(out: Any) -> Iterable:
    return () if out is _SKIP else out


class GuardedOperator:
    """An ``Operator`` whose ``process`` is guarded (``guard``)."""

    def __init__(self, op: Any, process: Callable) -> None:
        self.op, self.process = op, process

    def open(self) -> None:
        self.op.open()

    def close(self) -> Any:
        return self.op.close()


def guard_operator(control: LiveControl, op: Any) -> GuardedOperator:
    _, process = guard(control, "operator", op.process)
    return GuardedOperator(op, lambda record: _none_if_skipped(process(record)))


def _none_if_skipped(out: Any) -> Any:
    return None if out is _SKIP else out


def guard_outputs(control: LiveControl, host: Any, outputs: Iterable) -> Iterator:
    """A whole-partition function's outputs; its exception pauses the run as a hit on the
    input it took last, offering resume and stop (``GENERATOR_REFUSAL``)."""
    try:
        yield from outputs
    except Exception as exc:
        generator = host.user_generator
        code = getattr(generator, "gi_code", None)
        tb = exc.__traceback__
        while tb is not None:  # its locals when it raised: the state shown
            if tb.tb_frame.f_code is code:
                host.final_locals = dict(tb.tb_frame.f_locals)
            tb = tb.tb_next
        frame = getattr(host.inputs_gen, "gi_frame", None)
        record = frame.f_locals.get("record", NO_RECORD) if frame is not None else NO_RECORD
        taken = host.live_count()
        error = {"exception": type(exc).__name__, "message": str(exc)[:2000]}
        control.ask("error", None if record is NO_RECORD else record, -1, error,
                    actions=WHOLE_PARTITION_ACTIONS,
                    refused=GENERATOR_REFUSAL.format(
                        taken=f"{taken} record{'s' if taken != 1 else ''}"))
        raise  # resumed: the task fails as without the flag
