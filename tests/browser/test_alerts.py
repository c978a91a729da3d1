"""The Alerts section in real JupyterLab: a --check on a pipeline with planted bad
records; the section opens by itself while the run records, shows the check's group
with its records and the count in its title, and the final count once the run ends."""
from __future__ import annotations

import json

import pytest
from conftest import notebook_json
from test_sidebar import RUN_FINISHED, collapse, open_notebook, show_sidebar, widen_left_area
from test_time_travel import run_cells

from tests.waiting import FileGate

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

LIVE = 60_000
BAD = 420 // 7 - 1  # the multiples of 7 below 420 but 0 (-0 >= 0)


def alert_cells(live: FileGate) -> list[str]:
    """Two partitions of 210 records; multiples of 7 come out negative; each partition's
    last record waits at ``live`` (the run records while the test looks)."""
    return [
        "%load_ext icedtea_jupyter\n"
        "import os\n"
        "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
        "from pyspark.sql import SparkSession\n"
        "spark = (SparkSession.builder.master('local[2]').appName('alerts')\n"
        "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
        "spark.sparkContext.setLogLevel('ERROR')\n"
        "from tests.waiting import FileGate  # the gate the test opens\n"
        f"live = FileGate({live.directory!r})\n"
        "def clean(x):\n"
        "    if x % 210 == 209:\n"
        "        live.wait('last record')\n"
        "    return -x if x % 7 == 0 else x",
        "%%icedtea --check 'clean: row >= 0'\n"
        "out = spark.sparkContext.parallelize(range(420), 2).map(clean).setName('clean')"
        ".collect()",
    ]


def test_alerts_appear_live_in_the_sidebar_with_their_records(page, lab_server, artifacts,
                                                             tmp_path):
    live = FileGate(tmp_path / "live")
    try:
        watch_alerts(page, lab_server, artifacts, live)
    finally:
        live.open()  # nothing stays held at the gate


def watch_alerts(page, lab_server, artifacts, live):
    (lab_server.root / "icedtea-alerts.ipynb").write_text(
        json.dumps(notebook_json(alert_cells(live)), indent=1))
    notebook = open_notebook(page, lab_server, "icedtea-alerts.ipynb")
    sidebar = show_sidebar(page)
    widen_left_area(page, 520)
    title = sidebar.locator('.lm-AccordionPanel-title[aria-controls="icedtea-section-alerts"]')
    expect(title).to_have_attribute("aria-expanded", "false")  # collapsed until an alert
    run_cells(page, notebook, 2)
    runs = sidebar.locator(".jp-icedtea-run-item")
    expect(runs).to_have_count(1, timeout=RUN_FINISHED)

    # Live: the section opens by itself, the check's group shows sampled records
    expect(title).to_have_attribute("aria-expanded", "true", timeout=LIVE)
    group = sidebar.locator(".jp-icedtea-alert-group[data-tool='check']")
    expect(group).to_have_count(1, timeout=LIVE)
    expect(group).to_contain_text("clean: row >= 0 on clean")
    records = group.locator(".jp-icedtea-alert-record code")
    expect(records.first).to_be_visible(timeout=LIVE)
    assert all(int(text) < 0 and int(text) % 7 == 0 for text in records.all_inner_texts())
    assert runs.first.get_attribute("data-status") == "running"
    expect(title).to_contain_text("Alerts (")
    page.screenshot(path=str(artifacts / "alerts-live.png"))
    for section in ("interactions", "steps", "snapshot"):  # room for the alerts (docs/images)
        collapse(sidebar, section)
    expect(records.first).to_be_visible()
    page.screenshot(path=str(artifacts / "docs-agents.png"))
    live.open()

    # Final: every failing record counted, in the group and the section's title
    expect(runs.first).to_have_attribute("data-status", "finished", timeout=RUN_FINISHED)
    expect(group).to_contain_text(f"×{BAD}", timeout=LIVE)
    expect(title).to_contain_text(f"Alerts ({BAD})")
