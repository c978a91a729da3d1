"""Wrapping PySpark's API for the duration of a cell, for the cell's thread only.

Patches are installed on the classes while at least one run is recording and are
removed (the original attributes put back exactly) when the last one ends. Each
patched method asks ``active()`` for the calling thread's ``Recorder``; calls from
other threads, and calls PySpark makes from inside a patched method (``depth`` >
0), go straight to the original.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_MISSING = object()
_ACTIVE: dict[int, Any] = {}
_LOCK = threading.Lock()
_INSTALLED: list[tuple[type, str, Any]] = []  # (owner, attribute, original or _MISSING)
_PATCHES: list[tuple[type, str, Callable[[Any], Any]]] = []  # (owner, attribute, make)


def register(owner: type, attribute: str) -> Callable:
    """Decorator: ``make(original) -> replacement`` is installed while recording."""
    def decorate(make: Callable[[Any], Any]) -> Callable[[Any], Any]:
        _PATCHES.append((owner, attribute, make))
        return make
    return decorate


def active(from_pyspark: bool = False) -> Any:
    """The recorder of the calling thread, if it records and the call is the user's.

    Calls made by PySpark itself are not the user's: those from inside a patched
    method (``depth`` > 0) and those from PySpark's own modules (``rdd.values()``
    calls ``map``, ``count()`` calls ``mapPartitions``) unless ``from_pyspark``.
    """
    recorder = _ACTIVE.get(threading.get_ident())
    if recorder is None or recorder.depth:
        return None
    if not from_pyspark:
        caller = sys._getframe(2).f_globals.get("__name__", "")
        if caller.startswith("pyspark."):
            return None
    return recorder


def current() -> Any:
    """The recorder of the calling thread, at any depth."""
    return _ACTIVE.get(threading.get_ident())


@contextmanager
def recording(recorder: Any) -> Iterator[None]:
    """Route this thread's PySpark calls through ``recorder`` while the block runs."""
    ident = threading.get_ident()
    with _LOCK:
        if not _ACTIVE:
            _install()
        _ACTIVE[ident] = recorder
    try:
        yield
    finally:
        with _LOCK:
            _ACTIVE.pop(ident, None)
            if not _ACTIVE:
                _uninstall()


def _install() -> None:
    from . import actions, dataframe, rdd, sql  # noqa: F401 - registering their patches
    from .connect import register_connect

    register_connect()  # the Spark Connect client's classes, once it is imported
    for owner, attribute, make in _PATCHES:
        original = owner.__dict__.get(attribute, _MISSING)
        current_value = getattr(owner, attribute, None)  # None: served by __getattr__
        _INSTALLED.append((owner, attribute, original))
        setattr(owner, attribute, make(current_value))


def _uninstall() -> None:
    while _INSTALLED:
        owner, attribute, original = _INSTALLED.pop()
        if original is _MISSING:
            delattr(owner, attribute)
        else:
            setattr(owner, attribute, original)


def is_installed() -> bool:
    return bool(_INSTALLED)


def tag(obj: Any, run_id: str, node_id: int) -> Any:
    """Remember which node of which run produced an RDD, DataFrame, GroupedData or Column."""
    try:
        obj._icedtea_node = (run_id, node_id)
    except (AttributeError, TypeError):
        pass
    return obj


def own(obj: Any, name: str) -> Any:
    """``obj``'s own (instance) attribute ``name``, or None: never one a ``__getattr__``
    makes up (a Spark Connect DataFrame's unknown attributes are columns)."""
    try:
        return vars(obj).get(name)
    except TypeError:  # no __dict__
        return None


def node_of(obj: Any, run_id: str) -> int | None:
    """The node of ``run_id`` that produced ``obj``, if that run made it."""
    mark = own(obj, "_icedtea_node")
    return mark[1] if isinstance(mark, tuple) and mark[0] == run_id else None
