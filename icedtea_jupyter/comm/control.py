"""Live-control requests and events of the ``icedtea`` comm: pause, resume, live states,
breakpoints and the decisions at their hits. Handlers call only the Run API (which
records each call in the action log, with the side it came from)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..control.controller import BadBreakpoint
from ..executor.state import decode, encode_state
from ..session.run import Run
from ..store.control_files import spark_row
from .handlers import MethodTable, jsonable, run_of
from .messages import RequestError

CONTROL = MethodTable()


def control_view(run: Run) -> dict:
    """The run's live control as the panel and the sidebar show it."""
    armed = getattr(run, "armed_breakpoints", [])
    return jsonable({"run": run.id, "running": run.status == "running", "paused": run.paused,
                     "stopped": run.status == "stopped",
                     "breakpoints": [bp.to_json() for bp in armed],
                     "hits": [hit.to_json() for hit in run.breakpoints]})


def _live(params: dict) -> Any:
    run = run_of(params)
    if run.status != "running":
        raise RequestError(f"run {run.id} is {run.status}: live control is for a running run")
    return run


@CONTROL.handles("control.get")
def control_get(params: dict) -> dict:
    return control_view(run_of(params))


@CONTROL.handles("control.pause")
def control_pause(params: dict) -> dict:
    report = _live(params).pause()
    return {"seconds": report.seconds, "acknowledged": report.acknowledged,
            "pending": report.pending}


@CONTROL.handles("control.resume")
def control_resume(params: dict) -> dict:
    return {"seconds": _live(params).resume()}


@CONTROL.handles("control.live_state")
def control_live_state(params: dict) -> dict:
    state = _live(params).live_state(params["operator"], params["partition"])
    return {"state": jsonable(encode_state(state))}


@CONTROL.handles("control.add_breakpoint")
def control_add_breakpoint(params: dict) -> dict:
    run = _live(params)
    try:
        run.add_breakpoint(params["operator"], when=params["when"])
    except BadBreakpoint as exc:
        raise RequestError(str(exc)) from None
    return control_view(run)


@CONTROL.handles("control.remove_breakpoint")
def control_remove_breakpoint(params: dict) -> dict:
    run = _live(params)
    run.remove_breakpoint(params["breakpoint"])
    return control_view(run)


@CONTROL.handles("control.decide")
def control_decide(params: dict) -> dict:
    """``action`` on hit ``hit``; ``record`` (tagged JSON) replaces its record."""
    run = _live(params)
    hits = run.breakpoints
    index = params["hit"]
    if not 0 <= index < len(hits):
        raise LookupError(f"no hit {index} (the run has {len(hits)})")
    action = params["action"]
    try:
        if action == "replace":
            hits[index].replace(decode(params.get("record"), spark_row))
        elif action in ("skip", "resume", "stop"):
            getattr(hits[index], action)()
        else:
            raise RequestError(f"unknown action {action!r}: skip, replace, resume or stop")
    except (ValueError, RuntimeError) as exc:
        raise RequestError(str(exc)) from None
    return control_view(run)


def control_event(run: Run, data: dict) -> tuple[str, dict]:
    return "run.control", {"run": run.id, "view": control_view(run)}


CONTROL_EVENTS: dict[str, Callable[[Run, dict], tuple[str, dict]]] = {
    "control": control_event, "hit": control_event}
