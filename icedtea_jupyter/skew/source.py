"""What a skew report reads from a run, given by the session (skew imports no session).

``SkewSource`` is plain data and callables: the DAG, the workers' loads (final: the
successful attempts; live: the latest counts), the key-counting workers' sketches,
and, for a run recorded in this kernel, how to sample an aggregation's records and
how to re-run the cell with heavy keys split (``s.mitigate()``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..dag import Dag, OperatorNode


@dataclass
class SkewSource:
    dag: Dag
    cell: str
    workers: list[dict]  # operator (id), partition, status, records_in, bytes_in, seconds
    sketches: dict[int, list[dict]]  # node id -> its workers' summaries
    live: bool = False
    skew_recorded: bool = True  # the run had --skew
    wall: float = 0.0  # the run's duration, seconds
    run_id: str = ""
    functions: dict[int, tuple] = field(default_factory=dict)  # combine node -> functions
    sample: Callable[[int, list], list] | None = None  # (combine node, keys) -> records
    rerun: Callable[[dict], Any] | None = None  # {combine node: (keys, salts)} -> Run
    namespace: dict | None = None  # the cell's globals after the run (its results)
    # live: node id -> partition -> bytes still to read, where Spark knows them
    waiting: Callable[[int], dict[int, int] | None] | None = None
    waiting_note: str = ""  # why there is no ``waiting`` at all (Spark Connect)
    # worker keys (WORKER_KEY's fields) -> each one's (seconds, records in) over time
    series: Callable[[list[tuple]], dict[tuple, tuple]] | None = None
    series_note: str = ""  # why there is no load over time (a store from before it)
    # every task of the run's Spark stages (session/stage_loads.py), once the run ended
    stage_tasks: list[dict] | None = None
    # a DataFrame join node -> its loads per shuffle partition (worker rows) and its keys
    # (a sketch summary), counted by Spark when asked (session/frame_join_keys.py)
    frame_join: Callable[[int], tuple[list[dict], dict]] | None = None
    # why a --skew run has no heavy-key sketch at all (store/missing.py), if it has none
    keys_note: str = ""


WORKER_KEY = ("operator", "stage", "partition", "attempt", "task")  # one task attempt
FRAME_JOIN = "DataFrame.join"  # a report's api for a DataFrame join


def is_frame_join(node: OperatorNode) -> bool:
    """A DataFrame join: a JVM node (an RDD join is a hosted Python operator)."""
    return node.kind == "jvm" and node.api == "join"


def frame_joins(dag: Dag) -> list[str]:
    """The names of ``dag``'s DataFrame joins."""
    return [n.name for n in dag.operators if is_frame_join(n)]


def with_frame_join(source: SkewSource, node: OperatorNode) -> SkewSource:
    """``source`` with the DataFrame join's loads and keys, as Spark counted them."""
    if source.frame_join is None:
        raise ValueError(f"{node.name!r} is a DataFrame join: its keys are counted by Spark "
                         "for a run recorded with --skew in this kernel")
    workers, summary = source.frame_join(node.id)
    return replace(source, workers=source.workers + workers,
                   sketches={**source.sketches, node.id: [summary]})


def worker_key(worker: dict) -> tuple:
    """A worker row's identity: (operator, stage, partition, attempt, task)."""
    return tuple(worker.get(name) for name in WORKER_KEY)


def key_node(dag: Dag, node: OperatorNode) -> OperatorNode:
    """The node whose workers count ``node``'s keys: an aggregation's map side."""
    if node.phase == "merge":
        for shuffle in (dag.node(p) for p in node.parents):
            for parent in (dag.node(p) for p in shuffle.parents):
                if parent.phase == "combine":
                    return parent
    return node


def load_node(dag: Dag, node: OperatorNode) -> OperatorNode:
    """The node whose partitions carry ``node``'s keyed load: an aggregation's reduce side."""
    if node.phase == "combine":
        for child in dag.operators:
            if any(dag.node(p).api == "shuffle" and node.id in dag.node(p).parents
                   for p in child.parents) and child.phase == "merge":
                return child
    return node


def occurrence(dag: Dag, node: OperatorNode) -> int:
    """How many operators of ``node``'s kind, api and side the DAG made before it."""
    alike = [n for n in dag.operators
             if (n.api, n.phase, n.kind) == (node.api, node.phase, node.kind)]
    return alike.index(node) if node in alike else 0


def records_in(workers: list[dict], node: OperatorNode) -> int:
    """The records ``node``'s workers took in."""
    return sum(int(w.get("records_in") or 0) for w in workers if w["operator"] == node.id)
