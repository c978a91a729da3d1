"""The worker host: runs one operator on one partition (one task attempt) with its plugins.

The host runs the operator's record loop — per record (``loops.py``) or in blocks of C
iterators (``blocks.py``) — counts, names the record a failure happened on, and ends
the worker with one ``worker_end`` message. Everything else is a plugin
(``plugin.py``): the run's agents always, time travel for workers of G(θ).

The per-record path is a local counter and one comparison against ``box[0]``; every
so often (about every 50 ms, adapted to the record rate) the host checks: syncs its
counts, samples a record's size, delivers control messages and calls its plugins'
hooks. The control reader thread sets ``box[0] = 0`` to make the very next record check.
The host's status is a ``status.WorkerStatus``, changed only by ``advance``. Its side of
running in blocks is ``host_blocks.InBlocks``; its plugins' taps on its records,
``host_taps.PluginTaps``.
"""
from __future__ import annotations

import os
import pickle
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from time import perf_counter
from typing import Any

from . import blocks, features, observed, task_failures
from .channel import channel_for, in_g_now, theta_now
from .host_blocks import InBlocks
from .host_taps import PluginTaps
from .loops import record_loop
from .plugin import PluginSet
from .records import NO_RECORD as _NO_RECORD
from .records import describe_record
from .spec import OperatorSpec
from .state import capture
from .status import ENDED_EVENT, EXHAUSTED_EVENT, FAILED_EVENT, WorkerStatus

CHECK_PERIOD = 0.05
HEARTBEAT_PERIOD = 0.25
MAX_STEP = blocks.RUN  # records between two checks, at most


def _task_context() -> Any:
    try:
        from pyspark.taskcontext import TaskContext
    except ImportError:  # pragma: no cover - workers always have pyspark
        return None
    return TaskContext.get()


def _worker_key(spec: OperatorSpec, partition: int, task: Any) -> dict:
    if task is None:
        return {"operator": spec.op_id, "partition": partition, "stage": -1, "attempt": 0,
                "task": -1}
    return {"operator": spec.op_id, "partition": partition, "stage": task.stageId(),
            "attempt": task.attemptNumber(), "task": task.taskAttemptId()}


class WorkerHost(InBlocks, PluginTaps):
    """One operator on one partition: counts, failure capture, control, plugins."""

    def __init__(self, spec: OperatorSpec, partition: int, task: Any = None) -> None:
        task = task if task is not None else _task_context()
        self.spec = spec
        self.created = task_failures.next_order()  # upstream hosts of a task come first
        self.worker = _worker_key(spec, partition, task)
        self.task = task
        self.channel = channel_for(spec.run)
        spec.in_g = in_g_now(spec, self.channel)  # before the plugins start
        spec.theta = theta_now(spec, self.channel)
        self.records_in = 0
        self.records_out = 0
        self.bytes_in = 0
        self._sampled = [0, 0]  # bytes, samples
        self.box = [1]
        self._step = 1
        self.mailbox: deque = deque()
        self.mail = threading.Event()  # set when a message arrives: a wait wakes at once
        self.started = time.time()
        self._t0 = perf_counter()
        self._last_beat = self._t0
        self._last_check = (0, self._t0)
        self._checked = False  # the first check has been made
        self.status = WorkerStatus.RUNNING
        self.error: dict | None = None
        self.per_call = False  # UDFs and grouped maps: ended by the next task or a flush
        self.call_feed: Any = None  # a row UDF's rows through the plugins' records hooks
        self.call_rows: list[list] = []  # per call: the plugins' output rows lists
        self.udf_errors: Any = None  # a UDF's exception policy (udf_errors.py), if any
        self.group_key: Any = None  # the key of the group a grouped function takes now
        self.user_function: Any = None  # whose attributes/closure are the state
        self.user_generator: Any = None  # whose locals are the state
        self.final_locals: dict | None = None  # its locals when its input ran out
        self.state_source: Any = None  # a key-based aggregation's merger
        self.order: Any = None  # a join's or cogroup's InputOrder, logged in or out of G(θ)
        self.loop: Any = None  # the generator of this host's record loop
        self.inputs_gen: Any = None  # a whole-partition function's input generator
        self.processed = 0  # inputs fully processed at the current record boundary
        # in blocks (blocks.py): live counts, the feed this host owns, the culprit finder
        self.count_in: Callable[[], int] | None = None
        self.count_out: Callable[[], int] | None = None
        self.feed: Any = None
        self.culprit: Any = None
        self.outputs_ended = False  # a whole-partition function in blocks: its outputs ran out
        self.loop_kind = "partition"  # map, filter, flatMap, operator, partition, batches
        # takes a record the function raised on (skipped) or not (--tolerate's agents)
        self.on_failure: Callable[[Any, Exception], bool] | None = None
        self.sampled: Any = None  # an agent times a sample of the records (observed.py)
        self._lost = 0  # a failed map's record that produced no output
        self.plugins = PluginSet(self)
        self._start_plugins()
        self.channel.register(self)
        self.channel.send({"type": "worker_start", "worker": self.worker, "api": spec.api,
                           "pid": os.getpid(), "started": self.started})

    def _start_plugins(self) -> None:
        """What lives beside this worker (plugin.py): features register in features.py."""
        for plugin in features.plugins_of(self):
            self.plugins.add(plugin)

    def alert(self, source: str, hook: str, exc: BaseException, kind: str = "agent") -> None:
        """Tell the run that ``source`` (an agent, a plugin, a part of one) failed."""
        self.channel.send({
            "type": "alert", "worker": self.worker, "source": source, "level": "error",
            "message": f"{kind} {source!r} failed in {hook}: {type(exc).__name__}: {exc}; "
                       "it is switched off for this worker",
            "traceback": "".join(traceback.format_exception(exc))})

    # --- loops ---------------------------------------------------------------------------
    def map_records(self, f: Callable, iterator: Iterable) -> Iterator:
        """``map``: in blocks if ``f`` is Python code (blocks.py), else record by record."""
        return self._records("map", f, iterator)

    def filter_records(self, f: Callable, iterator: Iterable) -> Iterator:
        return self._records("filter", f, iterator)

    def flat_map_records(self, f: Callable, iterator: Iterable) -> Iterator:
        return self._records("flatMap", f, iterator)

    def run_operator(self, op: Any, iterator: Iterable) -> Iterator:
        """An ``Operator`` record by record (the semantics of ``Operator.__call__``)."""
        self.user_function = op
        return self._records("operator", op, iterator)

    def _records(self, kind: str, f: Callable, iterator: Iterable) -> Iterator:
        if self.user_function is None:
            self.user_function = f
        if self.on_failure is not None and not self._resumable(kind, f):
            kind, f = self._guarded(kind, f)  # else the blocks' loop is resumed
        self.loop_kind = kind
        if self._needs_records() or not blocks.runs_in_blocks(f):
            return record_loop(self, kind, f, iterator)
        self.outputs_log(kind, in_blocks=True)
        for plugin in self.plugins.by_hook["block_function"]:  # e.g. lineage's flatMap count
            wrapped = self.plugins.call(plugin, "block_function", kind, f)
            f = f if wrapped is None else wrapped
        return blocks.run_in_blocks(self, kind, f, iterator)

    def keeps_blocks(self, f: Callable) -> bool:
        """Will a map, filter or flatMap of ``f`` run in blocks, unwrapped by plugins?"""
        return not self._needs_records() and blocks.runs_in_blocks(f) \
            and not self.plugins.by_hook["block_function"]

    def _resumable(self, kind: str, f: Callable) -> bool:
        """Can ``--tolerate`` resume this host's loop in blocks (``resumed.py``)? Not a
        map of G(θ): time travel takes a map in blocks to have one output per input,
        and a skipped record has none (the wrapper makes it a flatMap, which logs)."""
        return kind in blocks.RESUMABLE and not (kind == "map" and self.spec.in_g) \
            and not self._needs_records() and blocks.runs_in_blocks(f)

    def _guarded(self, kind: str, f: Callable) -> tuple[str, Any]:
        """``f`` wrapped so that ``on_failure`` may take the records it raises on: one
        frame a record (``observed.py``); the wrapper handles them, not the host."""
        on_failure, self.on_failure = self.on_failure, None
        assert on_failure is not None
        if kind == "operator":
            return kind, observed.guarded_operator(on_failure, f)
        return observed.guarded(on_failure, kind, f)

    def run_partition(self, fn: Callable[[Iterator], Iterable], iterator: Iterable,
                      batches: bool = False) -> Iterator:
        """Run a whole-partition function (mapPartitions, mapInPandas, an aggregation's
        side...): in blocks if its code can be named (blocks.py), else record by record."""
        if self.user_function is None:
            self.user_function = fn.func if isinstance(fn, partial) else fn
        if batches:
            self.loop_kind = "batches"
        if batches or self._needs_records() or blocks.code_of(self.user_function) is None:
            return record_loop(self, "batches" if batches else "partition", fn, iterator)
        self.outputs_log("partition", in_blocks=True)
        return blocks.run_partition_in_blocks(self, fn, iterator)

    def _needs_records(self) -> bool:
        """Whether a plugin must see every input record (the per-record loop)."""
        return any(self.plugins.results("needs_records"))

    # --- per-call operators (UDFs, applyInPandas) ----------------------------------------
    def count_call(self, rows_in: int, rows_out: int, sample: Any = _NO_RECORD,
                   whole: bool = False) -> None:
        """A call has returned; ``whole``: its input is processed (a group), else the
        check counts it as taken, not yet processed."""
        self.records_in += rows_in
        self.records_out += rows_out
        if self.records_in >= self.box[0]:
            self.check(self.records_in, self.records_out, sample,
                       self.records_in if whole else None)

    def before_group(self, group: tuple, rows: int) -> None:
        """A grouped map (or a pandas UDF) is about to take ``group`` (a batch): the
        initial check before the first one (the initial snapshot), and the ``batch``
        hooks (a group is a record)."""
        if not self._checked:
            self.check(0, 0, _NO_RECORD, processed=0)
        if self.plugins.by_hook["batch"]:
            self.plugins.run("batch", -1, group, rows)

    def fail_call(self, exc: BaseException, record: Any) -> None:
        self.fail(exc, record)
        self.end(self.records_in, self.records_out)

    def end_calls(self) -> None:
        self.advance(EXHAUSTED_EVENT)
        self.end(self.records_in, self.records_out)

    # --- checks, control -----------------------------------------------------------------
    def check(self, n_in: int, n_out: int, record: Any, processed: int | None = None) -> None:
        """Between two records: ``n_in`` inputs taken, ``processed`` of them done (all
        but the last one taken, unless given), ``n_out`` outputs handed on; ``record``:
        the input taken and not yet processed, if there is one (sampled)."""
        self.records_in, self.records_out = n_in, max(n_out, self.records_out)
        self.processed = n_in - 1 if processed is None else processed
        if not self._checked:
            self._checked = True
            self.plugins.run("first_record")
        self.handle_control()
        now = perf_counter()
        if record is not _NO_RECORD:
            self._sample_bytes(record)
        if now - self._last_beat >= HEARTBEAT_PERIOD:
            self._last_beat = now
            self.plugins.run("beat")
        last_n, last_t = self._last_check
        rate = (n_in - last_n) / max(now - last_t, 1e-6)
        self._last_check = (n_in, now)
        # grow the step at most twofold per check: the first records say little of the rate
        self._step = max(1, min(int(rate * CHECK_PERIOD), self._step * 2, MAX_STEP))
        self.box[0] = n_in + self._step
        if self.mailbox:
            self.box[0] = 0
        self.plugins.run("boundary", self.processed, n_out)

    def check_within(self, records: int) -> None:
        """The next check after at most ``records`` more inputs (a breakpoint's target)."""
        self._step = max(1, min(self._step, records))
        self.box[0] = min(self.box[0], self.processed + 1 + self._step)

    def handle_control(self) -> None:
        """Hand the queued control messages to the plugins, now (between two records)."""
        self.mail.clear()
        while self.mailbox:
            message = self.mailbox.popleft()
            for plugin in self.plugins.by_hook["control"]:
                if self.plugins.call(plugin, "control", message):
                    break

    def hold(self, until: Callable[[], bool], timeout: float) -> None:
        """Stay between two records, handling control messages as they come, until
        ``until()`` or ``timeout`` seconds (a conditional interaction, a breakpoint)."""
        self.processed = self.live_count()
        deadline = time.monotonic() + timeout
        while not until():
            self.handle_control()
            left = deadline - time.monotonic()
            if until() or left <= 0 or not self.mail.wait(left):
                break

    def _sample_bytes(self, record: Any) -> None:
        try:
            pickled = pickle.dumps(record, protocol=5)
        except Exception:
            return
        self._sampled[0] += len(pickled)
        self._sampled[1] += 1
        self.plugins.run("sample", self.processed, pickled)

    def counts(self) -> dict:
        """Live counts of this worker: what the progress agent reports."""
        bytes_in = self.bytes_in
        if not bytes_in and self._sampled[1]:
            bytes_in = int(self._sampled[0] / self._sampled[1] * self.records_in)
        return {"records_in": self.records_in, "records_out": self.records_out,
                "bytes_in": bytes_in, "seconds": perf_counter() - self._t0}

    def live_count(self) -> int:
        """Records this worker has processed, read while its loop is suspended."""
        if self.count_in is not None:
            return self.count_in()
        for generator in (self.inputs_gen, self.loop):
            frame = getattr(generator, "gi_frame", None)
            if frame is not None and "n" in frame.f_locals:
                return frame.f_locals["n"]
        return self.records_in

    def state(self) -> dict:
        """The worker's state variables by name (live objects)."""
        return capture(None if self.state_source is not None else self.user_function,
                       self.user_generator, self.state_source, self.final_locals)

    def deliver(self, message: dict) -> None:
        """Called by the control reader thread; handled in the task thread."""
        if message["type"] == "flush":
            if self.per_call:
                self.end_calls()
            return
        if not any(self.plugins.results("accepts", message)):
            return
        target = message.get("operator")
        if target is not None and target != self.worker["operator"]:
            return
        if message.get("partition") not in (None, self.worker["partition"]):
            return
        self.mailbox.append(message)
        self.mail.set()
        self.box[0] = 0

    # --- status, the end -----------------------------------------------------------------
    def advance(self, event: str) -> bool:
        """The one place the status changes (status.py's table); False, and the status
        stays, if the table has no such transition."""
        after = self.status.after(event)
        if after is None:
            return False
        self.status = after
        return True

    def fail(self, exc: BaseException, record: Any) -> None:
        """An exception went through this host's loop, processing ``record`` (if known)."""
        self.advance(FAILED_EVENT)
        owner = getattr(exc, "_icedtea_owner", None)
        if owner is not None:
            return  # raised by an operator upstream in the same task
        try:
            exc._icedtea_owner = self.worker["operator"]  # type: ignore[attr-defined]
        except AttributeError:
            pass
        self.error = {
            "operator": self.worker["operator"], "partition": self.worker["partition"],
            "exception": type(exc).__name__,
            "message": "; ".join([str(exc), *getattr(exc, "__notes__", ())])[:4000],
            "traceback": "".join(traceback.format_exception(exc))[-20000:],
            "record": None if record is _NO_RECORD else describe_record(record),
            "records_before": max(self.records_in - 1, 0),
        }

    def end(self, n_in: int, n_out: int) -> None:
        """The worker ends (once): its plugins' ``end`` hooks, then ``worker_end``."""
        if not self.advance(ENDED_EVENT):
            return
        self.records_in, self.records_out = n_in, n_out
        counts = self.counts()
        status = self.status
        message = {"type": "worker_end", "worker": self.worker, "status": status.wire,
                   "records_in": n_in, "records_out": n_out, "bytes_in": counts["bytes_in"],
                   "seconds": counts["seconds"], "started": self.started, "ended": time.time(),
                   "exhausted": status.exhausted, "error": self.error, "tags": {},
                   "log": None}
        body = b""
        for plugin in reversed(self.plugins.by_hook["end"]):
            body = self.plugins.call(plugin, "end", message) or body
        if self.order is not None:
            message["log"], body = self.order.replay_log(message["log"], n_in)
        self.channel.end_worker(message, body)
        self.channel.unregister(self)
