"""The physical plans a run's Spark SQL queries ended with, as Spark's status store keeps
them: with adaptive query execution (AQE), the plan a DataFrame shows before it runs is
only the initial one, and AQE may change a shuffle join into a broadcast join once it
has measured an input (``spark.sql.adaptive.autoBroadcastJoinThreshold``).

Each SQL execution's plan is read as Spark's ``explain("formatted")`` prints it, final
plan and all, through the Jackson mapper that reads the run's stages
(``stage_loads.json_mapper``); the executions are those that ran one of the run's jobs.
"""
from __future__ import annotations

import json
import re
from typing import Any

from .stage_loads import json_mapper

# ``SortMergeJoin [user#0], [user#2], Inner`` in a DataFrame's plan (its one-line form)
SHUFFLE_JOIN = re.compile(r"(?:SortMergeJoin|ShuffledHashJoin) \[(.*?)\], \[(.*?)\], (\w+)")
# a broadcast join's details in a formatted plan
BROADCAST_DETAILS = re.compile(r"\(\d+\) (BroadcastHashJoin)[^\n]*\nLeft keys \[\d+\]: \[(.*?)\]\n"
                               r"Right keys \[\d+\]: \[(.*?)\]\nJoin type: (\w+)")


def run_plans(spark: Any, job_ids: set[int]) -> list[str]:
    """The formatted physical plans of the SQL executions that ran any of ``job_ids``."""
    store = spark._jsparkSession.sharedState().statusStore()
    mapper = json_mapper(spark.sparkContext)
    executions = json.loads(mapper.writeValueAsString(store.executionsList()))
    return [e.get("physicalPlanDescription") or "" for e in executions
            if job_ids & {int(job) for job in (e.get("jobs") or {})}]


def broadcast_at_run_time(plan: str, plans: list[str]) -> str | None:
    """``BroadcastHashJoin`` if the shuffle join of ``plan`` (a DataFrame's plan before
    it ran) ran as a broadcast join in one of ``plans`` (the same keys: Spark's
    attributes keep their ids from plan to plan), else None."""
    planned = SHUFFLE_JOIN.search(plan)
    if planned is None:
        return None
    keys = (planned.group(1), planned.group(2), planned.group(3))
    for final in plans:
        for match in BROADCAST_DETAILS.finditer(final):
            if (match.group(2), match.group(3), match.group(4)) == keys:
                return match.group(1)
    return None
