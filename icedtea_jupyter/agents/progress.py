"""Progress: records in and out, estimated input bytes and time, per operator and partition."""
from __future__ import annotations

import threading
import time
from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent


class ProgressCoordinator(CoordinatorAgent):
    """Keeps the latest counts of every live worker."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[tuple, dict] = {}
        self._lock = threading.Lock()

    def receive_message(self, worker: dict, payload: Any) -> None:
        key = (worker["operator"], worker["stage"], worker["partition"], worker["attempt"],
               worker["task"])
        with self._lock:
            self.live[key] = dict(payload, received=time.time())

    def latest(self) -> dict[tuple, dict]:
        with self._lock:
            return dict(self.live)


class ProgressAgent(Agent):
    """Sends the worker's counts on every heartbeat and once at the end."""

    name = "progress"
    coordinator = ProgressCoordinator

    def heartbeat(self) -> None:
        if self.context is not None:
            self.send_to_coordinator(self.context.counts())

    def finish(self) -> None:
        if self.context is not None:
            self.send_to_coordinator(self.context.counts())
