"""A run's lineage prepared ahead: on a kernel thread as soon as the run ends (unless
``--no-prepare``), while the user reads its output. A DataFrame run's frames are
written (``DataFrameLineage.write_frames``): the first trace waits only for the frames
not written yet. An RDD run's aggregation map sides that kept no key numbers have them
derived (``Lineage.derive_ahead``): the first trace reads them instead of running the
job that numbers every input's key.

The thread's Spark jobs are in a job group of their own. A new run stops them
(``stop_writing_ahead``), so that they never hold its jobs back; what was not written
then is written by the first trace, as without writing ahead.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

_writers: dict[str, WriteAhead] = {}  # job group -> its writer, while it writes
_writers_guard = threading.Lock()


class WriteAhead:
    """One run's lineage being prepared on a kernel thread (``work``, given an event set
    when it is to stop): ``done`` once it ended, ``outcome`` ("written", or why it
    stopped), ``seconds`` it took."""

    def __init__(self, run_id: str, work: Callable[[threading.Event], Any]) -> None:
        self.work = work
        self.group = f"icedtea-frames-{run_id}"
        self.outcome: str | None = None
        self.seconds: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._write, name=self.group, daemon=True)

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def start(self) -> None:
        with _writers_guard:  # listed only once started: a new run may stop it at once
            _writers[self.group] = self
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the writing to end; whether it did."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self, timeout: float) -> None:
        """Cancel the writing's Spark jobs and wait (at most ``timeout`` seconds) for the
        thread to end."""
        self._stop.set()
        context = _spark_context()
        if context is not None:
            context.cancelJobGroup(self.group)
        self.wait(timeout)

    def _write(self) -> None:
        start = time.perf_counter()
        try:
            context = _spark_context()
            if context is not None:
                context.setJobGroup(self.group, "icedtea: lineage prepared ahead",
                                    interruptOnCancel=True)
            self.work(self._stop)
            self.outcome = "written"
        except Exception as exc:  # stopped, or Spark stopped: the first trace writes the rest
            self.outcome = f"stopped ({type(exc).__name__})"
        finally:
            self.seconds = time.perf_counter() - start
            with _writers_guard:
                _writers.pop(self.group, None)


def write_ahead(run_id: str, work: Callable[[threading.Event], Any]) -> WriteAhead:
    """Start preparing run ``run_id``'s lineage (``work``) on a kernel thread."""
    writer = WriteAhead(run_id, work)
    writer.start()
    return writer


def stop_writing_ahead(timeout: float = 10.0) -> None:
    """Stop every run's lineage being prepared ahead (a new run is about to start)."""
    with _writers_guard:
        writers = list(_writers.values())
    for writer in writers:
        writer.stop(timeout)


def _spark_context() -> Any:
    from pyspark import SparkContext

    return SparkContext._active_spark_context
