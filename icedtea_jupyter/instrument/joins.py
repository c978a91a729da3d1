"""``join``, the outer joins, ``cogroup`` and ``groupWith`` while recording.

PySpark builds them in Python: each input's values are tagged with the input's index,
the inputs are unioned and grouped by key, and each key's group is split by tag again.
Here the same plan is built with PySpark's own calls (not instrumented), except that the
reduce-side merge runs in a worker host that logs the input of each combiner it
consumes: the shuffle's fetch order, which replay needs to rebuild each key's group in
the same order. The DAG has one Python node for the operator, reading all its inputs.
"""
from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

from pyspark.core.rdd import RDD

from ..executor import wrappers as w
from ..executor.lineage import JoinOrigins
from .patching import active, register

# api -> (left outer, right outer)
_JOINS = {"join": (False, False), "leftOuterJoin": (True, False),
          "rightOuterJoin": (False, True), "fullOuterJoin": (True, True)}


def _grouped(recorder: Any, api: str, rdds: list[RDD], num_partitions: int | None,
             dispatch: Callable, flat: bool) -> RDD:
    """The tagged union of ``rdds`` grouped by key, each group turned into outputs by
    ``dispatch`` in a hosted merge (several outputs a key when ``flat``)."""
    inputs = recorder.parents(*rdds)
    node, spec = recorder.python(api, None, inputs, name=api)
    node.inputs = inputs
    with recorder.inside():
        union = functools.reduce(RDD.union, [rdd.mapPartitions(w.TagValues(i), True)
                                             for i, rdd in enumerate(rdds)])
        if num_partitions is None:
            num_partitions = union._defaultReducePartitions()
        memory, serializer = union._memory_limit(), union._jrdd_deserializer
        mixed = union.partitioner is not None  # partitioner-aware: inputs share partitions
        # PySpark's stub says mapPartitions' function takes an Iterable; it is given an
        # iterator, which is what TaggedCombine declares
        if recorder.run.lineage:  # each record its own combiner, tagged with its origin
            offsets = list(itertools.accumulate([0] + [r.getNumPartitions() for r in rdds]))
            combined = union.mapPartitionsWithIndex(JoinOrigins(offsets[:-1], mixed), True)
        else:
            combined = union.mapPartitions(
                w.TaggedCombine(memory * 0.9, serializer, mixed), True)  # type: ignore[arg-type]
        shuffled = combined.partitionBy(num_partitions)
        merge = w.GroupMerge(spec, dispatch, flat, memory, serializer)
        recorder.keep_for_replay(node.id, merge, shuffled)
        result = shuffled.mapPartitionsWithIndex(merge, True)
    return recorder.produced(result, node)


def _two_inputs(api: str, dispatch: Callable, flat: bool) -> Callable:
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: RDD, other: RDD, numPartitions: int | None = None) -> RDD:
            recorder = active()
            if recorder is None:
                return original(self, other, numPartitions)
            return _grouped(recorder, api, [self, other], numPartitions, dispatch, flat)
        return patched
    return make


for _api, (_left, _right) in _JOINS.items():
    register(RDD, _api)(_two_inputs(_api, w.JoinDispatch(_left, _right), flat=True))
register(RDD, "cogroup")(_two_inputs("cogroup", w.CogroupDispatch(2), flat=False))


@register(RDD, "groupWith")
def _group_with(original: Callable) -> Callable:
    @functools.wraps(original)
    def patched(self: RDD, other: RDD, *others: RDD) -> RDD:
        recorder = active()
        if recorder is None:
            return original(self, other, *others)
        rdds = [self, other, *others]
        return _grouped(recorder, "groupWith", rdds, None, w.CogroupDispatch(len(rdds)),
                        flat=False)
    return patched
