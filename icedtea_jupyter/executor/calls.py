"""The callables Spark calls per row, per batch or per group in place of the user's
functions: UDFs and ``applyInPandas`` (``CallFunction``), and the same functions as
replay runs them (``UdfFunction``, ``GroupFunction``).

A per-call operator has one host per task (``call_host``), kept between calls and looked
up again only when PySpark's current ``TaskContext`` changes or the host stops running.
A row UDF is shipped as a plain function (``row_function``): between two checks a row
pays a counter and two identity tests around the user's call.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

from .host import _NO_RECORD, WorkerHost
from .shipping import Shipped
from .spec import OperatorSpec
from .status import WorkerStatus
from .udf_errors import EditedCall, UdfErrors

_RUNNING = WorkerStatus.RUNNING


class _NoTasks:
    """Where PySpark is not importable: never a task."""

    _taskContext = None


def _task_class() -> Any:
    """PySpark's ``TaskContext``: its ``_taskContext`` is what ``TaskContext.get()``
    returns, set by the worker at each task's start (a new object each task)."""
    try:
        from pyspark.taskcontext import TaskContext
    except ImportError:  # pragma: no cover - workers always have pyspark
        return _NoTasks
    return TaskContext


_TASKS: Any = _NoTasks


_CALL_HOSTS: dict[tuple[str, int], WorkerHost] = {}


def call_host(spec: OperatorSpec, f: Callable) -> WorkerHost:
    """The host of a per-call operator ``f`` for the current task, ending the previous
    task's; ``f`` (its attributes, its closure) is the worker's state."""
    global _TASKS
    _TASKS = _task_class()
    task = _TASKS._taskContext
    key = (spec.run.run_id, spec.op_id)
    host = _CALL_HOSTS.get(key)
    if host is not None and host.task is task and not host.status.ended:
        return host
    if host is not None and not host.status.ended:
        host.end_calls()
    host = WorkerHost(spec, task.partitionId() if task else -1, task)
    host.per_call = True
    host.user_function = f
    host.call_rows = [rows for rows in host.plugins.results("output_rows") if rows is not None]
    if host.plugins.by_hook["records"] and any(host.plugins.results("needs_records")):
        host.call_feed = CallFeed(host)
    host.udf_errors = UdfErrors.of(host)
    _CALL_HOSTS[key] = host
    return host


class CallFeed:
    """A row UDF's rows handed, one a call, through the plugins' ``records`` wrappers
    (a plugin that sees every record: ``--record-inputs``)."""

    def __init__(self, host: WorkerHost) -> None:
        self.slot: deque = deque()
        self.pulled = iter(host.observed(self._rows()))

    def _rows(self) -> Iterator:
        slot = self.slot
        while True:
            yield slot.popleft()

    def take(self, record: Any) -> None:
        self.slot.append(record)
        next(self.pulled)


def _rows(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return 1


class _Unstarted:
    """The host a row function has before its first row: every check fails on it."""

    records_in = 0
    box = (0,)
    status = None
    task = None


_UNSTARTED: Any = _Unstarted()


def row_function(spec: OperatorSpec, f: Callable) -> Callable:
    """The function a Python worker calls per row of a row ``@udf`` in place of ``f``.

    PySpark unpickles a UDF anew for each task, so this is built once a task and its
    task is looked at only at checks. A row that needs no check pays a counter and two
    identity tests (the check of the step, the host still running) around the call;
    everything else — the first row, a check, ``--record-inputs`` or the agents' output
    rows, an exception — goes through ``_checked_row``.
    """
    host: Any = _UNSTARTED  # this task's host, once a row has started it
    fast: Any = _UNSTARTED  # the host while its rows need only the counter, else _UNSTARTED

    def row(*args: Any) -> Any:
        nonlocal host, fast
        h = fast
        n = h.records_in + 1
        if n >= h.box[0] or h.status is not _RUNNING:
            host = _current_host(spec, f, host)
            fast = host if host.call_feed is None and not host.call_rows else _UNSTARTED
            return _checked_row(host, f, args)
        try:
            result = f(*args)
        except BaseException as exc:
            result = _row_raised(h, n, f, exc, args)
        h.records_in = h.records_out = n
        return result
    return row


def _current_host(spec: OperatorSpec, f: Callable, host: Any) -> WorkerHost:
    """``host`` if it still runs this task's rows, else the task's (``call_host``)."""
    if host.task is _TASKS._taskContext and host.status is _RUNNING:
        return host
    return call_host(spec, f)


def _checked_row(host: WorkerHost, f: Callable, args: tuple) -> Any:
    """One row, checked before the call as a per-record loop checks (the row taken, not
    yet processed; its arguments sampled), handed to ``--record-inputs`` and to the
    agents' output rows."""
    n = host.records_in + 1
    if host.call_feed is not None:
        host.call_feed.take(args)
    if n >= host.box[0]:
        host.check(n, host.records_out, args)
    try:
        result = f(*args)
    except BaseException as exc:
        result = _row_raised(host, n, f, exc, args)
    host.records_in = n
    host.records_out += 1
    for listed in host.call_rows:  # the agents' output rows, if any
        listed.append(result)
    return result


def _row_raised(host: WorkerHost, n: int, f: Callable, exc: BaseException,
                args: tuple) -> Any:
    """Row ``n``'s call raised: with ``--on-error pause`` or ``--tolerate``, the row's
    value (``udf_errors.py``); else the task fails."""
    host.records_in = n
    try:
        if host.udf_errors is None or not isinstance(exc, Exception):
            raise exc
        return host.udf_errors.row(f, args, exc)
    except BaseException as final:
        host.fail_call(final, args[0] if len(args) == 1 else args)
        raise


class CallFunction:
    """A function Spark calls per row, per batch or per group (UDFs, applyInPandas).

    ``mode``: ``row`` (one row in, one out), ``batch`` (Series in, Series out),
    ``agg`` (a group's Series in, one value out), ``group`` (a DataFrame in, a DataFrame
    out). A batch, an aggregate's group or a group is one record, processed whole.
    A row UDF is shipped as ``row_function``: a plain function, cheaper to call per row
    than this object.
    """

    def __init__(self, spec: OperatorSpec, f: Callable, mode: str) -> None:
        self.spec, self.f, self.mode = spec, f, mode
        self._host: WorkerHost | None = None  # this task's, in a worker
        self._row: Callable | None = None  # a row UDF called where it was made
        self._row_task: Any = None  # the task ``_row`` counts rows of

    def __reduce__(self) -> tuple:
        if self.mode == "row":
            return row_function, (self.spec, self.f)
        return CallFunction, (self.spec, self.f, self.mode)

    def __call__(self, *args: Any) -> Any:
        """A row: ``row_function``'s. A batch or a group: ``_whole``."""
        if self.mode == "row":  # one row_function a task, as PySpark ships it
            if self._row is None or self._row_task is not _TASKS._taskContext:
                self._row = row_function(self.spec, self.f)
            result = self._row(*args)
            self._row_task = _TASKS._taskContext  # PySpark's, once a row has run
            return result
        host = self._host
        if host is None or host.task is not _TASKS._taskContext or host.status is not _RUNNING:
            host = self._host = call_host(self.spec, self.f)
        return self._whole(host, args)

    def with_key(self, key: Any, frame: Any) -> Any:
        """A group of a function of the frame alone, with the key Spark passed: the
        host keeps the key for its hooks (the skew counter's)."""
        host = self._host
        if host is None or host.task is not _TASKS._taskContext or host.status is not _RUNNING:
            host = self._host = call_host(self.spec, self.f)
        host.group_key = key
        return self._whole(host, (frame,))

    def _whole(self, host: WorkerHost, args: tuple) -> Any:
        """A batch, an aggregate's group or a group: one record, processed whole."""
        mode = self.mode
        host.before_group(args, _rows(args[-1]) if args else 0)
        try:
            result = self.f(*args)
        except Exception as exc:
            result = self._failed(host, exc, args)
        except BaseException as exc:
            host.fail_call(exc, args[0] if len(args) == 1 else args)
            raise
        for listed in host.call_rows:  # the agents' output rows, if any
            listed.append(result)
        if mode == "batch":
            rows = _rows(args[0]) if args else 0
            host.count_call(rows, rows, _NO_RECORD, whole=True)
        elif mode == "agg":
            host.count_call(_rows(args[0]) if args else 0, 1, _NO_RECORD, whole=True)
        else:  # a group is processed whole: the check after it counts it
            host.count_call(_rows(args[-1]), _rows(result), _NO_RECORD, whole=True)
        return result

    def _failed(self, host: WorkerHost, exc: Exception, args: tuple) -> Any:
        """A call raised: with ``--on-error pause`` or ``--tolerate``, a UDF's value or
        a group's result (``udf_errors.py``); else the task fails."""
        errors, mode = host.udf_errors, self.mode
        try:
            if errors is None:
                raise exc
            if mode in ("group", "agg"):
                return errors.group(self.f, args, exc, aggregate=mode == "agg")
            return errors.batch(self.f, args, exc)
        except BaseException as final:
            host.fail_call(final, args[0] if len(args) == 1 else args)
            raise


class UdfFunction(Shipped):
    """A UDF's function as replay runs it: a record is one call's arguments (a row's
    values, or a batch's Series), one result each."""

    def __init__(self, spec: OperatorSpec, f: Callable) -> None:
        self.spec, self.f = spec, f

    def replay(self, partition: int, calls: Iterable) -> Iterator:
        host = WorkerHost(self.spec, partition)
        host.user_function = self.f
        return host.map_records(partial(_apply, self.f), calls)


class GroupFunction(UdfFunction):
    """``applyInPandas``'s function as replay runs it: one group (``(frame,)`` or
    ``(key, frame)``) a record, one output frame each."""


def _apply(f: Callable, group: Any) -> Any:
    if type(group) is EditedCall:  # rows the run skipped or replaced after they raised
        return group.replayed(f)
    return f(*group)


def group_function(spec: OperatorSpec, f: Callable, arity: int) -> Callable:
    """applyInPandas inspects its function's argument count: a function of ``(key,
    frame)`` is shipped as one; a function of the frame alone too, so that Spark passes
    each group's key (also of a computed grouping expression, which names no column of
    the frame): its host keeps the key (``host.group_key``), the function gets the frame."""
    call = CallFunction(spec, f, "group")
    return _keyed_group(call) if arity == 2 else _key_to_host(call)


def cogroup_function(spec: OperatorSpec, f: Callable, arity: int) -> Callable:
    """A cogrouped applyInPandas inspects its function's argument count too: keep it."""
    call = CallFunction(spec, f, "group")

    def apply_keyed(key: Any, left: Any, right: Any) -> Any:
        return call(key, left, right)

    def apply(left: Any, right: Any) -> Any:
        return call(left, right)
    return apply_keyed if arity == 3 else apply


def _keyed_group(call: Callable) -> Callable:
    def apply_group(key: Any, frame: Any) -> Any:
        return call(key, frame)
    return apply_group


def _key_to_host(call: CallFunction) -> Callable:
    def apply_group(key: Any, frame: Any) -> Any:
        return call.with_key(key, frame)
    return apply_group
