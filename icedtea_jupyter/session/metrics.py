"""Metrics from the worker table: only successful task attempts count."""
from __future__ import annotations

import pandas as pd
import pyarrow as pa

METRIC_COLUMNS = ["operator", "partition", "records_in", "records_out", "bytes_in", "seconds",
                  "stages", "attempts"]


def successful_attempts(table: pa.Table) -> pd.DataFrame:
    """One row per (operator, stage, partition): its last attempt that succeeded.

    A task attempt failed if any worker of the same Spark task (same task attempt id)
    failed; a retried or speculative task therefore never counts twice.
    """
    frame = table.to_pandas()
    if frame.empty:
        return frame
    failed_tasks = set(frame.loc[frame["status"] == "failed", "task"])
    ok = frame[(frame["status"] == "ok") & ~frame["task"].isin(failed_tasks)]
    ok = ok.sort_values(["operator", "stage", "partition", "attempt", "ended"])
    return ok.drop_duplicates(["operator", "stage", "partition"], keep="last")


def last_successful_attempts(table: pa.Table) -> pd.DataFrame:
    """One row per (operator, partition): its successful attempt in the last job that
    ran it (a sort's sampling job runs its input's operators once more before the real
    job: those rows are left out, like a retried task's)."""
    return last_of(successful_attempts(table))


def last_of(ok: pd.DataFrame) -> pd.DataFrame:
    """Of ``successful_attempts``' rows, each (operator, partition)'s in its last stage."""
    if ok.empty:
        return ok
    ok = ok.sort_values(["operator", "partition", "stage", "attempt", "ended"])
    return ok.drop_duplicates(["operator", "partition"], keep="last")


def metrics_frame(table: pa.Table, names: dict[int, str]) -> pd.DataFrame:
    """operator, partition, records_in, records_out, bytes_in, seconds: each (operator,
    partition) once, from its successful attempt in the last job that ran it (like
    ``run.skew``); ``stages``: how many stages ran it successfully, ``attempts``: its
    workers in all."""
    ok = successful_attempts(table)
    if ok.empty:
        return pd.DataFrame(columns=METRIC_COLUMNS)
    attempts = table.to_pandas().groupby(["operator", "partition"]).size().rename("attempts")
    stages = ok.groupby(["operator", "partition"])["stage"].nunique().rename("stages")
    last = last_of(ok).set_index(["operator", "partition"])
    grouped = last[["records_in", "records_out", "bytes_in", "seconds"]].join(stages)
    grouped = grouped.join(attempts).reset_index()
    order = {op: i for i, op in enumerate(names)}
    grouped["order"] = grouped["operator"].map(order)
    grouped["operator"] = grouped["operator"].map(lambda op: names.get(op, str(op)))
    grouped = grouped.sort_values(["order", "partition"]).drop(columns="order")
    return grouped[METRIC_COLUMNS].reset_index(drop=True)
