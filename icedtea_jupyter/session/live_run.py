"""``LiveRun``: a run recorded in this kernel.

It has what a run reopened from its store lacks: the coordinator that serves its workers,
the recorder that found its operators (it still holds the pipeline's RDDs, to regenerate
θ's inputs), the thread running its cell and, once that has ended, the cell's own error.
Its progress, alerts and interactions come from the coordinator's memory, while it
records and after (until the kernel stops); it takes interactions while it records, and
``session/execution.py`` ends it once.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..agents.progress import ProgressCoordinator
from ..control.api import LiveControlAPI
from ..coordinator.coordinator import Coordinator
from ..dag import Dag
from ..instrument import Recorder
from ..snapshots.history import History, Interaction, InteractionMark, marks
from ..store.full import release
from ..store.run_store import RunStore
from .run import Listener, Run


class LiveRun(LiveControlAPI, Run):
    """A run recorded in this kernel: ``coordinator(emit)`` makes its coordinator, which
    tells the run's views through ``emit``; ``interesting`` is the ``--interesting`` name."""

    def __init__(self, store: RunStore, manifest: dict, dag: Dag,
                 coordinator: Callable[[Listener], Coordinator],
                 interesting: str | None = None) -> None:
        super().__init__(store, manifest, dag)
        self._coordinator = coordinator(self.emit)
        self.recorder = Recorder(dag, self._coordinator.run_spec, interesting)
        self._coordinator.control.record_action = self._actions.record
        self._coordinator.control.on_stop = self._cancel_jobs
        self.thread: threading.Thread | None = None  # runs the cell: start()
        self._manifest_lock = threading.Lock()
        self._operators_saved: set[int] = set()  # whose workers the manifest's DAG has
        self.subscribe(self._save_new_operators)
        self.cell_exception: BaseException | None = None  # the cell's own error, once ended
        self.namespace: dict | None = None  # the cell's globals (a re-run, s.mitigate())
        self.tracker: Any = None  # versions: runs the cell's actions (versions/tracker.py)
        # while the run's stages' tasks are being put in the store: set once they are
        # (session/stage_loads.py); None when nothing is on its way
        self.stage_tasks_kept: threading.Event | None = None

    @property
    def coordinator(self) -> Coordinator:
        return self._coordinator

    def start(self, cell: Callable[[], None]) -> None:
        """Run ``cell`` (the cell's code, recorded) in the run's own thread: the kernel
        stays free for the panel's and the sidebar's messages while the job runs."""
        self.thread = threading.Thread(target=cell, name=f"icedtea-run-{self.id}", daemon=True)
        self.thread.start()

    def _cancel_jobs(self) -> None:
        """``run.stop()``: cancel the Spark jobs of this run (its job group)."""
        from pyspark import SparkContext

        sc = SparkContext._active_spark_context
        if sc is not None:
            sc.cancelJobGroup(self.id)

    def end(self, status: str, error: dict | None, warnings: list[str]) -> None:
        """The run has ended (``"finished"``, ``"failed"`` or ``"stopped"``): the manifest
        says so and ``wait()`` returns."""
        self.error = error
        self.warnings = warnings
        self.manifest.update(status=status, ended=time.time(), error=error, warnings=warnings,
                             dag=self.dag.to_json())
        try:
            with self._manifest_lock:
                self.store.write_manifest(self.manifest)
        except OSError as exc:  # the run has ended all the same: wait() must return
            self.warnings.append(f"the run's manifest could not be written to "
                                 f"{self.store.path}: {exc}")
        finally:
            release(self.store.path)  # the reserve kept room for this write: done with
            self._done.set()
        self.emit("run", {"status": status})

    def _save_new_operators(self, kind: str, data: dict) -> None:
        """When an operator's first worker starts, the manifest gets the DAG as it is:
        a kernel killed mid-run leaves a store whose operators can be read."""
        operator = data.get("worker", {}).get("operator") if kind == "worker" else None
        if operator is None or operator in self._operators_saved or self.status != "running":
            return
        with self._manifest_lock:
            self._operators_saved.add(operator)
            if self.status == "running" and not self.store.full:
                self.store.write_manifest(dict(self.manifest, dag=self.dag.to_json()))

    # --- what the coordinator holds -----------------------------------------------------
    def _alert_list(self) -> list[dict]:
        return list(self._coordinator.alerts)

    def _worker_states(self) -> list[dict]:
        coordinator = self._coordinator
        progress = coordinator.agent("progress")
        live = progress.latest() if isinstance(progress, ProgressCoordinator) else {}
        states = []
        for key, state in coordinator.worker_states():
            counts = live.get(key, {})
            if state["status"] == "running":
                seconds = counts.get("seconds") or 0
                state.update(records_in=counts.get("records_in", 0),
                             records_out=counts.get("records_out", 0),
                             bytes_in=counts.get("bytes_in", 0), seconds=seconds,
                             rate=(counts.get("records_in", 0) / seconds) if seconds else 0.0)
            states.append(state)
        return states

    def history(self) -> History:
        interactions, entries = self._coordinator.book.copies()
        workers = [state for _, state in self._coordinator.worker_states()]
        return History(interactions, entries, self.dag, workers)

    def interaction_marks(self) -> list[InteractionMark]:
        return marks(self._coordinator.book.interaction_copies())

    def interact(self, timeout: float = 2.0) -> Interaction:
        if self.status != "running":
            raise self._not_recording()
        index = self._coordinator.interact()
        self._actions.record("run.interact()")
        self._coordinator.book.wait(index, timeout)
        return self.history().interactions()[index]

    def upstream_rdd(self, operator: int) -> Any:
        return self.recorder.upstreams.get(operator)

    def output_rdd(self, operator: int) -> Any:
        return self.recorder.outputs.get(operator)

    def collected(self, operator: int) -> list | None:
        return None if self.tracker is None else self.tracker.collected.get(operator)

    def rebuild_parts(self) -> Any:
        """What ``Trace.replay`` re-runs: the operators as Spark ran them, the shuffles."""
        return self.recorder
