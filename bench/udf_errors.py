"""What ``--tolerate`` and ``--on-error pause`` cost on a UDF column
(``executor/udf_errors.py``), in one process, without Spark.

1. The row path: a row ``@udf``'s function called per row as Spark's worker calls it,
   plain, hosted (``CallFunction``, as a recorded run ships it) and hosted with
   ``--tolerate`` (its agent on the host): rows that do not raise should cost the same
   with and without the flag; and hosted under ``--on-error pause`` (live control on the
   host). Repetitions interleaved; medians and paired ratios.
2. The group path: an ``applyInPandas`` function called per group (``--groups`` frames
   of 8 rows), hosted with and without ``--tolerate``: groups that do not raise should
   cost the same (``executor/group_errors.py`` runs only after an exception).
3. The error path: a scalar pandas UDF's batch of ``--rows`` rows with ``--culprits``
   rows that raise: the time and the calls the halving takes to find them, against one
   call of the function on the batch.

    PYTHONPATH=$PWD .venv/bin/python bench/udf_errors.py [--records 1000000]
    valgrind --tool=callgrind .venv/bin/python bench/udf_errors.py --only tolerate
    valgrind --tool=callgrind .venv/bin/python bench/udf_errors.py --only pause --records 100000
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import os
import pickle
import statistics
import sys
import time
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from icedtea_jupyter.agents.tolerate import Quarantine  # noqa: E402
from icedtea_jupyter.executor import host as host_module  # noqa: E402
from icedtea_jupyter.executor.calls import _CALL_HOSTS, CallFunction  # noqa: E402
from icedtea_jupyter.executor.spec import OperatorSpec, RunSpec  # noqa: E402
from icedtea_jupyter.executor.udf_errors import LiveAnswers, UdfErrors  # noqa: E402
from tests.unit.fakes import RecordingChannel  # noqa: E402


def parse_amount(x: int) -> int:
    """The UDF: a little arithmetic per row."""
    return (x * 7 + 3) % 1000


def plain(values: list) -> int:
    f, total = parse_amount, 0
    for x in values:
        total += f(x)
    return total


def hosted(values: list, tolerate: bool, on_error: str = "fail") -> int:
    agents = (Quarantine.with_options(limit=1),) if tolerate else ()
    run = RunSpec("bench-udf", ("127.0.0.1", 1), b"", "/nonexistent", agents,
                  on_error=on_error)
    call = shipped(CallFunction(OperatorSpec(0, run, "udf", "parse_amount"), parse_amount,
                                "row"))
    total = 0
    for x in values:
        total += call(x)
    _CALL_HOSTS.clear()
    return total


def shipped(call: CallFunction) -> Any:
    """What a Python worker calls: the UDF as Spark pickles it (a row UDF: a function)."""
    return pickle.loads(pickle.dumps(call))


RUNS = {"plain": plain, "hosted": lambda v: hosted(v, False),
        "tolerate": lambda v: hosted(v, True),
        "pause": lambda v: hosted(v, False, on_error="pause")}


def row_path(records: int, repeats: int) -> None:
    values = list(range(records))
    times: dict[str, list[float]] = {name: [] for name in RUNS}
    for run in RUNS.values():  # warm: imports, the first host
        run(values[:1000])
    for _ in range(repeats):  # interleaved: the load changes alike for all three
        for name, run in RUNS.items():
            started = time.perf_counter()
            run(values)
            times[name].append(time.perf_counter() - started)
    base = times["plain"]
    for name, seconds in times.items():
        paired = statistics.median(s / b for s, b in zip(seconds, base))
        print(f"{name:9s} {statistics.median(seconds) * 1e9 / records:7.1f} ns/row  "
              f"ratio of medians {statistics.median(seconds) / statistics.median(base):.3f}  "
              f"median paired ratio {paired:.3f}")
    for flag in ("tolerate", "pause"):
        paired = statistics.median(t / h for t, h in zip(times[flag], times["hosted"]))
        print(f"{flag} / hosted: median paired ratio {paired:.3f}")


def group_path(groups: int, repeats: int) -> None:
    import pandas as pd

    frames = [pd.DataFrame({"id": range(g * 8, g * 8 + 8)}) for g in range(groups)]
    runs = {"hosted": False, "tolerate": True}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats + 1):  # the first round warms: imports, the first host
        for name, tolerate in runs.items():
            agents = (Quarantine.with_options(limit=1),) if tolerate else ()
            run = RunSpec("bench-group", ("127.0.0.1", 1), b"", "/nonexistent", agents)
            call = CallFunction(OperatorSpec(0, run, "applyInPandas", "first"),
                                _first_row, "group")
            started = time.perf_counter()
            for frame in frames:
                call(frame)
            times[name].append(time.perf_counter() - started)
            _CALL_HOSTS.clear()
    hosted_times, tolerant = times["hosted"][1:], times["tolerate"][1:]
    print(f"groups: hosted {statistics.median(hosted_times) * 1e6 / groups:.1f} µs/group, "
          f"with --tolerate {statistics.median(tolerant) * 1e6 / groups:.1f} µs/group; "
          f"median paired ratio "
          f"{statistics.median(t / h for t, h in zip(tolerant, hosted_times)):.3f}")


def _first_row(frame: object) -> object:
    return frame.iloc[:1]  # type: ignore[attr-defined]


def error_path(rows: int, culprits: int, repeats: int) -> None:
    import pandas as pd

    bad = set(range(rows // (culprits + 1), rows, rows // (culprits + 1))[:culprits])
    calls = [0]

    def checked(x: int) -> int:
        if x in bad:
            raise ValueError(x)
        return x * 2

    def udf(s: pd.Series) -> pd.Series:
        calls[0] += 1
        return s.map(checked)

    batch = pd.Series(range(rows))
    clean = pd.Series(range(rows)).where(lambda s: ~s.isin(bad), -1)
    one, found = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        udf(clean)
        one.append(time.perf_counter() - started)
        errors = UdfErrors(SimpleNamespace(records_in=0),
                           LiveAnswers(SimpleNamespace(records_in=0), None, lambda r, e: True))
        calls[0] = 0
        started = time.perf_counter()
        try:
            udf(batch)
        except ValueError as exc:
            out = errors.batch(udf, (batch,), exc)
        found.append(time.perf_counter() - started)
    assert out.isna().sum() == len(bad)
    print(f"a batch of {rows:,} rows, {len(bad)} raising: {calls[0]} calls, "
          f"{statistics.median(found) * 1e3:.1f} ms to find them against "
          f"{statistics.median(one) * 1e3:.1f} ms for one call on the batch "
          f"({statistics.median(found) / statistics.median(one):.1f}×)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--culprits", type=int, default=1)
    parser.add_argument("--groups", type=int, default=20_000)
    parser.add_argument("--only", choices=sorted(RUNS), default=None)
    args = parser.parse_args()
    channel = RecordingChannel()
    host_module.channel_for = lambda run: channel  # no coordinator: messages are kept
    if args.only:
        RUNS[args.only](list(range(args.records)))
        return
    print(f"load: {os.getloadavg()}")
    row_path(args.records, args.repeats)
    group_path(args.groups, args.repeats)
    for culprits in (1, args.culprits * 10):
        error_path(args.rows, culprits, 3)


if __name__ == "__main__":
    main()
