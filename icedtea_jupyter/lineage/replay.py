"""``t.replay()``: Titian's selective replay — the cell's operators re-run with Spark on
just the source records a trace ends at, returning the outputs they produce.

The pipeline is rebuilt from what the run kept (``Recorder``): each source keeps only
the traced positions of each partition (so partitions stay where they were), each
Python operator runs as Spark ran it (its wrapper, hosting nothing once the run has
ended), an aggregation's two sides around the same shuffle, a union over its rebuilt
inputs. Joins and the JVM operators traced by equality are not rebuilt yet: replay says so.
"""
from __future__ import annotations

from typing import Any

from ..executor.lineage_jobs import KeepPositions
from .graph import KEY, LINKS, SOURCE, UNION, LineageGraph
from .records import Positions


def replay(graph: LineageGraph, run: Any, sources: dict[int, Positions], target: int) -> list:
    """The records ``target`` produces from only ``sources``' positions."""
    recorder = run.rebuild_parts()
    if recorder is None:
        raise LookupError("replay re-runs the cell's operators with Spark: this kernel no "
                          "longer has the run's pipeline (a reopened run)")
    built: dict[int, Any] = {}
    for node in sorted(graph.steps):
        if node > target:
            break
        rdd = _rebuilt(graph, recorder, built, node, sources)
        if rdd is not None:
            built[node] = rdd
    if target not in built:
        raise LookupError(f"replay cannot reach {graph.dag.node(target).name!r} from the traced "
                          "sources")
    return built[target].collect()


def _rebuilt(graph: LineageGraph, recorder: Any, built: dict[int, Any], node: int,
             sources: dict[int, Positions]) -> Any:
    step = graph.steps[node]
    if step.how == SOURCE:
        rdd = recorder.outputs.get(node)
        return rdd.mapPartitionsWithIndex(KeepPositions(sources.get(node, {})), True) \
            if rdd is not None else None
    parents: list[Any] = [built.get(i) for i in step.inputs]
    if not parents or any(p is None for p in parents):
        return None
    first = parents[0]
    if step.how == UNION:
        return first.context.union(parents)
    if step.node.phase == "merge":
        return _aggregated(recorder, step, first)
    if step.how in (LINKS, KEY) and step.node.kind == "python" and not step.node.inputs:
        return first.mapPartitionsWithIndex(recorder.kept[node], step.how == KEY)
    raise LookupError(f"replay does not rebuild {step.node.name!r} (a {step.node.kind} "
                      f"{step.node.api}) yet: it re-runs chains of Python operators, "
                      "aggregations and unions")


def _aggregated(recorder: Any, step: Any, combined: Any) -> Any:
    """An aggregation's reduce side over its map side's rebuilt output, through the same
    shuffle (partitions and partitioner) as in the run."""
    combine = step.inputs[0]
    partitions, partition_func = recorder.shuffles[combine]
    merged = combined.partitionBy(partitions, partition_func) \
        .mapPartitionsWithIndex(recorder.kept[step.node.id], True)
    if step.node.api == "groupByKey":
        from pyspark.resultiterable import ResultIterable

        merged = merged.mapValues(ResultIterable)
    return merged
