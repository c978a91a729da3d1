"""The README's screenshots, taken in real JupyterLab: not a test of the suite.

``scripts/docs_images.sh`` runs this file on its own (pytest collects a file given by
name) and then copies what it wrote to ``test-artifacts/`` into ``docs/images/``. The
suite never runs it (its name is not ``test_*.py``), so tests write nothing outside
``test-artifacts/``.

- ``docs-sidebar.png``: the quick-start notebook run, its panel in the cell and the
  sidebar at its default width, an operator's partitions shown.
- ``docs-time_travel.png``: the fraud demo debugged from the sidebar at its default
  width: a jump to the interaction after Alice's $60, a step over Chris's $10, a step
  into Feature Enrichment with Bob's ¥5,000 and a step out: the snapshot shows what the
  last step changed.
- ``docs-main_area.png``: the snapshot and the operators opened in the main area.
- ``docs-skew.png``: a skewed reduceByKey recorded with ``--skew``: the Skew section
  alone open, the hot partition's bar clicked, its heavy keys and the advice.
- ``docs-lineage.png``: a word count recorded with ``--lineage``: the row ('zzrare', 1)
  traced back to its source line, that line traced forward.
"""
from __future__ import annotations

import json
import re

import pytest
from conftest import notebook_json
from skew_notebook import skew_cells
from test_lineage import open_lineage, trace_row
from test_sidebar import RUN_FINISHED, collapse, open_notebook, run_all_cells, show_sidebar
from test_skew import only_skew_open

from tests.waiting import FileGate

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

STEP = 30_000


def test_docs_sidebar_image(page, lab_server, artifacts):
    notebook = open_notebook(page, lab_server, "quickstart.ipynb")
    run_all_cells(page, notebook)
    panel = notebook.locator(".jp-OutputArea .icedtea-panel").first
    expect(panel).to_contain_text("finished", timeout=RUN_FINISHED)
    sidebar = show_sidebar(page)
    run = sidebar.locator('.jp-icedtea-section[data-section="run"]')
    expect(run.locator(".jp-icedtea-op-row").first).to_be_visible(timeout=60_000)
    run.locator(".jp-icedtea-op-row").first.click()
    expect(run.locator(".jp-icedtea-partition-row").first).to_be_visible(timeout=15_000)
    run.evaluate("el => el.scrollTop = 0")
    panel.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "docs-sidebar.png"))


def test_docs_time_travel_image(page, lab_server, artifacts):
    notebook = open_notebook(page, lab_server, "fraud_detection.ipynb")
    notebook.locator(".jp-Cell").first.click()
    for _ in range(6):  # the setup cells and the %%icedtea cell
        page.keyboard.press("Shift+Enter")
    sidebar = show_sidebar(page)
    expect(sidebar.locator(".jp-icedtea-run-header .jp-icedtea-badge")).to_have_text(
        "finished", timeout=RUN_FINISHED)
    collapse(sidebar, "run")  # room for time travel
    timeline = sidebar.locator('.jp-icedtea-section[data-section="interactions"]')
    alice = timeline.locator('.jp-icedtea-interaction[data-trigger="condition"]').filter(
        has_text="customer='Alice', amount=60.0")
    expect(alice).to_have_count(1, timeout=15_000)
    alice.click()
    steps = sidebar.locator('.jp-icedtea-section[data-section="steps"]')
    chris = steps.locator(".jp-icedtea-partition-steps").filter(has_text="customer='Chris', amount=10.0")
    expect(chris).to_have_count(1, timeout=STEP)
    partition = chris.get_attribute("data-partition")
    chris.locator('[data-action="step-over"]').click()
    snapshot = sidebar.locator('.jp-icedtea-section[data-section="snapshot"]')
    title = snapshot.locator(".jp-icedtea-snapshot-title")
    expect(title).to_contain_text(f"step over on partition {partition}", timeout=STEP)
    into = snapshot.locator('.jp-icedtea-worker[data-operator="enrich"] button[data-action="step-into"]')
    expect(into).to_be_enabled(timeout=STEP)
    into.click()
    expect(title).to_contain_text("step into", timeout=STEP)
    row = steps.locator(f'.jp-icedtea-partition-steps[data-partition="{partition}"]')
    expect(row.locator(".jp-icedtea-steps-warn")).to_be_visible(timeout=STEP)
    page.screenshot(path=str(artifacts / "docs-time_travel-step_into.png"))
    row.locator('[data-action="step-out"]').click()
    expect(title).to_contain_text(f"step out on partition {partition}", timeout=STEP)
    blacklist = snapshot.locator('.jp-icedtea-worker[data-operator="detect"] '
                                 '.jp-icedtea-tree-node[data-variable="blacklist"]')
    expect(blacklist).to_contain_text("'Bob'", timeout=STEP)
    blacklist.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "docs-time_travel.png"))

    sidebar.locator('.jp-icedtea-open-wide[data-section="snapshot"]').click()
    wide = page.locator("#icedtea-wide-snapshot")
    expect(wide.locator(".jp-icedtea-snapshot-title")).to_contain_text(re.compile("step out"), timeout=STEP)
    expect(wide.locator('.jp-icedtea-tree-node[data-variable="blacklist"]')).to_contain_text("'Bob'")
    page.screenshot(path=str(artifacts / "docs-main_area.png"))


def test_docs_skew_image(page, lab_server, artifacts, tmp_path):
    gate = FileGate(tmp_path / "live", is_open=True)  # no waiting: the run goes through
    (lab_server.root / "icedtea-skew-docs.ipynb").write_text(
        json.dumps(notebook_json(skew_cells(gate)), indent=1))
    notebook = open_notebook(page, lab_server, "icedtea-skew-docs.ipynb")
    run_all_cells(page, notebook)
    sidebar = show_sidebar(page)
    expect(sidebar.locator(".jp-icedtea-run-header .jp-icedtea-badge")).to_have_text(
        "finished", timeout=RUN_FINISHED)
    only_skew_open(sidebar)
    view = sidebar.locator(".jp-icedtea-SkewView")
    flag = view.locator(".jp-icedtea-skew-flag[data-rule='reshape']")
    expect(flag).to_have_count(1, timeout=STEP)
    hot = flag.get_attribute("data-partition")
    view.locator(f"svg path[aria-label*=\"partition: {hot}\"][aria-label*=\"segment: 'hot'\"]").click()
    expect(view.locator(".jp-icedtea-SkewKeys")).to_have_attribute("data-partition", hot)
    view.locator(".jp-icedtea-skew-remedy[data-remedy='salt'] summary").click()
    page.mouse.move(0, 0)  # no tooltip over the chart
    sidebar.locator('.jp-icedtea-section[data-section="skew"]').evaluate("el => el.scrollTop = 0")
    page.screenshot(path=str(artifacts / "docs-skew.png"))


def test_docs_lineage_image(page, lab_server, artifacts):
    notebook, sidebar, view = open_lineage(page, lab_server, "icedtea-lineage.ipynb")
    back = trace_row(view, "zzrare")
    source = back.locator(".jp-icedtea-lineage-rows .jp-icedtea-lineage-record")
    source.locator('[data-action="trace-forward"]').click()
    forward = view.locator(".jp-icedtea-lineage-forward")
    expect(forward.locator(".jp-icedtea-lineage-value")).to_have_count(3, timeout=STEP)
    collapse(sidebar, "steps")  # the lineage fills the sidebar
    collapse(sidebar, "snapshot")
    forward.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "docs-lineage.png"))
