"""The gaps between picks of a sample by skip counts (``Agent.input_picks``)."""
from __future__ import annotations

import math
import random
from collections.abc import Iterator


def bernoulli_gaps(rate: float, rng: random.Random) -> Iterator[int]:
    """Gaps between picks when each record is picked with probability ``rate``."""
    if rate >= 1:
        while True:
            yield 0
    log_keep = math.log1p(-rate)
    while True:
        yield int(math.log(1.0 - rng.random()) / log_keep)


def algorithm_l_gaps(size: int, rng: random.Random) -> Iterator[int]:
    """The gaps between a reservoir's picks: none for the first ``size`` records, then
    Li's algorithm L."""
    for _ in range(size):
        yield 0
    weight = math.exp(math.log(1.0 - rng.random()) / size)
    while True:
        yield int(math.log(1.0 - rng.random()) / math.log1p(-weight))
        weight *= math.exp(math.log(1.0 - rng.random()) / size)
