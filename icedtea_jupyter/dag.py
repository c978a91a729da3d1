"""The pipeline's DAG: Python operators (hosted, with metrics) and opaque JVM nodes."""
from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field

UNTRACKED = "untracked"  # the api of a node for an RDD PySpark built by a call not followed


@dataclass
class OperatorNode:
    """One node. ``kind`` is ``"python"`` (runs in a worker host) or ``"jvm"`` (opaque)."""

    id: int
    name: str
    kind: str
    api: str
    parents: list[int] = field(default_factory=list)
    phase: str = ""  # "combine"/"merge" for the two sides of a key-based aggregation
    named: bool = False  # the name came from setName or an explicit name
    theta: bool = False  # the interesting operator θ
    in_g: bool = False  # in G(θ): θ or downstream of it
    partitions: int | None = None  # partitions of the RDD it produces, when known
    input_partitions: list[int] | None = None  # a union: partitions of each input, in order
    inputs: list[int] | None = None  # a join/cogroup: each input's node, in argument order
    chained: bool = False  # applied straight to its parent's records in the same Python worker
    copartitioned: bool = False  # a join/cogroup of inputs partitioned alike: no shuffle
    hosted: bool = False  # a JVM shuffle (partitionBy) read by a worker host: it has loads

    def __repr__(self) -> str:
        return f"OperatorNode({self.name!r}, kind={self.kind!r}, api={self.api!r})"


class Dag:
    """Operators in creation order, edges as (upstream name, downstream name) pairs."""

    def __init__(self, nodes: list[OperatorNode] | None = None,
                 stages: dict[int, list[str]] | None = None) -> None:
        self._nodes: list[OperatorNode] = list(nodes or [])
        self.stages: dict[int, list[str]] = dict(stages or {})
        self._lock = threading.Lock()

    # --- building -----------------------------------------------------------------
    def add(self, name: str, kind: str, api: str, parents: list[int], phase: str = "",
            named: bool = False) -> OperatorNode:
        with self._lock:
            node = OperatorNode(len(self._nodes), self._unique(name), kind, api,
                                sorted(set(parents)), phase, named)
            node.in_g = any(self._nodes[p].in_g for p in node.parents)
            self._nodes.append(node)
            return node

    def rename(self, node_id: int, name: str) -> None:
        with self._lock:
            node = self._nodes[node_id]
            if node.name != name:
                node.name = self._unique(name, exclude=node_id)
            node.named = True

    def _unique(self, name: str, exclude: int | None = None) -> str:
        taken = {n.name for n in self._nodes if n.id != exclude}
        if name not in taken:
            return name
        k = 2
        while f"{name}#{k}" in taken:
            k += 1
        return f"{name}#{k}"

    def observe_stage(self, stage: int, node_id: int) -> None:
        with self._lock:
            names = self.stages.setdefault(stage, [])
            name = self._nodes[node_id].name
            if name not in names:
                names.append(name)

    # --- reading ------------------------------------------------------------------
    @property
    def operators(self) -> list[OperatorNode]:
        return list(self._nodes)

    @property
    def python_operators(self) -> list[OperatorNode]:
        return [n for n in self._nodes if n.kind == "python"]

    @property
    def loaded_operators(self) -> list[OperatorNode]:
        """The nodes with loads per partition: Python operators and hosted shuffles."""
        return [n for n in self._nodes if n.kind == "python" or n.hosted]

    @property
    def edges(self) -> list[tuple[str, str]]:
        return [(self._nodes[p].name, n.name) for n in self._nodes for p in n.parents]

    @property
    def interesting(self) -> OperatorNode | None:
        """θ, the interesting operator (None before the cell created any Python operator)."""
        return next((n for n in self._nodes if n.theta), None)

    def require_interesting(self) -> OperatorNode:
        """θ; LookupError when there is none (the cell created no Python operator)."""
        theta = self.interesting
        if theta is None:
            raise LookupError("no interesting operator θ: the cell created no Python operator")
        return theta

    @property
    def g_theta(self) -> list[OperatorNode]:
        """G(θ): θ and every operator downstream of it."""
        return [n for n in self._nodes if n.in_g]

    def set_interesting(self, node_id: int) -> None:
        """Make ``node_id`` θ and recompute G(θ)."""
        with self._lock:
            for node in self._nodes:
                node.theta = node.id == node_id
            self._spread_g()

    def attach(self, node_id: int, parent_id: int) -> list[int]:
        """Give ``node_id`` (a UDF's node, made when its column was) the parent it is
        computed on; returns the ids that joined G(θ) by it."""
        with self._lock:
            node = self._nodes[node_id]
            if parent_id not in node.parents:
                node.parents = sorted({*node.parents, parent_id})
            before = {n.id for n in self._nodes if n.in_g}
            self._spread_g()
            return [n.id for n in self._nodes if n.in_g and n.id not in before]

    def _spread_g(self) -> None:
        """G(θ): θ and whatever reads it, directly or not (a UDF's node can come before
        its parent: it is made with its column, and gets its parent when it is used)."""
        for node in self._nodes:
            node.in_g = node.theta
        grew = True
        while grew:
            grew = False
            for node in self._nodes:
                if not node.in_g and any(self._nodes[p].in_g for p in node.parents):
                    node.in_g = grew = True

    def node(self, key: int | str) -> OperatorNode:
        for n in self._nodes:
            if n.id == key or n.name == key:
                return n
        known = ", ".join(n.name for n in self._nodes) or "none"
        raise KeyError(f"no operator {key!r} in this run (operators: {known})")

    def input_of(self, operator: str, partition: int) -> str:
        """The upstream operator whose records ``operator`` reads on ``partition``.

        A union's partitions are its inputs' partitions one after the other (PySpark's
        ``union`` does not interleave), so the input order of an operator after a union
        is one input per partition, fixed by the partition number."""
        node, part = self.node(operator), partition
        while node.parents:
            parent = self._nodes[node.parents[0]]
            if parent.input_partitions and len(parent.parents) > 1:
                for upstream, count in zip(parent.parents, parent.input_partitions):
                    if part < count:
                        return self._nodes[upstream].name
                    part -= count
                raise IndexError(f"partition {partition} is beyond {parent.name}'s inputs")
            if len(parent.parents) != 1 or parent.kind == "python":
                return parent.name
            node = parent
        return node.name

    def names(self) -> dict[int, str]:
        return {n.id: n.name for n in self._nodes}

    def to_json(self) -> dict:
        return {"operators": [asdict(n) for n in self._nodes],
                "edges": [list(e) for e in self.edges],
                "stages": {str(k): v for k, v in sorted(self.stages.items())}}

    @classmethod
    def from_json(cls, data: dict) -> Dag:
        nodes = [OperatorNode(**n) for n in data.get("operators", [])]
        stages = {int(k): list(v) for k, v in data.get("stages", {}).items()}
        return cls(nodes, stages)

    def __repr__(self) -> str:
        return f"Dag({len(self._nodes)} operators, {len(self.edges)} edges)"
