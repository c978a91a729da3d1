"""The Skew section on a DataFrame join in real JupyterLab: a --skew run whose only
shuffle is a sort-merge join (no Python operator) opens on the join once it has ended,
Spark's count of its keys is charted, and a click on the heavy bar lists the hot key."""
from __future__ import annotations

import json

import pytest
from conftest import notebook_json
from test_sidebar import RUN_FINISHED, open_notebook, show_sidebar, widen_left_area
from test_skew import click_hot_bar, only_skew_open
from test_time_travel import run_cells, run_code

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

CELLS = [
    "%load_ext icedtea_jupyter\n"
    "import os, random\n"
    "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
    "from pyspark.sql import SparkSession\n"
    "spark = (SparkSession.builder.master('local[2]').appName('skew-join')\n"
    "         .config('spark.ui.showConsoleProgress', 'false')\n"
    "         .config('spark.sql.autoBroadcastJoinThreshold', '-1')\n"
    "         .config('spark.sql.shuffle.partitions', '4').getOrCreate())\n"
    "spark.sparkContext.setLogLevel('ERROR')\n"
    "rng = random.Random(3)\n"
    "events = spark.createDataFrame([('hot' if rng.random() < 0.5 else f'user{rng.randrange(200)}',"
    " i) for i in range(12_000)], 'user string, amount long')\n"
    "users = spark.createDataFrame([(f'user{i}', f'name {i}') for i in range(200)]"
    " + [('hot', 'the hot user')], 'user string, name string')",
    "%%icedtea --skew\n"
    "out = events.join(users, 'user').groupBy('name').count().collect()",
]


def test_a_dataframe_joins_heavy_key_in_the_skew_section(page, lab_server, artifacts):
    (lab_server.root / "icedtea-skew-join.ipynb").write_text(
        json.dumps(notebook_json(CELLS), indent=1))
    notebook = open_notebook(page, lab_server, "icedtea-skew-join.ipynb")
    run_cells(page, notebook, 2)
    sidebar = show_sidebar(page)
    widen_left_area(page, 520)
    expect(sidebar.locator(".jp-icedtea-run-item")).to_have_count(1, timeout=RUN_FINISHED)
    only_skew_open(sidebar)
    view = sidebar.locator(".jp-icedtea-SkewView")
    picker = view.locator("select.jp-icedtea-skew-operator")
    expect(picker).to_have_value("join", timeout=RUN_FINISHED)  # the run's only shuffle
    chart = view.locator(".jp-icedtea-skew-chart")
    expect(chart).to_have_attribute("data-state", "drawn", timeout=60_000)
    hot = int(run_code(page, notebook, "import icedtea_jupyter as _it; "
                       "print(_it.last_run().skew('join').keys.partition[0])", "join keys"))
    click_hot_bar(view, chart, hot)  # its keys listed, 'hot' first
    expect(view.locator(".jp-icedtea-skew-remedy[data-remedy='broadcast']")).to_have_count(1)
    page.screenshot(path=str(artifacts / "skew-dataframe-join.png"))
