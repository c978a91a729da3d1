"""G(θ)'s shape as replay runs it: θ's tree (θ and the operators PySpark pipelines after
it), its root-to-leaf paths, the workers fed by them across a shuffle, a join or a
union (``Fed``), and what replay does not compute (``not_replayed``)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def reduce_side_of(dag: Any, last: Any) -> Any:
    """The reduce side of the aggregation whose map side ends θ's chain, or None."""
    if last.phase != "combine":
        return None
    for node in dag.python_operators:
        if node.phase == "merge" and node.parents and \
                dag.node(node.parents[0]).parents == [last.id]:
            return node
    return None


@dataclass
class Fed:
    """Workers fed by θ's cursors: ``names`` (head first, a chain), their partitions, and
    where each partition's records come from: ``("origins", leaf, reader)`` — the
    shuffle, in the order ``reader``'s log gives —, ``("join", …)`` (``_after_join``) or
    ``("straight", θ partition, leaf)`` — after a union — or ``("regenerated", head)``:
    a DataFrame operator's inputs regenerated from its own input DataFrame."""

    names: list[str]
    partitions: list[int]
    sources: dict[int, tuple]


def tree_of(dag: Any, theta: Any) -> tuple[list[str], dict[str, list[str]]]:
    """θ and the operators PySpark pipelines after it, upstream first, and who feeds whom
    (θ feeding two paths makes a tree: PySpark runs θ once per path, the same way)."""
    names, children, queue = [], {}, [theta]
    while queue:
        node = queue.pop(0)
        names.append(node.name)
        followers = [n for n in dag.python_operators if n.chained and n.in_g
                     and n.parents == [node.id]]
        children[node.name] = [n.name for n in followers]
        queue.extend(followers)
    return names, children


def paths_of(names: list[str], children: dict[str, list[str]]) -> list[list[str]]:
    """The root-to-leaf chains of θ's tree, leaves in the tree's order."""
    paths, stack = [], [[names[0]]]
    while stack:
        path = stack.pop(0)
        below = children.get(path[-1], [])
        if not below:
            paths.append(path)
        stack[:0] = [path + [child] for child in below]
    return paths


def fed_stages(dag: Any, names: list[str], children: dict, partitions_of: Callable,
               kept: Callable[[Any], bool] = lambda node: True) -> list[Fed]:
    """The reduce sides after map sides in θ's tree, and the operators after a union of
    its leaves; ``kept(node)``: whether the run kept a copy of a DataFrame operator to
    replay (a window UDF's is not)."""
    leaves = [dag.node(n) for n in names if not children[n]]
    stages = []
    for leaf in leaves:
        merge = reduce_side_of(dag, leaf)
        if merge is not None:
            parts = partitions_of(merge)
            stages.append(Fed([n.name for n in chain_of(dag, merge)], parts,
                              {q: ("origins", leaf.name, merge.name) for q in parts}))
        stages.extend(_after_partition_by(dag, leaf, partitions_of))
    leaf_ids = {leaf.id for leaf in leaves}
    stages.extend(_after_join(dag, leaf_ids, partitions_of))
    for union in dag.operators:
        if union.kind != "jvm" or not union.input_partitions or len(union.parents) < 2 \
                or not set(union.parents) <= leaf_ids:
            continue
        sources, q = {}, 0
        for parent, count in zip(union.parents, union.input_partitions):
            for p in range(count):
                sources[q] = ("straight", p, dag.node(parent).name)
                q += 1
        for head in dag.python_operators:
            if head.parents == [union.id] and head.in_g:
                stages.append(Fed([n.name for n in chain_of(dag, head)], sorted(sources),
                                  sources))
    stages.extend(_dataframe_after(dag, set(names) | {n for f in stages for n in f.names},
                                   partitions_of, kept))
    return stages


def _dataframe_after(dag: Any, replayed: set[str], partitions_of: Callable,
                     kept: Callable[[Any], bool]) -> list[Fed]:
    """The DataFrame Python operators of G(θ) in workers of their own (after JVM
    operators or a shuffle; a UDF column on θ's output), and those pipelined after them:
    each partition's records are regenerated from the operator's own input DataFrame,
    ``("regenerated", name)``."""
    stages: list[Fed] = []
    for node in dag.python_operators:
        if node.in_g and node.api in DATAFRAME_APIS and node.name not in replayed and \
                kept(node) and not any(node.name in f.names for f in stages):
            parts = partitions_of(node)
            if parts:  # none ran (a UDF column the action did not need)
                stages.append(Fed([n.name for n in chain_of(dag, node)], parts,
                                  {q: ("regenerated", node.name) for q in parts}))
    return stages


def _after_join(dag: Any, leaf_ids: set[int], partitions_of: Callable) -> list[Fed]:
    """Joins and cogroups reading θ's leaves that logged their combiners' origins
    (``input_partitions`` set), and the operators pipelined after them: each partition
    fed ``("join", reader, sides, offsets)``, ``sides`` naming the leaf of each input
    (None: an input outside G(θ)), ``offsets`` where its partitions start in the union.
    A join of inputs partitioned alike (``copartitioned``) shuffles nothing: partition q
    of every input goes through one map-side combine, in θ's task, whose combiners the
    merge reads; they are regenerated with Spark, ``("regenerated", join)``."""
    stages = []
    for join in dag.python_operators:
        parts = partitions_of(join) if join.api in _JOINS and join.inputs and \
            set(join.inputs) & leaf_ids else []
        if parts and getattr(join, "copartitioned", False):  # no shuffle: see the module
            stages.append(Fed([n.name for n in chain_of(dag, join)], parts,
                              {q: ("regenerated", join.name) for q in parts}))
            continue
        if not parts or not join.input_partitions:
            continue
        sides = tuple(dag.node(i).name if i in leaf_ids else None for i in join.inputs)
        offsets = tuple(sum(join.input_partitions[:i]) for i in range(len(join.inputs)))
        stages.append(Fed([n.name for n in chain_of(dag, join)], parts,
                          {q: ("join", join.name, sides, offsets) for q in parts}))
    return stages


def _after_partition_by(dag: Any, leaf: Any, partitions_of: Callable) -> list[Fed]:
    """The operators after a ``partitionBy`` of ``leaf``'s outputs whose reads were
    logged (its ``ShuffleRead`` workers, whose log gives the order of the records)."""
    stages = []
    for shuffle in dag.operators:
        if shuffle.kind != "jvm" or shuffle.api != "partitionBy" or \
                shuffle.parents != [leaf.id] or not partitions_of(shuffle):
            continue
        parts = partitions_of(shuffle)
        for head in dag.python_operators:
            if head.parents == [shuffle.id] and head.in_g:
                stages.append(Fed([n.name for n in chain_of(dag, head)], parts,
                                  {q: ("origins", leaf.name, shuffle.name) for q in parts}))
    return stages


_JOINS = ("join", "leftOuterJoin", "rightOuterJoin", "fullOuterJoin", "cogroup", "groupWith")
DATAFRAME_APIS = ("mapInPandas", "mapInArrow", "applyInPandas", "udf")


def not_replayed(dag: Any, chain: list[str], fed: list[Fed],
                 partitions_of: Callable = lambda node: [0],
                 unkept: dict | None = None) -> str:
    """What the debugger says of the Python operators of G(θ) it does not replay (none:
    ""): which, why, and what to record to debug them; and of UDF columns after θ that
    never ran (``partitions_of`` gives no partition: the actions did not need them).
    ``unkept``: the manifest's UDFs the run kept no copy of, and why, by node id."""
    replayed = set(chain) | {name for stage in fed for name in stage.names}
    below = _downstream(dag, chain[0]) if chain else set()
    missing = [n for n in dag.python_operators
               if (n.in_g or n.id in below) and n.name not in replayed]
    idle = [n for n in missing if n.api == "udf" and not partitions_of(n)]
    missing = [n for n in missing if n not in idle]
    notes = [_never_ran(idle)] if idle else []
    if missing:
        notes.append(_why_not_replayed(dag, missing, unkept or {}))
    return " ".join(notes)


def _never_ran(idle: list[Any]) -> str:
    names = ", ".join(repr(n.name) for n in idle)
    return (f"{names} after θ never ran: the cell's actions did not need their columns "
            "(Spark left them out of its plan), so they have no state to show")


def _why_not_replayed(dag: Any, missing: list[Any], unkept: dict) -> str:
    first = missing[0]
    reads = [dag.node(p).name for p in first.parents]
    advice = f"to step through {first.name!r}, record the cell again with " \
             f"--interesting {first.name!r}"
    if first.api == "udf" and first.in_g:
        why, advice = _unkept_udf(first.name, unkept.get(str(first.id), {}))
    elif first.api == "udf":
        why = (f"{first.name!r} is a UDF column after θ that this run left out of G(θ) "
               "(recorded by a version before UDF columns after θ joined it), so its "
               "workers recorded nothing for replay")
    elif first.api in _JOINS:
        why = (f"{first.name!r}'s map side logged no origins for replay (its inputs "
               "were partitioned alike, or lineage capture tagged them its own way)")
    elif first.api in DATAFRAME_APIS:
        why = "a DataFrame operator after θ runs in a Python worker of its own, whose " \
              "inputs (θ's outputs through Spark's JVM operators) replay does not rebuild yet"
    else:
        why = f"{first.name!r} reads {', '.join(map(repr, reads))}, which replay does " \
              "not rebuild from θ's outputs yet"
    names = ", ".join(repr(n.name) for n in missing)
    return (f"{names} in G(θ) are not replayed: {why}. Their states are not in this view "
            f"(run.snapshot(k) shows how far they got in the run); {advice}")


WINDOW_UNSEEN = (
    "the recorder did not see the window it is computed over (its column's .over(...) "
    "was made outside the recording cell), and without it replay cannot regenerate the "
    "UDF's calls (Spark calls it once a window partition for an unbounded frame, once a "
    "row for a bounded one)")


def _unkept_udf(name: str, reason: dict) -> tuple[str, str]:
    """Why the run kept no copy of a UDF column after θ, and what to do instead."""
    if reason.get("kind") == "unpicklable":
        return (f"{name!r} is a UDF column after θ whose function could not be pickled "
                f"for replay ({reason.get('error')})",
                "to step through it, make its function picklable (no open files, "
                "sockets or locks in its closure) and record the cell again")
    return (f"{name!r} is a window UDF after θ (an aggregate UDF over .over(...)): "
            f"{WINDOW_UNSEEN}",
            f"to step through it, make its .over(...) column in the recorded cell, or "
            f"call it in groupBy(...).agg(...) (a record a group) with "
            f"--interesting {name!r}")


def _downstream(dag: Any, theta_name: str) -> set[int]:
    """Ids of the operators fed, directly or not, by θ. A UDF's node is made where the
    UDF is defined and gets its parent later: it can come before its parent."""
    theta = dag.node(theta_name).id
    found = {theta}
    grew = True
    while grew:
        more = {n.id for n in dag.operators if n.id not in found
                and any(p in found for p in n.parents)}
        found |= more
        grew = bool(more)
    return found - {theta}


def regenerated_notes(hows: dict[str, set[str]]) -> list[str]:
    """What a jump says of the DataFrame operators it puts where their own logs had them
    (``_dataframe_after``): how, and how steps over θ's records move them (``hows``: by
    operator, ``regenerated_feed.Release.how`` of its partitions)."""
    notes = []
    for name, ways in sorted(hows.items()):
        notes.append(
            f"{name!r} after θ ran in a Python worker of its own: its inputs are "
            "regenerated with Spark from what it read (checked against what its worker "
            "logged), and jumps give it as many as it had processed at the interaction. "
            "It " + "; on other partitions it ".join(sorted(ways)))
    return notes


def chain_of(dag: Any, theta: Any) -> list[Any]:
    """θ and the Python operators PySpark pipelines after it in the same worker."""
    chain = [theta]
    while True:
        follower = next((n for n in dag.python_operators if n.chained and n.in_g
                         and n.parents == [chain[-1].id]), None)
        if follower is None:
            return chain
        chain.append(follower)
