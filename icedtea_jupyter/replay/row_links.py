"""Which of θ's input batches each row of a DataFrame operator after θ waits for.

A ``mapInPandas`` (or a UDF column) after θ in θ's Spark stage runs in a Python worker of
its own: Spark's JVM takes θ's output rows through the operators between (a filter, a
projection) and cuts them again into batches for it. Nothing in the run logs which of θ's
records a batch waited for, but it follows from the rows: the operator's batch ``j`` is
complete once θ has emitted the row that ends it. This module computes, with Spark, how
many of the operator's input rows each of θ's input batches gives (``links``): θ runs
again on its regenerated input, each output row tagged with the input batch θ had
pulled last, and the ``Filter``, ``Project`` and ``Generate`` nodes between θ and the
operator (read from the optimized plan, as SQL) run on the tagged rows. Replay then
moves the operator by exactly the batches each step of θ completes
(``regenerated_feed.OwnCounts``).

Other operators between (a join, a window, a sort) are not row by row: ``links`` then
says why, and replay moves the operator at the end of θ's partition instead. A
generator (``explode``) is: it runs again on the tagged rows as a select expression.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from .dataframe_inputs import DataFrameUpstream, in_the_runs_session

BATCH, PART = "__icedtea_theta_batch", "__icedtea_theta_part"
_ROW_NODES = ("Project", "Filter", "Generate")
_OUTER = re.compile(r"^(explode|posexplode|inline)\(")  # generators with an _outer form
_THETA_NODES = {"MapInPandas": "mapInPandas", "MapInArrow": "mapInArrow",
                "PythonMapInArrow": "mapInArrow"}


class NotRowForRow(LookupError):
    """The operators between θ and a DataFrame operator after it are not only filters
    and projections (or θ is not a batch map): the message says which."""


class TagBatches:
    """θ's function, each output row tagged with the input batch θ had pulled last
    (the number of batches, for rows emitted after its input ended)."""

    def __init__(self, function: Any, api: str) -> None:
        self.function, self.api = function, api

    def __call__(self, batches: Iterator) -> Iterator:
        pulled = [0]

        def counted() -> Iterator:
            taken = 0
            for batch in batches:
                pulled[0] = taken
                taken += 1
                yield batch
            pulled[0] = taken  # its input has ended: what it emits now comes at the end

        for out in self.function(counted()):
            yield self._tagged(out, pulled[0])

    def _tagged(self, out: Any, tag: int) -> Any:
        if self.api == "mapInArrow":
            import pyarrow as pa

            column = pa.array([tag] * out.num_rows, pa.int64())
            return pa.RecordBatch.from_arrays([*out.columns, column],
                                              [*out.schema.names, BATCH])
        return out.assign(**{BATCH: tag})


def theta_node(plan: Any) -> tuple[Any, list[tuple[str, Any]]]:
    """The batch map at the bottom of ``plan``'s chain of filters, projections and
    generators (``explode``), and that chain (top first, as ``(kind, node)``);
    ``NotRowForRow`` at another node."""
    chain = []
    node = plan
    while node.nodeName() in _ROW_NODES:
        chain.append((node.nodeName(), node))
        node = node.child()
    if node.nodeName() not in _THETA_NODES:
        raise NotRowForRow(f"Spark runs a {node.nodeName()} between θ and it, which "
                           "does not give one row for each of θ's rows")
    return node, chain


def generated(node: Any) -> str:
    """A ``Generate`` node as a select expression: ``explode(xs) AS (x)``."""
    call = _sql(node.generator())
    if node.outer():
        if not _OUTER.match(call):
            raise NotRowForRow(f"Spark runs an outer {call} between θ and it")
        call = _OUTER.sub(r"\1_outer(", call, count=1)
    names = ", ".join(f"`{a.name()}`" for a in _seq(node.generatorOutput()))
    return f"{call} AS ({names})"


def _seq(scala_seq: Any) -> list:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def _sql(expression: Any) -> str:
    return str(expression.sql())


def links(theta: DataFrameUpstream, function: Any, operator: DataFrameUpstream,
          ) -> dict[int, list[int]]:
    """For each partition, the rows of ``operator``'s input that each of θ's input batches
    gave (a list indexed by batch; the last entry: rows θ emitted after its input ended).
    ``function``: θ's own function, as the cell passed it."""
    from pyspark.sql.functions import expr, spark_partition_id
    from pyspark.sql.types import LongType, StructField, StructType

    frame = operator.frame
    plan = frame._jdf.queryExecution().optimizedPlan()
    bottom, chain = theta_node(plan)
    own = theta.frame._jdf.queryExecution().optimizedPlan()
    if not bottom.child().sameResult(own):
        raise NotRowForRow("the batch map beneath it is not θ")
    schema = StructType.fromJson(json.loads(bottom.schema().json()))
    tagged_schema = StructType([*schema.fields, StructField(BATCH, LongType())])
    api = _THETA_NODES[bottom.nodeName()]
    tagged = getattr(theta.frame, api)(TagBatches(function, api), tagged_schema)
    tagged = tagged.withColumn(PART, spark_partition_id())
    for kind, node in reversed(chain):
        if kind == "Filter":
            tagged = tagged.where(expr(_sql(node.condition())))
        elif kind == "Generate":
            tagged = tagged.selectExpr("*", generated(node))
        else:
            tagged = tagged.selectExpr(*map(_sql, _seq(node.projectList())), BATCH, PART)
    counted = in_the_runs_session(tagged.groupBy(PART, BATCH).count(), theta.conf)
    rows: dict[int, dict[int, int]] = {}
    for part, batch, count in counted.collect():
        rows.setdefault(part, {})[batch] = count
    return {p: [by_batch.get(b, 0) for b in range(max(by_batch) + 1)]
            for p, by_batch in rows.items()}
