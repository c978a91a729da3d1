"""The pipeline generator's long run (issue 37): many drawn pipelines, every promise
checked against its oracle (``tests/pipelines``), the violations tallied by invariant.

Unlike ``tests/spark/test_generated_pipelines.py`` (a bounded run that stops and shrinks
at the first violation), this goes on past violations and reports them all, with the
smallest pipeline that broke each invariant, and writes
``bench/results/pipelines_SEED.json``.

    .venv/bin/python bench/pipelines.py [--pipelines 1000] [--seed 1] [--reuse] [--frames]
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from tests.pipelines.frames import frame_pipelines  # noqa: E402
from tests.pipelines.grammar import pipelines  # noqa: E402
from tests.pipelines.oracles import CHECKED, Runner, check_pipeline  # noqa: E402


def shell_for(spark: SparkSession):  # noqa: ANN201 - IPython's shell
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "icedtea_jupyter")
    shell.user_ns.update(spark=spark, sc=spark.sparkContext)
    return shell


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipelines", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reuse", action="store_true", help="also re-run with --reuse")
    parser.add_argument("--frames", action="store_true",
                        help="DataFrame pipelines too (tests/pipelines/frames.py)")
    args = parser.parse_args()
    spark = (SparkSession.builder.master("local[2]").appName("icedtea pipelines")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    runner = Runner(shell_for(spark), tempfile.mkdtemp(prefix="icedtea-pipelines-"))
    by_invariant: Counter = Counter()
    smallest: dict[str, tuple[int, str, str]] = {}
    began = time.perf_counter()
    tried = [0]

    @seed(args.seed)
    @settings(max_examples=args.pipelines, phases=[Phase.generate], deadline=None,
              database=None, suppress_health_check=list(HealthCheck))
    @given(pipeline=st.one_of(pipelines(), frame_pipelines()) if args.frames else pipelines())
    def explore(pipeline) -> None:  # noqa: ANN001 - a Pipeline
        try:
            found = check_pipeline(runner, pipeline, reuse=args.reuse)
        except Exception as exc:  # noqa: BLE001 - a crash is a violation too
            found = [f"crash: {type(exc).__name__}: {exc}"]
        for violation in found:
            invariant = violation.split(":")[0]
            if invariant not in by_invariant:  # the first of its kind, as it comes
                print(f"-- {violation}\n{pipeline.describe()}", flush=True)
            by_invariant[invariant] += 1
            size = len(pipeline.cell()) + len(repr(pipeline.data))
            if invariant not in smallest or size < smallest[invariant][0]:
                smallest[invariant] = (size, pipeline.describe(), violation)
        tried[0] += 1
        if tried[0] % 25 == 0:
            print(f"{tried[0]} pipelines, {time.perf_counter() - began:.0f} s, violations "
                  f"{dict(by_invariant)}", flush=True)

    explore()
    result = {"pipelines": tried[0], "seed": args.seed, "reuse": args.reuse,
              "frames": args.frames,
              "seconds": round(time.perf_counter() - began, 1), "checked": dict(CHECKED),
              "violations": dict(by_invariant),
              "smallest": {k: {"pipeline": v[1], "violation": v[2]}
                           for k, v in smallest.items()}}
    os.makedirs(os.path.join(repo_paths.BENCH, "results"), exist_ok=True)
    path = os.path.join(repo_paths.BENCH, "results", f"pipelines_{args.seed}.json")
    with open(path, "w") as out:
        json.dump(result, out, indent=1)
    print(json.dumps({k: result[k] for k in ("pipelines", "seconds", "checked",
                                              "violations")}, indent=1))
    for invariant, case in result["smallest"].items():
        print(f"\n== {invariant}\n{case['violation']}\n{case['pipeline']}")
    spark.stop()


if __name__ == "__main__":
    main()
