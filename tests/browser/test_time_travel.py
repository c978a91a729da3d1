"""Time travel in the IcedTea sidebar, in real JupyterLab and headless Chromium.

The fraud-detection demo (``notebooks/fraud_detection.ipynb``) driven from the sidebar
instead of Python: record the pipeline, click the interaction after Alice's $60, step
over Chris's $10, step into Feature Enrichment with Bob's ¥5,000, step out, and check
that the snapshot view shows what the Python API gives. A second test records a slow
pipeline to click "Interact now" while the run records.

Run with ``pytest -m browser tests/browser``; screenshots go to ``test-artifacts/`` and
``scripts/docs_images.sh`` refreshes the README's images (tests never write there).
"""
from __future__ import annotations

import json
import re
import warnings

import pytest
from conftest import notebook_json
from test_sidebar import KERNEL_READY, RUN_FINISHED, open_notebook, show_sidebar, widen_left_area

from tests.waiting import FileGate, wait_until

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
PlaywrightTimeout = sync_api.TimeoutError

STEP = 30_000  # a jump or a step, and the states it shows


def run_cells(page, notebook, count: int) -> None:
    """Run the first ``count`` cells (markdown ones just render), one Shift+Enter each."""
    notebook.locator(".jp-Cell").first.click()
    for _ in range(count):
        page.keyboard.press("Shift+Enter")
    expect(notebook.locator(".jp-InputPrompt", has_text=re.compile(r"\[(\*|\d+)\]")).first
           ).to_be_visible(timeout=30_000)


def run_code(page, notebook, code: str, marker: str) -> str:
    """Run ``code`` (one line) in a new cell at the end of the notebook; return its output.

    The cell is typed through the keyboard and found again by ``marker`` (a comment)."""
    notebook.locator(".jp-Cell").last.locator(".jp-InputPrompt").click()  # select it
    page.keyboard.press("Escape")  # command mode
    page.keyboard.press("b")  # a new cell below, active
    page.keyboard.press("Enter")  # edit it
    page.keyboard.insert_text(f"{code}  # {marker}")  # no key events: no auto-closed brackets
    page.keyboard.press("Shift+Enter")
    cell = notebook.locator(".jp-CodeCell").filter(has_text=marker)
    expect(cell).to_have_count(1)
    output = cell.locator(".jp-OutputArea-output")
    expect(output.first).to_be_visible(timeout=60_000)
    return output.first.inner_text()


def interact_live(page, run_item, interact, manual, error) -> bool:
    """Click "Interact now" if the run still records; True once the new interaction shows."""
    if run_item.get_attribute("data-status") != "running" or not interact.is_enabled():
        return False
    before = manual.count()
    try:
        interact.click(timeout=3000)
    except PlaywrightTimeout:  # the run ended in between: the button was disabled
        return False
    # the new interaction, or the kernel's answer that the run had ended
    expect(manual.nth(before).or_(error.filter(visible=True)).first,
           "Interact now: no new interaction within 15 s").to_be_attached(timeout=15_000)
    if manual.count() == before + 1:
        return True
    assert "Interact now failed" in error.inner_text(), error.inner_text()
    return False


def worker(sidebar, operator: str):
    return sidebar.locator(f'.jp-icedtea-SnapshotView .jp-icedtea-worker[data-operator="{operator}"]')


def variable(sidebar, operator: str, name: str):
    return worker(sidebar, operator).locator(f'.jp-icedtea-tree-node[data-variable="{name}"]')


def value_of(sidebar, operator: str, name: str) -> str:
    return variable(sidebar, operator, name).locator(".jp-icedtea-tree-value").first.inner_text()


def test_fraud_demo_from_the_sidebar(page, lab_server, artifacts):
    notebook = open_notebook(page, lab_server, "fraud_detection.ipynb")
    # The setup cells, then the %%icedtea cell (the sixth cell); the debugging cells after
    # it are left alone: the sidebar does their work.
    run_cells(page, notebook, 6)
    sidebar = show_sidebar(page)
    widen_left_area(page, 520)
    runs = sidebar.locator(".jp-icedtea-run-item")
    expect(runs).to_have_count(1, timeout=RUN_FINISHED)
    timeline = sidebar.locator(".jp-icedtea-TimelineView")
    interact = timeline.locator("button.jp-icedtea-interact")
    expect(interact).to_be_visible(timeout=30_000)

    # Live: a manual interaction while the job runs, if it still runs.
    manual = timeline.locator('.jp-icedtea-interaction[data-trigger="manual"]')
    if not interact_live(page, runs.first, interact, manual, timeline.locator(".jp-icedtea-inline-error")):
        # The fraud job is short: it ended before the sidebar could interact. The live
        # part is covered by test_interact_now_while_the_run_records (a slow pipeline).
        warnings.warn("the fraud run ended before 'Interact now' took effect; skipped "
                      "that step (see test_interact_now_while_the_run_records)", stacklevel=2)
    expect(runs.first).to_have_attribute("data-status", "finished", timeout=RUN_FINISHED)
    expect(interact).to_be_disabled()
    expect(interact).to_have_attribute("title", re.compile("The run has ended"))

    # The DAG marks θ (enrich) and G(θ) (enrich, detect, filter).
    view = sidebar.locator(".jp-icedtea-RunView")
    expect(view.locator('.jp-icedtea-op-row[data-operator="enrich"]')).to_have_attribute("data-theta", "true")
    for name in ("detect", "filter"):
        row = view.locator(f'.jp-icedtea-op-row[data-operator="{name}"]')
        expect(row).to_have_attribute("data-theta", "false")
        expect(row).to_have_attribute("data-in-g", "true")

    # The timeline: I0, then the two condition interactions (Alice's $60, the yen payment).
    rows = timeline.locator(".jp-icedtea-interaction")
    expect(rows.first).to_have_attribute("data-index", "0", timeout=15_000)
    conditions = timeline.locator('.jp-icedtea-interaction[data-trigger="condition"]')
    expect(conditions).to_have_count(2, timeout=15_000)
    alice = conditions.filter(has_text="customer='Alice', amount=60.0")
    expect(alice).to_have_count(1)
    alice_index = int(alice.get_attribute("data-index"))
    page.screenshot(path=str(artifacts / "time-travel-finished.png"))

    # Click it: the debugger jumps there, the snapshot view shows its view.
    alice.click()
    snapshot = sidebar.locator(".jp-icedtea-SnapshotView")
    expect(snapshot).to_have_attribute("data-mode", "debug", timeout=STEP)
    expect(snapshot.locator(".jp-icedtea-snapshot-title")).to_contain_text(f"jump to I{alice_index}")
    expect(alice).to_have_class(re.compile("jp-mod-selected"))
    expect(alice).to_contain_text("◀ debugger")
    # Feature Enrichment's and the Fraud Detector's states.
    expect(variable(sidebar, "enrich", "highest")).to_contain_text("'Alice'", timeout=STEP)
    expect(variable(sidebar, "detect", "blacklist")).to_be_visible()
    expect(variable(sidebar, "filter", "frauds")).to_be_visible()
    assert "'Bob'" not in value_of(sidebar, "detect", "blacklist")

    # The partition where Chris's $10 waits at θ.
    steps = sidebar.locator(".jp-icedtea-PartitionSteps")
    chris = steps.locator(".jp-icedtea-partition-steps").filter(
        has_text="next at enrich: Row(customer='Chris', amount=10.0, currency='$')")
    expect(chris).to_have_count(1, timeout=STEP)
    partition = int(chris.get_attribute("data-partition"))
    expect(chris.locator('[data-action="step-out"]')).to_be_disabled()
    expect(chris.locator('[data-action="step-out"]')).to_have_attribute("title", re.compile("nothing waits downstream"))

    # Step over: Chris's payment goes through its whole scope and is approved. The
    # kernel answers each state slowly here: until it has, each worker shows the state
    # before, marked as updating.
    run_code(page, notebook, "import time, icedtea_jupyter.snapshots.debug_snapshot as _ds; "
             "_ds.quick = _ds.DebugSnapshot.encoded_state; _ds.DebugSnapshot.encoded_state = "
             "lambda self, *a: (time.sleep(1.5), _ds.quick(self, *a))[1]; print('slowed')",
             "slow-states")
    chris.locator('[data-action="step-over"]').click()
    expect(snapshot.locator(".jp-icedtea-snapshot-title")).to_contain_text(f"step over on partition {partition}", timeout=STEP)
    enrich = worker(sidebar, "enrich")
    expect(enrich).to_have_attribute("data-loading", "true", timeout=STEP)
    expect(enrich).to_have_attribute("aria-busy", "true")
    expect(enrich.locator(".jp-icedtea-worker-updating")).to_have_text("updating…")
    expect(variable(sidebar, "enrich", "highest")).to_be_visible()  # the state before, kept
    expect(enrich.locator(".jp-icedtea-state-tree")).to_have_css("opacity", "0.5")  # dimmed
    expect(steps.locator(".jp-icedtea-step-outputs")).to_have_text("Left the chain in the last step: ('Chris', 10.0)")
    expect(variable(sidebar, "enrich", "highest")).to_contain_text("'Chris': 80.0", timeout=STEP)
    expect(enrich).to_have_attribute("data-loading", "false")
    expect(enrich.locator(".jp-icedtea-worker-updating")).to_have_count(0)
    expect(enrich.locator(".jp-icedtea-state-tree")).to_have_css("opacity", "1")
    run_code(page, notebook, "_ds.DebugSnapshot.encoded_state = _ds.quick; print('quick')",
             "quick-states")
    row = steps.locator(f'.jp-icedtea-partition-steps[data-partition="{partition}"]')
    expect(row).to_contain_text("next at enrich: Row(customer='Bob', amount=5000.0, currency='¥')")
    expect(row).to_have_class(re.compile("jp-mod-selected"))

    # Step into Feature Enrichment with Bob's ¥5,000: its output waits at the detector.
    enrich_into = worker(sidebar, "enrich").locator('button[data-action="step-into"]')
    expect(enrich_into).to_be_enabled(timeout=STEP)
    enrich_into.click()
    expect(snapshot.locator(".jp-icedtea-snapshot-title")).to_contain_text("step into", timeout=STEP)
    pending = worker(sidebar, "detect").locator(".jp-icedtea-pending")
    expect(pending).to_have_attribute("data-count", "1", timeout=STEP)
    expect(pending.locator(".jp-icedtea-pending-record")).to_have_text(re.compile(r"#\d+\s*\('Bob', 5000\.0, 5000\.0\)"))
    expect(row).to_contain_text("1 waiting downstream")
    # A step-over now would interleave two scopes: disabled, the reason in its tooltip.
    over = row.locator('[data-action="step-over"]')
    expect(over).to_be_disabled()
    expect(over).to_have_attribute("title", re.compile(r"still wait at 'detect'.*step_out first"))
    expect(row).to_have_attribute("data-refused", "true")
    frauds_before = int(value_of(sidebar, "filter", "frauds"))
    assert "'Bob'" not in value_of(sidebar, "detect", "blacklist")
    page.screenshot(path=str(artifacts / "time-travel-step-into.png"))

    # Step out: the rest of the scope. Bob is blacklisted, the fraud count grows by one.
    row.locator('[data-action="step-out"]').click()
    expect(snapshot.locator(".jp-icedtea-snapshot-title")).to_contain_text(f"step out on partition {partition}", timeout=STEP)
    expect(variable(sidebar, "detect", "blacklist")).to_contain_text("'Bob'", timeout=STEP)
    expect(variable(sidebar, "filter", "frauds").locator(".jp-icedtea-tree-value")).to_have_text(
        str(frauds_before + 1), timeout=STEP)
    expect(variable(sidebar, "detect", "blacklist")).to_have_class(re.compile("jp-icedtea-mod-changed"))
    expect(variable(sidebar, "filter", "frauds")).to_have_class(re.compile("jp-icedtea-mod-changed"))
    expect(variable(sidebar, "filter", "frauds")).to_contain_text(f"was {frauds_before}")
    expect(worker(sidebar, "detect").locator(".jp-icedtea-pending")).to_have_attribute("data-count", "0")
    expect(steps.locator(".jp-icedtea-last-action")).to_have_text(
        f"Last action (sidebar): dbg.step_out(partition={partition})", timeout=STEP)
    blacklist_shown = value_of(sidebar, "detect", "blacklist")

    timeline.evaluate("el => el.scrollIntoView({block: 'start'})")  # timeline, steps, snapshot
    page.screenshot(path=str(artifacts / "time_travel.png"))
    sidebar.screenshot(path=str(artifacts / "time-travel-sidebar.png"))

    # Exactly what the API gives: the same debugger, read from Python.
    printed = run_code(page, notebook,
                       "import icedtea_jupyter as _it; _d = _it.last_run().debugger(); "
                       f"print('API', sorted(_d.state('detect', {partition})['blacklist']), "
                       f"_d.state('filter', {partition})['frauds'], _d.snapshot().step)",
                       "icedtea-api-check")
    api = re.search(r"API (\[.*\]) (\d+) (.+)", printed)
    assert api, printed
    blacklist_api = json.loads(api.group(1).replace("'", '"'))
    assert sorted(re.findall(r"'([^']+)'", blacklist_shown)) == blacklist_api
    assert int(api.group(2)) == frauds_before + 1
    assert api.group(3).strip() == f"step out on partition {partition}"

    # A jump from Python code moves the sidebar too (debug.moved, run.action).
    run_code(page, notebook, f"print(_d.jump({alice_index}))", "icedtea-api-jump")
    expect(snapshot.locator(".jp-icedtea-snapshot-title")).to_have_text(
        f"Debugger: jump to I{alice_index} (I{alice_index})", timeout=STEP)
    expect(steps.locator(".jp-icedtea-last-action")).to_have_text(
        f"Last action (api): dbg.jump({alice_index})", timeout=STEP)
    expect(variable(sidebar, "detect", "blacklist").locator(".jp-icedtea-tree-value")).to_have_text("set()", timeout=STEP)
    # Back in time: the highlights compare with the interaction before, not with where the
    # debugger came from (Bob blacklisted later in the run).
    expect(snapshot.locator(".jp-icedtea-snapshot-comparison")).to_contain_text(f"since I{alice_index - 1}")
    expect(variable(sidebar, "detect", "blacklist")).not_to_contain_text("was {'Bob'}")

    # A page reload restores the sidebar, and the debugger's view comes back (debug.view).
    page.goto(f"{lab_server.url}/lab/tree/fraud_detection.ipynb")
    sidebar = page.locator("#icedtea-sidebar")
    expect(sidebar).to_be_visible(timeout=60_000)  # restored open, no click
    snapshot = sidebar.locator(".jp-icedtea-SnapshotView")
    expect(snapshot.locator(".jp-icedtea-snapshot-title")).to_have_text(
        f"Debugger: jump to I{alice_index} (I{alice_index})", timeout=KERNEL_READY)
    expect(sidebar.locator(f'.jp-icedtea-interaction[data-index="{alice_index}"]')).to_contain_text("◀ debugger")
    expect(variable(sidebar, "enrich", "highest")).to_be_visible(timeout=STEP)

    problems = [e for e in page.console_errors if "icedtea" in e.lower()]
    assert not problems, problems


def slow_cells(live: FileGate, start: FileGate) -> list[str]:
    """A slow θ that waits at two gates the test opens (``tests/waiting.py``, on the
    kernel's and Spark's workers' PYTHONPATH): each partition's second record waits at
    ``start`` (the run, until both partitions are there; then replays, until the test
    has cancelled a jump), its last one at ``live`` (the run records until the test is
    done with it live)."""
    return [
        "%load_ext icedtea_jupyter\n"
        "import os, time\n"
        "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
        "from pyspark.sql import SparkSession\n"
        "spark = (SparkSession.builder.master('local[2]').appName('slow')\n"
        "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
        "spark.sparkContext.setLogLevel('ERROR')\n"
        "from icedtea_jupyter import Operator\n"
        "from tests.waiting import FileGate  # gates the test opens\n"
        f"live, start = FileGate({live.directory!r}), FileGate({start.directory!r})\n"
        "class Slow(Operator):\n"
        "    def open(self):\n"
        "        self.seen = 0\n"
        "    def process(self, x):\n"
        "        if not live.is_open():\n"
        "            time.sleep(0.3)  # while the test watches the run record\n"
        "        if x % 60 == 1:\n"
        "            start.wait(str(os.getpid()))\n"
        "        elif x % 60 == 59:\n"
        "            live.wait('recording')\n"
        "        self.seen += 1\n"
        "        yield x",
        "%%icedtea --interesting slow\n"
        "out = spark.sparkContext.parallelize(range(120), 2).mapPartitions(Slow()).setName('slow').collect()",
    ]


def test_interact_now_while_the_run_records(page, lab_server, artifacts, tmp_path):
    """A slow pipeline (0.3 s a record) that records until the test has taken a manual
    interaction from the sidebar; then a jump that replays until the test cancels it."""
    live, start = FileGate(tmp_path / "live"), FileGate(tmp_path / "start")
    try:
        interact_now_and_cancel_a_jump(page, lab_server, artifacts, live, start)
    finally:  # nothing stays held at a gate
        live.open()
        start.open()


def interact_now_and_cancel_a_jump(page, lab_server, artifacts, live, start):
    notebook_text = json.dumps(notebook_json(slow_cells(live, start)), indent=1)
    (lab_server.root / "icedtea-slow.ipynb").write_text(notebook_text)
    notebook = open_notebook(page, lab_server, "icedtea-slow.ipynb")
    run_cells(page, notebook, 2)
    sidebar = show_sidebar(page)
    runs = sidebar.locator(".jp-icedtea-run-item")
    expect(runs).to_have_count(1, timeout=RUN_FINISHED)
    expect(runs.first).to_have_attribute("data-status", "running")
    timeline = sidebar.locator(".jp-icedtea-TimelineView")
    interact = timeline.locator("button.jp-icedtea-interact")
    expect(interact).to_be_enabled(timeout=30_000)
    # Wait until θ's tasks run and both wait at their second record; then let them go on
    # (0.3 s a record): an interaction now lands in the middle of both partitions. Their
    # last records wait at the live gate, so the run records until the test opens it.
    theta = sidebar.locator('.jp-icedtea-op-row[data-operator="slow"]')
    expect(theta).to_have_attribute("data-status", "running", timeout=RUN_FINISHED)
    wait_until(lambda: len(start.held()) == 2, RUN_FINISHED / 1000,
               "both partitions of θ to reach their second record")
    start.open()
    manual = timeline.locator('.jp-icedtea-interaction[data-trigger="manual"]')
    expect(manual).to_have_count(0)
    interact.click()
    # The new interaction appears live (the reply, then run.interaction events) ...
    expect(manual).to_have_count(1, timeout=15_000)
    expect(manual.first).to_have_attribute("data-complete", "true", timeout=15_000)
    # ... and a click shows its recorded snapshot (no jump while the run records), taken
    # in the middle of the partitions.
    manual.first.click()
    snapshot = sidebar.locator(".jp-icedtea-SnapshotView")
    index = manual.first.get_attribute("data-index")
    expect(snapshot.locator(".jp-icedtea-snapshot-title")).to_contain_text(f"Recorded snapshot I{index} (manual", timeout=STEP)
    seen = variable(sidebar, "slow", "seen").locator(".jp-icedtea-tree-value")
    # the title changes at the click, the states when the kernel answers: until then the
    # tree may still show the snapshot shown before (I0's, where seen is 0)
    expect(seen).to_have_text(re.compile(r"^[1-9]\d*$"), timeout=STEP)
    assert int(seen.inner_text()) < 60, seen.inner_text()
    expect(worker(sidebar, "slow").locator(".jp-icedtea-worker-head")).to_contain_text("running")
    expect(runs.first).to_have_attribute("data-status", "running")
    widen_left_area(page, 520)
    page.screenshot(path=str(artifacts / "time-travel-live.png"))
    start.close()  # the run has gone past the second records: replays wait there
    live.open()  # the run goes on, without the 0.3 s a record
    expect(runs.first).to_have_attribute("data-status", "finished", timeout=RUN_FINISHED)
    expect(interact).to_be_disabled()

    # The run has ended: the replay process replays it once to park fork checkpoints, and
    # says how far it is (it waits at the start gate). A jump now replays from the fork
    # at I0, up to the gate too, and Cancel stops it; the debugger stays usable.
    preparing = sidebar.locator(".jp-icedtea-preparing")
    expect(preparing).to_have_text(re.compile(r"Preparing time travel: \d+%"), timeout=STEP)
    preparers = set(wait_until(start.held, STEP / 1000, "the preparation to reach the start gate"))
    manual.first.click()
    cancel = sidebar.locator("button.jp-icedtea-cancel-button")
    expect(cancel).to_be_visible(timeout=STEP)
    wait_until(lambda: set(start.held()) - preparers, STEP / 1000,
               "the jump's replay process to reach the start gate")
    cancel.click()
    expect(sidebar.get_by_text(re.compile(r"cancelled", re.I)).first).to_be_visible(timeout=STEP)
    expect(cancel).to_be_hidden(timeout=STEP)
    start.open()
    initial = timeline.locator('.jp-icedtea-interaction[data-index="0"]')
    initial.click()  # a jump to I0 works at once
    expect(snapshot.locator(".jp-icedtea-snapshot-title")).to_contain_text("jump to I0", timeout=STEP)
    expect(preparing).to_be_hidden(timeout=120_000)  # the forks are in place
    page.screenshot(path=str(artifacts / "time-travel-cancel.png"))
    problems = [e for e in page.console_errors if "icedtea" in e.lower()]
    assert not problems, problems
