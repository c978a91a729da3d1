"""Patches of the RDD API: Python operators get worker hosts, the rest become JVM nodes."""
from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from typing import Any

from pyspark.core.context import SparkContext
from pyspark.core.rdd import RDD, Partitioner, PipelinedRDD

from ..dag import OperatorNode
from ..executor import wrappers as w
from ..executor.salting import Salt, is_salted, not_salted, unsalt
from ..executor.shuffle_read import BlockMarks, Marking, ShuffleRead
from ..executor.spec import OperatorSpec
from . import joins  # noqa: F401 - registers join, the outer joins, cogroup, groupWith
from .naming import default_name
from .patching import active, current, node_of, register
from .recorder import MADE

# api -> (host loop kind, how to adapt the user's function, preservesPartitioning or None)
_RECORD_OPERATORS: dict[str, tuple[str, Callable | None, bool | None]] = {
    "map": ("map", None, None),
    "flatMap": ("flatMap", None, None),
    "filter": ("filter", None, True),
    "mapPartitions": ("mapPartitions", None, None),
    "mapPartitionsWithIndex": ("mapPartitionsWithIndex", None, None),
    "keyBy": ("map", w.KeyBy, False),
    "mapValues": ("map", w.MapValues, True),
    "flatMapValues": ("flatMap", w.FlatMapValues, True),
    "foreach": ("foreach", None, False),
    "foreachPartition": ("foreachPartition", None, False),
}
# PySpark builds these from its own calls (partitionBy, mapPartitions) or a JVM round trip
# (RDD(jrdd, ...)) that no patch sees: each becomes one node, read from its input
_STRUCTURAL = ("union", "partitionBy", "repartition", "coalesce", "distinct", "sortByKey",
               "sortBy", "subtract", "subtractByKey", "intersection", "cartesian", "zip",
               "sample", "groupBy", "repartitionAndSortWithinPartitions", "pipe", "glom",
               "zipWithIndex", "zipWithUniqueId")  # joins and cogroups: see joins.py
# return the RDD itself (or None): no node, but what they pickle is not a job of the cell
_IN_PLACE = ("cache", "persist", "unpersist", "checkpoint", "localCheckpoint")


def _bind(original: Callable, *args: Any, **kwargs: Any) -> dict[str, Any]:
    bound = inspect.signature(original).bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _pipelines_into(rdd: RDD, recorder: Any) -> bool:
    """Whether an operator applied to ``rdd`` runs in the same Python worker as the
    operator that produced it, reading its outputs directly (PySpark pipelines them)."""
    from pyspark.core.rdd import PipelinedRDD

    return (node_of(rdd, recorder.run.run_id) is not None and isinstance(rdd, PipelinedRDD)
            and rdd._is_pipelinable())


def _record_operator(api: str) -> Callable:
    kind, adapt, fixed_preserve = _RECORD_OPERATORS[api]

    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: RDD, f: Callable, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            if recorder is None:
                return original(self, f, *args, **kwargs)
            arguments = _bind(original, self, f, *args, **kwargs)
            preserves = (fixed_preserve if fixed_preserve is not None
                         else bool(arguments.get("preservesPartitioning", False)))
            chained = _pipelines_into(self, recorder)
            node, spec = recorder.python(api, f, recorder.parents(self))
            node.chained = chained
            function = w.PartitionFunction(spec, kind, adapt(f) if adapt else f)
            recorder.keep_for_replay(node.id, function, self)
            with recorder.transforming():
                result = self.mapPartitionsWithIndex(function, preserves)
                recorder.produced(result, node)
            if api in ("foreach", "foreachPartition"):
                with recorder.inside():  # the cell's action
                    result.count()
                return None
            return result
        return patched
    return make


for _api in _RECORD_OPERATORS:
    register(RDD, _api)(_record_operator(_api))


def _structural(api: str) -> Callable:
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: RDD, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            if recorder is None:
                return original(self, *args, **kwargs)
            inputs = [self] + [a for a in (*args, *kwargs.values()) if isinstance(a, RDD)]
            parents = recorder.parents(*inputs)
            marked = _marked_partition_by(recorder, original, self, args, kwargs) \
                if api == "partitionBy" and (joins.after_theta(self, recorder)
                                             or recorder.run.skew) else None
            if marked is not None:
                return marked
            with recorder.transforming():  # a sort's sampling job is not the cell's
                result = original(self, *args, **kwargs)
            node = recorder.jvm(api, parents)
            recorder.details[node.id] = {"args": [a for a in args if not isinstance(a, RDD)],
                                         "kwargs": kwargs}
            if api == "union":
                node.input_partitions = [rdd.getNumPartitions() for rdd in inputs]
                node.inputs = parents  # in the union's order (``parents`` is sorted)
            return recorder.produced(result, node)
        return patched
    return make


for _api in _STRUCTURAL:
    register(RDD, _api)(_structural(_api))


def _in_place(original: Callable) -> Callable:
    @functools.wraps(original)
    def patched(self: RDD, *args: Any, **kwargs: Any) -> Any:
        recorder = active()
        if recorder is None:
            return original(self, *args, **kwargs)
        with recorder.transforming():
            return original(self, *args, **kwargs)
    return patched


for _api in _IN_PLACE:
    register(RDD, _api)(_in_place)


def _marked_partition_by(recorder: Any, original: Callable, rdd: RDD, args: tuple,
                         kwargs: dict) -> RDD | None:
    """``partitionBy`` after θ's chain or under ``--skew``: the same shuffle, each map
    partition's block of each reduce partition started by a marker record, and a worker
    that reads the blocks whole (logging the order the shuffle delivered them in; under
    ``--skew`` counting their keys) before anything else sees the records. None: ``rdd``
    is partitioned so already (PySpark shuffles nothing)."""
    from pyspark.core.rdd import portable_hash

    bound = _bind(original, rdd, *args, **kwargs)
    partitions = bound["numPartitions"] or rdd._defaultReducePartitions()
    partition_func = bound["partitionFunc"]
    if rdd.partitioner == Partitioner(partitions, partition_func):
        return None
    marking = partition_func if partition_func is portable_hash else Marking(partition_func)
    node = recorder.jvm("partitionBy", recorder.parents(rdd))
    node.hosted = True
    spec = OperatorSpec(node.id, recorder.run, "partitionBy", node.name, in_g=node.in_g)
    reader = ShuffleRead(spec, partitions, partition_func)
    with recorder.transforming():
        marked = rdd.mapPartitionsWithIndex(BlockMarks(partitions), True)
        shuffled = original(marked, partitions, marking)
        batches: RDD = RDD(shuffled._jrdd, shuffled.ctx,
                           shuffled._jrdd_deserializer.serializer)
        result = batches.mapPartitionsWithIndex(reader, True)
    recorder.keep_for_replay(node.id, reader, shuffled)
    result.partitioner = Partitioner(partitions, partition_func)
    return recorder.produced(result, node)


def _marking(original: Callable) -> Callable:
    """An RDD constructed in the recording thread is marked with the run's id: one that
    no patch tagged was built by PySpark in the cell, not made before it."""
    @functools.wraps(original)
    def patched(self: RDD, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        recorder = current()
        if recorder is not None:
            setattr(self, MADE, recorder.run.run_id)
    return patched


register(RDD, "__init__")(_marking)
register(PipelinedRDD, "__init__")(_marking)


@register(RDD, "setName")
def _set_name(original: Callable) -> Callable:
    @functools.wraps(original)
    def patched(self: RDD, name: str) -> RDD:
        recorder = current()
        if recorder is None or recorder.depth:
            return original(self, name)
        recorder.rename(self, name)
        with recorder.transforming():  # PySpark pickles the operators into the command
            return original(self, name)
    return patched


# --- key-based aggregations: two hosted sides around a shuffle ----------------------
def _aggregate(self: RDD, recorder: Any, api: str, user_f: Any, functions: tuple,
               num_partitions: Any, partition_func: Callable, group: bool = False) -> RDD:
    base = default_name(user_f, api) if user_f is not None else api
    combine, combine_spec = recorder.python(api, user_f, recorder.parents(self), "combine",
                                            name=f"{base} (combine)")
    if num_partitions is None:
        num_partitions = self._defaultReducePartitions()
    memory = self._memory_limit()
    serializer = self._jrdd_deserializer if group else self.ctx.serializer
    combine.chained = _pipelines_into(self, recorder)
    split = recorder.splits.get(combine.id)  # s.mitigate(): (heavy keys, salts)
    if split is not None:
        with recorder.transforming():
            self = self.mapPartitionsWithIndex(Salt(*split))
    if recorder.run.skew:  # the map side names each heavy key's reduce partition
        combine_spec.shuffle = (num_partitions, partition_func)
    combine_function = w.CombineFunction(combine_spec, "combine", functions, memory * 0.9,
                                         serializer, group)
    recorder.keep_for_replay(combine.id, combine_function, self)
    with recorder.transforming():
        combined = self.mapPartitionsWithIndex(combine_function, True)
        recorder.outputs[combine.id] = combined
        shuffled = combined.partitionBy(num_partitions, partition_func)
        recorder.shuffles[combine.id] = (num_partitions, partition_func)  # t.replay()
        shuffle = recorder.jvm("shuffle", [combine.id])
        merge, merge_spec = recorder.python(api, user_f, [shuffle.id], "merge", name=base)
        merge_function = w.CombineFunction(merge_spec, "merge", functions, memory, serializer,
                                           group)
        recorder.keep_for_replay(merge.id, merge_function, shuffled)
        result = shuffled.mapPartitionsWithIndex(merge_function, True)
        if group:
            from pyspark.resultiterable import ResultIterable

            result = result.mapValues(ResultIterable)
        if split is not None:
            result = _merge_salted(result, functions[2], num_partitions, partition_func)
    recorder.companions[merge.id] = [combine.id]
    recorder.details[combine.id] = recorder.details[merge.id] = {
        "functions": functions, "partitions": num_partitions, "partitionFunc": partition_func}
    return recorder.produced(result, merge)


def _merge_salted(result: RDD, merge: Callable, num_partitions: int,
                  partition_func: Callable) -> RDD:
    """The second stage of a salted aggregation: the heavy keys' partial results merged
    under their own keys; the other keys' results as they were."""
    merged: RDD = result.filter(is_salted).map(unsalt).reduceByKey(merge, num_partitions,
                                                               partition_func)
    return result.filter(not_salted).union(merged)


def _keyed(api: str, functions_of: Callable[[dict], tuple], user_f_of: Callable[[dict], Any],
           group: bool = False) -> Callable:
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: RDD, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            if recorder is None:
                return original(self, *args, **kwargs)
            a = _bind(original, self, *args, **kwargs)
            return _aggregate(self, recorder, api, user_f_of(a), functions_of(a),
                              a.get("numPartitions"), a["partitionFunc"], group)
        return patched
    return make


register(RDD, "combineByKey")(_keyed(
    "combineByKey", lambda a: (a["createCombiner"], a["mergeValue"], a["mergeCombiners"]),
    lambda a: a["mergeValue"]))
register(RDD, "reduceByKey")(_keyed(
    "reduceByKey", lambda a: (w.identity, a["func"], a["func"]), lambda a: a["func"]))
register(RDD, "foldByKey")(_keyed(
    "foldByKey", lambda a: (w.ZeroThen(a["zeroValue"], a["func"]), a["func"], a["func"]),
    lambda a: a["func"]))
register(RDD, "aggregateByKey")(_keyed(
    "aggregateByKey",
    lambda a: (w.ZeroThen(a["zeroValue"], a["seqFunc"]), a["seqFunc"], a["combFunc"]),
    lambda a: a["seqFunc"]))
register(RDD, "groupByKey")(_keyed(
    "groupByKey", lambda a: (w.single_list, w.append, w.extend), lambda a: None, group=True))


# --- sources ----------------------------------------------------------------------
def _source(api: str, describe: Callable[[dict], str] | None = None) -> Callable:
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: SparkContext, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            if recorder is None:
                return original(self, *args, **kwargs)
            with recorder.inside():
                result = original(self, *args, **kwargs)
            name = api
            bound = _bind(original, self, *args, **kwargs)
            bound.pop("self", None)
            if describe is not None:
                name = f"{api}({describe(bound)})"
            parents: list[int] = []
            node: OperatorNode | None = None
            if api == "union":
                rdds = list(_bind(original, self, *args, **kwargs)["rdds"])
                node = recorder.jvm(api, recorder.parents(*rdds), name)
                node.input_partitions = [rdd.getNumPartitions() for rdd in rdds]
                node.inputs = recorder.parents(*rdds)
            node = node or recorder.jvm(api, parents, name)
            recorder.details[node.id] = {
                "source": api, "arguments": {k: v for k, v in bound.items() if k != "rdds"}}
            if api != "union":  # a union's inputs are sources sampled already
                result = recorder.sampled(result)
            return recorder.produced(result, node)
        return patched
    return make


def _path(a: dict) -> str:
    return os.path.basename(str(a.get("name", a.get("path", ""))).rstrip("/")) or "?"


register(SparkContext, "parallelize")(_source("parallelize"))
register(SparkContext, "range")(_source("range"))
register(SparkContext, "textFile")(_source("textFile", _path))
register(SparkContext, "wholeTextFiles")(_source("wholeTextFiles", _path))
register(SparkContext, "union")(_source("union"))
register(SparkContext, "emptyRDD")(_source("emptyRDD"))
for _api in ("pickleFile", "binaryFiles", "binaryRecords", "sequenceFile", "hadoopFile",
             "newAPIHadoopFile"):  # sources PySpark builds by a JVM round trip
    register(SparkContext, _api)(_source(_api, _path))
for _api in ("hadoopRDD", "newAPIHadoopRDD"):
    register(SparkContext, _api)(_source(_api))
