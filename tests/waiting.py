"""Waiting on conditions in tests, never on fixed sleeps.

``wait_until(predicate, timeout, what)`` polls a condition and fails naming what it
waited for. ``FileGate`` is a gate that code in other processes (Spark's Python workers,
executors of a standalone cluster, replay processes) waits at and the test opens: a
``threading.Event`` cannot cross into those processes, a file in a shared directory can.
Tests that need a job *still running* when they act make the job wait at a gate.

Spark tests ship this module to the workers by value (``tests/spark/conftest.py``):
workers cannot import ``tests``.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

POLL = 0.005  # seconds between two looks at a condition


def wait_until(predicate: Callable[[], Any], timeout: float, what: str,
               interval: float = POLL) -> Any:
    """Call ``predicate`` until it returns something true, and return that; raise an
    AssertionError saying ``what`` was awaited if ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(interval)


class FileGate:
    """A gate that is open while the file ``<directory>/open`` exists.

    ``wait(who)`` returns at once if the gate is open; else it leaves the file
    ``<directory>/at-<who>`` (so the test can wait until someone is held there) and
    returns when the gate opens, or raises TimeoutError after ``timeout`` seconds (a
    test that failed before opening its gate must not hold Spark's task slots forever).
    Picklable: it is only a path.
    """

    def __init__(self, directory: str | os.PathLike, is_open: bool = False) -> None:
        self.directory = os.fspath(directory)
        os.makedirs(self.directory, exist_ok=True)
        if is_open:
            self.open()

    @property
    def _flag(self) -> str:
        return os.path.join(self.directory, "open")

    def open(self) -> None:
        with open(self._flag, "w"):
            pass

    def close(self) -> None:
        """Close the gate and forget who was held at it before."""
        for name in os.listdir(self.directory):
            if name == "open" or name.startswith("at-"):
                os.remove(os.path.join(self.directory, name))

    def is_open(self) -> bool:
        return os.path.exists(self._flag)

    def wait(self, who: str = "worker", timeout: float = 120.0) -> None:
        if self.is_open():
            return
        with open(os.path.join(self.directory, f"at-{who}"), "w"):
            pass
        deadline = time.monotonic() + timeout
        while not self.is_open():
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{who}: the gate at {self.directory} stayed closed "
                                   f"for {timeout} s")
            time.sleep(POLL)

    def held(self) -> list[str]:
        """Who was held at the gate since it was last closed (``wait``'s ``who``)."""
        return sorted(name[3:] for name in os.listdir(self.directory)
                      if name.startswith("at-"))

    def __repr__(self) -> str:  # a worker's state shows it: the same whether open or not
        return f"FileGate({self.directory!r})"
