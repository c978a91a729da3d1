"""Live control from the IcedTea sidebar, in real JupyterLab and headless Chromium: pause a
running job, look at a worker's state while paused, resume; meet a breakpoint, replace its
record in the editor, and see the replacement in the cell's result and the action log.

Run with ``pytest -m browser tests/browser/test_live_control.py``.
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

CELLS = [
    "%load_ext icedtea_jupyter\n"
    "import os, time\n"
    "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
    "from pyspark.sql import SparkSession\n"
    "spark = (SparkSession.builder.master('local[2]').appName('live')\n"
    "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
    "spark.sparkContext.setLogLevel('ERROR')\n"
    "from icedtea_jupyter import Operator\n"
    "class Slow(Operator):\n"
    "    def open(self):\n"
    "        self.seen = 0\n"
    "    def process(self, x):\n"
    "        time.sleep(0.05)\n"
    "        self.seen += 1\n"
    "        yield x",
    '%%icedtea --interesting slow --break-when "slow: row == 390"\n'
    "out = spark.sparkContext.parallelize(range(400), 2).mapPartitions(Slow()).setName('slow').collect()",
]


def test_pause_look_resume_then_replace_a_record_at_a_breakpoint(page, lab_server, artifacts):
    (lab_server.root / "icedtea-live.ipynb").write_text(json.dumps(notebook_json(CELLS), indent=1))
    notebook = open_notebook(page, lab_server, "icedtea-live.ipynb")
    run_cells(page, notebook, 2)
    sidebar = show_sidebar(page)
    widen_left_area(page, 520)
    runs = sidebar.locator(".jp-icedtea-run-item")
    expect(runs).to_have_count(1, timeout=RUN_FINISHED)
    theta = sidebar.locator('.jp-icedtea-op-row[data-operator="slow"]')
    expect(theta).to_have_attribute("data-status", "running", timeout=RUN_FINISHED)

    title = sidebar.locator('.lm-AccordionPanel-title[aria-controls="icedtea-section-control"]')
    if title.get_attribute("aria-expanded") != "true":  # collapsed until a hit opens it
        title.click()
    control = sidebar.locator(".jp-icedtea-ControlView")
    status = control.locator(".jp-icedtea-control-status")
    control.locator("button.jp-icedtea-pause").click()
    expect(status).to_have_text("Paused", timeout=15_000)
    expect(control.locator(".jp-icedtea-control-message")).to_contain_text("Paused: ")
    # A worker's state while paused: seen stays put between two looks.
    control.locator(".jp-icedtea-probe-operator").fill("slow")
    control.locator(".jp-icedtea-probe-partition").fill("0")
    look, state = control.locator("button.jp-icedtea-probe-look"), control.locator(".jp-icedtea-probe-state")
    look.click()
    expect(state).to_have_text(re.compile(r"seen = \d+"), timeout=15_000)
    seen = state.inner_text()
    page.wait_for_timeout(1000)
    state.evaluate("node => { node.textContent = ''; }")
    look.click()
    expect(state).to_have_text(seen, timeout=15_000)
    page.screenshot(path=str(artifacts / "live-control-paused.png"))
    control.locator("button.jp-icedtea-resume").click()
    expect(status).to_have_text("Running", timeout=15_000)

    # The breakpoint: record 390 waits; replace it with 1000 in the editor.
    editor = control.locator("textarea.jp-icedtea-hit-editor")
    expect(editor).to_be_visible(timeout=RUN_FINISHED)
    expect(control.locator(".jp-icedtea-hit-where")).to_contain_text("condition on slow, partition 1")
    expect(editor).to_have_value("390")
    expect(status).to_have_text("Paused")
    page.screenshot(path=str(artifacts / "live-control-hit.png"))
    for section in ("interactions", "steps", "snapshot"):  # room for the hit (docs/images)
        collapse(sidebar, section)
    expect(editor).to_be_visible()
    page.screenshot(path=str(artifacts / "docs-live_control.png"))
    editor.fill("1000")
    control.locator("button.jp-icedtea-hit-replace").click()
    expect(control.locator(".jp-icedtea-hits")).to_contain_text("→ replace", timeout=15_000)
    expect(runs.first).to_have_attribute("data-status", "finished", timeout=RUN_FINISHED)

    out = run_code(page, notebook, "print(out[390], len(out), 390 in out)", "result")
    assert out.split() == ["1000", "400", "False"], out
    calls = run_code(page, notebook,
                     "import icedtea_jupyter as it; print([(a['source'], a['call']) for a in "
                     "it.last_run().actions])", "actions")
    assert "('sidebar', 'run.pause()')" in calls and "('sidebar', 'run.resume()')" in calls, calls
    assert "('sidebar', 'run.breakpoints[0].replace(1000)')" in calls, calls
