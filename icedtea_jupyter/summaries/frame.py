"""An operator's stored field sketches (``summaries/op<o>.json``) as a DataFrame."""
from __future__ import annotations

import math

import pandas as pd

from ..agents.summaries import FieldSketch

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
BINS = 10


def load_fields(stored: dict) -> dict[str, FieldSketch]:
    return {name: FieldSketch.from_json(data) for name, data in stored["fields"].items()}


def mean_and_std(sketch: FieldSketch) -> tuple[float | None, float | None]:
    if not sketch.numbers:
        return None, None
    mean = sketch.total / sketch.numbers
    return mean, math.sqrt(max(sketch.squares / sketch.numbers - mean * mean, 0.0))


def histogram(sketch: FieldSketch, bins: int = BINS) -> list[dict]:
    """Equal-width bins from min to max: ``{"start", "end", "count"}`` (counts estimated
    from the quantile sketch)."""
    if sketch.kll.is_empty():
        return []
    low, high = sketch.kll.get_min_value(), sketch.kll.get_max_value()
    if high <= low:
        return [{"start": low, "end": high, "count": sketch.kll.n}]
    edges = [low + (high - low) * i / bins for i in range(bins + 1)]
    masses = sketch.kll.get_pmf(edges[1:-1])
    return [{"start": edges[i], "end": edges[i + 1], "count": round(m * sketch.kll.n)}
            for i, m in enumerate(masses)]


def scale(stored: dict, fields: dict[str, FieldSketch]) -> float:
    """Records of the input per record sketched (1.0 when every record was)."""
    sampled = max((s.count for s in fields.values()), default=0)
    records = stored.get("records", sampled)
    return records / sampled if sampled else 1.0


def field_row(name: str, sketch: FieldSketch, factor: float = 1.0) -> dict:
    mean, std = mean_and_std(sketch)
    row = {"field": name, "kind": "/".join(sorted(sketch.kinds)) or "null",
           "count": round(sketch.count * factor), "nulls": round(sketch.nulls * factor),
           "sampled": sketch.count,
           "distinct": round(sketch.hll.get_estimate()), "min": sketch.low,
           "max": sketch.high, "mean": mean, "std": std}
    empty = sketch.kll.is_empty()
    for q in QUANTILES:
        row[f"p{round(q * 100):02d}"] = None if empty else sketch.kll.get_quantile(q)
    row["histogram"] = histogram(sketch)
    return row


def summary_frame(stored: dict) -> pd.DataFrame:
    """One row per field: kind, count and nulls (exact when every record was sketched,
    else the sample's scaled to the input), sampled (values sketched), distinct
    (HyperLogLog estimate; of the sample), min, max, mean, std, quantiles p05..p95 (KLL)
    and a histogram."""
    fields = load_fields(stored)
    factor = scale(stored, fields)
    return pd.DataFrame([field_row(n, s, factor) for n, s in fields.items()])
