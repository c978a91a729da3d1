"""The runs this kernel knows: recorded here, or reopened from a store."""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

from ..dag import Dag
from ..replay import lifetime
from ..store.run_store import RunStore
from .interrupted import kernel_alive, mark_interrupted
from .run import Run

LOG = logging.getLogger("icedtea_jupyter")

_RUNS: list[Run] = []
_LOCK = threading.Lock()
_ADDED: list[Callable[[Run], None]] = []  # callbacks(run) for views that list runs


def add(run: Run) -> None:
    with _LOCK:
        _RUNS.append(run)
        callbacks = list(_ADDED)
    for callback in callbacks:
        try:
            callback(run)
        except Exception:  # a broken view must not lose the run: logged, not raised
            LOG.exception("icedtea: a view failed to take run %s", run.id)


def forget(run: Run) -> None:
    """Drop a deleted run from this kernel's list; its replay processes end."""
    with _LOCK:
        if run in _RUNS:
            _RUNS.remove(run)
    lifetime.close_debugger(run)


def close_replaced(run: Run) -> list[Run]:
    """``run`` re-runs a cell: the earlier runs of that cell in this kernel end their
    replay processes (their ``debugger()`` starts them again). Returns those runs."""
    cell = _cell(run)
    replaced = [other for other in runs() if other is not run and cell and _cell(other) == cell]
    for other in replaced:
        lifetime.close_debugger(other)
    return replaced


def _cell(run: Run) -> tuple[str, str] | None:
    """The cell a run records, as its versions know it: its store's root and its key."""
    cell = (run.manifest.get("version") or {}).get("cell")
    return (os.path.dirname(run.path), cell) if cell else None


def on_added(callback: Callable[[Run], None]) -> None:
    with _LOCK:
        _ADDED.append(callback)


def runs() -> list[Run]:
    """Every run of this kernel, oldest first (recorded here or reopened)."""
    with _LOCK:
        return list(_RUNS)


def last_run() -> Run:
    """The most recent run; raises LookupError when there is none."""
    with _LOCK:
        if not _RUNS:
            raise LookupError("no icedtea run yet: run a cell with %%icedtea first, "
                              "or reopen one with icedtea_jupyter.open_run(path)")
        return _RUNS[-1]


DEBUGGING_CALLS = ("dbg.", "run.snapshot(", "run.trace_")  # what debugs a run that ended


def debugged_run() -> Run | None:
    """The run being debugged: the one whose debugger moved, or whose states or lineage
    were read, most recently (from the API, the sidebar or the panel); None if none was."""
    latest: tuple[float, Run] | None = None
    for run in runs():
        when = next((a["time"] for a in reversed(run.actions)
                     if a["call"].startswith(DEBUGGING_CALLS)), None)
        if when is not None and (latest is None or when >= latest[0]):
            latest = (when, run)
    return latest[1] if latest is not None else None


def get(run_id: str) -> Run:
    for run in runs():
        if run.id == run_id:
            return run
    raise LookupError(f"no run {run_id!r} in this kernel")


def _still_running_or_interrupted(store: RunStore, manifest: dict) -> dict:
    """A manifest that says ``running``: its kernel still records it (the run is shown as
    it stands), or died (the store is marked interrupted)."""
    alive = kernel_alive(manifest.get("kernel"))
    if alive:
        pid = manifest["kernel"]["pid"]
        return dict(manifest, warnings=list(manifest.get("warnings") or []) + [
            f"Still being recorded by the kernel with pid {pid}: shown as it stands now."])
    if alive is False:
        return mark_interrupted(store, manifest)
    return dict(manifest, status="interrupted", warnings=list(manifest.get("warnings") or [])
                + ["The kernel that recorded this run stopped before it ended (it ran on "
                   "another machine, or named no process: the store is left as it is)."])


def open_run(path: str) -> Run:
    """Reopen a run from its store directory (for example after a kernel restart)."""
    path = os.path.abspath(os.path.expanduser(path))
    for run in runs():
        if run.path == path:
            return run
    store = RunStore.open(path)
    manifest = store.read_manifest()
    if manifest.get("status") == "running":
        manifest = _still_running_or_interrupted(store, manifest)
    run = Run(store, manifest, Dag.from_json(manifest.get("dag", {})))
    add(run)
    return run
