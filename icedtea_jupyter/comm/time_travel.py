"""Time-travel requests and events of the ``icedtea`` comm: interactions, snapshots,
the run's debugger (jumps and steps), the action log.

Handlers call only the Run and Debugger API; user values travel as the tagged JSON of
``executor.state.encode``. Jumps and steps run on a thread of their comm channel: every
debugger view is read under ``dbg.lock``, so no jump or step from the panel or the
user's code interleaves with it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..executor.state import encode, encode_described
from ..session.actions import WIRE
from ..session.run import Run
from .handlers import MethodTable, jsonable, run_of
from .messages import RequestError

TIME_TRAVEL = MethodTable()  # interactions, snapshots, the debugger

PENDING_LIMIT = 20  # records shown per waiting queue
INTERACTION_FIELDS = ("index", "time", "trigger", "complete", "latency", "record")


# --- JSON views ---------------------------------------------------------------------------
def interaction_json(interaction: Any) -> dict:
    """An ``Interaction`` (or the coordinator's dict of one) as the comm sends it."""
    get: Callable[[str], Any] = (interaction.get if isinstance(interaction, dict)
                                 else lambda name: getattr(interaction, name))
    data = {name: get(name) for name in INTERACTION_FIELDS}
    data["complete"] = bool(data["complete"])
    data["record"] = encode_described(data["record"])  # the worker's description of it
    return jsonable(data)


def changed_json(changed: dict) -> dict:
    """A ``changed()`` result with its keys as tagged JSON."""
    return {"variables": changed["variables"], "removed": changed["removed"],
            "keys": {name: [encode(k) for k in keys] for name, keys in changed["keys"].items()}}


def debug_view(run: Run, dbg: Any) -> dict:
    """The DebugView of the run's debugger (it must have jumped)."""
    with dbg.lock:
        snapshot = dbg.snapshot()
        pending = dbg.pending(limit=PENDING_LIMIT)
        options = dbg.step_options()
        chain = dbg.chain
    return {"run": run.id, "index": snapshot.index, "step": snapshot.step,
            "partition": snapshot.partition, "operator": snapshot.operator, "chain": chain,
            "workers": snapshot.workers(),
            "pending": {str(p): {op: _queue(row) for op, row in ops.items()}
                        for p, ops in pending.items()},
            "options": {"step_over": options["step_over"], "step_into": options["step_into"],
                        "refused": {str(p): why for p, why in options["refused"].items()},
                        "ended": list(options["ended"])},
            "outputs": [encode(record) for record in snapshot.outputs],
            "notes": list(snapshot.notes), "preparing": snapshot.preparing,
            "started_from": snapshot.started_from, "failure": snapshot.failure}


def _queue(row: dict) -> dict:
    queue = {"count": row["count"], "records": [encode(r) for r in row["records"]],
             "scopes": list(row["scopes"])}
    if "rows" in row:  # a batch function's or a grouped map's records: their rows
        queue["rows"] = [[int(start), int(stop)] for start, stop in row["rows"]]
    return queue


# --- helpers ------------------------------------------------------------------------------
def _debugger(run: Run) -> Any:
    try:
        return run.debugger()
    except RuntimeError as exc:  # still running: debug it once it has ended
        raise RequestError(str(exc)) from None


def _theta_partition(dbg: Any, partition: int) -> None:
    """Unknown partitions are ``not_found`` (a known one may still refuse the step)."""
    theta = dbg.chain[0]
    if partition not in dbg.partitions(theta):
        raise LookupError(f"θ ({theta!r}) has no partition {partition} "
                          f"(partitions: {dbg.partitions(theta)})")


def _step(params: dict, move: Callable[[Any], Any]) -> dict:
    run = run_of(params)
    dbg = _debugger(run)
    with dbg.lock:
        _theta_partition(dbg, params["partition"])
        move(dbg)
        return debug_view(run, dbg)


# --- interactions and snapshots -------------------------------------------------------------
@TIME_TRAVEL.handles("run.interactions")
def run_interactions(params: dict) -> dict:
    run = run_of(params)
    # the raw records: building Interaction objects computes every worker's counts
    return {"run": run.id, "interactions": [interaction_json(i) for i in run.history().raw]}


@TIME_TRAVEL.handles("run.interact")
def run_interact(params: dict) -> dict:
    run = run_of(params)
    try:
        interaction = run.interact()
    except RuntimeError as exc:  # the run is not recording
        raise RequestError(str(exc)) from None
    return {"run": run.id, "interaction": interaction_json(interaction)}


@TIME_TRAVEL.handles("run.snapshot")
def run_snapshot(params: dict) -> dict:
    run = run_of(params)
    snapshot = run.snapshot(params["index"])
    return {"run": run.id, "index": snapshot.index, "trigger": snapshot.interaction.trigger,
            "workers": jsonable(snapshot.workers())}


@TIME_TRAVEL.handles("run.state")
def run_state(params: dict) -> dict:
    snapshot = run_of(params).snapshot(params["index"])
    operator, partition = params["operator"], params["partition"]
    worker = snapshot.worker(operator, partition)
    return {"state": worker.encoded, "status": worker.status, "count": worker.count,
            "changed": changed_json(snapshot.changed(operator, partition))}


@TIME_TRAVEL.handles("run.page")
def run_page(params: dict) -> dict:
    snapshot = run_of(params).snapshot(params["index"])
    page = snapshot.page(params["operator"], params["partition"], params["variable"],
                         max(params["start"], 0), max(params["size"], 0))
    return dict(page, items=[encode(item) for item in page["items"]])


# --- the run's debugger ------------------------------------------------------------------------
@TIME_TRAVEL.handles("debug.view")
def debug_view_request(params: dict) -> dict | None:
    run = run_of(params)
    dbg = run.current_debugger
    if dbg is None or dbg.current is None:
        return None
    return debug_view(run, dbg)


@TIME_TRAVEL.handles("debug.jump")
def debug_jump(params: dict) -> dict:
    run = run_of(params)
    dbg = _debugger(run)
    with dbg.lock:
        dbg.jump(params["index"])
        return debug_view(run, dbg)


@TIME_TRAVEL.handles("debug.jump_to_failure")
def debug_jump_to_failure(params: dict) -> dict:
    """A failed run: θ's chain just before the culprit record (``dbg.jump_to_failure()``)."""
    run = run_of(params)
    dbg = _debugger(run)
    with dbg.lock:
        dbg.jump_to_failure()
        return debug_view(run, dbg)


@TIME_TRAVEL.handles("debug.step_over")
def debug_step_over(params: dict) -> dict:
    return _step(params, lambda dbg: dbg.step_over(partition=params["partition"]))


@TIME_TRAVEL.handles("debug.step_into")
def debug_step_into(params: dict) -> dict:
    def move(dbg: Any) -> None:
        if params["operator"] not in dbg.chain:
            raise LookupError(f"the debugger does not replay {params['operator']!r} (it "
                              f"replays {', '.join(dbg.chain)})")
        dbg.step_into(partition=params["partition"], operator=params["operator"])
    return _step(params, move)


@TIME_TRAVEL.handles("debug.step_out")
def debug_step_out(params: dict) -> dict:
    return _step(params, lambda dbg: dbg.step_out(partition=params["partition"]))


@TIME_TRAVEL.handles("debug.state")
def debug_state(params: dict) -> dict:
    snapshot = _debugger(run_of(params)).snapshot()
    operator, partition = params["operator"], params["partition"]
    return {"state": snapshot.encoded_state(operator, partition),
            "changed": changed_json(snapshot.changed(operator, partition))}


@TIME_TRAVEL.handles("debug.cancel")
def debug_cancel(params: dict) -> dict:
    """Stop the run's jump or step in progress (the replay process working on it)."""
    dbg = run_of(params).current_debugger
    return {"cancelled": bool(dbg is not None and dbg.cancel())}


@TIME_TRAVEL.handles("debug.progress")
def debug_progress(params: dict) -> dict:
    """Where the replay process stands in placing its fork checkpoints (None: no debugger)."""
    dbg = run_of(params).current_debugger
    return {"progress": dbg.progress if dbg is not None else None}


@TIME_TRAVEL.handles("run.actions")
def run_actions(params: dict) -> dict:
    run = run_of(params)
    return {"run": run.id, "actions": [{k: action[k] for k in WIRE}
                                       for action in run.actions]}  # the text stays here


# --- events: run events forwarded to the frontends ---------------------------------------------
def interaction_event(run: Run, data: dict) -> tuple[str, dict]:
    return "run.interaction", {"run": run.id, "interaction": interaction_json(data["interaction"])}


def moved_event(run: Run, data: dict) -> tuple[str, dict]:
    return "debug.moved", {"run": run.id, "view": debug_view(run, run.current_debugger)}


def action_event(run: Run, data: dict) -> tuple[str, dict]:
    return "run.action", {"run": run.id, "action": data}


def preparing_event(run: Run, data: dict) -> tuple[str, dict]:
    return "debug.preparing", {"run": run.id, "progress": data}


# run event kind -> the comm event it becomes
EVENTS: dict[str, Callable[[Run, dict], tuple[str, dict]]] = {
    "interaction": interaction_event, "moved": moved_event, "action": action_event,
    "replay": preparing_event}
