"""The worker host: runs one operator on one partition (one task attempt) with its agents.

The per-record path is a local counter and one comparison against ``box[0]``; every
so often (about every 50 ms, adapted to the record rate) the host syncs its counts,
samples a record's size, delivers control messages and lets agents beat. The
control reader thread sets ``box[0] = 0`` to make the very next record check.
The host's status is a ``status.WorkerStatus``, changed only by ``advance``.
"""
from __future__ import annotations

import inspect
import os
import pickle
import threading
import time
import traceback
from collections import deque
from functools import partial
from time import perf_counter
from typing import Any, Callable, Iterable, Iterator

from . import blocks
from .agent import Agent, AgentContext, overrides
from .channel import channel_for
from .records import NO_RECORD as _NO_RECORD
from .records import describe_record
from .spec import OperatorSpec
from .state import capture
from .status import ENDED_EVENT, EXHAUSTED_EVENT, FAILED_EVENT, WorkerStatus
from .timetravel import TimeTravel

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


class WorkerHost:
    """One operator on one partition: counts, failure capture, agents, control."""

    def __init__(self, spec: OperatorSpec, partition: int, task: Any = None) -> None:
        task = task if task is not None else _task_context()
        self.spec = spec
        self.worker = _worker_key(spec, partition, task)
        self.task = task
        self.channel = channel_for(spec.run)
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
        self.status = WorkerStatus.RUNNING
        self.error: dict | None = None
        self.per_call = False  # UDFs and grouped maps: ended by the next task or a flush
        self.tag_counts: dict[str, dict[str, int]] = {}
        self.user_function: Any = None  # whose attributes/closure are the state
        self.user_generator: Any = None  # whose locals are the state
        self.final_locals: dict | None = None  # its locals when its input ran out
        self.state_source: Any = None  # a key-based aggregation's merger
        self.order: Any = None  # a join's or cogroup's InputOrder, logged in or out of G(θ)
        self.loop: Any = None  # the generator of this host's record loop
        self.inputs_gen: Any = None  # run_partition's input generator
        self._processed = 0  # θ's inputs fully processed at the last check
        # in blocks (blocks.py): live counts, the feed this host owns, the culprit finder
        self.count_in: Callable[[], int] | None = None
        self.count_out: Callable[[], int] | None = None
        self.feed: Any = None
        self.culprit: Any = None
        self.outputs_ended = False  # a whole-partition function in blocks: its outputs ran out
        self._lost = 0  # a failed map's record that produced no output
        self.tt = TimeTravel(self) if spec.in_g else None
        self.agents = self._start_agents()
        self.observers = [a for a in self.agents if overrides(a, "observe_record")]
        self.channel.register(self)
        self.channel.send({"type": "worker_start", "worker": self.worker, "api": spec.api,
                           "pid": os.getpid(), "started": self.started})

    # --- loops -------------------------------------------------------------------
    def map_records(self, f: Callable, iterator: Iterable) -> Iterator:
        """``map``: in blocks if ``f`` is Python code (blocks.py), else record by record."""
        return self._records("map", f, iterator, self._map_records_each)

    def filter_records(self, f: Callable, iterator: Iterable) -> Iterator:
        return self._records("filter", f, iterator, self._filter_records_each)

    def flat_map_records(self, f: Callable, iterator: Iterable) -> Iterator:
        return self._records("flatMap", f, iterator, self._flat_map_records_each)

    def run_operator(self, op: Any, iterator: Iterable) -> Iterator:
        """An ``Operator`` record by record (the semantics of ``Operator.__call__``)."""
        self.user_function = op
        return self._records("operator", op, iterator, self._run_operator_each)

    def _records(self, kind: str, f: Callable, iterator: Iterable,
                 each: Callable[[Callable, Iterable], Iterator]) -> Iterator:
        if self.user_function is None:
            self.user_function = f
        if not self._in_blocks(f):
            return each(f, iterator)
        if self.tt is not None and kind != "map":
            self.tt.blocks_log()
        return blocks.run_in_blocks(self, kind, f, iterator)

    def _in_blocks(self, f: Callable) -> bool:
        """Blocks need Python code to name in a traceback, and no per-record feature."""
        return self._no_per_record_feature() and blocks.runs_in_blocks(f)

    def _no_per_record_feature(self) -> bool:
        """No agent observes records, and θ neither records its inputs nor evaluates
        --interact-when on them."""
        tt = self.tt
        return not self.observers and (tt is None or (tt.inputs is None and not tt.condition))

    def _map_records_each(self, f: Callable, iterator: Iterable) -> Iterator:
        box, n, record = self.box, 0, _NO_RECORD
        try:
            for record in self._observed(iterator):
                n += 1
                if n >= box[0]:
                    self._check(n, n - 1, record)
                yield f(record)
            self.advance(EXHAUSTED_EVENT)
        except GeneratorExit:
            raise
        except BaseException as exc:
            self._fail(exc, record)
            raise
        finally:
            self._end(n, n - 1 if self.status.failed else n)

    def _filter_records_each(self, f: Callable, iterator: Iterable) -> Iterator:
        box, n, n_out, record = self.box, 0, 0, _NO_RECORD
        dropped = self.tt.dropped(self) if self.tt is not None else None
        try:
            for record in self._observed(iterator):
                n += 1
                if n >= box[0]:
                    self._check(n, n_out, record)
                if f(record):
                    n_out += 1
                    yield record
                elif dropped is not None:
                    dropped(n - 1)
            self.advance(EXHAUSTED_EVENT)
        except GeneratorExit:
            raise
        except BaseException as exc:
            self._fail(exc, record)
            raise
        finally:
            self._end(n, n_out)

    def _flat_map_records_each(self, f: Callable, iterator: Iterable) -> Iterator:
        box, n, n_out, record = self.box, 0, 0, _NO_RECORD
        log = self.tt.deviations_log() if self.tt is not None else None
        try:
            for record in self._observed(iterator):
                n += 1
                if n >= box[0]:
                    self._check(n, n_out, record)
                k = 0
                for out in f(record):
                    k += 1
                    yield out
                n_out += k
                if k != 1 and log is not None:
                    log(n - 1, k)
            self.advance(EXHAUSTED_EVENT)
        except GeneratorExit:
            raise
        except BaseException as exc:
            self._fail(exc, record)
            raise
        finally:
            self._end(n, n_out)

    def _run_operator_each(self, op: Any, iterator: Iterable) -> Iterator:
        """In G(θ) it logs the inputs whose number of outputs is not one (IcedTea's output
        counts, kept as exceptions to the common case)."""
        box, n, n_out, record = self.box, 0, 0, _NO_RECORD
        log = self.tt.deviations_log() if self.tt is not None else None
        try:
            op.open()
            for record in self._observed(iterator):
                n += 1
                if n >= box[0]:
                    self._check(n, n_out, record)
                outputs = op.process(record)
                k = 0
                if outputs is not None:
                    for out in outputs:
                        k += 1
                        yield out
                n_out += k
                if k != 1 and log is not None:
                    log(n - 1, k)
            record = _NO_RECORD
            final = op.close()
            if final is not None:
                for out in final:
                    n_out += 1
                    yield out
            self.advance(EXHAUSTED_EVENT)
        except GeneratorExit:
            raise
        except BaseException as exc:
            self._fail(exc, record)
            raise
        finally:
            self._end(n, n_out)

    def run_partition(self, fn: Callable[[Iterator], Iterable], iterator: Iterable,
                      batches: bool = False) -> Iterator:
        """Run a whole-partition function (mapPartitions, mapInPandas, an aggregation's
        side...): in blocks if its code can be named (blocks.py), else record by record."""
        if self.user_function is None:
            self.user_function = fn.func if isinstance(fn, partial) else fn
        if batches or not self._no_per_record_feature() \
                or blocks.code_of(self.user_function) is None:
            return self._run_partition_each(fn, iterator, batches)
        if self.tt is not None and self.state_source is None:
            self.tt.blocks_log()
        return blocks.run_partition_in_blocks(self, fn, iterator)

    def started_partition(self, outputs: Any) -> Any:
        """What a whole-partition function returned: a generator's frame is its state."""
        if inspect.isgenerator(outputs) and not _is_operator(self.user_function):
            self.user_generator = outputs
        return outputs

    def _run_partition_each(self, fn: Callable[[Iterator], Iterable], iterator: Iterable,
                            batches: bool) -> Iterator:
        inputs = self._input_batches(iterator) if batches else self._inputs(iterator)
        self.inputs_gen = inputs
        n_out = 0
        # outputs counted in C, unless each input logs the outputs so far (G(θ) generators)
        counter = None if batches or self._logs_outputs_per_input() else blocks.Counter()
        try:
            outputs = self.started_partition(fn(inputs))
            if outputs is not None and counter is not None:
                self.count_out = counter.value
                yield from counter.tap(outputs)
            elif outputs is not None:
                for out in outputs:
                    n_out += _batch_rows(out) if batches else 1
                    self.records_out = n_out
                    yield out
            self.advance(EXHAUSTED_EVENT)
        except GeneratorExit:
            raise
        except BaseException as exc:
            frame = inputs.gi_frame
            self._fail(exc, frame.f_locals.get("record", _NO_RECORD) if frame else _NO_RECORD)
            raise
        finally:
            inputs.close()
            self._end(self.records_in, counter.value() if counter is not None else n_out)

    def _inputs(self, iterator: Iterable) -> Iterator:
        box, n = self.box, 0
        log = self.tt.cumulative_log() if self._logs_outputs_per_input() else None
        try:
            for record in self._observed(iterator):
                n += 1
                if log is not None:
                    log(self.records_out)
                if n >= box[0]:
                    self._check(n, self.count_out() if self.count_out else self.records_out,
                                record)
                yield record
            if log is not None:
                log(self.records_out)
            self._keep_final_locals()
        finally:
            self.records_in = n

    def _logs_outputs_per_input(self) -> bool:
        """A whole-partition function of G(θ) logs its outputs so far at each input
        (an aggregation's merge does not: all its outputs come after its inputs)."""
        return self.tt is not None and self.state_source is None

    def _input_batches(self, iterator: Iterable) -> Iterator:
        n = 0
        try:
            for record in iterator:
                rows = _batch_rows(record)
                n += rows
                self.bytes_in += _batch_bytes(record)
                self._check(n, self.records_out, _NO_RECORD, processed=n - rows)
                yield record
            self._keep_final_locals()
        finally:
            self.records_in = n

    def _keep_final_locals(self) -> None:
        """A generator's locals when its input runs out, before its frame closes: the
        state of a finished worker (the frame is gone once the generator returns)."""
        frame = getattr(self.user_generator, "gi_frame", None)
        if frame is not None:
            self.final_locals = dict(frame.f_locals)

    def _observed(self, iterator: Iterable) -> Iterable:
        tt = self.tt
        if tt is not None and tt.inputs is not None:
            iterator = self._recorded(iterator)
        if tt is not None and tt.condition is not None:
            iterator = tt.conditioned(iterator)
        if not self.observers:
            return iterator
        return self._observe(iterator)

    def _recorded(self, iterator: Iterable) -> Iterator:
        for record in iterator:
            self.tt.record_input(record)
            yield record

    def _observe(self, iterator: Iterable) -> Iterator:
        for record in iterator:
            for agent in list(self.observers):
                tag = self._call(agent, "observe_record", record)
                if tag is not None:
                    counts = self.tag_counts.setdefault(agent.agent_name(), {})
                    counts[str(tag)] = counts.get(str(tag), 0) + 1
            yield record

    # --- per-call operators (UDFs, applyInPandas) ---------------------------------
    def count_call(self, rows_in: int, rows_out: int, sample: Any = _NO_RECORD) -> None:
        self.records_in += rows_in
        self.records_out += rows_out
        if self.records_in >= self.box[0]:
            self._check(self.records_in, self.records_out, sample)

    def fail_call(self, exc: BaseException, record: Any) -> None:
        self._fail(exc, record)
        self._end(self.records_in, self.records_out)

    def end_calls(self) -> None:
        self.advance(EXHAUSTED_EVENT)
        self._end(self.records_in, self.records_out)

    # --- checks, control, agents --------------------------------------------------
    def _check(self, n_in: int, n_out: int, record: Any, processed: int | None = None) -> None:
        self.records_in, self.records_out = n_in, max(n_out, self.records_out)
        self._processed = n_in - 1 if processed is None else processed
        if self.tt is not None and not self.tt.started:
            self.tt.on_first_record()
        self._drain_mailbox()
        now = perf_counter()
        if record is not _NO_RECORD:
            self._sample_bytes(record)
        if now - self._last_beat >= HEARTBEAT_PERIOD:
            self._last_beat = now
            self._beat()
        last_n, last_t = self._last_check
        rate = (n_in - last_n) / max(now - last_t, 1e-6)
        self._last_check = (n_in, now)
        # grow the step at most twofold per check: the first records say little of the rate
        self._step = max(1, min(int(rate * CHECK_PERIOD), self._step * 2, MAX_STEP))
        self.box[0] = n_in + self._step
        if self.mailbox:
            self.box[0] = 0

    def _drain_mailbox(self) -> None:
        self.mail.clear()
        while self.mailbox:
            self._handle(self.mailbox.popleft())

    def _sample_bytes(self, record: Any) -> None:
        try:
            pickled = pickle.dumps(record, protocol=5)
        except Exception:
            return
        size = len(pickled)
        self._sampled[0] += size
        self._sampled[1] += 1
        if self.tt is not None and self.tt.fingerprints is not None:
            self.tt.fingerprint(self._processed, pickled)

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
        if message["type"] == "interact":
            if self.tt is None or not (self.spec.theta or not self.tt.theta_in_task()):
                return
        target = message.get("operator")
        if target is not None and target != self.worker["operator"]:
            return
        if message.get("partition") not in (None, self.worker["partition"]):
            return
        self.mailbox.append(message)
        self.mail.set()
        self.box[0] = 0

    def _handle(self, message: dict) -> None:
        if message["type"] == "interact":
            self.tt.on_interact(message, self._processed)
            self.tt.answered(message)
        elif message["type"] == "to_agent":
            for agent in self.agents:
                if agent.agent_name() == message["agent"]:
                    self._call(agent, "receive_message", message["payload"])

    def _start_agents(self) -> list[Agent]:
        names = self.channel.operator_names
        context = AgentContext(
            run_id=self.spec.run.run_id, operator_id=self.spec.op_id,
            operator=names.get(self.spec.op_id, self.spec.name or str(self.spec.op_id)),
            partition=self.worker["partition"], stage=self.worker["stage"],
            attempt=self.worker["attempt"], counts=self.counts)
        agents = []
        for cls in self.spec.run.agents:
            try:
                agent = cls()
            except Exception as exc:
                self._alert(cls.agent_name(), "__init__", exc)
                continue
            agent._send = self._agent_sender(cls.agent_name())
            agent.context = context
            agents.append(agent)
        for agent in list(agents):
            self._call(agent, "init", context)
        return agents

    def _agent_sender(self, name: str) -> Callable[[dict], None]:
        def send(fields: dict) -> None:
            self.channel.send({"type": "agent", "worker": self.worker, "agent": name, **fields})
        return send

    def _call(self, agent: Agent, hook: str, *args: Any) -> Any:
        try:
            return getattr(agent, hook)(*args)
        except Exception as exc:
            self._alert(agent.agent_name(), hook, exc)
            if agent in self.agents:
                self.agents.remove(agent)
            if agent in self.observers:
                self.observers.remove(agent)
            return None

    def _alert(self, source: str, hook: str, exc: BaseException) -> None:
        self.channel.send({
            "type": "alert", "worker": self.worker, "source": source, "level": "error",
            "message": f"agent {source!r} failed in {hook}: {type(exc).__name__}: {exc}; "
                       "it is switched off for this worker",
            "traceback": "".join(traceback.format_exception(exc))})

    def _beat(self) -> None:
        for agent in list(self.agents):
            self._call(agent, "heartbeat")

    # --- in blocks (blocks.py) -----------------------------------------------------
    def block_check(self, pulled: int, first: Any) -> int:
        """A feed's owner between blocks, ``first`` pulled and not yet processed; returns
        the next block's size."""
        self._check(pulled, self.count_out(), first)
        if self.tt is not None:
            self.tt.boundary(pulled - 1, self.count_out())
        return self._step

    def block_boundary(self, ended: bool = False) -> None:
        """A host that joined a feed, between blocks (``ended``: the feed's input ran out).
        Checked from the feed's first boundary on, before its own first record: a
        block can hand it all its records, and its first check is its initial snapshot."""
        n_in = self.count_in()
        if not ended:
            self._check(n_in, self.count_out(), _NO_RECORD, processed=n_in)
        else:
            self._keep_final_locals()  # its input ran out: a generator's last state
        if self.tt is not None:
            self.tt.boundary(n_in, self.count_out())

    def outputs_of_map(self) -> int:
        return self.count_in() - self._lost

    def fail_in_blocks(self, exc: BaseException, record: Any, culprit: bool) -> None:
        if culprit:
            self.records_in = self.count_in()
            if self.count_out == self.outputs_of_map:
                self._lost = 1  # the record it failed on has no output
        self._fail(exc, record)

    def end_in_blocks(self, exhausted: bool) -> None:
        if exhausted:
            self.advance(EXHAUSTED_EVENT)
        self._end(self.count_in(), self.count_out())

    # --- status, the end ---------------------------------------------------------
    def advance(self, event: str) -> bool:
        """The one place the status changes (status.py's table); False, and the status
        stays, if the table has no such transition."""
        after = self.status.after(event)
        if after is None:
            return False
        self.status = after
        return True

    def _fail(self, exc: BaseException, record: Any) -> None:
        self.advance(FAILED_EVENT)
        owner = getattr(exc, "_icedtea_owner", None)
        if owner is not None:
            return  # raised by an operator upstream in the same task
        try:
            exc._icedtea_owner = self.worker["operator"]
        except AttributeError:
            pass
        self.error = {
            "operator": self.worker["operator"], "partition": self.worker["partition"],
            "exception": type(exc).__name__, "message": str(exc)[:4000],
            "traceback": "".join(traceback.format_exception(exc))[-20000:],
            "record": None if record is _NO_RECORD else describe_record(record),
            "records_before": max(self.records_in - 1, 0),
        }

    def _end(self, n_in: int, n_out: int) -> None:
        if not self.advance(ENDED_EVENT):
            return
        self.records_in, self.records_out = n_in, n_out
        self._beat()
        for agent in list(self.agents):
            self._call(agent, "finish")
        counts = self.counts()
        log, body = self.tt.on_end(n_in) if self.tt is not None else (None, b"")
        if self.order is not None:
            log, body = self.order.replay_log(log, n_in)
        message = {"type": "worker_end", "worker": self.worker, "status": self.status.wire,
                   "records_in": n_in, "records_out": n_out, "bytes_in": counts["bytes_in"],
                   "seconds": counts["seconds"], "started": self.started, "ended": time.time(),
                   "exhausted": self.status.exhausted, "error": self.error, "tags": self.tag_counts,
                   "log": log}
        self.channel.end_worker(message, body)
        self.channel.unregister(self)


def _is_operator(f: Any) -> bool:
    from .operator import Operator

    return isinstance(f, Operator)


def _batch_rows(batch: Any) -> int:
    if isinstance(batch, tuple):  # several columns of an iterator UDF
        batch = batch[0] if batch else ()
    try:
        return len(batch)
    except TypeError:
        return 1


def _batch_bytes(batch: Any) -> int:
    if isinstance(batch, tuple):
        return sum(_batch_bytes(part) for part in batch)
    nbytes = getattr(batch, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    try:
        return int(batch.memory_usage(index=False, deep=False).sum())
    except Exception:
        return 0
