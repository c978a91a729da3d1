"""The skew test, two rules side by side (Reshape and Spark AQE), on one load per partition.

Reshape (Kumar's thesis, ch. 3): partition L is skewed against partition C when
``φ_L ≥ η`` and ``φ_L − φ_C ≥ τ``; C, the lightest such partition, is L's helper.
Spark AQE (``spark.sql.adaptive.skewJoin``): a partition is skewed when its size is
larger than ``factor`` × the median and than ``threshold``.

Reshape's η and τ were 100 queued records in the paper; here they default to the
load's own scale (η = 2 × the median load, τ = the median load; the mean where the
median is 0, most partitions empty, as with few keys over many partitions), and AQE's
threshold to 256 MiB for bytes (Spark's default) and 0 for other loads. All are
settable. Reshape never flags a partition no heavier than its helper: there is no load
to move.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from statistics import median

import pandas as pd

AQE_BYTES = 256 * 1024 * 1024
LOADS = ("records", "bytes", "seconds", "key_records")
SKEWED_COLUMNS = ["partition", "load", "rule", "why"]


@dataclass
class Rules:
    """The parameters of both rules; None: the default for the load (module docstring)."""

    load: str = "records"
    eta: float | None = None
    tau: float | None = None
    factor: float = 5.0
    threshold: float | None = None

    def resolved(self, loads: dict[int, float]) -> Rules:
        """The parameters with the defaults filled in from ``loads``."""
        if self.load not in LOADS:
            raise ValueError(f"load={self.load!r} is not a load (one of {', '.join(LOADS)})")
        if self.factor <= 0:
            raise ValueError(f"factor must be positive, not {self.factor}")
        scale = load_scale(loads)
        threshold = self.threshold
        if threshold is None:
            threshold = AQE_BYTES if self.load == "bytes" else 0.0
        return Rules(self.load, 2 * scale if self.eta is None else self.eta,
                     scale if self.tau is None else self.tau, self.factor, threshold)

    def as_dict(self) -> dict:
        return asdict(self)


def load_scale(loads: dict[int, float]) -> float:
    """The load a partition of ``loads`` typically has: the median, or the mean where
    the median is 0 (with η = τ = 0, every empty partition was flagged)."""
    if not loads:
        return 0.0
    mid = median(loads.values())
    return mid if mid > 0 else sum(loads.values()) / len(loads)


def reshape_flags(loads: dict[int, float], eta: float, tau: float) -> list[dict]:
    """Partitions L with φ_L ≥ η and φ_L − φ_C ≥ τ for their helper C (the lightest)."""
    if not loads:
        return []
    helper = min(loads, key=lambda p: (loads[p], p))
    flagged = []
    for part, load in sorted(loads.items()):
        gap = load - loads[helper]
        if load >= eta and gap >= tau and gap > 0:
            flagged.append({"partition": part, "load": load, "rule": "reshape",
                            "why": f"φ={_n(load)} ≥ η={_n(eta)} and φ−φ_C={_n(gap)} ≥ "
                                   f"τ={_n(tau)} (C = partition {helper})"})
    return flagged


def aqe_flags(loads: dict[int, float], factor: float, threshold: float) -> list[dict]:
    """Partitions whose load is above ``factor`` × the median and above ``threshold``."""
    if not loads:
        return []
    mid = median(loads.values())
    return [{"partition": part, "load": load, "rule": "aqe",
             "why": f"φ={_n(load)} > {factor:g} × median {_n(mid)} and > {_n(threshold)}"}
            for part, load in sorted(loads.items())
            if load > factor * mid and load > threshold]


def skewed(loads: dict[int, float], rules: Rules) -> pd.DataFrame:
    """Both rules' flags: partition, load, rule (``reshape`` | ``aqe``), why."""
    r = rules.resolved(loads)
    assert r.eta is not None and r.tau is not None and r.threshold is not None
    rows = reshape_flags(loads, r.eta, r.tau) + aqe_flags(loads, r.factor, r.threshold)
    return pd.DataFrame(rows, columns=SKEWED_COLUMNS)


def _n(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:.3g}"
