"""A failed run, debugged from its card in the IcedTea sidebar: "Debug this failure"
puts θ's chain just before the culprit record, and Over reproduces the exception."""
from __future__ import annotations

import json
import re

import pytest
from conftest import notebook_json
from test_sidebar import RUN_FINISHED, open_notebook, show_sidebar
from test_time_travel import STEP, run_cells, variable

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

CELLS = [
    "%load_ext icedtea_jupyter\n"
    "import os\n"
    "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
    "from pyspark.sql import SparkSession\n"
    "spark = (SparkSession.builder.master('local[2]').appName('failing')\n"
    "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
    "spark.sparkContext.setLogLevel('ERROR')\n"
    "from icedtea_jupyter import Operator\n"
    "class Invert(Operator):\n"
    "    def open(self):\n"
    "        self.seen = 0\n"
    "    def process(self, x):\n"
    "        self.seen += 1\n"
    "        yield 1 / (x - 42)",
    "%%icedtea --interesting invert --interact-every 0.05\n"
    "out = spark.sparkContext.parallelize(range(100), 2).mapPartitions(Invert())"
    ".setName('invert').collect()",
]


def test_debug_this_failure_from_the_failed_runs_card(page, lab_server, artifacts):
    (lab_server.root / "icedtea-failing.ipynb").write_text(
        json.dumps(notebook_json(CELLS), indent=1))
    notebook = open_notebook(page, lab_server, "icedtea-failing.ipynb")
    run_cells(page, notebook, 2)
    sidebar = show_sidebar(page)
    runs = sidebar.locator(".jp-icedtea-run-item")
    expect(runs.first).to_have_attribute("data-status", "failed", timeout=RUN_FINISHED)
    card = sidebar.locator(".jp-icedtea-error")
    expect(card).to_contain_text("Record: 42")

    card.locator("button.jp-icedtea-debug-failure").click()
    snapshot = sidebar.locator(".jp-icedtea-SnapshotView")
    expect(snapshot.locator(".jp-icedtea-snapshot-title")).to_contain_text(
        "jump to the failure on partition 0", timeout=STEP)
    expect(variable(sidebar, "invert", "seen")).to_contain_text("42", timeout=STEP)
    steps = sidebar.locator(".jp-icedtea-PartitionSteps")
    row = steps.locator('.jp-icedtea-partition-steps[data-partition="0"]')
    expect(row).to_contain_text("next at invert: 42")

    row.locator('[data-action="step-over"]').click()
    failure = steps.locator(".jp-icedtea-replayed-failure")
    expect(failure).to_contain_text(
        re.compile(r"Partition 0 ended as in the recorded run: invert raised ZeroDivisionError"),
        timeout=STEP)
    expect(variable(sidebar, "invert", "seen")).to_contain_text("43", timeout=STEP)
    expect(row.locator('[data-action="step-over"]')).to_be_disabled()
    expect(steps.locator(".jp-icedtea-last-action")).to_have_text(
        "Last action (sidebar): dbg.step_over(partition=0)")
    page.screenshot(path=str(artifacts / "debug-this-failure.png"))
    problems = [e for e in page.console_errors if "icedtea" in e.lower()]
    assert not problems, problems
