"""The callables that Spark ships to its Python workers in place of the user's RDD
functions and batch maps (per-call ones, UDFs and grouped maps: ``calls.py``).

Each wraps one user function with a ``WorkerHost``. They are plain classes (pickled
by reference to this module, with the user's function and the operator's spec).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import repeat, tee
from operator import itemgetter
from typing import Any

from .agent import AgentPlugin
from .calls import CallFunction, GroupFunction, UdfFunction  # noqa: F401 - stores name them here
from .control import LiveControl
from .error_guard import guard, guard_operator
from .host import WorkerHost, _task_context
from .input_order import InputOrder, Origins, tag_origins
from .loops import LOOP_CODES
from .merge_order import REPLAY_RUN_ID, has_spilled, new_merger
from .observed import SampledTiming, observe, observe_operator
from .operator import Operator
from .shipping import Shipped
from .spec import OperatorSpec


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
        # PySpark's spilling merger: grouping (groupByKey) or combining
        kind = ExternalGroupBy if self.phase == "merge" and self.group else ExternalMerger
        merger = new_merger(kind, Aggregator(*self.functions), self.memory, self.serializer,
                            self.spec.run.run_id == REPLAY_RUN_ID)
        host.state_source = merger

        def combine(records: Iterator) -> Iterator:
            if self.phase == "combine":
                merger.mergeValues(host.keyed(records))
                return tag_origins(split, merger.items(), has_spilled(merger))
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
        merger = new_merger(ExternalGroupBy, Aggregator(*_LISTS), self.memory, self.serializer,
                            self.spec.run.run_id == REPLAY_RUN_ID)
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
        self.replaying = False  # replay merges in memory (``merge_order``)

    def __call__(self, records: Iterator) -> Iterable:
        from pyspark.shuffle import Aggregator, ExternalMerger

        merger = new_merger(ExternalMerger, Aggregator(*_LISTS), self.memory, self.serializer,
                            getattr(self, "replaying", False))
        if not self.mixed:
            merger.mergeValues(records)
            return Combined(merger.items(), has_spilled(merger))
        merger.mergeValues(((key, tagged[0]), tagged) for key, tagged in records)
        return Combined(((key, values) for (key, _), values in merger.items()),
                        has_spilled(merger))

    def in_memory(self) -> TaggedCombine:
        """This map side as replay runs it: merging in memory."""
        combine = TaggedCombine(self.memory, self.serializer, self.mixed)
        combine.replaying = True
        return combine


class Combined:
    """A map side's combiners, and whether its merger spilled (``merge_order``)."""

    def __init__(self, items: Iterable, spilled: bool) -> None:
        self.items, self.spilled = iter(items), spilled

    def __iter__(self) -> Iterator:
        return self.items  # the merger's own iterator: nothing of ours runs per combiner


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
