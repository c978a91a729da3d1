"""Request handlers by method name, registered explicitly; each calls only the run API.

A module of handlers collects them in a ``MethodTable`` (``@table.handles("run.get")``);
``comm/target.py`` registers each table in the channel's ``HandlerRegistry``, which
refuses a method the protocol does not list and a second handler for one method."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .. import __version__
from ..session import registry
from ..session.run import Run
from .messages import PROTOCOL_VERSION, REQUEST_METHODS

Handler = Callable[[dict], Any]


class MethodTable:
    """The handlers one module defines, by method: ``@table.handles(method)``."""

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}

    def handles(self, method: str) -> Callable[[Handler], Handler]:
        def collect(fn: Handler) -> Handler:
            if method in self.handlers:
                raise ValueError(f"{method!r} is handled twice in {fn.__module__}")
            self.handlers[method] = fn
            return fn
        return collect


class HandlerRegistry:
    """One handler per request method of the protocol."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def add(self, table: MethodTable) -> HandlerRegistry:
        for method, fn in table.handlers.items():
            if method not in REQUEST_METHODS:
                raise ValueError(f"{method!r} is not a request method of comm/messages.py")
            if method in self._handlers:
                raise ValueError(f"{method!r} already has a handler")
            self._handlers[method] = fn
        return self

    def handler(self, method: str) -> Handler:
        return self._handlers[method]

    def methods(self) -> set[str]:
        return set(self._handlers)


RUNS = MethodTable()  # the runs list and one run's summary


def run_item(run: Run) -> dict:
    """What the runs list shows of a run."""
    first_line = next((line for line in run.cell.splitlines() if line.strip()), "")
    return {"id": run.id, "status": run.status, "started": run.started, "ended": run.ended,
            "duration": run.duration, "cell": first_line[:200], "path": run.path,
            "operators": len(run.dag.python_operators)}


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def run_of(params: dict) -> Run:
    """The run a request names (LookupError: not_found)."""
    try:
        return registry.get(params["run"])
    except LookupError as exc:
        raise LookupError(str(exc)) from None


@RUNS.handles("hello")
def hello(params: dict) -> dict:
    return {"protocol": PROTOCOL_VERSION, "version": __version__}


@RUNS.handles("runs.list")
def runs_list(params: dict) -> dict:
    return {"runs": [run_item(run) for run in registry.runs()]}


@RUNS.handles("run.get")
def run_get(params: dict) -> dict:
    return jsonable(run_of(params).summary())


@RUNS.handles("run.partitions")
def run_partitions(params: dict) -> dict:
    run = run_of(params)
    return {"run": run.id, "operator": params["operator"],
            "partitions": jsonable(run.partitions(params["operator"]))}


@RUNS.handles("run.open")
def run_open(params: dict) -> dict:
    return jsonable(registry.open_run(params["path"]).summary())

