"""Filters Spark's optimizer moved below a UDF θ, read from the cell's plans.

A ``@udf`` or ``@pandas_udf`` column is computed on a DataFrame, but Spark may run a
filter the cell applies after it (on other columns) first, so θ was called on fewer rows
than that DataFrame has and replay, which regenerates its rows, cannot match the run.
The optimized plan of the cell's action shows it: a ``Filter`` beneath the node that
evaluates the Python UDFs (``ArrowEvalPython``, ``BatchEvalPython``) that the plan of
θ's own DataFrame does not have.
"""
from __future__ import annotations

import re
from typing import Any

_NODE = re.compile(r"^(?P<indent>[\s:|+-]*)(?:\*\(\d+\) )?(?P<name>\w+)(?P<rest>.*)$")


def optimized_plan(frame: Any) -> str:
    """A classic DataFrame's optimized logical plan, as Spark prints it ("": unknown)."""
    try:
        return str(frame._jdf.queryExecution().optimizedPlan().toString())
    except Exception:  # noqa: BLE001 - a Connect DataFrame, a stopped session: no plan
        return ""


def filters_below_python(plan: str) -> list[str]:
    """The conditions of the ``Filter`` nodes beneath a Python UDF evaluation."""
    found, below = [], None  # below: the indentation of the evaluation being read
    for line in plan.splitlines():
        node = _NODE.match(line)
        if node is None:
            continue
        depth = len(node["indent"])
        if below is not None and depth <= below:
            below = None
        if below is None and node["name"].endswith("EvalPython"):
            below = depth
        elif below is not None and node["name"] == "Filter":
            found.append(node["rest"].strip())
    return found


def filters_of(plan: str) -> set[str]:
    """The conditions of every ``Filter`` node of ``plan``."""
    return {n["rest"].strip() for n in map(_NODE.match, plan.splitlines())
            if n is not None and n["name"] == "Filter"}


def pushed_below(recorder: Any, theta: int) -> list[str]:
    """The filters the cell's actions ran beneath UDF θ (node ``theta``) that θ's input
    DataFrame does not have; [] if the kernel no longer has the cell's DataFrames."""
    frame = getattr(recorder, "udf_frames", {}).get(theta)
    if frame is None:
        return []
    own = filters_of(optimized_plan(frame))
    pushed: list[str] = []
    for action in getattr(recorder, "action_frames", []):
        pushed += [f for f in filters_below_python(optimized_plan(action))
                   if f not in own and f not in pushed]
    return pushed
