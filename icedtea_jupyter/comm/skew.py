"""Skew requests: ``skew.report``, one call of ``run.skew(operator, **rules)``."""
from __future__ import annotations

from typing import Any

from ..session.run import Run
from .handlers import MethodTable, jsonable, run_of
from .messages import RequestError

SKEW = MethodTable()
RULES = ("load", "eta", "tau", "factor", "threshold")


def default_operator(run: Run) -> str:
    """The operator a skew view starts on: the first whose keys were counted (the
    reduce side of an aggregation, a join), else the last Python operator."""
    python = run.dag.python_operators
    if not python:
        raise LookupError(f"run {run.id} has no Python operator: no load per partition")
    for node in python:
        if node.phase != "combine" and (node.phase == "merge" or node.inputs
                                        or node.api == "applyInPandas"):
            return node.name
    return python[-1].name


@SKEW.handles("skew.report")
def skew_report(params: dict) -> dict:
    run = run_of(params)
    operator = params.get("operator") or default_operator(run)
    rules: dict[str, Any] = {k: params[k] for k in RULES if params.get(k) is not None}
    try:
        report = run.skew(operator, **rules)
    except ValueError as exc:  # a JVM operator, a load that is none, a bad parameter
        raise RequestError(str(exc)) from None
    view = report.to_json()
    view.update(run=run.id, operators=[n.name for n in run.dag.python_operators
                                       if n.phase != "combine"],
                recorded=bool(run.options.get("skew")))
    return jsonable(view)
