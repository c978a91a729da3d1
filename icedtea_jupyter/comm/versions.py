"""Versions requests of the ``icedtea`` comm: a cell's versions, a diff, an export."""
from __future__ import annotations

import math
import os
from typing import Any

from ..session import registry
from .handlers import MethodTable, jsonable, run_of
from .messages import RequestError

VERSIONS = MethodTable()  # the versions dashboard and the export button


@VERSIONS.handles("versions.list")
def versions_list(params: dict) -> dict:
    run = run_of(params)
    rows = []
    for row in run.versions().to_dict("records"):
        rows.append({"version": row["version"], "run": row["run"],
                     "started": row["started"].timestamp(), "duration": float(row["duration"]),
                     "status": str(row["status"]), "changed": row["changed"],
                     "result": _text(row["result"]),
                     "same_result_as": _text(row["same result as"]),
                     "reused_from": _text(row["reused from"]),
                     "bytes_stored": int(row["bytes stored"])})
    return {"run": run.id, "versions": rows}


@VERSIONS.handles("versions.diff")
def versions_diff(params: dict) -> dict:
    run = run_of(params)
    return jsonable(run.diff(params["other"]).to_json())


@VERSIONS.handles("run.export")
def run_export(params: dict) -> dict:
    """The session of the run being debugged (``registry.debugged_run``), which the
    sidebar's selection may not be; the selected run when none was debugged. The reply
    names the run exported."""
    selected = run_of(params)
    path = os.path.abspath(os.path.expanduser(params["path"]))
    if not path.endswith(".ipynb"):
        raise RequestError(f"the export is a notebook: {params['path']!r} must end in .ipynb")
    run = registry.debugged_run() or selected
    return {"path": path, "hand": run.export_notebook(path), "run": run.id,
            "version": run.version}


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)
