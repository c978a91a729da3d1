"""The --skew tap on an aggregation's map side, without Spark: PySpark's own map-side
combine (``ExternalMerger.mergeValues``) over Zipf-keyed pairs, plain and through
``SkewCounter.tap`` with the keys folded into the sketch every ``--fold`` records (a
host folds at its checks, about every 50 ms). Paired repetitions, process CPU time,
medians: the per-record cost the tap adds where the budget lives (issue 13: 1.02x).

    .venv/bin/python bench/skew_tap.py [--records 1000000] [--repeat 7]
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import statistics
import time
from itertools import islice
from operator import add

from pyspark.shuffle import Aggregator, ExternalMerger
from skew import ZipfKey

from icedtea_jupyter.executor.skew import SkewCounter


class Host:
    class spec:
        shuffle = (4, hash)

    worker = {"partition": 0}


def combine(pairs: list, tapped: bool, fold: int) -> float:
    """PySpark's map-side combine of ``pairs`` in blocks of ``fold`` records, as a host
    runs between two checks; tapped: through the skew counter, folded at each check."""
    merger = ExternalMerger(Aggregator(lambda v: v, add, add), 1 << 30)
    counter = SkewCounter(Host())
    start = time.process_time()
    records = counter.tap(iter(pairs)) if tapped else iter(pairs)
    for block in iter(lambda: list(islice(records, fold)), []):
        merger.mergeValues(block)
        if tapped:
            counter.fold()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--fold", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    key = ZipfKey(100_000, 1.1)
    pairs = [key(i) for i in range(args.records)]
    ratios, plain, tapped = [], [], []
    for k in range(args.repeat):
        order = (False, True) if k % 2 == 0 else (True, False)
        times = {t: combine(pairs, t, args.fold) for t in order}
        plain.append(times[False])
        tapped.append(times[True])
        ratios.append(times[True] / times[False])
    print(f"{args.records:,} pairs, a fold every {args.fold:,}: map-side combine "
          f"{statistics.median(plain):.3f} s CPU plain, {statistics.median(tapped):.3f} s "
          f"tapped; paired ratio median {statistics.median(ratios):.3f}x "
          f"(each: {', '.join(f'{r:.3f}' for r in ratios)})")


if __name__ == "__main__":
    main()
