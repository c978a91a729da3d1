"""Samples and summaries requests: ``samples.get`` (``run.samples(operator)``) and
``summaries.compare`` (``run.summary_diff(other)`` and a chart of each shifted field)."""
from __future__ import annotations

import math
from typing import Any

from ..session.run import Run
from .handlers import MethodTable, jsonable, run_of
from .messages import RequestError

AGENT_DATA = MethodTable()  # the sidebar's Samples and Summaries sections
ROWS = 200  # a sample has K (100) rows: all of them


def _cell(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value.item() if hasattr(value, "item") else value


@AGENT_DATA.handles("samples.get")
def samples_get(params: dict) -> dict:
    run = run_of(params)
    try:
        frame = run.samples(params["operator"])
    except (KeyError, LookupError) as exc:
        raise RequestError(str(exc.args[0] if exc.args else exc)) from None
    rows = [[_cell(v) for v in row] for row in frame.head(ROWS).itertuples(index=False)]
    return jsonable({"run": run.id, "operator": params["operator"],
                     "columns": [str(c) for c in frame.columns], "rows": rows})


def earlier_runs(run: Run) -> list[dict]:
    """The earlier versions of ``run``'s cell that recorded summaries, latest first."""
    versions = run.versions()
    earlier = []
    for row in versions.to_dict("records")[::-1]:
        if row["run"] == run.id or row["started"].timestamp() >= run.started:
            continue
        try:
            if run._summaries_of(row["run"]):
                earlier.append({"run": row["run"], "version": row["version"]})
        except LookupError:
            continue
    return earlier


def nothing_to_compare(run: Run) -> str:
    """Why the Summaries section compares nothing for ``run``: its own summaries are
    named when it has some (it was recorded with ``--agent summaries``)."""
    mine = sorted(run.stored_summaries())
    if mine:
        return (f"This run recorded summaries of {', '.join(mine)} (run.summaries(operator)); "
                "no earlier run of this cell did, so there is nothing to compare them with "
                "yet: run the cell again with --agent summaries to see what changed.")
    return ("This run recorded no summaries: run the cell with --agent summaries (twice, "
            "to see what changed between two runs).")


@AGENT_DATA.handles("summaries.compare")
def summaries_compare(params: dict) -> dict:
    run = run_of(params)
    earlier = earlier_runs(run)
    other = params.get("other") or (earlier[0]["run"] if earlier else None)
    result: dict[str, Any] = {"run": run.id, "other": other, "earlier": earlier,
                              "changes": [], "charts": [], "note": None}
    if other is None:
        result["note"] = nothing_to_compare(run)
        return result
    try:
        diff = run.summary_diff(other)
    except LookupError as exc:
        raise RequestError(str(exc.args[0])) from None
    result["changes"] = [{k: _cell(v) for k, v in row.items()}
                         for row in diff.to_dict("records")]
    shifted = diff[diff["change"] == "distribution shifted"]
    for operator, field in zip(shifted["operator"], shifted["field"]):
        spec = run.summary_chart(other, operator, field).to_dict()
        result["charts"].append({"operator": operator, "field": field, "spec": spec})
    return jsonable(result)
