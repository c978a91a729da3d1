"""The map side of ``bench/skew.py``'s job in this process, without Spark: a hosted
``map(ZipfKey)`` and the hosted map-side combine of ``reduceByKey``, recorded with and
without ``--skew``, as a Python worker runs them. Paired repetitions in process CPU time,
and ``--only`` for instruction counts that do not depend on the machine's load:

    .venv/bin/python bench/skew_worker.py [--records 1000000] [--repeat 5]
    valgrind --tool=callgrind .venv/bin/python bench/skew_worker.py --only skew
    (and --only recorded, --only setup: subtract setup's count from both)
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import os
import statistics
import sys
import tempfile
import time
from operator import add

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pyspark.rdd import portable_hash  # noqa: E402
from skew import ZipfKey  # noqa: E402

from icedtea_jupyter.executor import host as host_module  # noqa: E402
from icedtea_jupyter.executor.spec import OperatorSpec, RunSpec  # noqa: E402
from icedtea_jupyter.executor.wrappers import CombineFunction, PartitionFunction  # noqa: E402
from tests.unit.fakes import RecordingChannel  # noqa: E402

PARTITIONS = 4


def map_side(records: range, skew: bool) -> int:
    """The job's map side on one partition: combiners out (as the shuffle would take)."""
    run = RunSpec("bench-skew", ("127.0.0.1", 1), b"", "/nonexistent", skew=skew)
    keyed = PartitionFunction(OperatorSpec(0, run, "map", "by key"), "map",
                              ZipfKey(100_000, 1.1))(0, iter(records))
    spec = OperatorSpec(1, run, "reduceByKey", "sum (combine)", phase="combine",
                        shuffle=(PARTITIONS, portable_hash) if skew else None)
    combine = CombineFunction(spec, "combine", (lambda v: v, add, add), 1 << 30, None, False)
    return sum(1 for _ in combine(0, keyed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=["recorded", "skew", "setup"])
    args = parser.parse_args()
    channel = RecordingChannel()
    host_module.channel_for = lambda run: channel  # no coordinator: what is sent is kept
    os.environ.setdefault("TMPDIR", tempfile.gettempdir())
    records = range(args.records)
    if args.only:
        if args.only != "setup":
            map_side(records, args.only == "skew")
        return
    times: dict[bool, list[float]] = {False: [], True: []}
    for k in range(args.repeat + 1):
        for skew in ((False, True) if k % 2 == 0 else (True, False)):
            start = time.process_time()
            map_side(records, skew)
            if k:  # the first pair warms up
                times[skew].append(time.process_time() - start)
    ratios = [s / r for s, r in zip(times[True], times[False])]
    print(f"{args.records:,} records, map side: recorded {statistics.median(times[False]):.3f} s"
          f" CPU, --skew {statistics.median(times[True]):.3f} s; paired ratio median "
          f"{statistics.median(ratios):.3f}x (each: {', '.join(f'{r:.3f}' for r in ratios)})")


if __name__ == "__main__":
    main()
