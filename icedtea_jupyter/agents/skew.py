"""Skew: the coordinator's side of the workers' key counts (``--skew``).

The key-partitioned workers' ``SkewCounter`` (``executor/skew.py``) sends its sketch
about once a second and when it ends; this keeps the latest of each task attempt, for
``run.skew(op)`` while the run records (the store has the final ones).
"""
from __future__ import annotations

import threading
import time
from typing import Any

from ..coordinator.agent import CoordinatorAgent


class SkewCoordinator(CoordinatorAgent):
    """The latest sketch of every key-counting worker, keyed like the progress agent's."""

    def __init__(self) -> None:
        super().__init__()
        self.sketches: dict[tuple, dict] = {}
        self._lock = threading.Lock()
        self.updated = 0.0
        self.run: Any = None

    def init(self, run: Any) -> None:
        self.run = run  # told of each sketch: the sidebar's live skew view fetches again

    def receive_message(self, worker: dict, payload: Any) -> None:
        if not isinstance(payload, dict):
            return
        key = (worker["operator"], worker["stage"], worker["partition"], worker["attempt"],
               worker["task"])
        with self._lock:
            self.sketches[key] = dict(payload, received=time.time())
            self.updated = time.time()
        if self.run is not None:
            self.run.emit("skew", {"operator": worker["operator"]})

    def latest(self) -> dict[tuple, dict]:
        with self._lock:
            return dict(self.sketches)
