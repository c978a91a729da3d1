"""The session's settings that can change a result, for the fingerprints of sinks.

Every SQL setting set on the session (``spark.sql.*``: ANSI mode, the time zone, case
sensitivity, Arrow batch sizes a ``mapInPandas`` sees, shuffle partitions…), the
default parallelism (how many partitions ``parallelize`` and a shuffle make, and so
what a stateful ``mapPartitions`` sees together) and the Python version. Settings that
name the session itself (its id, ports, start time) are not among them.
"""
from __future__ import annotations

import sys
from typing import Any

from .fingerprint import digest

_SEPARATOR = "\x01"  # between two settings in the JVM's one string of them


def result_settings() -> dict[str, str]:
    """The active session's result-changing settings by name (empty without one)."""
    found = {"python": sys.version.split()[0]}
    spark = _active_session()
    if spark is None:
        return found
    try:
        found.update({k: v for k, v in _all_settings(spark).items() if k.startswith("spark.sql.")})
    except Exception as exc:  # noqa: BLE001 - unreadable settings: unknown, not reused
        found["unreadable settings"] = f"{type(exc).__name__}: {exc}"
    sc = getattr(spark, "_sc", None)
    if sc is not None:
        found["default parallelism"] = str(sc.defaultParallelism)
    return dict(sorted(found.items()))


def settings_digest(settings: dict[str, str]) -> str:
    return digest("settings", *(f"{k}={v}" for k, v in settings.items()))


def settings_blockers(settings: dict[str, str]) -> list[str]:
    """Why no result may be reused under these settings (none: it may)."""
    why = settings.get("unreadable settings")
    return [f"the session's settings could not be read ({why})"] if why else []


def _all_settings(spark: Any) -> dict[str, str]:
    """Every setting of the session; a classic session's in one call to the JVM (PySpark's
    ``conf.getAll`` asks once per entry: 20 ms)."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:  # Spark Connect
        return {k: str(v) for k, v in spark.conf.getAll.items()}
    pairs = jsession.conf().getAll().mkString(_SEPARATOR)
    return dict(pair.split(" -> ", 1) for pair in pairs.split(_SEPARATOR) if " -> " in pair)


def _active_session() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    classic = getattr(SparkSession, "_instantiatedSession", None)  # no call to the JVM
    return classic if classic is not None else SparkSession.getActiveSession()
