"""Settings a user may change for the kernel's session: ``it.config.<name> = value``."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Config:
    """``lineage_spark_threshold_bytes``: traces run with Spark SQL (not DuckDB in the
    kernel) when a run's lineage tables are larger than this, or when the session's
    master is a cluster (not ``local``); ``lineage_engine``: ``"duckdb"`` or ``"spark"``
    forces one engine, ``None`` chooses by those rules."""

    lineage_spark_threshold_bytes: int = 2 << 30
    lineage_engine: str | None = None


config = Config()
