"""Which host's function an exception went through, and on which record: read from the
frames of its traceback (no Python frame of ours runs per record in blocks)."""
from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from types import FrameType
from typing import Any

from . import resumed
from .records import NO_RECORD as _NO_RECORD

NOT_HERE = object()  # a culprit finder's "this frame is not my host's function"


def code_of(f: Any) -> Any:
    """The code object a traceback shows for ``f`` (a function, method, ``partial`` or
    object with a Python ``__call__``), or None (a builtin: nothing to name)."""
    while isinstance(f, partial):
        f = f.func
    if inspect.ismethod(f):
        f = f.__func__
    if not inspect.isfunction(f):
        f = getattr(type(f), "__call__", None)  # noqa: B004 - the method, not a callable test
    return f.__code__ if inspect.isfunction(f) else None


def culprit_finder(kind: str, f: Any, host: Any) -> Callable[[FrameType, list], Any]:
    """``(frame, inner frames) -> record``: the record being processed if ``frame`` runs
    this host's function, else ``NOT_HERE``."""
    if kind == "operator":
        return lambda frame, inner: _operator_record(f, frame, inner)
    if kind == "partition":
        code, feed = code_of(host.user_function), host.feed

        def last_pulled(frame: FrameType, inner: list) -> Any:
            return NOT_HERE if frame.f_code is not code else feed.last_pulled()
        return last_pulled
    method = call_method(f)  # None for a function or a method
    function = f.__func__ if inspect.ismethod(f) else method or f
    code, position = function.__code__, 0 if function is f else 1
    owner = f if method is not None else None  # its frames' ``self``: not another instance's

    def record_of(frame: FrameType, inner: list) -> Any:
        if frame.f_code is not code:
            return NOT_HERE
        if owner is not None and frame.f_locals.get(code.co_varnames[0]) is not owner:
            return NOT_HERE
        if code.co_argcount <= position:
            return _NO_RECORD
        return frame.f_locals.get(code.co_varnames[position], _NO_RECORD)
    return record_of


def call_method(f: Any) -> Any:
    """The Python function ``type(f).__call__`` of an object called as a function (a
    class defining ``__call__``: its frames name it), or None: a function, a builtin, a
    C class's object, a static or class ``__call__``."""
    if inspect.isfunction(f) or inspect.ismethod(f) or isinstance(f, type):
        return None
    call = inspect.getattr_static(type(f), "__call__", None)
    return call if inspect.isfunction(call) and call.__code__.co_argcount >= 1 else None


def culprit_record(host: Any, exc: BaseException) -> Any:
    """The record ``host``'s function raised ``exc`` on (its innermost frame in the
    traceback), or NO_RECORD."""
    frames, record = frames_of(exc), _NO_RECORD
    for depth, frame in enumerate(frames):
        found = host.culprit(frame, frames[depth + 1:])
        if found is not NOT_HERE:
            record = found
    return record


def _operator_record(op: Any, frame: FrameType, inner: list) -> Any:
    """In ``Operator.__call__`` of ``op`` (or its resumed loop under ``--tolerate``): its
    loop's record, unless the frame inside it is ``open`` or ``close`` (no record then)."""
    from .observed import SampledTiming
    from .operator import Operator

    if frame.f_code is Operator.__call__.__code__:
        owner = frame.f_locals.get("self")
    elif frame.f_code in (resumed.resumed_operator.__code__, SampledTiming.operator_outputs.__code__):
        owner = frame.f_locals.get("op")
    else:
        return NOT_HERE
    if owner is not op:
        return NOT_HERE
    if inner and inner[0].f_code.co_name in ("open", "close") \
            and inner[0].f_locals.get("self") is op:
        return _NO_RECORD
    return frame.f_locals.get("record", _NO_RECORD)


def frames_of(exc: BaseException) -> list[FrameType]:
    """The frames of ``exc``'s traceback, outermost first."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames
