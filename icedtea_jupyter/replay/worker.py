"""One replayed worker: the operator's own host loop, in the kernel, fed one record at a time.

The worker runs the same ``WorkerHost`` loop that ran in Spark's Python worker (so its
state reads exactly as it did in the run's snapshots), inside a greenlet. Its input
iterator hands over the records it is given; when it has none it switches back to the
debugger, leaving the operator suspended where it asks for its next record: the moment
at which the run's snapshots were taken.
"""
from __future__ import annotations

import logging
import traceback
from collections import deque
from collections.abc import Iterator
from typing import Any

import greenlet
import numpy as np

from ..executor.channel import _CHANNELS, NullChannel
from ..executor.incremental import IncrementalState
from ..executor.log_result import replaying
from ..executor.spec import OperatorSpec, RunSpec
from ..executor.state import capture
from .task_context import ReplayTaskContext

LOG = logging.getLogger("icedtea_jupyter")

_END = object()
_ABANDON = object()


class ReplayError(RuntimeError):
    """Replay cannot reproduce the recorded run (an operator raised, or diverged)."""


class RecordedFailure(Exception):
    """A replayed operator raised the exception the recorded run failed with, on the same
    record: the expected end of its partition, not a divergence. ``info`` says what it
    raised (``operator``, ``partition``, ``exception``, ``message``, ``traceback``)."""

    def __init__(self, info: dict) -> None:
        super().__init__(f"{info['operator']!r} raised {info['exception']}: {info['message']} "
                         f"on partition {info['partition']}, as in the recorded run")
        self.info = info


class _Abandoned(BaseException):
    """Raised inside an operator whose replay is thrown away (a jump elsewhere)."""


_REPLAY_RUN = RunSpec(run_id="icedtea-replay", address=("", 0), secret=b"", store_path="")
_CHANNELS[_REPLAY_RUN.run_id] = NullChannel()


def replay_spec(op_id: int, name: str, api: str) -> OperatorSpec:
    """A spec whose host records nothing: the replay run id, bound to a ``NullChannel``."""
    return OperatorSpec(op_id, _REPLAY_RUN, api, name)


class ReplayWorker:
    """``process(record) -> outputs``, ``finish() -> outputs``, ``state()``; a real operator."""

    def __init__(self, name: str, function: Any, partition: int, results: Any = None,
                 expected: tuple[str, int] | None = None) -> None:
        self.name = name
        self.expected = expected  # the run's failure here: (exception type, input index)
        self.partition = partition
        self.function = function  # a PartitionFunction or CombineFunction with a replay spec
        self.results = results  # log_result values in call order (an object with next_result)
        self.processed = 0
        self.finished = False
        self.failed: str | None = None
        self._queue: deque = deque()
        self._out: list = []  # what the operator emitted since the last drain
        self._starts: list[int] = []  # where in _out each record taken since then begins
        self.host: Any = None
        self._encoder = IncrementalState()
        self._shown: tuple = (None, None)  # (version, encoded state) last shown
        self._context = ReplayTaskContext(partition)  # TaskContext.get() in the operator
        self._let = greenlet.greenlet(self._run)
        self._switch(None)  # runs the operator up to its first request for a record

    # --- the operator's side -----------------------------------------------------------
    def _run(self, _: Any) -> None:
        if self.results is not None:
            replaying.set(self.results)
        start = getattr(self.function, "replay", self.function)  # a batch function's
        self.host_loop = start(self.partition, self._feed())
        self.host = _host_of(self.host_loop)
        append = self._out.append
        for out in self.host_loop:
            append(out)
        self.finished = True

    def _feed(self) -> Iterator[Any]:
        parent, queue, out, starts = self._let.parent, self._queue, self._out, self._starts
        while True:
            while not queue:
                parent.switch(None)
            record = queue.popleft()
            if record is _END:
                return
            if record is _ABANDON:
                raise _Abandoned()
            starts.append(len(out))  # what the operator emits from here on is this record's
            yield record

    def _switch(self, value: Any) -> None:
        outside = self._context.enter()
        try:
            self._let.switch(value)
        except _Abandoned:
            pass
        except ReplayError as exc:
            self._broken(str(exc))
            raise
        except Exception as exc:
            recorded = self._recorded_failure(exc)
            message = self._failure(exc) if recorded is None else str(recorded)
            self._broken(message)
            raise (recorded or ReplayError(message)) from exc
        finally:
            self._context.leave(outside)

    def _broken(self, why: str) -> None:
        self.finished = True
        self.failed = why

    def _index(self) -> int:
        return self.processed + max(len(self._starts) - 1, 0)  # the batch's record it was on

    def _recorded_failure(self, exc: BaseException) -> RecordedFailure | None:
        """The run's own failure, if ``exc`` is it: same exception type, same record."""
        if self.expected is None or self.expected != (type(exc).__name__, self._index()):
            return None
        self._keep_locals_at(exc)
        return RecordedFailure({"operator": self.name, "partition": self.partition,
                                "index": self._index(), "exception": type(exc).__name__,
                                "message": str(exc)[:4000],
                                "traceback": "".join(traceback.format_exception(exc))[-20000:]})

    def _keep_locals_at(self, exc: BaseException) -> None:
        """A generator operator's local variables as it raised: its state then (its frame
        closes with the exception)."""
        host = self.host
        code = getattr(getattr(host, "user_generator", None), "gi_code", None)
        tb = exc.__traceback__
        while code is not None and tb is not None:
            if tb.tb_frame.f_code is code:
                host.final_locals = dict(tb.tb_frame.f_locals)
            tb = tb.tb_next

    def _failure(self, exc: BaseException) -> str:
        index = self._index()
        return (f"{self.name!r} raised {type(exc).__name__}: {exc} while replaying input "
                f"#{index} of partition {self.partition}; the recorded run did not "
                "(is the operator deterministic? wrap non-deterministic calls in log_result)")

    # --- the debugger's side -------------------------------------------------------------
    def process(self, record: Any) -> list:
        """Hand the operator one record; return what it emitted until it asked for more."""
        return self.process_many([record])[0]

    def process_many(self, records: list) -> tuple[list, np.ndarray]:
        """Hand the operator ``records`` in one go (no switch back between them); returns
        everything it emitted, and how many outputs each record had. A jump replays this
        way: each worker sees its own inputs in the same order, so the states are the same."""
        if self.failed is not None:
            raise ReplayError(f"{self.name!r} on partition {self.partition} failed in replay "
                              f"({self.failed}); jump to an interaction to start again")
        if self.finished:
            raise ReplayError(f"{self.name!r} on partition {self.partition} has finished")
        self._queue.extend(records)
        self._switch(None)
        self.processed += len(records)
        starts = self._starts[:len(records)]
        if starts:
            starts[0] = 0  # what it emitted before taking its first record counts as that one's
        outputs = self._drain()
        counts = np.diff(np.array(starts + [len(outputs)], dtype=np.int64))
        return outputs, np.concatenate([counts, np.zeros(len(records) - len(counts), np.int64)])

    def finish(self) -> list:
        """End of the partition's input: the operator's closing outputs."""
        if not self.finished:
            self._queue.append(_END)
            self._switch(None)
        return self._drain()

    def abandon(self) -> None:
        """Throw this replay away, letting the operator's ``finally`` blocks run."""
        if not self._let.dead and not self.finished:
            self._queue.append(_ABANDON)
            outside = self._context.enter()
            try:
                self._let.switch(None)
            except _Abandoned:
                pass  # the operator let the signal through: thrown away as asked
            except BaseException as exc:  # its finally blocks raised: thrown away all the same
                LOG.debug("icedtea: replayed operator %r on partition %s raised %s: %s while "
                          "it was thrown away", self.name, self.partition,
                          type(exc).__name__, exc)
            finally:
                self._context.leave(outside)

    def state(self) -> dict:
        """The worker's state variables by name, read as the run's snapshots read them."""
        host = self.host
        if host is None:
            return capture(getattr(self.function, "f", None))
        return host.state()

    def encoded_state(self) -> dict:
        """The state as tagged JSON, re-encoding only what changed since the last call
        (nothing, if the worker has not moved)."""
        version = (self.processed, self.finished)
        if self._shown[0] != version:
            self._shown = (version, self._encoder.update(self.state())[0])
        return self._shown[1]

    @property
    def restorable(self) -> bool:
        """False for a generator operator: its local variables cannot be set from outside."""
        return self.host is None or self.host.user_generator is None

    def _drain(self) -> list:
        out = self._out[:]
        self._out.clear()  # the same lists: _feed and _run hold them
        self._starts.clear()
        return out


def _host_of(loop: Any) -> Any:
    """The host whose loop this is (in blocks: the last host of the loop's chain)."""
    frame = getattr(loop, "gi_frame", None)
    names = frame.f_locals if frame is not None else {}
    owner = names.get("host", names.get("self"))  # a per-record loop's host, or a chain
    hosts = getattr(owner, "hosts", None)
    return hosts[-1] if isinstance(hosts, list) else owner
