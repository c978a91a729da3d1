"""An exception hit on a DataFrame UDF column, from the IcedTea sidebar, in real JupyterLab
and headless Chromium: ``%%icedtea --on-error pause`` on a row ``@udf`` that raises on one
row; the hit shows that row's arguments; Skip makes the row's value null; the cell's
result, ``run.quarantine()`` and the action log agree with what the sidebar showed.

Run with ``pytest -m browser tests/browser/test_udf_hit.py``.
"""
from __future__ import annotations

import json
import re

import pytest
from conftest import notebook_json
from test_sidebar import RUN_FINISHED, collapse, open_notebook, show_sidebar, widen_left_area
from test_time_travel import run_cells, run_code

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

BAD_ID = 13  # the row whose arguments make the UDF raise: (1000, 13)
CELLS = [
    "%load_ext icedtea_jupyter\n"
    "import os\n"
    "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
    "from pyspark.sql import SparkSession\n"
    "from pyspark.sql.functions import lit, udf\n"
    "spark = (SparkSession.builder.master('local[2]').appName('udf-hit')\n"
    "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
    "spark.sparkContext.setLogLevel('ERROR')\n"
    "@udf('long')\n"
    "def share(total, n):\n"
    f"    return total // (n - {BAD_ID})\n"
    "df = spark.range(0, 40, 1, 2)",
    "%%icedtea --on-error pause\n"
    "out = df.select('id', share(lit(1000), 'id').alias('v')).collect()",
]


def test_a_udf_row_that_raises_is_shown_with_its_arguments_and_skipped_to_null(
        page, lab_server, artifacts):
    (lab_server.root / "icedtea-udf-hit.ipynb").write_text(
        json.dumps(notebook_json(CELLS), indent=1))
    notebook = open_notebook(page, lab_server, "icedtea-udf-hit.ipynb")
    run_cells(page, notebook, 2)
    sidebar = show_sidebar(page)
    widen_left_area(page, 520)
    runs = sidebar.locator(".jp-icedtea-run-item")
    expect(runs).to_have_count(1, timeout=RUN_FINISHED)

    control = sidebar.locator(".jp-icedtea-ControlView")  # a hit reveals its section
    where = control.locator(".jp-icedtea-hit-where")
    expect(where).to_contain_text("error (ZeroDivisionError) on share, partition 0",
                                  timeout=RUN_FINISHED)
    for section in ("interactions", "steps", "snapshot"):  # room for the hit
        collapse(sidebar, section)
    shown = control.locator(".jp-icedtea-hit-record")
    expect(shown).to_be_visible()
    expect(shown).to_have_text(f"record: (1000, {BAD_ID})")  # the row's arguments
    expect(control.locator(".jp-icedtea-control-status")).to_have_text("Paused")
    page.screenshot(path=str(artifacts / "udf-hit.png"))
    control.locator("button.jp-icedtea-hit-skip").click()
    expect(control.locator(".jp-icedtea-hits")).to_contain_text("→ skip", timeout=15_000)
    expect(runs.first).to_have_attribute("data-status", "finished", timeout=RUN_FINISHED)

    values = run_code(page, notebook,
                      "print(sorted((r['id'], r['v']) for r in out) == sorted((i, None if i == "
                      f"{BAD_ID} else 1000 // (i - {BAD_ID})) for i in range(40)))", "values")
    assert values.strip() == "True", values  # every row kept; the skipped row's value null
    kept = run_code(page, notebook,
                    "import icedtea_jupyter as it; print([(r.reason, r.operator, int(r.partition), "
                    "int(r.index), repr(r.value)) for r in it.last_run().quarantine().itertuples()])",
                    "quarantine")
    assert kept.strip() == f"[('skipped', 'share', 0, {BAD_ID}, '(1000, {BAD_ID})')]", kept
    value = re.search(r"'(\(.*\))'", kept)
    assert value is not None and shown.inner_text() == f"record: {value[1]}"  # as the API
    calls = run_code(page, notebook,
                     "print([(a['source'], a['call']) for a in it.last_run().actions])",
                     "actions")
    assert "('sidebar', 'run.breakpoints[0].skip()')" in calls, calls
