"""Picklable descriptions of a run and of its operators, shipped with tasks."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RunSpec:
    """What every worker of a run needs to find and authenticate with its coordinator."""

    run_id: str
    address: tuple[str, int]
    secret: bytes
    store_path: str
    agents: tuple = ()  # worker-side Agent classes, in order
    connect_timeout: float = 2.0
    condition: str | None = None  # --interact-when: a Python expression over ``row``
    record_inputs: bool = False  # --record-inputs: keep θ's input records in the store
    checkpoint: str = "none"  # --checkpoint: "all"/"online" make workers write checkpoints
    lineage: bool = False  # --lineage: workers capture record-level lineage
    skew: bool = False  # --skew: key-partitioned workers count their heavy keys
    on_error: str = "fail"  # --on-error: "pause" makes an operator's exception a hit
    interact_at: tuple = ()  # --interact-at: per interaction, {partition: count or None}
    store_token: str = ""  # what a worker finds in the store if it shares it (artifacts.py)


@dataclass
class OperatorSpec:
    """One Python operator of a run: its id in the run's DAG and the API that made it."""

    op_id: int
    run: RunSpec
    api: str
    name: str = field(default="")
    theta: bool = False  # the interesting operator θ
    in_g: bool = False  # θ or downstream of θ: G(θ)
    phase: str = ""  # "combine"/"merge": a side of a key-based aggregation
    shuffle: tuple | None = None  # a map side under --skew: (numPartitions, partitionFunc)
