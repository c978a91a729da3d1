"""DataFrame lineage in the IcedTea sidebar, in real JupyterLab and headless Chromium: a
``mapInPandas`` (θ, batches of 50 rows) and a ``groupBy().count()`` recorded with
``--lineage``; the Lineage view traces an output row back to its 400 source rows (paged),
jumps the debugger to the batch holding one of them and replays the trace; the API gives
the same trace, the same debugger and the same replay.
"""
from __future__ import annotations

import pytest
from test_lineage import open_lineage
from test_time_travel import STEP, run_code

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

CELLS = [
    "%load_ext icedtea_jupyter\n"
    "import os\n"
    "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
    "from pyspark.sql import SparkSession\n"
    "spark = (SparkSession.builder.master('local[2]').appName('dataframe-lineage')\n"
    "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
    "spark.sparkContext.setLogLevel('ERROR')\n"
    "spark.conf.set('spark.sql.execution.arrow.maxRecordsPerBatch', '50')\n"
    "import time\n"
    "def running(batches):\n"
    "    total, seen = 0.0, 0\n"
    "    for pdf in batches:\n"
    "        time.sleep(0.02)\n"
    "        total += float(pdf.v.sum())\n"
    "        seen += len(pdf)\n"
    "        yield pdf.assign(total=total)",
    "%%icedtea --lineage --interact-every 0.1\n"
    "df = spark.range(0, 1200, numPartitions=2).selectExpr('id', 'id % 3 AS k', 'CAST(id AS DOUBLE) / 2 AS v')\n"
    "rows = df.mapInPandas(running, 'id long, k long, v double, total double').groupBy('k').count().collect()",
]


def test_trace_a_dataframe_row_back_jump_to_its_batch_and_replay(page, lab_server, artifacts):
    notebook, sidebar, view = open_lineage(page, lab_server, "icedtea-dataframe-lineage.ipynb",
                                           CELLS)
    outputs = view.locator(".jp-icedtea-lineage-outputs")
    expect(outputs.locator(".jp-icedtea-lineage-heading")).to_contain_text(
        "Output rows of count: 3", timeout=STEP)
    outputs.locator(".jp-icedtea-lineage-filter").fill("k=1,")
    rows = outputs.locator(".jp-icedtea-lineage-record")
    expect(rows).to_have_count(1, timeout=STEP)
    expect(rows.first).to_contain_text("count=400")
    rows.first.click()
    back = view.locator(".jp-icedtea-lineage-back")
    expect(back.locator(".jp-icedtea-lineage-summary")).to_have_text(
        "400 source records (duckdb)", timeout=4 * STEP)
    path = back.locator(".jp-icedtea-lineage-step")
    assert [path.nth(i).get_attribute("data-operator") for i in range(path.count())] == [
        "count", "running", "selectExpr", "range"]
    expect(back.locator('.jp-icedtea-lineage-step[data-operator="running"]')
           ).to_have_attribute("data-count", "400")

    # The second page's first source row: id 61, partition 0's row 61, in batch 1 (50..99).
    back.locator('[data-action="next"]').click()
    expect(back.locator(".jp-icedtea-pager-range")).to_have_text("21–40 of 400", timeout=STEP)
    source = back.locator(".jp-icedtea-lineage-rows .jp-icedtea-lineage-record").first
    expect(source).to_have_attribute("data-position", "61")
    expect(source.locator(".jp-icedtea-lineage-value")).to_contain_text("id=61")
    source.locator('[data-action="jump"]').click()
    steps = sidebar.locator(".jp-icedtea-PartitionSteps")
    expect(steps).to_be_visible(timeout=STEP)
    row = steps.locator('.jp-icedtea-partition-steps[data-partition="0"]')
    expect(steps.locator(".jp-icedtea-step-status")).not_to_contain_text("Working", timeout=2 * STEP)
    # θ's next batch starts at id 50 (its first row: index 0, id 50, k 2, v 25.0)
    expect(row).to_contain_text("next at running: id k v 0 50 2 25.0", timeout=STEP)
    page.screenshot(path=str(artifacts / "dataframe-lineage-jumped.png"))

    back.locator('[data-action="replay"]').click()
    replayed = back.locator(".jp-icedtea-lineage-replayed")
    expect(replayed.locator(".jp-icedtea-lineage-summary")).to_have_text(
        "Replayed on these sources: 1 output row", timeout=2 * STEP)
    expect(replayed.locator(".jp-icedtea-lineage-value")).to_contain_text("count=400")

    printed = run_code(page, notebook,
                       "import icedtea_jupyter as _it; _r = _it.last_run(); "
                       "_t = _r.trace_back(lambda r: r.k == 1); _d = _r.debugger(); "
                       "print('API', len(_t), _t.operators, _t.rows(start=20, size=1)[0][1:3], "
                       "_d.snapshot().count('running', 0), _d.state('running', 0)['seen'], "
                       "[tuple(r) for r in _t.replay()])",
                       "icedtea-dataframe-lineage-api")
    assert ("API 400 {'range': 400, 'selectExpr': 400, 'running': 400, 'count': 1} "
            "(0, 61) 1 50 [(1, 400)]") in printed, printed
    problems = [e for e in page.console_errors if "icedtea" in e.lower()]
    assert not problems, problems
