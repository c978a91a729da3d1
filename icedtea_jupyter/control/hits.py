"""What the user sees of live control: breakpoints, their hits, pause reports."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .controller import LiveController

ACTIONS = ("skip", "replace", "resume", "stop")


@dataclass
class PauseReport:
    """``run.pause()``'s answer: how long until every running task held (``seconds``),
    the tasks that acknowledged and those that had not within the timeout."""

    seconds: float
    acknowledged: int
    pending: int = 0

    @property
    def complete(self) -> bool:
        return self.pending == 0

    def __repr__(self) -> str:
        late = f", {self.pending} not yet" if self.pending else ""
        return (f"<paused: {self.acknowledged} task(s) held in {self.seconds * 1000:.1f} ms"
                f"{late}>")


@dataclass
class Breakpoint:
    """A breakpoint on ``operator``: ``kind`` ``condition`` (``when``, a Python expression
    over ``row``), ``count`` or ``sum`` (global: over all partitions, ``target``)."""

    id: int
    operator: str
    kind: str
    when: str | None = None
    sum_of: str | None = None
    target: float | None = None
    armed: bool = True
    hits: int = 0

    def to_json(self) -> dict:
        return {"id": self.id, "operator": self.operator, "kind": self.kind, "when": self.when,
                "sum_of": self.sum_of, "target": self.target, "armed": self.armed,
                "hits": self.hits}

    def __repr__(self) -> str:
        what = self.when if self.kind == "condition" else \
            f"{self.kind}{'(' + self.sum_of + ')' if self.sum_of else ''} >= {self.target:g}"
        return f"<Breakpoint {self.id} on {self.operator!r}: {what}{'' if self.armed else ' (off)'}>"


@dataclass
class Hit:
    """A breakpoint met: the operator, the partition, the record and the worker's state
    (a conditional or exception breakpoint), or the total reached (a global one).
    ``skip()``, ``replace(record)``, ``resume()`` or ``stop()`` decide, once: those in
    ``actions`` (a whole-partition function that raised: resume and stop, ``refused``
    says why)."""

    index: int
    kind: str  # condition | error | count | sum
    operator: str
    partition: int | None
    breakpoint: int | None
    record: Any = None
    state: dict = field(default_factory=dict)
    error: dict | None = None
    total: float | None = None
    time: float = 0.0
    decision: str | None = None
    task: int = -1
    hit: int = -1  # the worker's number for it
    input_index: int = -1  # the record's position in the operator's input
    actions: tuple[str, ...] = ACTIONS  # the decisions this hit allows ...
    refused: str = ""  # ... and why not the others
    _controller: LiveController | None = field(default=None, repr=False, compare=False)

    @property
    def pending(self) -> bool:
        return self.decision is None

    def skip(self) -> None:
        """Drop the record (kept in the run store's quarantine) and go on."""
        self._decide("skip")

    def replace(self, record: Any) -> None:
        """Feed ``record`` to the operator instead, and go on."""
        self._decide("replace", record)

    def resume(self) -> None:
        """Go on with the record (after an exception: the task fails, as without
        ``--on-error pause``)."""
        self._decide("resume")

    def stop(self) -> None:
        """End the run cleanly: its job is cancelled and its status is ``stopped``."""
        self._decide("stop")

    def _decide(self, action: str, record: Any = None) -> None:
        if self._controller is None:
            raise RuntimeError("this hit belongs to a run that is no longer recording")
        self._controller.decide(self, action, record)

    def to_json(self) -> dict:
        from ..executor.state import encode, encode_state

        return {"index": self.index, "kind": self.kind, "operator": self.operator,
                "partition": self.partition, "breakpoint": self.breakpoint,
                "record": encode(self.record), "state": encode_state(self.state),
                "error": self.error, "total": self.total, "time": self.time,
                "decision": self.decision, "input_index": self.input_index,
                "actions": list(self.actions), "refused": self.refused}
