"""Global COUNT and SUM breakpoints, by Amber's protocol of local targets.

The condition is over all partitions of one operator: its records taken (COUNT) or the
sum of an expression over them (SUM) reaches ``target``. Each running worker of the
operator gets a local target, so that the local targets together never pass the
remainder; a worker that reaches its own target holds and reports. The coordinator then
asks every other running worker for its tally (each holds where it is, between two
records, and answers), adds the final tallies of the workers that ended, and either
declares the hit or splits what remains among the running workers and lets them go on.
A worker starts with a target of 0: its first record reports, and the split includes it.

How exact: a COUNT stops with exactly ``target`` records taken by the operator (each
worker holds at its target, and the targets never pass the remainder), if the input has
that many. A SUM stops at the record whose value makes the sum reach the target: past it
by less than one record's value per running worker. Amber waits a time τ before asking;
we ask at once (a worker's answer costs one round trip on the control channel).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

SYNC_TIMEOUT = 2.0  # seconds to wait for the running workers' tallies


class GlobalBreakpoint:
    """The coordinator's side of one global breakpoint on operator ``op``."""

    def __init__(self, bp: int, op: int, kind: str, target: float,
                 send: Callable[[dict], int], running: Callable[[int], set],
                 on_hit: Callable[[GlobalBreakpoint, float], None]) -> None:
        self.id, self.op, self.kind, self.target = bp, op, kind, target
        self.send, self.running, self.on_hit = send, running, on_hit
        self.tallies: dict[int, float] = {}  # running task -> its last tally
        self.finals: dict[int, float] = {}  # ended task -> its final tally
        self.answered: set[int] = set()  # tasks that answered since the last query
        self.seq = 0
        self.syncs = 0
        self.hit_total: float | None = None
        self._cond = threading.Condition()
        self._syncing = False
        self._again = False

    @property
    def done(self) -> bool:
        return self.hit_total is not None

    def report(self, task: int, value: float, reached: bool, final: bool) -> None:
        """A worker's tally (in the server's reader thread: never blocks)."""
        with self._cond:
            if final:
                self.finals[task] = value
                self.tallies.pop(task, None)
            else:
                self.tallies[task] = value
            self.answered.add(task)
            self._cond.notify_all()
            if not reached or self.done:
                return
            if self._syncing:
                self._again = True
                return
            self._syncing = True
        threading.Thread(target=self._sync, name=f"icedtea-global-{self.id}",
                         daemon=True).start()

    def _sync(self) -> None:
        while True:
            self._sync_once()
            with self._cond:
                if not self._again or self.done:
                    self._syncing = False
                    return
                self._again = False

    def _sync_once(self) -> None:
        """Ask every running worker for its tally, then hit or split what remains."""
        self.syncs += 1
        with self._cond:
            self.answered = set()
        self.send({"type": "query", "breakpoint": self.id, "operator": self.op})
        deadline = time.monotonic() + SYNC_TIMEOUT
        with self._cond:
            while not self.running(self.op) <= self.answered | set(self.finals):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, 0.05))
            running = sorted(t for t in self.running(self.op) if t in self.tallies)
            total = sum(self.finals.values()) + sum(self.tallies[t] for t in running)
            if total >= self.target:
                self.hit_total = total
            shares = self._split(self.target - total, len(running))
        if self.hit_total is not None:
            self.on_hit(self, total)
            return
        for task, share in zip(running, shares):
            self.seq += 1
            self.send({"type": "target", "breakpoint": self.id, "task": task, "seq": self.seq,
                       "target": self.tallies[task] + share})

    def _split(self, remaining: float, workers: int) -> list[float]:
        """``remaining`` in ``workers`` local targets that together never pass it; a COUNT's
        are whole records (the first ``remaining % workers`` get one more)."""
        if workers == 0:
            return []
        if self.kind == "sum":
            return [remaining / workers] * workers
        base, extra = divmod(int(remaining), workers)
        return [base + (1 if i < extra else 0) for i in range(workers)]
