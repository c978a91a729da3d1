"""How lineage flows between the nodes of a run's DAG.

A hosted Python operator links its outputs to its inputs in its lineage table: a
pipelined one to its parent's outputs, an aggregation's reduce side to its map side's
outputs (across the shuffle), a join or cogroup to each of its inputs' outputs. An
aggregation's map side links each combiner to the inputs of its partition with the
same key (``key`` links: captured as links, or in runs recorded before, found among
the records). A
``union`` keeps its inputs' partitions one after the other, records in place. A source
starts the lineage: its records are the ids (partition, position). Other JVM operators
(``partitionBy``, ``repartition``, ``coalesce``, ``distinct``, ``sortByKey``...) move
records between partitions: they link a record to its equal records on the other side
(``value`` links, resolved by the trace over the records themselves); ``zipWithIndex``
and ``zipWithUniqueId`` pair each record with a number in place (``place`` links: the
same partition and position). A DataFrame's
``.rdd`` is a source (its rows are the ids); DataFrame operators are not traced yet.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..dag import UNTRACKED, Dag, OperatorNode
from ..executor.lineage import JOINS, RDD_APIS

LINKS, KEY, UNION, SOURCE, VALUE, PLACE, NONE = ("links", "key", "union", "source", "value",
                                                 "place", "none")
# JVM operators that move records without changing them (a distinct merges equal ones)
MOVES = frozenset({"partitionBy", "repartition", "coalesce", "distinct", "sortByKey", "sortBy",
                   "sample", "repartitionAndSortWithinPartitions"})
IN_PLACE = frozenset({"zipWithIndex", "zipWithUniqueId"})  # (record, number), in place


@dataclass(frozen=True)
class Step:
    """How ``node`` reads its ``inputs`` (node ids, by input index): ``how`` is one of
    links (its lineage table), key (same key, same partition), union, source (no
    inputs), value (equal records), place (same partition and position), none (not
    traced)."""

    node: OperatorNode
    inputs: tuple[int, ...]
    how: str


class LineageGraph:
    """The DAG's nodes as lineage steps; ``children`` the other way."""

    def __init__(self, dag: Dag) -> None:
        self.dag = dag
        self.steps = {n.id: _step(dag, n) for n in dag.operators if n.api != "shuffle"}
        self.children: dict[int, list[tuple[int, int]]] = {i: [] for i in self.steps}
        for step in self.steps.values():
            for index, parent in enumerate(step.inputs):
                if parent in self.children:
                    self.children[parent].append((step.node.id, index))

    def output(self) -> OperatorNode:
        """The cell's last operator: the last node nothing reads from."""
        leaves = [s for s in self.steps.values() if not self.children[s.node.id]]
        if not leaves:
            raise LookupError("the run has no operator to trace from")
        last = max(leaves, key=lambda s: s.node.id)
        if last.how == NONE:
            raise LookupError(f"the cell's last operator {last.node.name!r} (a {last.node.kind} "
                              f"{last.node.api}) has no lineage: it covers RDD operators (not "
                              "DataFrame operators, yet); trace from another with operator=...")
        return last.node

    def sources(self) -> list[OperatorNode]:
        return [s.node for s in self.steps.values() if s.how == SOURCE]

    def cuts(self) -> list[OperatorNode]:
        """Nodes PySpark built by calls the recorder did not follow: nothing upstream of
        them is linked to what reads them."""
        return [s.node for s in self.steps.values() if s.node.api == UNTRACKED]


def _step(dag: Dag, node: OperatorNode) -> Step:
    if node.kind == "python":
        if node.phase == "merge":  # its parent is the shuffle; its inputs, the map side's
            shuffle = dag.node(node.parents[0])
            return Step(node, tuple(shuffle.parents), LINKS)
        if node.api in JOINS and node.inputs:
            return Step(node, tuple(node.inputs), LINKS)
        if node.api not in RDD_APIS or len(node.parents) != 1:  # DataFrame operators too
            return Step(node, tuple(node.parents), NONE)
        if node.phase == "combine":
            return Step(node, tuple(node.parents), KEY)
        return Step(node, tuple(node.parents), LINKS)
    if node.api == UNTRACKED:  # PySpark built it by a call the recorder did not follow
        return Step(node, (), NONE)
    if not node.parents or node.api == "rdd":  # a DataFrame's .rdd: its rows are the ids
        return Step(node, (), SOURCE)
    if node.input_partitions and node.inputs:
        return Step(node, tuple(node.inputs), UNION)
    if node.api in MOVES and len(node.parents) == 1:
        return Step(node, tuple(node.parents), VALUE)
    if node.api in IN_PLACE and len(node.parents) == 1:
        return Step(node, tuple(node.parents), PLACE)
    return Step(node, tuple(node.parents), NONE)
