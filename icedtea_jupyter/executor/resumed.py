"""Loops resumed after a record that raised and that ``--tolerate``'s agents took.

A map, filter or ``Operator`` running in blocks under ``--tolerate`` alone keeps its C
loop: the outputs are the C ``map``/``filter`` (or the ``Operator``'s own loop) passed
through one generator, which catches an exception, asks ``on_failure`` about the
record it was raised on, and resumes the same C iterator after it. Per record that is
a generator's resumption (no wrapper call, no output list). The failing record is read
from the operator's frame in the traceback (the loop's ``record`` for an ``Operator``);
no record is processed twice, so stateful operators are safe. One difference from the
per-record wrapper (``observed.py``): an ``Operator`` whose ``process`` yields some
outputs and then raises has had those outputs passed on (the wrapper drops them all).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .records import NO_RECORD


def resumed(kind: str, f: Callable, inputs: Iterable,
            record_of: Callable[[BaseException], Any],
            on_failure: Callable[[Any, Exception], bool]) -> Iterator:
    """A map's or filter's outputs (C ``map``/``filter``), resumed after a record that
    raised and that ``on_failure`` took; ``record_of(exc)``: that record, read from
    the traceback (``NO_RECORD`` if ``f`` did not raise it: it goes on up)."""
    outputs = map(f, inputs) if kind == "map" else filter(f, inputs)
    while True:
        try:
            yield from outputs
            return
        except Exception as exc:
            record = record_of(exc)
            if record is NO_RECORD or not on_failure(record, exc):
                raise


def resumed_operator(op: Any, inputs: Iterable,
                     on_failure: Callable[[Any, Exception], bool]) -> Iterator:
    """``Operator.__call__``, resumed after a record whose ``process`` raised and that
    ``on_failure`` took (the culprit finder reads ``record`` here as there)."""
    process = getattr(getattr(op.process, "__func__", None), "__code__", None)
    op.open()
    records, record = iter(inputs), NO_RECORD
    while True:
        try:
            for record in records:
                outputs = op.process(record)
                if outputs is not None:
                    yield from outputs
            break
        except Exception as exc:
            if not _raised_in(exc, process) or not on_failure(record, exc):
                raise  # not ``process``'s (its input's, say), or not taken
    final = op.close()
    if final is not None:
        yield from final


def _raised_in(exc: BaseException, code: Any) -> bool:
    """Whether the frame just inside the one that caught ``exc`` runs ``code``."""
    tb = exc.__traceback__
    inner = tb.tb_next if tb is not None else None
    return inner is not None and inner.tb_frame.f_code is code
