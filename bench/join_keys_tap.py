"""The cost of capturing a join input's keys (issue 12): a join's map side as
``%%icedtea --lineage`` runs it in a worker, without Spark, with and without the tap
that numbers each record's key and writes the keys at the end (``SideKeys``).

Zipf words paired as ``(word, 1)`` (``bench/lineage_capture.py``'s join input) go
through ``TagValues`` and the join's ``TaggedCombine`` (the map side of every join of a
recorded run), ``--only plain``, or through ``SideKeys`` first, ``--only tapped``
(``--only unwritten``: the tap's numbering without its write at the end; ``setup``: the
records only, to subtract). One run a process, for instruction counts
that do not depend on the machine's load::

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python bench/join_keys_tap.py --only tapped --records 200000

Without ``--only``: wall time per million records of each, alternated ``--repeat`` times.
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules

# isort: split

import argparse
import os
import statistics
import tempfile
import time
from types import SimpleNamespace

from lineage_capture import zipf_lines

from icedtea_jupyter.executor import channel
from icedtea_jupyter.executor.lineage_keys import SideKeys
from icedtea_jupyter.executor.wrappers import TaggedCombine, TagValues


def pairs(records: int) -> list[tuple[str, int]]:
    return [(word, 1) for line in zipf_lines(records) for word in line.split()]


class Unwritten(SideKeys):
    """The tap numbering the keys but writing nothing: the write's share of its cost."""

    def _write(self, *args: object) -> None:
        pass


def map_side(records: list, variant: str, store: str) -> int:
    """The join's map side over ``records`` (``VARIANTS``); its combiners."""
    source = iter(records)
    if variant != "plain":
        tap = SideKeys if variant == "tapped" else Unwritten
        source = tap(SimpleNamespace(store_path=store), 1, 4)(0, source)
    combined = TaggedCombine(2 ** 30, None, False)(TagValues(0)(source))
    return sum(1 for _ in combined)


VARIANTS = ("plain", "tapped", "unwritten")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=[*VARIANTS, "setup"])
    args = parser.parse_args()
    channel._run_has_ended = lambda run: False  # a run recording
    store = tempfile.mkdtemp(prefix="icedtea-tap-bench-")
    records = pairs(args.records)
    if args.only:
        if args.only != "setup":
            map_side(records, args.only, store)
        return
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for k in range(args.repeat):
        for name in VARIANTS if k % 2 == 0 else VARIANTS[::-1]:
            start = time.perf_counter()
            map_side(records, name, store)
            times[name].append((time.perf_counter() - start) / len(records) * 1e6)
    print(f"{len(records):,} records, load {os.getloadavg()[0]:.1f}:")
    for name in VARIANTS:
        ratios = [t / p for t, p in zip(times[name], times["plain"])]
        print(f"  {name}: {statistics.median(times[name]):.2f} s/M, median paired ratio "
              f"to plain {statistics.median(ratios):.3f}x")


if __name__ == "__main__":
    main()
