"""``t.replay()`` on a DataFrame trace (Titian's selective replay): the cell's DataFrame
calls made again as called (``FrameCall``), on only the source rows a backward trace ends
at, and the rows of its last DataFrame collected. Each source keeps the rows whose id
(``monotonically_increasing_id``, as its lineage frame numbered them) the trace reached;
an aggregation or ``applyInPandas`` groups them again, a join joins them: the rows that
come out are what those source rows alone make.
"""
from __future__ import annotations

from typing import Any

from .frames import FrameGraph, Untraced, source_column
from .records import Positions

POSITION_BITS = 33  # monotonically_increasing_id: the partition above, the position below


def replay_frames(graph: FrameGraph, sources: dict[int, Positions], target: int) -> list:
    """``target``'s rows made from only ``sources``' rows (node -> positions)."""
    built: dict[int, Any] = {}

    def made(node: int) -> Any:
        if node not in built:
            built[node] = _remade(graph, node, sources, made)
        return built[node]

    try:
        return made(target).collect()
    except Untraced as exc:
        raise LookupError(f"replay cannot make the cell's DataFrame again: {exc}") from None


def _remade(graph: FrameGraph, node: int, sources: dict[int, Positions], made: Any) -> Any:
    from pyspark.sql import functions as F

    how = graph.how.get(node)
    if how is None:
        op = graph.dag.node(node)
        raise Untraced(f"{op.name!r} (a {op.kind} {op.api}) is not traced in DataFrame lineage")
    if how == "source":
        ids = [(p << POSITION_BITS) | x for p, xs in sources.get(node, {}).items() for x in xs]
        column = source_column(node)
        kept = F.col(column).isin(ids) if ids else F.lit(False)
        return graph.outputs[node].withColumn(column, F.monotonically_increasing_id()) \
            .filter(kept).drop(column)
    call = graph.calls[node]
    if how == "key":
        source = graph.groups[node][0]
        grouping = graph.calls[graph._node_of(call.receiver)]
        grouped = made(source).groupBy(*grouping.args, **grouping.kwargs)
        if call.function is not None:  # applyInPandas
            return grouped.applyInPandas(call.function, *call.args, **call.kwargs)
        return getattr(grouped, call.api)(*call.args, **call.kwargs)
    parent = made(graph.parents[node][0])
    if call.api == "join":
        return parent.join(made(graph.parents[node][1]), *call.args[1:], **call.kwargs)
    if call.function is not None:  # mapInPandas: the user's function, hosting nothing
        return getattr(parent, call.api)(call.function, *call.args, **call.kwargs)
    return getattr(parent, call.api)(*call.args, **call.kwargs)
