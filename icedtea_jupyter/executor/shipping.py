"""The moment Spark takes an operator: when PySpark pickles it into a task's command.

PySpark pickles the Python functions of a pipeline when an action first builds the
RDD's command, not when the cell calls ``map`` or ``mapPartitions``. An ``Operator`` the
cell changes in between runs with the change. The wrappers call ``shipped`` from their
``__getstate__``, so the driver keeps the operator's image for replay as Spark took it.
"""
from __future__ import annotations

import pickle
import threading
from collections.abc import Callable
from typing import Any

_LISTENERS: dict[str, Callable[[Any], None]] = {}  # run id -> the run's recorder
_BUSY = threading.local()


class ShippingRefused(pickle.PicklingError):
    """A run's listener stops the job before any task runs. A pickling error: PySpark's
    serializer re-raises it as it is, and the action raises it in the cell."""


def listen(run_id: str, listener: Callable[[Any], None]) -> None:
    _LISTENERS[run_id] = listener


def forget(run_id: str) -> None:
    _LISTENERS.pop(run_id, None)


def shipped(wrapper: Any) -> None:
    """A wrapper with a spec is being pickled: tell its run (raises only ``ShippingRefused``)."""
    spec = getattr(wrapper, "spec", None)
    listener = _LISTENERS.get(spec.run.run_id) if spec is not None else None
    if listener is None or getattr(_BUSY, "on", False):
        return
    _BUSY.on = True
    try:
        listener(wrapper)
    except ShippingRefused:
        raise
    except Exception:  # noqa: S110 - the image taken when the cell built the operator stays
        pass
    finally:
        _BUSY.on = False


class Shipped:
    """Base of the wrappers replay keeps images of: pickling them for Spark is noticed."""

    def __getstate__(self) -> dict:
        shipped(self)
        return self.__dict__
