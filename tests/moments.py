"""Which interactions of a recorded run a test jumps to.

A run that takes an interaction every 0.1 s until its action returns has a hundred or
more, most of them while no worker of G(θ) moved (Spark starting its workers, a
partition waiting behind another, the cell after its job). Two interactions where every
worker of G(θ) stood at the same place with the same state have the same snapshot, so a
jump to the second shows nothing the first did not: ``distinct_moments`` leaves them out.
(The count alone is not enough: a batch UDF reports a batch it has taken before its
state has processed it.)
"""
from __future__ import annotations

from typing import Any


def distinct_moments(run: Any, start: int = 0) -> list[int]:
    """The interactions from ``start`` on at which some Python worker of G(θ) stood
    elsewhere (its status, count or state) than at the interaction before, and the last."""
    history = run.history()
    chosen: list[int] = []
    before = None
    for k in range(start, len(history.raw)):
        where = [(v.operator, v.partition, v.status, v.count, v.encoded)
                 for v in history.views(k)]
        if where != before:
            chosen.append(k)
        before = where
    last = len(history.raw) - 1
    if chosen and chosen[-1] != last:
        chosen.append(last)
    return chosen
