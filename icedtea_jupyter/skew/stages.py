"""Spark stages in a skew report: ``run.skew("stage N")`` reads a stage's tasks as an
operator's workers, so a JVM stage between Python operators (a DataFrame aggregation,
a ``partitionBy``, a sort) gets the same loads, skew test and advice. The tasks come from
Spark's status store (``session/stage_loads.py``): while the run records, as last read
(running tasks with their records at the executors' last heartbeat), and when it ends.
"""
from __future__ import annotations

import re

from ..dag import OperatorNode

STAGE_NAME = re.compile(r"^stage (\d+)$")
STATUSES = {"SUCCESS": "finished", "RUNNING": "running"}  # Spark's task -> a worker's


def stage_id(name: str) -> int | None:
    """N for "stage N", else None."""
    match = STAGE_NAME.match(name.strip())
    return int(match.group(1)) if match else None


def stage_node(stage: int) -> OperatorNode:
    """A stand-in node for a Spark stage (negative id: never an operator's)."""
    return OperatorNode(-1 - stage, f"stage {stage}", "jvm", "stage")


def stage_workers(tasks: list[dict], stage: int) -> list[dict]:
    """The stage's tasks of its latest attempt, one per partition, as the worker rows a
    report reads (records in, bytes in, seconds): its successful one, else (while the
    run records) the running one furthest along."""
    rows = [t for t in tasks if t["stage"] == stage and t["status"] in STATUSES]
    latest = max((t["attempt"] for t in rows), default=0)
    node = stage_node(stage).id
    best: dict[int, dict] = {}
    for t in rows:
        mine = best.get(t["partition"])
        if t["attempt"] == latest and (mine is None or _rank(t) > _rank(mine)):
            best[t["partition"]] = t
    return [{"operator": node, "partition": p, "stage": stage, "attempt": t["attempt"],
             "task": t["task"], "status": STATUSES[t["status"]], "records_in": t["records"],
             "bytes_in": t["bytes"], "seconds": t["seconds"]}
            for p, t in sorted(best.items())]


def _rank(task: dict) -> tuple[bool, int]:
    return task["status"] == "SUCCESS", task["records"]


def jvm_stages(tasks: list[dict]) -> list[int]:
    """The stages no Python operator ran in, which had tasks."""
    return sorted({t["stage"] for t in tasks if not t["operators"]})


def stage_cells(tasks: list[dict]) -> list[dict]:
    """Heat map cells of the JVM stages: "stage N (JVM)" × partition, records in."""
    cells = []
    for stage in jvm_stages(tasks):
        for w in stage_workers(tasks, stage):
            cells.append({"operator": f"stage {stage} (JVM)", "partition": w["partition"],
                          "records_in": int(w["records_in"]), "seconds": float(w["seconds"])})
    return cells
