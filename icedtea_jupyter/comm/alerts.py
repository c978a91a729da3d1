"""Alert requests: ``alerts.groups``, one call of ``run.alert_groups()``."""
from __future__ import annotations

from .handlers import MethodTable, jsonable, run_of

ALERTS = MethodTable()


@ALERTS.handles("alerts.groups")
def alert_groups(params: dict) -> dict:
    run = run_of(params)
    groups = run.alert_groups()
    return jsonable({"run": run.id, "groups": groups,
                     "total": sum(group["count"] for group in groups)})
