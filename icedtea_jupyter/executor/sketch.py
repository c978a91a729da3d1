"""Key counts in bounded memory: a Misra–Gries summary of the keys counted exactly, and
replicate samples of those counted one record (or chunk) in ``EVERY`` (``KeySketch``).

``HeavyHitters`` is Misra–Gries over exact counts of blocks (mergeable, Agarwal et al.):
a block's keys are counted exactly (``collections.Counter``, in C), its 2k most frequent
keys are added to the k counters, and whenever more than k counters are left, the
(k+1)-th largest count is taken off every counter. ``error`` adds up what was taken off
and the largest count dropped from each block, so for every key of the records it
counted ``count <= true count <= count + error``, and ``error <= n/(k+1) + n/(2k+1)``.

A sample is no such bound. ``KeySketch`` keeps the sampled keys apart, in ``REPLICATES``
replicate samples (random groups: the sampling units, each drawn at random within its
stratum, go to the replicates in turn, so the replicates are independent), each a
Misra–Gries summary of sample counts. A key's sampled records are estimated as
``EVERY`` × its sample count (a worker's, once merged, scaled to the records its sample
was drawn from: ``rescale``), and the spread of the replicates' counts against their
share of the key gives the estimate's variance (conservative in expectation: strata
that differ only widen it), hence a Student-t interval at ``CONFIDENCE`` (as many
degrees of freedom as replicates that sampled anything, less one). It is a statistical
interval, not a bound: it assumes the estimate is about normal, which a key whose
records fall in few sampled chunks may not give (an input in runs of equal keys is
counted whole for that reason: ``skew.SkewCounter.decide``). Where nothing was sampled
a key keeps the exact bound; once anything was, no key's count is exact, and every
key's interval also allows for records the sample may have missed (``DETECTION`` ×
``EVERY``: the "rule of three") and for the replicates' Misra–Gries errors.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from heapq import nlargest
from operator import itemgetter
from typing import Any

CAPACITY = 512  # k: counters a summary keeps
EVERY = 16  # a sampled record (or chunk) stands for EVERY
REPLICATES = 16  # replicate samples of a sketch (random groups)
CONFIDENCE = 0.99  # of a sampled count's interval
# Student t's two-sided 99% quantiles by degrees of freedom (1 to REPLICATES - 1)
T_QUANTILES = (63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
               3.106, 3.055, 3.012, 2.977, 2.947)
DETECTION = 3  # a key no sampled record had may still have DETECTION * EVERY records


class HeavyHitters:
    """A mergeable Misra–Gries summary of key frequencies (see the module docstring)."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self.counts: dict = {}
        # records counted; for every key: count <= true count <= count + error (a
        # replicate sample's, rescaled to the records it stands for: floats)
        self.n: float = 0
        self.error: float = 0

    def add_block(self, block: Counter) -> None:
        """Exact counts of a block of records, folded in (its 2k top keys)."""
        self.n += block.total()
        keep = 2 * self.capacity
        top = nlargest(keep + 1, block.items(), key=itemgetter(1)) \
            if len(block) > keep else list(block.items())
        if len(top) > keep:
            self.error += top[keep][1]  # no dropped key had more in the block
            top = top[:keep]
        self.add_counts(top)

    def add_counts(self, pairs: Iterable[tuple[Any, float]], error: float = 0) -> None:
        """Counts (lower bounds within ``error``) added; the counters cut back to k."""
        counts = self.counts
        for key, count in pairs:
            counts[key] = counts.get(key, 0) + count
        self.error += error
        if len(counts) > self.capacity:
            cut = nlargest(self.capacity + 1, counts.values())[-1]
            self.counts = {k: c - cut for k, c in counts.items() if c > cut}
            self.error += cut

    def merge(self, other: HeavyHitters) -> None:
        """Another summary, merged: the bounds add up (no record counted twice)."""
        self.n += other.n
        self.add_counts(other.counts.items(), other.error)

    def top(self, k: int | None = None) -> list[tuple[Any, int]]:
        """The heaviest keys, heaviest first."""
        ordered = sorted(self.counts.items(), key=itemgetter(1), reverse=True)
        return ordered if k is None else ordered[:k]

    def bound(self) -> float:
        """The a priori bound on ``error``: n/(k+1) + n/(2k+1)."""
        return self.n / (self.capacity + 1) + self.n / (2 * self.capacity + 1)


class KeySketch:
    """A worker's (or an operator's, merged) key counts: ``exact``, the records whose
    keys were all counted, and ``samples``, the replicate samples of the others (see
    the module docstring). ``counts`` and ``top`` give each key's estimate; ``interval``
    its bounds."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self.exact = HeavyHitters(capacity)
        self.samples: list[HeavyHitters] = []  # made when the first sample comes
        # a store from before the replicates: records its counts estimated, mixed in
        self.unreplicated = 0
        self.region = 0  # records the sample stands for, where known (``rescale``)

    # --- adding ----------------------------------------------------------------------
    def add_block(self, block: Counter) -> None:
        """A block of records whose keys were all counted."""
        self.exact.add_block(block)

    def add_sample(self, replicate: int, block: Counter) -> None:
        """Sampled keys of replicate ``replicate``: each stands for ``EVERY`` records."""
        self._replicates()[replicate % REPLICATES].add_block(block)

    def merge(self, other: KeySketch) -> None:
        """Another sketch, merged: exact parts together, each replicate with its own."""
        self.exact.merge(other.exact)
        self.unreplicated += other.unreplicated
        if other.samples:
            for mine, theirs in zip(self._replicates(), other.samples):
                mine.merge(theirs)

    def rescale(self) -> None:
        """One worker's sample made to stand for the ``region`` records it was drawn
        from, as many as there were (a ratio estimator: ``EVERY`` × the sample's
        records is itself an estimate of them)."""
        sampled = sum(s.n for s in self.samples)
        if self.region and sampled:
            factor = self.region / (EVERY * sampled)
            for sample in self.samples:
                sample.n *= factor
                sample.error *= factor
                sample.counts = {k: c * factor for k, c in sample.counts.items()}
        self.region = 0

    def _replicates(self) -> list[HeavyHitters]:
        if not self.samples:
            self.samples = [HeavyHitters(self.capacity) for _ in range(REPLICATES)]
        return self.samples

    # --- what it says ----------------------------------------------------------------
    @property
    def n(self) -> int:
        """Records: those counted and those the sample stands for."""
        return int(self.exact.n) + self.estimated

    @property
    def error(self) -> int:
        """The Misra–Gries bound of the keys counted exactly."""
        return int(self.exact.error)

    @property
    def estimated(self) -> int:
        """Records whose keys were sampled, not all counted (``EVERY`` per sampled key)."""
        return round(EVERY * sum(s.n for s in self.samples)) + self.unreplicated

    @property
    def sampled(self) -> bool:
        """Whether any count is an estimate (then no count is exact)."""
        return self.estimated > 0

    @property
    def counts(self) -> dict:
        """Each key's count: its exact part and its sampled part's estimate."""
        counts = dict(self.exact.counts)
        if not self.samples:
            return counts
        sampled: dict = {}
        for sample in self.samples:
            for key, count in sample.counts.items():
                sampled[key] = sampled.get(key, 0) + count
        for key, count in sampled.items():
            counts[key] = counts.get(key, 0) + round(EVERY * count)
        return counts

    def top(self, k: int | None = None) -> list[tuple[Any, int]]:
        """The heaviest keys by ``counts``, heaviest first."""
        ordered = sorted(self.counts.items(), key=itemgetter(1), reverse=True)
        return ordered if k is None else ordered[:k]

    def interval(self, key: Any) -> tuple[int, int]:
        """``(low, high)`` around the key's count: without a sample, the Misra–Gries
        bound (``count <= true <= count + error``); with one, the interval at
        ``CONFIDENCE`` (module docstring) around the estimate, the exact part's and
        the replicates' Misra–Gries errors added to its top."""
        exact = self.exact.counts.get(key, 0)
        high = exact + self.exact.error
        if not self.sampled:
            return exact, high
        if self.unreplicated:  # no replicates to tell: three binomial deviations
            wide = 3 * math.sqrt((EVERY - 1) * max(exact, 1) * self.unreplicated
                                 / max(self.n, 1))
            high += math.ceil(wide) + EVERY * DETECTION
            exact = max(0, math.floor(exact - wide))
            if not self.samples:
                return exact, high
        estimate, half = self._sampled_part(key)
        missed = EVERY * (DETECTION + sum(s.error for s in self.samples))
        return (exact + max(0, math.floor(estimate - half)),
                high + math.ceil(estimate + half) + missed)

    def _sampled_part(self, key: Any) -> tuple[int, float]:
        """The key's sampled records, estimated, and the interval's half-width: Student
        t times the random groups' standard error, each replicate's count against its
        share of the key (replicates sample unequal numbers of records). With fewer than
        two replicates there is no spread to tell: the half-width is the whole sample."""
        used = [s for s in self.samples if s.n]
        counts = [s.counts.get(key, 0) for s in used]
        estimate = EVERY * sum(counts)
        if len(used) < 2:
            return estimate, float(EVERY * sum(s.n for s in used))
        share = sum(counts) / sum(s.n for s in used)
        spread = sum((c - share * s.n) ** 2 for c, s in zip(counts, used))
        t = T_QUANTILES[min(len(used) - 1, len(T_QUANTILES)) - 1]
        return estimate, t * EVERY * math.sqrt(len(used) / (len(used) - 1) * spread)

    def bound(self) -> float:
        """The a priori bound on the exact part's ``error``."""
        return self.exact.bound()

    # --- as JSON -----------------------------------------------------------------------
    def truncated(self, k: int | None) -> tuple[list[tuple[Any, float, list[float]]],
                                                float, list[float]]:
        """The ``k`` heaviest keys, each with its exact count and its count in each
        replicate, and the errors (exact, each replicate's) with what was left out
        added: no key left out had more in any part than the largest left out there."""
        ordered = self.top()
        kept, left = (ordered, []) if k is None else (ordered[:k], ordered[k:])
        samples = self.samples
        rows = [(key, self.exact.counts.get(key, 0), [s.counts.get(key, 0) for s in samples])
                for key, _ in kept]
        error = self.exact.error + max((self.exact.counts.get(key, 0) for key, _ in left),
                                       default=0)
        errors = [s.error + max((s.counts.get(key, 0) for key, _ in left), default=0)
                  for s in samples]
        return rows, error, errors
