"""One registry of named request handlers; each calls only the run API."""
from __future__ import annotations

import json
from typing import Any, Callable

from .. import __version__
from ..session import registry
from ..session.run import Run
from .messages import PROTOCOL_VERSION, REQUEST_METHODS

Handler = Callable[[dict], Any]
HANDLERS: dict[str, Handler] = {}


def handles(method: str) -> Callable[[Handler], Handler]:
    assert method in REQUEST_METHODS, method

    def register(fn: Handler) -> Handler:
        HANDLERS[method] = fn
        return fn
    return register


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


@handles("hello")
def hello(params: dict) -> dict:
    return {"protocol": PROTOCOL_VERSION, "version": __version__}


@handles("runs.list")
def runs_list(params: dict) -> dict:
    return {"runs": [run_item(run) for run in registry.runs()]}


@handles("run.get")
def run_get(params: dict) -> dict:
    return jsonable(run_of(params).summary())


@handles("run.partitions")
def run_partitions(params: dict) -> dict:
    run = run_of(params)
    return {"run": run.id, "operator": params["operator"],
            "partitions": jsonable(run.partitions(params["operator"]))}


@handles("run.open")
def run_open(params: dict) -> dict:
    return jsonable(registry.open_run(params["path"]).summary())


from . import time_travel  # noqa: E402,F401 - registers the time-travel handlers
