"""Input streams that pick records by skip counts, with no Python code per record passed.

The stream is ``chain.from_iterable`` over segments: an ``islice`` that passes the next
``gap`` records (C code only), then a one-record list holding the record picked. The
segments are made lazily, when the operator asks for its next record: nothing is read
ahead. Python runs once per pick.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from itertools import chain, islice
from typing import Any


def picked_stream(records: Iterator, gaps: Iterator[int],
                  take: Callable[[Any], None]) -> Iterator:
    """``records`` unchanged; ``take(record)`` is called for each record that follows a
    gap of ``next(gaps)`` records (the first gap counts from the start)."""
    return chain.from_iterable(_segments(iter(records), gaps, take))


def _segments(records: Iterator, gaps: Iterator[int], take: Callable[[Any], None]) -> Iterator:
    for gap in gaps:
        if gap:
            yield islice(records, gap)
        for record in records:  # the next record, if the input goes on
            take(record)
            yield (record,)
            break
        else:
            return
    yield records  # no more picks: the rest passes as it is


def bernoulli_gaps(rate: float, rng: random.Random) -> Iterator[int]:
    """Gaps between picks when each record is picked with probability ``rate``."""
    if rate >= 1:
        while True:
            yield 0
    log_keep = math.log1p(-rate)
    while True:
        yield int(math.log(1.0 - rng.random()) / log_keep)
