"""Lineage in the IcedTea sidebar, in real JupyterLab and headless Chromium: a word count
recorded with ``--lineage``; the Lineage view pages and filters its output rows, traces a
row back to its source lines (paged), a source line forward, and jumps the time-travel
debugger to when θ received that line; the API gives the same records.
"""
from __future__ import annotations

import json
import re

import pytest
from conftest import notebook_json
from test_sidebar import RUN_FINISHED, open_notebook, show_sidebar, widen_left_area
from test_time_travel import STEP, run_cells, run_code

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

# 32 lines, two partitions of 16: "zzrare and spark" is partition 1's line #14
CELLS = [
    "%load_ext icedtea_jupyter\n"
    "import os\n"
    "from operator import add\n"
    "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
    "from pyspark.sql import SparkSession\n"
    "spark = (SparkSession.builder.master('local[2]').appName('lineage')\n"
    "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
    "spark.sparkContext.setLogLevel('ERROR')\n"
    "sc = spark.sparkContext\n"
    "LINES = [f'spark line {i}' for i in range(30)] + ['zzrare and spark', 'the end']",
    "%%icedtea --lineage --interesting split\n"
    "counts = (sc.parallelize(LINES, 2).flatMap(lambda line: line.split()).setName('split')\n"
    "            .map(lambda word: (word, 1)).setName('pair')\n"
    "            .reduceByKey(add).setName('count').collect())",
]
OUTPUT_ROWS = 36  # spark, line, 0..29, zzrare, and, the, end


def open_lineage(page, lab_server, name: str, cells: list[str] = CELLS):
    """The recorded cells (the word count), the sidebar with the Lineage section expanded."""
    (lab_server.root / name).write_text(json.dumps(notebook_json(cells), indent=1))
    notebook = open_notebook(page, lab_server, name)
    run_cells(page, notebook, 2)
    sidebar = show_sidebar(page)
    widen_left_area(page, 520)
    runs = sidebar.locator(".jp-icedtea-run-item")
    expect(runs.first).to_have_attribute("data-status", "finished", timeout=RUN_FINISHED)
    for name in ("run", "interactions", "steps", "snapshot"):  # room for the lineage
        title = sidebar.locator(f'.lm-AccordionPanel-title[aria-controls="icedtea-section-{name}"]')
        if title.get_attribute("aria-expanded") == "true":
            title.click()
    sidebar.locator('.lm-AccordionPanel-title[aria-controls="icedtea-section-lineage"]').click()
    view = sidebar.locator(".jp-icedtea-LineageView")
    expect(view).to_be_visible()
    return notebook, sidebar, view


def trace_row(view, text: str):
    """Filter the output rows by ``text``; click the one row left: its backward trace."""
    outputs = view.locator(".jp-icedtea-lineage-outputs")
    outputs.locator(".jp-icedtea-lineage-filter").fill(text)
    rows = outputs.locator(".jp-icedtea-lineage-record")
    expect(rows).to_have_count(1, timeout=STEP)
    expect(rows.first).to_contain_text(f"('{text}'", timeout=STEP)  # not the last filter's
    rows.first.click()
    back = view.locator(".jp-icedtea-lineage-back")
    expect(back.locator(".jp-icedtea-lineage-heading")).to_contain_text(f"Back from ('{text}'", timeout=STEP)
    return back


def test_trace_a_row_back_page_its_sources_trace_one_forward_and_jump_there(page, lab_server, artifacts):
    notebook, sidebar, view = open_lineage(page, lab_server, "icedtea-lineage.ipynb")
    outputs = view.locator(".jp-icedtea-lineage-outputs")
    expect(outputs.locator(".jp-icedtea-lineage-heading")).to_contain_text(
        f"Output rows of count: {OUTPUT_ROWS}", timeout=STEP)
    expect(outputs.locator(".jp-icedtea-lineage-record")).to_have_count(20)
    outputs.locator('[data-action="next"]').click()
    expect(outputs.locator(".jp-icedtea-pager-range")).to_have_text(f"21–36 of {OUTPUT_ROWS}", timeout=STEP)

    # ('spark', 31): one word of 31 lines, two pages of source records.
    back = trace_row(view, "spark")
    path = back.locator(".jp-icedtea-lineage-step")
    expect(path).to_have_count(5)
    assert [path.nth(i).get_attribute("data-operator") for i in range(5)] == [
        "count", "count (combine)", "pair", "split", "parallelize"]
    expect(back.locator('.jp-icedtea-lineage-step[data-operator="parallelize"]')).to_have_attribute("data-count", "31")
    expect(back.locator('.jp-icedtea-lineage-step[data-operator="split"]')).to_have_attribute("data-count", "31")
    expect(back.locator(".jp-icedtea-lineage-summary")).to_have_text("31 source records (duckdb)")
    sources = back.locator(".jp-icedtea-lineage-rows .jp-icedtea-lineage-record")
    expect(sources).to_have_count(20)
    expect(sources.first).to_contain_text("'spark line 0'")
    back.locator('[data-action="next"]').click()
    expect(back.locator(".jp-icedtea-pager-range")).to_have_text("21–31 of 31", timeout=STEP)
    expect(sources).to_have_count(11)
    expect(sources.last).to_contain_text("'zzrare and spark'")

    # ('zzrare', 1): one source line, partition 1's #14.
    back = trace_row(view, "zzrare")
    expect(back.locator(".jp-icedtea-lineage-summary")).to_have_text("1 source record (duckdb)")
    source = back.locator(".jp-icedtea-lineage-rows .jp-icedtea-lineage-record")
    expect(source).to_have_count(1)
    expect(source).to_have_attribute("data-operator", "parallelize")
    expect(source).to_have_attribute("data-partition", "1")
    expect(source).to_have_attribute("data-position", "14")
    expect(source.locator(".jp-icedtea-lineage-value")).to_have_text("'zzrare and spark'")

    # Forward from that line: the three words it went into.
    source.locator('[data-action="trace-forward"]').click()
    forward = view.locator(".jp-icedtea-lineage-forward")
    expect(forward.locator(".jp-icedtea-lineage-heading")).to_contain_text(
        "Forward from 'zzrare and spark' (parallelize, partition 1)", timeout=STEP)
    expect(forward.locator(".jp-icedtea-lineage-summary")).to_have_text("It went into 3 output rows (duckdb)")
    words = forward.locator(".jp-icedtea-lineage-value")
    expect(words).to_have_count(3)
    assert sorted(words.all_inner_texts()) == ["('and', 1)", "('spark', 31)", "('zzrare', 1)"]
    page.screenshot(path=str(artifacts / "lineage-traced.png"))

    # Jump here: the debugger stands before θ (split) receives that line; the collapsed
    # time-travel sections open to show it.
    steps = sidebar.locator(".jp-icedtea-PartitionSteps")
    expect(steps).to_be_hidden()
    source.locator('[data-action="jump"]').click()
    expect(steps).to_be_visible(timeout=STEP)
    for name in ("steps", "snapshot"):
        expect(sidebar.locator(f'.lm-AccordionPanel-title[aria-controls="icedtea-section-{name}"]')
               ).to_have_attribute("aria-expanded", "true")
    row = steps.locator('.jp-icedtea-partition-steps[data-partition="1"]')
    expect(row).to_contain_text("next at split: 'zzrare and spark'", timeout=2 * STEP)
    expect(source).to_have_class(re.compile("jp-mod-selected"))
    page.screenshot(path=str(artifacts / "lineage-jumped.png"))

    # Replay only these: the word count re-run on that one line (Titian's selective replay).
    back.locator('[data-action="replay"]').click()
    replayed = back.locator(".jp-icedtea-lineage-replayed")
    expect(replayed.locator(".jp-icedtea-lineage-summary")).to_have_text(
        "Replayed on these sources: 3 output rows", timeout=2 * STEP)
    assert sorted(replayed.locator(".jp-icedtea-lineage-value").all_inner_texts()) == [
        "('and', 1)", "('spark', 1)", "('zzrare', 1)"]

    # The API gives the same trace and the same debugger.
    printed = run_code(page, notebook,
                       "import icedtea_jupyter as _it; _r = _it.last_run(); "
                       "_t = _r.trace_back(('zzrare', 1)); "
                       "print('API', _t.to_pandas().values.tolist(), "
                       "_r.debugger().snapshot().count('split', 1), sorted(_t.replay()), "
                       "[a['call'] for a in _r.actions if a['call'].endswith('.replay()')])",
                       "icedtea-lineage-api")
    assert ("API [['parallelize', 1, 14, 'zzrare and spark']] 14 "
            "[('and', 1), ('spark', 1), ('zzrare', 1)] ") in printed, printed
    # the sidebar's replay and the API's, each logged as its call
    assert re.search(r"\['run\.trace_back\(at=\(\d+, \d+\)\)\.replay\(\)', "
                     r"\"run\.trace_back\(\('zzrare', 1\)\)\.replay\(\)\"\]", printed), printed
    problems = [e for e in page.console_errors if "icedtea" in e.lower()]
    assert not problems, problems


def test_jump_here_after_replay_only_these_moves_the_debugger(page, lab_server):
    """A fresh run, no jump yet: "Replay only these", then "Jump here" on a source line."""
    _, sidebar, view = open_lineage(page, lab_server, "icedtea-lineage-replay-jump.ipynb")
    back = trace_row(view, "zzrare")
    back.locator('[data-action="replay"]').click()
    expect(back.locator(".jp-icedtea-lineage-replayed .jp-icedtea-lineage-summary")).to_have_text(
        "Replayed on these sources: 3 output rows", timeout=2 * STEP)
    source = back.locator(".jp-icedtea-lineage-rows .jp-icedtea-lineage-record")
    expect(source).to_have_attribute("data-position", "14")
    source.locator('[data-action="jump"]').click()
    steps = sidebar.locator(".jp-icedtea-PartitionSteps")
    expect(steps).to_be_visible(timeout=STEP)
    row = steps.locator('.jp-icedtea-partition-steps[data-partition="1"]')
    expect(row).to_contain_text("next at split: 'zzrare and spark'", timeout=2 * STEP)
    expect(source).to_have_class(re.compile("jp-mod-selected"))
    problems = [e for e in page.console_errors if "icedtea" in e.lower()]
    assert not problems, problems
