"""What the agents reported, as DataFrames: ``run.alerts()``, ``run.quarantine()``,
``run.latency()``, ``run.agent_overhead()``, ``run.agent_table(name)``.

Alerts of every tool come through one stream (the coordinator's ``add_alert``): a live
run reads them from its coordinator, a reopened one from ``alerts.jsonl``. The tools'
tables are JSON-lines files in the run store (``agents/<table>.jsonl``), which pandas
reads as they are: ``pd.read_json(path, lines=True)``.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..executor.state import decode
from ..store.control_files import spark_row

ALERT_COLUMNS = ("time", "tool", "level", "operator", "partition", "check", "count",
                 "message", "record", "value", "traceback")
GROUP_RECORDS = 20  # records shown per group of alerts
QUARANTINE_COLUMNS = ("reason", "operator", "partition", "attempt", "index", "record", "value",
                      "exception", "message", "traceback", "state")


class AgentResults:
    """The agents' part of a run's API (mixed into ``Run``)."""

    store: Any

    def _alert_list(self) -> list[dict]:
        """The alerts as dicts, in arrival order (a live run: from its coordinator)."""
        return self.store.alerts()

    def alerts(self) -> pd.DataFrame:
        """Every alert of every tool, in arrival order: ``time`` (when the coordinator
        got it, a UTC timestamp), ``tool`` (the agent, plugin or part that raised it),
        ``level``, ``operator``, ``partition``, ``check`` (what was checked, if any),
        ``count`` (the alerts it stands for: sampled tools send a few records and count
        the rest), ``message``, ``record`` (its repr) and ``value`` (JSON-able),
        ``traceback``. The store, the comm and ``alert_groups`` keep epoch seconds."""
        rows = [_alert_row(alert) for alert in self._alert_list()]
        frame = pd.DataFrame(rows, columns=list(ALERT_COLUMNS))
        frame["time"] = pd.to_datetime(pd.to_numeric(frame["time"]), unit="s", utc=True)
        return frame

    def alert_groups(self, records: int = GROUP_RECORDS) -> list[dict]:
        """The alerts grouped by tool, check and operator, as the sidebar shows them:
        per group its level, ``count`` (failures, sampled ones included), ``alerts``,
        the first message and up to ``records`` of its records with their partitions."""
        groups: dict[tuple, dict] = {}
        for alert in self._alert_list():
            key = (alert.get("source"), alert.get("check"), alert.get("operator"))
            group = groups.setdefault(key, {
                "tool": str(key[0] or ""), "check": key[1], "operator": key[2],
                "level": alert.get("level") or "warning", "count": 0, "alerts": 0,
                "message": str(alert.get("message") or ""), "records": []})
            group["count"] += int(alert.get("count") or 1)
            group["alerts"] += 1
            if alert.get("level") == "error":
                group["level"] = "error"
            record = alert.get("record")
            if isinstance(record, dict) and len(group["records"]) < records:
                group["records"].append({"repr": str(record.get("repr")),
                                         "partition": alert.get("partition"),
                                         "message": str(alert.get("message") or "")})
        return list(groups.values())

    def agent_table(self, table: str) -> pd.DataFrame:
        """An agent's table in the run store (``CoordinatorAgent.keep``), as a DataFrame."""
        return pd.DataFrame(self.store.agent_rows(table))

    def _skipped(self) -> list[dict]:
        """Live control's skipped records (``control/api.py``, mixed into ``Run`` too)."""
        skipped = getattr(self, "_skipped_at_breakpoints", None)
        return skipped() if skipped is not None else []

    def quarantine(self) -> pd.DataFrame:
        """The records set aside, one row each: ``reason`` ``raised`` (``--tolerate N``:
        with its exception, message, traceback and the worker's state then, as reprs) or
        ``skipped`` (at a breakpoint, ``hit.skip()``); operator, partition, attempt, index
        (the record's input index in its partition), record (its repr), value."""
        raised = self.agent_table("quarantine")
        if not raised.empty:
            raised = raised.drop_duplicates(["operator", "partition", "index"], keep="last")
            raised = raised.assign(reason="raised", value=_values(raised))
        skipped = pd.DataFrame([dict(row, reason="skipped", value=row["record"],
                                     record=repr(row["record"]))
                                for row in self._skipped()])
        frames = [frame for frame in (raised, skipped) if not frame.empty]
        if not frames:
            return pd.DataFrame(columns=list(QUARANTINE_COLUMNS))
        frame = pd.concat(frames, ignore_index=True)
        return frame.reindex(columns=list(QUARANTINE_COLUMNS)).reset_index(drop=True)

    def latency(self, operator: str | None = None) -> pd.DataFrame:
        """``--agent latency``: the slowest records per operator (``seconds``, record,
        partition), slowest first; the histograms are ``agent_table("latency")``."""
        frame = self.agent_table("latency_slowest")
        if frame.empty:
            return pd.DataFrame(columns=["operator", "partition", "seconds", "record"])
        if operator is not None:
            frame = frame[frame["operator"] == operator]
        return frame.sort_values("seconds", ascending=False).reset_index(drop=True)

    def agent_overhead(self) -> pd.DataFrame:
        """``--agent overhead``: per agent and operator, the seconds its hooks took in
        total, the calls, and the microseconds per record the operator took in."""
        frame = self.agent_table("overhead")
        columns = ["agent", "operator", "seconds", "calls", "records", "us_per_record"]
        if frame.empty:
            return pd.DataFrame(columns=columns)
        totals = frame.groupby(["agent", "operator"], as_index=False)[
            ["seconds", "calls", "records"]].sum()
        totals["us_per_record"] = totals["seconds"] * 1e6 / totals["records"].clip(lower=1)
        return totals[columns].sort_values("seconds", ascending=False).reset_index(drop=True)


def _values(raised: pd.DataFrame) -> list:
    """The quarantined records' values with their types (a tuple a tuple), decoded from
    the tagged JSON kept beside the plain ``value`` (rows kept before it: ``value``)."""
    if "encoded" not in raised:
        return list(raised["value"])
    return [value if _missing(encoded) else decode(encoded, spark_row)
            for value, encoded in zip(raised["value"], raised["encoded"])]


def _missing(encoded: Any) -> bool:
    return encoded is None or (isinstance(encoded, float) and encoded != encoded)


def _alert_row(alert: dict) -> dict:
    record = alert.get("record") or {}
    return {"time": alert.get("time"), "tool": alert.get("source"),
            "level": alert.get("level"), "operator": alert.get("operator"),
            "partition": alert.get("partition"), "check": alert.get("check"),
            "count": int(alert.get("count") or 1), "message": alert.get("message"),
            "record": record.get("repr") if isinstance(record, dict) else None,
            "value": record.get("value") if isinstance(record, dict) else None,
            "traceback": alert.get("traceback")}
