"""What exact replay after a ``partitionBy`` of θ's outputs costs a record, without Spark.

bench/shapes.py's partitionBy workload through its shuffle, in one process: θ's
``(key, value)`` outputs bucketed and pickled in batches as PySpark's ``partitionBy``
does on the map side (the same loop for every variant), four map partitions' blocks
read back on one reduce partition and consumed. Variants:

- ``plain``: PySpark's records, flattened as its ``BatchedSerializer`` does;
- ``tagged``: each record tagged ``(key, (map partition, position, value))`` on the map
  side and untagged by C iterators on the reduce side, logging 8 bytes a record (the
  scheme before, main at ``0e7c5b7``);
- ``marked``: a marker record starts each block (``BlockMarks``) and the reduce side
  reads the batches whole, logging one run per block (``BlockRuns``), as now.

Prints seconds per million records (medians, interleaved) and the log's bytes;
``--only plain|tagged|marked|setup`` runs one once, for ``valgrind --tool=callgrind``.

    .venv/bin/python bench/shuffle_marks.py [--records 400000] [--only NAME]
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import os
import statistics
import sys
import time
import zlib
from array import array
from collections import defaultdict
from itertools import chain, filterfalse, tee
from operator import itemgetter

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("PYTHONHASHSEED", "0")  # as PySpark's workers run
from pyspark.core.rdd import portable_hash  # noqa: E402
from pyspark.serializers import CPickleSerializer  # noqa: E402

from icedtea_jupyter.executor.shuffle_read import BlockMarks, BlockRuns, tag_positions  # noqa: E402

MAPS, REDUCES, PICKLE = 4, 4, CPickleSerializer()
_KEY, _VALUE, _THIRD, _PAIR = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(0, 1)


def map_side(records, partitions: int = REDUCES) -> dict[int, list[bytes]]:
    """PySpark's ``partitionBy`` map side: records bucketed by ``portable_hash``, each
    bucket pickled as a batch when the batch size is reached (it grows as PySpark's)."""
    buckets, blocks, c, batch = defaultdict(list), defaultdict(list), 0, 10 * partitions
    for k, v in records:
        buckets[portable_hash(k) % partitions].append((k, v))
        c += 1
        if c > batch:
            for split in list(buckets):
                blocks[split].append(PICKLE.dumps(buckets.pop(split)))
            batch, c = min(batch * 1.5, 10**9), 0
    for split, items in buckets.items():
        blocks[split].append(PICKLE.dumps(items))
    return blocks


def batches_of(shuffled: list[dict], q: int):
    """Reduce partition ``q``'s batches, map partition after map partition (fetch order)."""
    return (PICKLE.loads(b) for blocks in reversed(shuffled) for b in blocks[q])


def untag_all(splits: array, positions: array, records):
    """The reduce side before: tags stripped and noted by C iterators (main's _Arrivals)."""
    keys, tagged = tee(records)
    s, p, values = tee(map(_VALUE, tagged), 3)
    noted = zip(filterfalse(splits.append, map(_KEY, s)),
                filterfalse(positions.append, map(_VALUE, p)))
    return map(_PAIR, zip(map(_KEY, keys), map(_THIRD, values), noted))


def run(variant: str, partitions: list[list]) -> tuple[int, int]:
    """(records consumed, log bytes) of one variant over every reduce partition."""
    if variant == "plain":
        shuffled = [map_side(iter(p)) for p in partitions]
    elif variant == "tagged":
        shuffled = [map_side(tag_positions(m, iter(p))) for m, p in enumerate(partitions)]
    else:
        marks = BlockMarks(REDUCES)
        shuffled = [map_side(marks(m, iter(p))) for m, p in enumerate(partitions)]
    consumed = logged = 0
    for q in range(REDUCES):
        batches = batches_of(shuffled, q)
        if variant == "plain":
            records = chain.from_iterable(batches)
        elif variant == "tagged":
            splits, positions = array("I"), array("I")
            records = untag_all(splits, positions, chain.from_iterable(batches))
        else:
            order = BlockRuns()
            records = order.read(batches)
        n = sum(1 for _ in records)
        consumed += n
        if variant == "tagged":
            pairs = array("I", bytes(8 * n))
            pairs[0::2], pairs[1::2] = splits, positions
            logged += len(zlib.compress(pairs.tobytes(), 1))
        elif variant == "marked":
            logged += len(order.replay_log(None, n)[1])
    return consumed, logged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=["plain", "tagged", "marked", "setup"])
    args = parser.parse_args()
    per = args.records // MAPS  # θ's outputs on each map partition, as the workload's map
    partitions = [[(x % 1000, x) for x in range(m * per, (m + 1) * per)] for m in range(MAPS)]
    if args.only:
        if args.only != "setup":
            run(args.only, partitions)
        return
    counts = {v: run(v, partitions) for v in ("plain", "tagged", "marked")}
    assert len({n for n, _ in counts.values()}) == 1, counts
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(args.repeat):
        for variant in ("plain", "tagged", "marked"):
            start = time.perf_counter()
            run(variant, partitions)
            times[variant].append(time.perf_counter() - start)
    plain = statistics.median(times["plain"])
    for variant, spent in times.items():
        seconds = statistics.median(spent)
        print(f"{variant:7s} {seconds / args.records * 1e6:6.3f} s per M records, "
              f"{seconds / plain:.3f}× plain, log {counts[variant][1]:,} bytes")


if __name__ == "__main__":
    main()
