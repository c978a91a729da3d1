"""The coordinator's side of interactions: ordering them, announcing them, collecting
the snapshots workers send, and keeping both in the run store as they arrive.

Both are JSON-lines files, appended to, so nothing recorded is lost on a crash: one
line per interaction as it is requested, one per worker report (count, status, state
delta); at the end, the final list of interactions (``store/layout.py``).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..snapshots.deltas import PackedDelta
from ..store import layout
from ..store.full import is_full
from ..store.run_store import append_encoded, encode_lines, write_json

INITIAL, MANUAL, PERIODIC, CONDITION = "initial", "manual", "periodic", "condition"
PINNED = "pinned"  # --interact-at: taken at θ's given counts (snapshots/pinned.py)


class RecordingStopped(RuntimeError):
    """An interaction asked for after the run store filled up: none is recorded."""


class RunFinishing(RuntimeError):
    """An interaction asked for once the run began to conclude (``close``): none is
    taken, so every interaction listed is one the store keeps."""


class InteractionBook:
    """Interactions in the order the coordinator received them (IcedTea Def. 4.1)."""

    def __init__(self, store_path: str, theta_workers: Callable[[], set],
                 broadcast: Callable[[dict], int], started: float,
                 checkpoint: Callable[[int, float], bool] | None = None,
                 on_change: Callable[[dict], None] | None = None) -> None:
        self.path = store_path
        self.on_change = on_change  # (a copy of the interaction) when requested and completed
        self.checkpoint = checkpoint  # (θ workers running, now) -> checkpoint here?
        self.theta_workers = theta_workers  # keys of θ's running workers
        self.broadcast = broadcast
        self.on_full: Callable[[OSError], None] | None = None  # the store could not be written
        self.stopped = False  # recording stopped: the store is full
        self.closed = False  # the run is concluding: no new interaction (``close``)
        self.saved = False  # the final list is written (``save``)
        self.interactions: list[dict] = []
        self.entries: list[dict] = []
        self._expected: dict[int, set] = {}
        self._pins: dict[int, set[int]] = {}  # pinned interaction -> partitions yet to report
        self._named: dict[int, set[int]] = {}  # pinned interaction -> partitions it names
        self.theta_operator: Callable[[], int | None] = lambda: None  # θ's id, once known
        self._cond = threading.Condition()
        self._files_lock = threading.Lock()
        self._announce_lock = threading.Lock()
        self._add({"index": 0, "time": started, "trigger": INITIAL, "record": None,
                   "latency": 0.0, "complete": True})

    def _add(self, interaction: dict) -> None:
        self.interactions.append(interaction)
        self._append(layout.interactions_log_path(self.path), interaction)

    def _append(self, path: str, *rows: dict) -> None:
        """Log ``rows``; once the store is full, nothing more (``on_full`` is told)."""
        self._append_encoded(path, encode_lines(*rows))

    def _append_encoded(self, path: str, lines: list[str]) -> None:
        with self._files_lock:
            if self.stopped:
                return
            try:
                append_encoded(path, lines)
            except OSError as exc:
                if not is_full(exc):
                    raise
                self.stopped = True
                if self.on_full is not None:
                    self.on_full(exc)

    def pin(self, points: list[dict]) -> None:
        """``--interact-at``: interactions 1..K now, one per point; θ's workers take each
        at its counts (``executor/pins.py``), then the ones it does not name report
        where they are (``_release``)."""
        with self._cond:
            for point in points:
                index = len(self.interactions)
                self._pins[index], self._named[index] = set(point), set(point)
                self._add({"index": index, "time": self.interactions[0]["time"],
                           "trigger": PINNED, "record": None, "latency": None,
                           "complete": False, "at": {str(p): c for p, c in point.items()}})

    def _pinned_reported(self, key: tuple, index: int | None = None) -> list[int]:
        """θ's worker ``key`` reported at pinned interaction ``index`` (None: it ended):
        the pinned interactions every named partition has now reported."""
        if key[0] != self.theta_operator():
            return []
        released = []
        for pinned in [index] if index is not None else list(self._pins):
            waiting = self._pins.get(pinned)
            if waiting is not None and key[2] in waiting:
                waiting.discard(key[2])
                if not waiting:
                    del self._pins[pinned]
                    released.append(pinned)
        return released

    def _release(self, index: int) -> None:
        """Every partition a pinned interaction names has reported: θ's other running
        workers report where they are now."""
        with self._cond:
            expected = {k for k in self.theta_workers() if k[2] not in self._named[index]}
            self._expected[index] = expected
            now = time.time()
            self.interactions[index]["time"] = now
            self._append(layout.interactions_log_path(self.path), {"index": index, "time": now})
        self.broadcast({"type": "interact", "index": index, "trigger": PINNED,
                        "request": None, "origin": None, "checkpoint": False})
        with self._cond:
            if not expected:
                self._complete(index)
                self._cond.notify_all()
        self._announce([index])

    def request(self, trigger: str, record: Any = None, origin: int | None = None,
                request: int | None = None) -> int:
        """Assign the next index, announce it to every worker; returns the index.
        Raises RecordingStopped once the store is full."""
        if self.stopped:
            raise RecordingStopped("no interaction: recording stopped, the run store is full")
        with self._cond:
            self._refuse_if_closed()
            index = len(self.interactions)
            expected = set(self.theta_workers())
            self._expected[index] = expected
            now = time.time()
            checkpoint = bool(self.checkpoint and expected and self.checkpoint(len(expected), now))
            self._add({"index": index, "time": now, "trigger": trigger, "record": record,
                       "latency": None, "complete": not expected, "checkpoint": checkpoint})
        self.broadcast({"type": "interact", "index": index, "trigger": trigger,
                        "request": request, "origin": origin, "checkpoint": checkpoint})
        self._announce([index])
        return index

    def close(self) -> None:
        """The run is concluding: later requests are refused (``RunFinishing``); those
        already taken stay, and ``save`` keeps them."""
        with self._cond:
            self.closed = True

    def _refuse_if_closed(self) -> None:
        if self.closed:
            last = len(self.interactions) - 1
            raise RunFinishing(f"the run is finishing: its last interaction is I{last}; no "
                               "interaction is taken once a run concludes. When it has "
                               "ended, look at one with run.snapshot(k) or "
                               "run.debugger().jump(k)")

    def on_snapshots(self, reports: list[tuple[dict, tuple]]) -> None:
        """Workers' snapshot messages, with their worker keys, in the order sent."""
        entries = [{k: v for k, v in message.items() if k != "type"} for message, _ in reports]
        lines = encode_lines(*entries)  # encoded once: for the store and, packed, the history
        self._append_encoded(layout.snapshots_path(self.path), lines)
        for entry, line in zip(entries, lines):  # kept in memory for the live history
            if "delta" in entry:
                entry["delta"] = PackedDelta.of_line(line)
        completed, released = [], []
        with self._cond:
            for entry, (message, key) in zip(entries, reports):
                self.entries.append(entry)
                index = message["index"]
                if index in self._pins and message["status"] == "running":
                    released += self._pinned_reported(key, index)
                expected = self._expected.get(index)
                if expected is not None and key in expected and message["status"] == "running":
                    expected.discard(key)
                    if not expected and self._complete(index):
                        completed.append(index)
            self._cond.notify_all()
        self._announce(completed)
        for index in released:
            self._release(index)

    def worker_ended(self, key: tuple) -> None:
        """A θ worker that ends before it reported can no longer hold up an interaction."""
        completed = []
        with self._cond:
            released = self._pinned_reported(key)
            for index, expected in self._expected.items():
                if key in expected:
                    expected.discard(key)
                    if not expected and self._complete(index):
                        completed.append(index)
            self._cond.notify_all()
        self._announce(completed)
        for index in released:
            self._release(index)

    def _complete(self, index: int) -> bool:
        """Mark ``index`` complete; False if it already was."""
        interaction = self.interactions[index]
        if interaction["complete"]:
            return False
        interaction["complete"] = True
        interaction["latency"] = time.time() - interaction["time"]
        self._append(layout.interactions_log_path(self.path),  # a killed kernel's run
                     {"index": index, "complete": True, "latency": interaction["latency"]})
        if self.saved:  # a late report: the saved list says so too
            self._write_final()
        return True

    def _announce(self, indices: list[int]) -> None:
        """Tell ``on_change`` of each interaction as it is now (outside the book's lock;
        one at a time, so the last word on an interaction is its latest state)."""
        if self.on_change is None:
            return
        for index in indices:
            with self._announce_lock:
                with self._cond:
                    interaction = dict(self.interactions[index])
                self.on_change(interaction)

    def wait(self, index: int, timeout: float) -> bool:
        """Until every θ worker running at the request has reported; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.interactions[index]["complete"]:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def copies(self) -> tuple[list[dict], list[dict]]:
        """Consistent copies of the interactions and the workers' reports so far."""
        with self._cond:
            return [dict(i) for i in self.interactions], list(self.entries)

    def interaction_copies(self) -> list[dict]:
        """Copies of the interactions so far, without the workers' reports."""
        with self._cond:
            return [dict(i) for i in self.interactions]

    def save(self) -> None:
        """The final list, with latencies, beside the append-only log; the book is
        closed (``close``) from then on. A report that completes an interaction later
        (a worker's, before the server closes) writes the list again (``_complete``)."""
        with self._cond:
            self.closed = self.saved = True
            self._write_final()

    def _write_final(self) -> None:
        """Write the final list (the book's lock held: the last write has the last word)."""
        try:
            write_json(layout.interactions_path(self.path), self.interactions)
        except OSError as exc:
            if not is_full(exc):
                raise
            if self.on_full is not None:  # the log stays, and the store reads it instead
                self.on_full(exc)


class PeriodicInteractions:
    """``--interact-every S``: an interaction every S seconds while θ has running workers."""

    def __init__(self, book: InteractionBook, every: float) -> None:
        self.book, self.every = book, every
        self._stop = threading.Event()
        threading.Thread(target=self._loop, name="icedtea-periodic", daemon=True).start()

    def _loop(self) -> None:
        while not self._stop.wait(self.every) and not self.book.stopped:
            if self.book.theta_workers():
                try:
                    self.book.request(PERIODIC)
                except (RecordingStopped, RunFinishing):
                    return

    def stop(self) -> None:
        self._stop.set()

