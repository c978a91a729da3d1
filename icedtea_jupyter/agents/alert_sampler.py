"""Alerts that may come by the million, sampled: the first few sent with their records,
the rest counted and sent as one alert at most every second (its ``count`` says how
many), and at the worker's end."""
from __future__ import annotations

import time
from typing import Any

from ..executor.agent import Agent

SAMPLE = 5  # records sent per check and worker
FLUSH_PERIOD = 1.0  # seconds between two alerts of counted failures


class AlertSampler:
    """Per check of one agent on one worker: ``add`` a failing record, ``flush`` the
    counted rest. Every alert carries ``count``: their sum is the number of failures."""

    def __init__(self, agent: Agent, check: str, sample: int = SAMPLE) -> None:
        self.agent, self.check, self.sample = agent, check, sample
        self.sent = 0  # alerts sent with their record
        self.failed = 0  # every failure
        self.pending = 0  # failures counted, not yet sent
        self.flushed = 0.0  # when they were last sent

    def add(self, message: str, record: Any, **fields: Any) -> None:
        self.failed += 1
        if self.sent < self.sample:
            self.sent += 1
            self.agent.alert(message, record=record, check=self.check, **fields)
        else:
            self.pending += 1

    def flush(self, final: bool = False) -> None:
        """Send the failures counted since the last flush, as one alert (not within a
        second of the last one, unless ``final``)."""
        now = time.monotonic()
        if self.pending and (final or now - self.flushed >= FLUSH_PERIOD):
            self.flushed = now
            self.agent.alert(f"{self.pending} more records failed (not sampled)",
                             check=self.check, count=self.pending, sampled=False)
            self.pending = 0
