"""The callables that Spark ships to its Python workers in place of the user's functions.

Each wraps one user function with a ``WorkerHost``. They are plain classes (pickled
by reference to this module, with the user's function and the operator's spec).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import repeat, tee
from operator import itemgetter
from typing import Any

from .agent import AgentPlugin
from .control import LiveControl
from .error_guard import guard, guard_operator
from .host import _NO_RECORD, WorkerHost, _task_context
from .input_order import InputOrder, Origins, tag_origins
from .loops import LOOP_CODES
from .observed import SampledTiming, observe, observe_operator
from .operator import Operator
from .shipping import Shipped
from .spec import OperatorSpec
from .udf_errors import EditedCall, UdfErrors


def _foreach(f: Callable, record: Any) -> tuple:
    f(record)
    return ()


def _foreach_partition(f: Callable, records: Iterator) -> list:
    f(records)
    return []


class PartitionFunction(Shipped):
    """``(split, iterator) -> iterator`` for ``mapPartitionsWithIndex``, one host per call."""

    def __init__(self, spec: OperatorSpec, kind: str, f: Callable) -> None:
        self.spec, self.kind, self.f = spec, kind, f

    def __call__(self, split: int, iterator: Iterable) -> Iterator:
        host = WorkerHost(self.spec, split)
        loop = self._loop(host, split, iterator)
        # a per-record loop's frame counts its records; a chain's guard is not kept (the
        # host holding it would keep it alive past an early close)
        if getattr(loop, "gi_code", None) not in LOOP_CODES:
            return loop  # a chain's guard: its outputs are tapped in the chain
        host.loop = loop
        return host.tap_outputs(loop)

    def _loop(self, host: WorkerHost, split: int, iterator: Iterable) -> Iterator:
        kind, f = self.kind, self.f
        control = host.plugins.get(LiveControl)
        if control is not None and (control.on_error or control.replaying):
            return self._guarded(host, control, split, kind, f, iterator)
        agents = host.plugins.get(AgentPlugin)
        if agents is not None and agents.sees_processing():
            return self._observed(host, agents, split, kind, f, iterator)
        return self._loop_unguarded(host, split, kind, f, iterator)

    def _observed(self, host: WorkerHost, agents: AgentPlugin, split: int, kind: str,
                  f: Callable, iterator: Iterable) -> Iterator:
        """Agents see each record's outputs and time, or its failure (``observed.py``);
        whole-partition functions' outputs are seen through ``partition_outputs``."""
        if not agents.output_observers:  # failures only (--tolerate): the host's loop
            host.on_failure = agents.on_failure  # is resumed after a taken record
            return self._loop_unguarded(host, split, kind, f, iterator)
        if kind in ("map", "filter", "flatMap", "foreach"):
            host.user_function = f  # its state, not the wrapper's
            if kind == "foreach":
                kind, f = "flatMap", partial(_foreach, f)
            elif agents.samples_outputs() and host.keeps_blocks(f):
                host.sampled = SampledTiming(agents, kind, f)
                return self._loop_unguarded(host, split, kind, f, iterator)
            kind, observed = observe(agents, kind, f)
            return self._loop_unguarded(host, split, kind, observed, iterator)
        if isinstance(f, Operator) and type(f).__call__ is Operator.__call__:
            if agents.samples_outputs() and host.keeps_blocks(f):
                host.sampled = SampledTiming(agents, "flatMap", f.process)
                return host.run_operator(f, iterator)
            loop = host.run_operator(observe_operator(agents, f), iterator)
            host.user_function = f
            return loop
        return self._loop_unguarded(host, split, kind, f, iterator)

    def _loop_unguarded(self, host: WorkerHost, split: int, kind: str, f: Callable,
                        iterator: Iterable) -> Iterator:
        if kind == "map":
            return host.map_records(f, iterator)
        if kind == "filter":
            return host.filter_records(f, iterator)
        if kind == "flatMap":
            return host.flat_map_records(f, iterator)
        if kind == "foreach":
            host.user_function = f
            return host.flat_map_records(partial(_foreach, f), iterator)
        if kind == "foreachPartition":
            host.user_function = f
            return host.run_partition(partial(_foreach_partition, f), iterator)
        if kind == "mapPartitionsWithIndex":
            host.user_function = f
            return host.run_partition(partial(f, split), iterator)
        if isinstance(f, Operator) and type(f).__call__ is Operator.__call__:
            return host.run_operator(f, iterator)
        return host.run_partition(f, iterator)

    def _guarded(self, host: WorkerHost, control: LiveControl, split: int, kind: str,
                 f: Callable, iterator: Iterable) -> Iterator:
        """``--on-error pause`` (or replay, which meets the records it skipped): a
        per-record function's exceptions become hits (``control.py``)."""
        if kind in ("map", "filter", "flatMap"):
            host.user_function = f
            kind, guarded = guard(control, kind, f)
            return host.flat_map_records(guarded, iterator) if kind == "flatMap" \
                else host.filter_records(guarded, iterator)
        if isinstance(f, Operator) and type(f).__call__ is Operator.__call__:
            loop = host.run_operator(guard_operator(control, f), iterator)
            host.user_function = f  # its state, not the guard's
            return loop
        return self._loop_unguarded(host, split, kind, f, iterator)


class CombineFunction(Shipped):
    """One side of a key-based aggregation: ``combine`` (map side) or ``merge`` (reduce side).

    Uses PySpark's own spilling merger; the host keeps it as the worker's state.
    """

    def __init__(self, spec: OperatorSpec, phase: str, functions: tuple, memory: float,
                 serializer: Any, group: bool) -> None:
        self.spec, self.phase, self.functions = spec, phase, functions
        self.memory, self.serializer, self.group = memory, serializer, group

    def __call__(self, split: int, iterator: Iterable) -> Iterator:
        from pyspark.shuffle import Aggregator, ExternalGroupBy, ExternalMerger

        host = WorkerHost(self.spec, split)
        aggregator = Aggregator(*self.functions)
        merger: Any  # PySpark's spilling merger: grouping (groupByKey) or combining
        if self.phase == "merge" and self.group:
            merger = ExternalGroupBy(aggregator, self.memory, self.serializer)
        else:
            merger = ExternalMerger(aggregator, self.memory, self.serializer)
        host.state_source = merger

        def combine(records: Iterator) -> Iterator:
            if self.phase == "combine":
                merger.mergeValues(host.keyed(records))
                return tag_origins(split, merger.items())
            host.order = Origins()
            merger.mergeCombiners(host.merged(host.order.tap(records)))
            return merger.items()

        return host.run_partition(combine, iterator)


class GroupMerge(Shipped):
    """The reduce side of a join or cogroup: merges the tagged combiners from the shuffle,
    logging which input each came from, then turns each key's values into its outputs.

    ``dispatch(values)`` gives the outputs of one key: several (``flat``, a join) or one."""

    def __init__(self, spec: OperatorSpec, dispatch: Callable, flat: bool, memory: float,
                 serializer: Any) -> None:
        self.spec, self.dispatch, self.flat = spec, dispatch, flat
        self.memory, self.serializer = memory, serializer

    def __call__(self, split: int, iterator: Iterable) -> Iterator:
        return self.merged(split, iterator, InputOrder())

    def merged(self, split: int, iterator: Iterable, order: Any) -> Iterator:
        """The hosted merge, ``order`` logging (and stripping) what it reads."""
        from pyspark.shuffle import Aggregator, ExternalGroupBy

        host = WorkerHost(self.spec, split)
        merger: Any = ExternalGroupBy(Aggregator(*_LISTS), self.memory, self.serializer)
        host.state_source = merger
        host.order = order
        dispatch = self.dispatch

        def merge(combiners: Iterator) -> Iterator:
            merger.mergeCombiners(order.tap(combiners))
            groups = host.keyed_groups(merger.items())
            if self.flat:
                return ((key, out) for key, values in groups for out in dispatch(values))
            return ((key, dispatch(values)) for key, values in groups)

        return host.run_partition(merge, iterator)


class TaggedCombine:
    """The map side of a join or cogroup, ``(key, (input, value))`` records in: each key's
    values in a list, one list per input even where a partitioner-aware union (inputs
    partitioned alike) mixes the inputs in one partition (``mixed``)."""

    def __init__(self, memory: float, serializer: Any, mixed: bool) -> None:
        self.memory, self.serializer, self.mixed = memory, serializer, mixed

    def __call__(self, records: Iterator) -> Iterator:
        from pyspark.shuffle import Aggregator, ExternalMerger

        merger: Any = ExternalMerger(Aggregator(*_LISTS), self.memory, self.serializer)
        if not self.mixed:
            merger.mergeValues(records)
            return merger.items()
        merger.mergeValues(((key, tagged[0]), tagged) for key, tagged in records)
        return ((key, values) for (key, _), values in merger.items())


class TagValues:
    """``(key, value)`` records to ``(key, (input index, value))``: which input of a join a
    value came from. C iterators only (PySpark tags them with a lambda, a Python call a
    record)."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __call__(self, records: Iterable) -> Iterator:
        keys, values = tee(records)
        return zip(map(_KEY, keys), zip(repeat(self.index), map(_VALUE, values)))


_KEY, _VALUE = itemgetter(0), itemgetter(1)


class JoinDispatch:
    """One key's tagged values (input 0 or 1) to the pairs of an inner or outer join; an
    outer side with no values pairs with ``None``."""

    def __init__(self, left_outer: bool, right_outer: bool) -> None:
        self.left_outer, self.right_outer = left_outer, right_outer

    def __call__(self, values: Iterable) -> Iterator:
        sides: tuple[list, list] = ([], [])
        for index, value in values:
            sides[index].append(value)
        left, right = sides
        if self.right_outer and not left:
            left.append(None)
        if self.left_outer and not right:
            right.append(None)
        return ((v, u) for v in left for u in right)


class CogroupDispatch:
    """One key's tagged values to a tuple with the values of each input."""

    def __init__(self, inputs: int) -> None:
        self.inputs = inputs

    def __call__(self, values: Iterable) -> tuple:
        from pyspark.resultiterable import ResultIterable

        groups: list[list] = [[] for _ in range(self.inputs)]
        for index, value in values:
            groups[index].append(value)
        return tuple(ResultIterable(group) for group in groups)


class BatchFunction(Shipped):
    """``mapInPandas``/``mapInArrow``/iterator pandas UDFs: iterator of batches in and out."""

    def __init__(self, spec: OperatorSpec, f: Callable) -> None:
        self.spec, self.f = spec, f

    def __call__(self, batches: Iterable) -> Iterator:
        task = _task_context()
        return self.replay(task.partitionId() if task else -1, batches, task)

    def replay(self, partition: int, batches: Iterable, task: Any = None) -> Iterator:
        """The host loop on ``partition`` (replay calls it: there is no Spark task)."""
        host = WorkerHost(self.spec, partition, task)
        return host.tap_outputs(host.run_partition(self.f, batches, batches=True))


_CALL_HOSTS: dict[tuple[str, int], WorkerHost] = {}


def call_host(spec: OperatorSpec, f: Callable) -> WorkerHost:
    """The host of a per-call operator ``f`` for the current task, ending the previous
    task's; ``f`` (its attributes, its closure) is the worker's state."""
    task = _task_context()
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


class CallFunction:
    """A function Spark calls per row, per batch or per group (UDFs, applyInPandas).

    ``mode``: ``row`` (one row in, one out), ``batch`` (Series in, Series out),
    ``agg`` (a group's Series in, one value out), ``group`` (a DataFrame in, a DataFrame
    out). A batch, an aggregate's group or a group is one record, processed whole.
    """

    def __init__(self, spec: OperatorSpec, f: Callable, mode: str) -> None:
        self.spec, self.f, self.mode = spec, f, mode

    def __call__(self, *args: Any) -> Any:
        host = call_host(self.spec, self.f)
        mode = self.mode
        if mode == "row":
            return self._row(host, args)
        if mode != "row":  # a group or a batch: a record, processed whole
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

    def _row(self, host: WorkerHost, args: tuple) -> Any:
        """One row: checked before the call, as a per-record loop checks (the row taken,
        not yet processed; its arguments sampled)."""
        n = host.records_in + 1
        if host.call_feed is not None:
            host.call_feed.take(args)
        if n >= host.box[0]:
            host.check(n, host.records_out, args)
        try:
            result = self.f(*args)
        except Exception as exc:
            host.records_in = n
            result = self._failed(host, exc, args)
        except BaseException as exc:
            host.records_in = n
            host.fail_call(exc, args[0] if len(args) == 1 else args)
            raise
        host.records_in = n
        host.records_out += 1
        for listed in host.call_rows:  # the agents' output rows, if any
            listed.append(result)
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
            return errors.row(self.f, args, exc) if mode == "row" \
                else errors.batch(self.f, args, exc)
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
    """applyInPandas inspects its function's argument count: keep it."""
    call = CallFunction(spec, f, "group")
    return _keyed_group(call) if arity == 2 else _group(call)


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


def _group(call: Callable) -> Callable:
    def apply_group(frame: Any) -> Any:
        return call(frame)
    return apply_group


# --- small picklable functions for derived operators ------------------------------
class KeyBy:
    def __init__(self, f: Callable) -> None:
        self.f = f

    def __call__(self, record: Any) -> tuple:
        return self.f(record), record


class MapValues:
    def __init__(self, f: Callable) -> None:
        self.f = f

    def __call__(self, pair: tuple) -> tuple:
        return pair[0], self.f(pair[1])


class FlatMapValues:
    def __init__(self, f: Callable) -> None:
        self.f = f

    def __call__(self, pair: tuple) -> Iterator:
        key = pair[0]
        return ((key, value) for value in self.f(pair[1]))


class ZeroThen:
    """createCombiner of aggregateByKey/foldByKey: a fresh copy of zero, then ``f``."""

    def __init__(self, zero: Any, f: Callable) -> None:
        self.zero, self.f = zero, f

    def __call__(self, value: Any) -> Any:
        import copy

        return self.f(copy.deepcopy(self.zero), value)


def identity(value: Any) -> Any:
    return value


def single_list(value: Any) -> list:
    return [value]


def append(values: list, value: Any) -> list:
    values.append(value)
    return values


def extend(values: list, more: list) -> list:
    values.extend(more)
    return values


# each key's values in a list (joins, cogroups): PySpark's Aggregator as groupByKey builds it
_LISTS: tuple[Any, Any, Any] = (single_list, append, extend)
