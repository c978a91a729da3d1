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

from pyspark.core.rdd import RDD, Partitioner, portable_hash

from ..executor import wrappers as w
from ..executor.lineage_keys import SideKeys
from ..executor.shuffle_read import OriginMerge, tag_positions
from .patching import active, node_of, register

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
    with recorder.transforming():
        union = functools.reduce(RDD.union, [_keys_kept(recorder, rdd, node_id).mapPartitions(
            w.TagValues(i), True) for i, (rdd, node_id) in enumerate(zip(rdds, inputs))])
        if num_partitions is None:
            num_partitions = union._defaultReducePartitions()
        memory, serializer = union._memory_limit(), union._jrdd_deserializer
        mixed = union.partitioner is not None  # partitioner-aware: inputs share partitions
        # partitioned as the grouping would: PySpark's partitionBy below shuffles nothing
        node.copartitioned = union.partitioner == Partitioner(num_partitions, portable_hash)
        # PySpark's stub says mapPartitions' function takes an Iterable; it is given an
        # iterator, which is what TaggedCombine declares
        offsets = list(itertools.accumulate([0] + [r.getNumPartitions() for r in rdds]))
        # --lineage too: a join links by key, found among its inputs by the trace
        combined = union.mapPartitions(
            w.TaggedCombine(memory * 0.9, serializer, mixed), True)  # type: ignore[arg-type]
        merge = w.GroupMerge(spec, dispatch, flat, memory, serializer)
        upstream = combined
        if not mixed and any(after_theta(rdd, recorder) for rdd in rdds):
            # replay feeds it: its map side's combiners are tagged with their origins,
            # and the map side (θ's side rebuilt by replay, the others regenerated) kept
            merge = OriginMerge(merge, w.TaggedCombine(memory * 0.9, serializer, False),
                                offsets[:-1])
            node.input_partitions = [r.getNumPartitions() for r in rdds]
            combined = combined.mapPartitionsWithIndex(tag_positions, True)
        shuffled = combined.partitionBy(num_partitions)
        recorder.keep_for_replay(node.id, merge, upstream if upstream is not combined
                                 else shuffled)
        result = shuffled.mapPartitionsWithIndex(merge, True)
    return recorder.produced(result, node)


def _keys_kept(recorder: Any, rdd: RDD, node_id: int) -> RDD:
    """``rdd``, its records' keys written to the store as it goes under ``--lineage``
    (``SideKeys``: a trace through the join reads them instead of regenerating it)."""
    if not recorder.run.lineage:
        return rdd
    return rdd.mapPartitionsWithIndex(SideKeys(recorder.run, node_id, rdd.getNumPartitions()),
                                      True)


def after_theta(rdd: RDD, recorder: Any) -> bool:
    """Whether ``rdd`` is the output of a Python operator of G(θ), in its worker (an
    operator applied to it runs in the same Python worker: PySpark pipelines them)."""
    from pyspark.core.rdd import PipelinedRDD

    node = node_of(rdd, recorder.run.run_id)
    return node is not None and recorder.dag.node(node).kind == "python" and \
        recorder.dag.node(node).in_g and isinstance(rdd, PipelinedRDD) and \
        rdd._is_pipelinable()


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
