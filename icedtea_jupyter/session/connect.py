"""A run on a Spark Connect session: the kernel has no SparkContext.

Job groups, Spark's status tracker, re-pointing the workers' Python and routing Spark's
log lines all need one; a Connect run goes without them (the server's Python workers
report to the coordinator like a classic session's). What cannot work says so.
"""
from __future__ import annotations

import sys
from typing import Any

from ..instrument.connect import needs_classic
from .interpreter import LOCAL_HOSTS

NO_OPERATOR_WARNING = (
    "The cell ran no Python operator that icedtea hosts, so nothing was recorded (on Spark "
    "Connect the kernel does not see Spark's jobs): use mapInPandas, mapInArrow, "
    "applyInPandas, or a @udf or @pandas_udf column, and an action such as collect().")


def is_connect() -> bool:
    """Whether this kernel works through Spark Connect: PySpark says so (``is_remote``,
    set by ``SparkSession.builder.remote``), or a Connect session runs and no
    SparkContext does (a session built with the Connect client's own builder)."""
    try:
        from pyspark import SparkContext
        from pyspark.sql.utils import is_remote
    except ImportError:
        return False
    if is_remote():
        return True
    return ("pyspark.sql.connect.session" in sys.modules
            and SparkContext._active_spark_context is None and connect_session() is not None)


def connect_session() -> Any:
    """The Spark Connect session of this kernel, if one is running."""
    try:
        from pyspark.sql.connect.session import SparkSession
    except ImportError:
        return None
    return SparkSession.getActiveSession() or SparkSession._get_default_session()


def connect_notes(lineage: bool, bind: str | None, reuse: bool = False) -> list[str]:
    """Warnings of a run starting on Spark Connect: what it will not record."""
    notes = []
    if lineage:
        notes.append("--lineage: this run records no lineage. "
                     + needs_classic("Lineage (capture and traces)"))
    if reuse:
        notes.append("--reuse: every action of this cell runs on Spark, and its results "
                     "are not stored for later versions. "
                     + needs_classic("Reuse of stored results (--reuse)"))
    host = getattr(getattr(connect_session(), "client", None), "host", None)
    if host and host not in LOCAL_HOSTS and not bind:
        notes.append(f"The Spark Connect server runs on {host}: its Python workers cannot "
                     "reach this kernel's coordinator on loopback and record locally; "
                     "give an address they can reach with --bind ADDRESS.")
    return notes


def workers_cannot_import(exc: BaseException) -> str | None:
    """What to do when the cell failed because Spark's Python workers (a Connect server's,
    which the kernel cannot re-point) cannot import icedtea_jupyter; None otherwise."""
    if "No module named 'icedtea_jupyter'" not in str(exc):
        return None
    return ("Spark's Python workers cannot import icedtea_jupyter, so the cell's Python "
            "operators could not run; nothing was recorded. Install icedtea-jupyter (and "
            "pyarrow) for the Python the workers run (on Spark Connect: the server's "
            "PYSPARK_PYTHON) and run the cell again")
