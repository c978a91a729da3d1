"""Live control in the Run API: ``run.pause()``, ``run.breakpoints``, ``hit.skip()``...

``RecordedControl`` is what a run reopened from its store offers (the hits and the
quarantine, read back); ``LiveControlAPI`` adds what a run recording in this kernel can
do. Each call that changes the run goes to the run's action log as its Python call.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..executor.state import decode
from ..store import control_files as edits
from .hits import ACTIONS, Breakpoint, Hit, PauseReport

if TYPE_CHECKING:
    from .controller import LiveController


class RecordedControl:
    """Live control as recorded: the hits and the quarantine (no control: it has ended)."""

    if TYPE_CHECKING:  # the Run's
        @property
        def path(self) -> str: ...

        @property
        def status(self) -> str: ...

        @property
        def id(self) -> str: ...

    @property
    def breakpoints(self) -> list[Hit]:
        """Every breakpoint hit, in order: operator, partition, record, worker's state."""
        hits: dict[int, Hit] = {}
        for row in edits.read(self.path, "hits"):
            if row["event"] == "hit":
                hits[row["index"]] = Hit(
                    row["index"], row["kind"], row["operator"], row["partition"],
                    row["breakpoint"], record=decode(row["record"], edits.spark_row),
                    error=row.get("error"), total=row.get("total"), time=row["time"],
                    decision=row.get("decision"), input_index=row.get("input_index", -1),
                    actions=tuple(row.get("actions") or ACTIONS), refused=row.get("refused", ""))
            elif row["index"] in hits:
                hits[row["index"]].decision = row["decision"]
        return list(hits.values())

    def _skipped_at_breakpoints(self) -> list[dict]:
        """The records skipped at breakpoints (``run.quarantine()`` lists them too):
        operator, partition, index, kind, record."""
        names = self.dag.names()  # type: ignore[attr-defined]  # the Run's
        return [{"operator": names.get(e["operator"], e["operator"]),
                 "partition": e["partition"], "index": e["index"],
                 "kind": e["kind"], "record": decode(e["record"], edits.spark_row)}
                for e in edits.read(self.path, "edits") if e["action"] == "skip"]

    @property
    def paused(self) -> bool:
        return False

    def _not_live(self, what: str) -> RuntimeError:
        return RuntimeError(f"run {self.id} is {self.status}: {what} is for a run that is "
                            "recording in this kernel")

    def pause(self, timeout: float = 5.0) -> PauseReport:
        raise self._not_live("pause()")

    def resume(self, timeout: float = 5.0) -> float:
        raise self._not_live("resume()")


class LiveControlAPI(RecordedControl):
    """Live control of a run recording in this kernel (``session/live_run.py``)."""

    _actions: Any

    @property
    def _control(self) -> LiveController:
        return self.coordinator.control  # type: ignore[attr-defined]

    def _recording(self, what: str) -> LiveController:
        if self.status != "running":
            raise self._not_live(what)
        return self._control

    def pause(self, timeout: float = 5.0) -> PauseReport:
        """Every running task of the job holds between two records; returns when all have
        acknowledged (or after ``timeout`` s), with the time it took."""
        control = self._recording("pause()")
        self._actions.record("run.pause()")
        return control.pause(timeout)

    def resume(self, timeout: float = 5.0) -> float:
        """The job goes on (pending hits go on with their records); returns the seconds
        until every held task had gone on."""
        control = self._recording("resume()")
        self._actions.record("run.resume()")
        return control.resume(timeout)

    @property
    def paused(self) -> bool:
        return self.status == "running" and self._control.paused is not None

    def live_state(self, operator: str, partition: int, timeout: float = 3.0) -> dict:
        """The state of the running worker of ``operator`` on ``partition`` (best read while
        paused: it is then between two records)."""
        control = self._recording("live_state()")
        node = self.dag.node(operator)  # type: ignore[attr-defined]
        state, _ = control.live_state(node.id, partition, timeout)
        return state

    @property
    def breakpoints(self) -> list[Hit]:
        return list(self._control.hits)

    @property
    def armed_breakpoints(self) -> list[Breakpoint]:
        """The breakpoints set on this run (``armed`` false once removed or hit)."""
        return list(self._control.breakpoints.values())

    def add_breakpoint(self, operator: str, when: str) -> Breakpoint:
        """Pause the job when ``operator`` is about to take a record for which ``when`` (a
        Python expression over ``row``) is true; takes effect while the job runs."""
        control = self._recording("add_breakpoint()")
        bp = control.add(operator, when=when)
        self._actions.record(f"run.add_breakpoint({operator!r}, when={when!r})")
        return bp

    def add_global_breakpoint(self, operator: str, count_at_least: int | None = None,
                              sum_of: str | None = None,
                              at_least: float | None = None) -> Breakpoint:
        """Pause the job when ``operator`` has taken ``count_at_least`` records over all
        its partitions, or when the sum of ``sum_of`` over them reaches ``at_least``."""
        control = self._recording("add_global_breakpoint()")
        if (count_at_least is None) == (sum_of is None):
            raise ValueError("give count_at_least=N, or sum_of='expression' and at_least=X")
        if sum_of is not None:
            bp = control.add(operator, kind="sum", sum_of=sum_of, target=at_least)
            call = f"sum_of={sum_of!r}, at_least={at_least!r}"
        else:
            bp = control.add(operator, kind="count", target=count_at_least)
            call = f"count_at_least={count_at_least!r}"
        self._actions.record(f"run.add_global_breakpoint({operator!r}, {call})")
        return bp

    def remove_breakpoint(self, breakpoint: int | Breakpoint) -> None:
        bp_id = breakpoint.id if isinstance(breakpoint, Breakpoint) else breakpoint
        self._recording("remove_breakpoint()").remove(bp_id)
        self._actions.record(f"run.remove_breakpoint({bp_id})")

    def wait_for_hit(self, timeout: float = 60.0) -> Hit:
        """The oldest hit waiting for a decision; if none, the next one (the job is paused
        while a hit waits). TimeoutError after ``timeout`` s."""
        return self._control.wait_hit(timeout)

    def stop(self) -> None:
        """End the run cleanly: held workers end their tasks, its Spark jobs are
        cancelled, its status becomes ``stopped``."""
        self._recording("stop()").stop()
        self._actions.record("run.stop()")
