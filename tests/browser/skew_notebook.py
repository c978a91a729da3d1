"""The skewed pipeline the skew browser test and the README's skew image record."""
from __future__ import annotations

from tests.waiting import FileGate


def skew_cells(live: FileGate) -> list[str]:
    """A reduceByKey where half the events belong to one user ('hot'): 2 map partitions
    (Spark's two task slots) of 6,000 events, a millisecond each until ``live`` opens;
    each partition's last event waits at ``live`` (the run records until the test has
    watched the chart live)."""
    return [
        "%load_ext icedtea_jupyter\n"
        "import os, random, time\n"
        "from operator import add\n"
        "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
        "from pyspark.sql import SparkSession\n"
        "spark = (SparkSession.builder.master('local[2]').appName('skew')\n"
        "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
        "spark.sparkContext.setLogLevel('ERROR')\n"
        "from tests.waiting import FileGate  # the gate the test opens\n"
        f"live = FileGate({live.directory!r})\n"
        "rng = random.Random(3)\n"
        "events = [(i, 'hot' if rng.random() < 0.5 else f'user{rng.randrange(200)}',"
        " rng.randrange(100)) for i in range(12_000)]\n"
        "def by_user(event):\n"
        "    if not live.is_open():\n"
        "        time.sleep(0.001)  # while the test watches the chart live\n"
        "        if event[0] % 6000 == 5999:\n"
        "            live.wait('map side')\n"
        "    return event[1], event[2]",
        "%%icedtea --skew\n"
        "totals = (spark.sparkContext.parallelize(events, 2).map(by_user).setName('by user')\n"
        "          .reduceByKey(add, 4).setName('sum').collect())",
    ]
