"""The quickstart notebook in JupyterLab: the in-cell panel and the IcedTea sidebar.

Run with ``pytest -m browser tests/browser``; screenshots go to ``test-artifacts/``
(``scripts/docs_images.sh`` refreshes the README's images; tests never write there).
"""
from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

KERNEL_READY = 90_000  # kernel start, and the status bar catching up
RUN_FINISHED = 180_000  # Spark session start (~10 s), then the first job (~10 s) and more


def open_notebook(page, lab_server, name: str):
    """Open ``name`` alone (``?reset``: no tabs restored from an earlier test), kernel idle."""
    page.goto(f"{lab_server.url}/lab/tree/{name}?reset")
    tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")
    expect(tab).to_contain_text(name, timeout=60_000)
    notebook = page.locator(".jp-NotebookPanel:visible")
    expect(notebook).to_have_count(1)
    # The toolbar says idle before the kernel is connected; the status bar does not.
    status = page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\|\s*Idle"))
    expect(status).to_be_visible(timeout=KERNEL_READY)
    no_news = page.locator(".jp-toast-container button", has_text=re.compile(r"^No$"))
    if no_news.count():
        no_news.first.click()
    return notebook


def run_all_cells(page, notebook) -> None:
    notebook.locator(".jp-Cell").first.click()  # the notebook has the focus
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    # The cells are queued or running: their prompts show [*] or a number.
    expect(notebook.locator(".jp-InputPrompt", has_text=re.compile(r"\[(\*|\d+)\]")).first
           ).to_be_visible(timeout=30_000)


def widen_left_area(page, width: int = 460) -> None:
    """Drag the handle between the left area and the notebooks (for the screenshots)."""
    handle = page.locator("#jp-main-split-panel > .lm-SplitPanel-handle:visible").first
    box = handle.bounding_box()
    if box is None:
        return
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(width, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()


def show_sidebar(page):
    sidebar = page.locator("#icedtea-sidebar")
    if not sidebar.is_visible():  # clicking an open tab would close it
        page.locator('.jp-SideBar .lm-TabBar-tab[data-id="icedtea-sidebar"]').click()
    expect(sidebar).to_be_visible()
    return sidebar


def collapse(sidebar, name: str) -> None:
    """Collapse the sidebar's section ``name`` (its data-section) if it is open."""
    title = sidebar.locator(f'.lm-AccordionPanel-title[aria-controls="icedtea-section-{name}"]')
    if title.get_attribute("aria-expanded") == "true":
        title.click()


def count(text: str) -> int:
    return int(text.replace(",", "").strip() or 0)


def test_sidebar_asks_to_load_the_extension(page, lab_server):
    open_notebook(page, lab_server, "icedtea-plain.ipynb")
    sidebar = show_sidebar(page)
    expect(sidebar.locator(".jp-icedtea-message")).to_have_text(
        "Run %load_ext icedtea_jupyter in this notebook", timeout=30_000)
    expect(sidebar.locator(".jp-icedtea-run-item")).to_have_count(0)


def test_quickstart_panel_and_sidebar(page, lab_server, artifacts):
    notebook = open_notebook(page, lab_server, "quickstart.ipynb")
    run_all_cells(page, notebook)

    # The in-cell panel: an ipywidgets output whose root has the class icedtea-panel.
    panel = notebook.locator(".jp-OutputArea .icedtea-panel").first
    expect(panel).to_be_visible(timeout=RUN_FINISHED)
    expect(panel).to_contain_text("finished", timeout=RUN_FINISHED)
    panel.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "notebook-panel.png"))

    # The sidebar lists the run, finished, and shows its operators with their counts.
    sidebar = show_sidebar(page)
    runs = sidebar.locator(".jp-icedtea-run-item")
    expect(runs).to_have_count(1, timeout=60_000)
    expect(runs.first).to_have_attribute("data-status", "finished", timeout=60_000)
    expect(runs.first).to_have_class(re.compile(r"jp-mod-selected"))
    view = sidebar.locator(".jp-icedtea-RunView")
    # the view's content is a reply of the kernel, busy with the notebook's later cells
    # (jumps and steps): it comes once they let the comm's request through
    expect(view.locator(".jp-icedtea-run-header .jp-icedtea-badge")).to_have_text(
        "finished", timeout=60_000)

    rows = view.locator(".jp-icedtea-op-row")
    expect(rows.first).to_be_visible(timeout=30_000)
    # The list item was made as the run started, before its DAG was known: its count
    # comes with the list fetched when the run ends.
    listed = runs.first.locator(".jp-icedtea-run-operators")
    expect(listed).to_have_text(re.compile(r"^[1-9]\d* Python operators?$"), timeout=30_000)
    operators = int(re.search(r"\d+", listed.inner_text())[0])
    expect(rows).to_have_count(operators)
    names = [rows.nth(i).get_attribute("data-operator") for i in range(operators)]
    for i in range(operators):
        row = rows.nth(i)
        expect(row).to_have_attribute("data-status", "done")
        assert count(row.locator(".jp-icedtea-records-in").inner_text()) > 0, names[i]
        assert count(row.locator(".jp-icedtea-records-out").inner_text()) > 0, names[i]
        assert count(row.locator(".jp-icedtea-parts-done").inner_text()) > 0, names[i]

    # A click on an operator fetches its partitions (run.partitions).
    rows.first.click()
    partitions = view.locator(".jp-icedtea-partition-row")
    expect(partitions.first).to_have_attribute("data-status", re.compile(r".+"), timeout=15_000)
    assert partitions.count() >= 1
    expect(rows.first).to_have_attribute("aria-expanded", "true")

    widen_left_area(page)
    panel.scroll_into_view_if_needed()
    sidebar.screenshot(path=str(artifacts / "sidebar-panel.png"))
    page.screenshot(path=str(artifacts / "sidebar.png"))

    problems = [e for e in page.console_errors if "icedtea" in e.lower()]
    assert not problems, problems
