"""What changed between two runs' summaries of the same operators (``run.summary_diff``).

Per operator and field, a change is one of:

- ``distribution shifted``: the Kolmogorov–Smirnov distance between the two quantile
  sketches (the largest gap between their CDFs) is at least ``ks`` and beyond what the
  samples' sizes and the sketches' rank error allow (the two-sample KS test at
  α = 0.001, plus twice KLL's 1.65 %), or the mean moved by at least ``sigmas``
  standard deviations (of the earlier run);
- ``became null``: every value is null now, and some were not before;
- ``nulls changed``: the share of nulls moved by at least ``nulls`` and by more than
  four standard errors of the two samples' shares;
- ``count changed``: the operator's input has a different number of records (field
  ``*``);
- ``field added`` / ``field removed``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..agents.summaries import FieldSketch
from .frame import load_fields, mean_and_std

COLUMNS = ["operator", "field", "change", "before", "after", "statistic"]


@dataclass(frozen=True)
class Thresholds:
    ks: float = 0.1
    sigmas: float = 1.0
    nulls: float = 0.05


KS_CRITICAL = 1.95  # the two-sample KS test's c(α) at α = 0.001
KLL_RANK_ERROR = 0.0165


def ks_limit(limits: Thresholds, n: int, m: int) -> float:
    noise = KS_CRITICAL * math.sqrt((n + m) / (n * m)) if n and m else 1.0
    return max(limits.ks, noise + 2 * KLL_RANK_ERROR)


def nulls_limit(limits: Thresholds, before: FieldSketch, after: FieldSketch) -> float:
    share = (before.nulls + after.nulls) / max(before.count + after.count, 1)
    error = math.sqrt(share * (1 - share) * (1 / max(before.count, 1) + 1 / max(after.count, 1)))
    return max(limits.nulls, 4 * error)


def ks_distance(before: FieldSketch, after: FieldSketch) -> float | None:
    """The largest gap between the two sketches' CDFs, over both sketches' quantiles."""
    if before.kll.is_empty() or after.kll.is_empty():
        return None
    ranks = [i / 100 for i in range(1, 100)]
    points = sorted(set(before.kll.get_quantiles(ranks)) | set(after.kll.get_quantiles(ranks)))
    gaps = [abs(a - b) for a, b in zip(before.kll.get_cdf(points)[:-1],
                                       after.kll.get_cdf(points)[:-1])]
    return max(gaps, default=0.0)


def field_changes(operator: str, field: str, before: FieldSketch, after: FieldSketch,
                  limits: Thresholds) -> list[dict]:
    def change(kind: str, old: object, new: object, statistic: float | None = None) -> dict:
        return dict(zip(COLUMNS, (operator, field, kind, old, new, statistic)))

    changes = []
    share_before = before.nulls / before.count if before.count else 0.0
    share_after = after.nulls / after.count if after.count else 0.0
    if after.count and after.nulls == after.count and before.nulls < before.count:
        changes.append(change("became null", share_before, share_after,
                              share_after - share_before))
    elif abs(share_after - share_before) >= nulls_limit(limits, before, after):
        changes.append(change("nulls changed", share_before, share_after,
                              share_after - share_before))
    distance = ks_distance(before, after)
    (mean_before, std_before), (mean_after, _) = mean_and_std(before), mean_and_std(after)
    sigmas = (abs(mean_after - mean_before) / std_before
              if mean_before is not None and mean_after is not None and std_before else None)
    if (distance is not None and distance >= ks_limit(limits, before.numbers, after.numbers)) or \
            (sigmas is not None and sigmas >= limits.sigmas):
        changes.append(change("distribution shifted", mean_before, mean_after, distance))
    return changes


def summary_diff(before: dict[str, dict], after: dict[str, dict],
                 limits: Thresholds | None = None) -> pd.DataFrame:
    """The changes from ``before`` to ``after`` (operator name → stored summary), one row
    each: operator, field, change, before, after, statistic (the KS distance of a shift,
    the difference of a count or a null share)."""
    limits = limits or Thresholds()
    rows: list[dict] = []
    for operator in [o for o in after if o in before]:
        old, new = load_fields(before[operator]), load_fields(after[operator])
        records = before[operator].get("records"), after[operator].get("records")
        if records[0] != records[1]:
            rows.append(dict(zip(COLUMNS, (operator, "*", "count changed", records[0],
                                           records[1], (records[1] or 0) - (records[0] or 0)))))
        for field in old.keys() - new.keys():
            rows.append(dict(zip(COLUMNS, (operator, field, "field removed", None, None, None))))
        for field in new.keys() - old.keys():
            rows.append(dict(zip(COLUMNS, (operator, field, "field added", None, None, None))))
        for field in [f for f in new if f in old]:
            rows.extend(field_changes(operator, field, old[field], new[field], limits))
    return pd.DataFrame(rows, columns=COLUMNS)
