"""Benchmark (not a timed assertion): the sidebar on a large run, in real JupyterLab.

A real run is recorded in a subprocess (local Spark, ``%%icedtea`` through IPython): a
cheap pipeline over 200 partitions with a periodic interaction every 20 ms, which gives
a thousand-odd interactions. The browser's kernel reopens it from its store
(``icedtea_jupyter.open_run(path)``: ``run.added``, then ``run.interactions``,
``run.snapshot``...). In the page, ``performance.now()`` measures the time to render the
timeline and the partition list, then the time to scroll each long list end to end
(frame intervals and long tasks say whether the page froze). The figures are printed and
written to ``test-artifacts/ui_large_run.json``.

``ICEDTEA_LARGE_RUN=/path/to/run-store`` reuses a recorded run instead of recording one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, notebook_json
from test_sidebar import open_notebook, show_sidebar, widen_left_area

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

PARTITIONS = 200
RECORDS_PER_PARTITION = 50
INTERACT_EVERY = 0.02  # seconds: about 20 s of tasks gives over a thousand interactions
MIN_INTERACTIONS = 1000
# Tally's 4 ms sleep below is the work that makes those 20 s: a lower bound on how long
# θ runs on any machine, which the interactions' count depends on; nothing waits on it.

RECORD = r'''
import json, os, sys, time
from IPython.testing.globalipapp import start_ipython
ip = start_ipython()
ip.run_line_magic("load_ext", "icedtea_jupyter")
ip.run_cell("""
import time
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]").appName("large run")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
from icedtea_jupyter import Operator

class Tally(Operator):
    def open(self):
        self.counts = {}
        self.seen = 0

    def process(self, x):
        time.sleep(0.004)
        self.seen += 1
        self.counts[x % 7] = self.counts.get(x % 7, 0) + 1
        yield x
""")
store, partitions, records, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
started = time.time()
ip.run_cell_magic("icedtea", f"--interesting tally --interact-every {every} --no-panel --store {store}",
                  f"out = (spark.sparkContext.parallelize(range({partitions * records}), {partitions})"
                  ".mapPartitions(Tally()).setName('tally').map(lambda x: x + 1).setName('plus one')"
                  ".collect())")
import icedtea_jupyter
run = icedtea_jupyter.last_run().wait()
raw = run.history().raw  # the interactions as stored, without per-worker counts (fast)
print(json.dumps({"path": run.path, "status": run.status, "interactions": len(raw),
                  "seconds": round(time.time() - started, 1)}))
'''

# In the page: wait for a condition, checked every animation frame; scroll a list end to end.
HELPERS = r'''
() => {
  const sidebar = () => document.querySelector('#icedtea-sidebar');
  window.__icedteaBench = {
    until(check, timeout = 240000) {
      const start = performance.now();
      return new Promise((resolve, reject) => {
        const tick = () => {
          let ok = false;
          try { ok = check(); } catch (e) { ok = false; }
          if (ok) { resolve(performance.now()); return; }
          if (performance.now() - start > timeout) { reject(new Error('timed out')); return; }
          requestAnimationFrame(tick);
        };
        tick();
      });
    },
    frame() {
      return new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    },
    async scroll(selector, axis, step, rowsSelector) {
      const el = sidebar().querySelector(selector);
      const max = axis === 'y' ? el.scrollHeight - el.clientHeight : el.scrollWidth - el.clientWidth;
      const longTasks = [];
      const observer = new PerformanceObserver(list => list.getEntries().forEach(e => longTasks.push(e.duration)));
      try { observer.observe({ type: 'longtask', buffered: false }); } catch (e) { /* no long task API */ }
      const frames = [];
      const draws = [];
      let maxRows = 0;
      if (axis === 'y') { el.scrollTop = 0; } else { el.scrollLeft = 0; }
      await this.frame();
      const start = performance.now();
      let last = start;
      for (let pos = step; ; pos += step) {
        const to = Math.min(pos, max);
        if (axis === 'y') { el.scrollTop = to; } else { el.scrollLeft = to; }
        await this.frame();
        const now = performance.now();
        frames.push(now - last);
        last = now;
        if (rowsSelector) { maxRows = Math.max(maxRows, el.querySelectorAll(rowsSelector).length); }
        const drawn = sidebar().querySelector('.jp-icedtea-TimelineView').dataset.drawMs;
        if (axis === 'x' && drawn) { draws.push(Number(drawn)); }
        if (to >= max) { break; }
      }
      const total = performance.now() - start;
      observer.disconnect();
      frames.sort((a, b) => a - b);
      const lastRow = rowsSelector ? [...el.querySelectorAll(rowsSelector)].map(r => Number(r.dataset.row)).reduce((a, b) => Math.max(a, b), -1) : null;
      return {
        scroll_px: max, steps: frames.length, total_ms: total,
        mean_frame_ms: frames.reduce((a, b) => a + b, 0) / frames.length,
        p95_frame_ms: frames[Math.floor(frames.length * 0.95)], max_frame_ms: frames[frames.length - 1],
        long_tasks: longTasks.length, max_long_task_ms: longTasks.length ? Math.max(...longTasks) : 0,
        max_rows_in_dom: rowsSelector ? maxRows : null, last_row_rendered: lastRow,
        mean_canvas_draw_ms: draws.length ? draws.reduce((a, b) => a + b, 0) / draws.length : null,
        max_canvas_draw_ms: draws.length ? Math.max(...draws) : null,
      };
    },
  };
}
'''


@pytest.fixture(scope="module")
def large_run(tmp_path_factory) -> dict:
    reuse = os.environ.get("ICEDTEA_LARGE_RUN")
    if reuse:
        raw = Path(reuse) / "interactions.json"
        lines = Path(reuse) / "interactions.jsonl"
        count = (len(json.loads(raw.read_text())) if raw.exists()
                 else sum(1 for line in lines.read_text().splitlines() if line.strip()))
        return {"path": str(Path(reuse).resolve()), "interactions": count, "seconds": None,
                "status": "reused"}
    store = tmp_path_factory.mktemp("large-run")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    done = subprocess.run([sys.executable, "-c", RECORD, str(store), str(PARTITIONS),
                           str(RECORDS_PER_PARTITION), str(INTERACT_EVERY)],
                          env=env, capture_output=True, text=True, timeout=600, cwd=store)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and lines, done.stdout[-2000:] + done.stderr[-4000:]
    recorded = json.loads(lines[-1])
    assert recorded["status"] == "finished", recorded
    assert recorded["interactions"] >= MIN_INTERACTIONS, recorded
    return recorded


def test_large_run_renders_and_scrolls(page, lab_server, artifacts, large_run):
    name = "icedtea-large-run.ipynb"
    source = ("%load_ext icedtea_jupyter\nimport icedtea_jupyter\n"
              f"run = icedtea_jupyter.open_run({large_run['path']!r})\nrun")
    (lab_server.root / name).write_text(json.dumps(notebook_json([source]), indent=1))
    n = large_run["interactions"]
    notebook = open_notebook(page, lab_server, name)
    sidebar = show_sidebar(page)
    widen_left_area(page, 520)
    page.evaluate(HELPERS)
    count_text = f"{n:,} interactions"
    # Start the clocks, then run the cell that reopens the run.
    page.evaluate("""([countText, partitions]) => {
      const bench = window.__icedteaBench;
      const q = s => document.querySelector('#icedtea-sidebar ' + s);
      window.__start = performance.now();
      window.__added = bench.until(() => q('.jp-icedtea-run-item'));
      window.__timeline = bench.until(() => {
        const count = q('.jp-icedtea-timeline-count');
        return count && count.textContent === countText
          && document.querySelectorAll('#icedtea-sidebar .jp-icedtea-interaction').length > 0
          && q('.jp-icedtea-TimelineView').dataset.drawMs !== undefined;
      });
      window.__partitions = bench.until(() => {
        const spacer = q('.jp-icedtea-partitions .jp-icedtea-vlist-spacer');
        const row = q('.jp-icedtea-partitions .jp-icedtea-vlist-rows > *');
        return spacer && row && spacer.style.height === (partitions * parseFloat(row.style.height)) + 'px'
          && document.querySelectorAll('#icedtea-sidebar .jp-icedtea-partition-steps').length > 0;
      });
    }""", [count_text, PARTITIONS])
    notebook.locator(".jp-Cell").first.click()
    page.keyboard.press("Shift+Enter")
    started = time.monotonic()
    added = page.evaluate("() => window.__added.then(t => t - window.__start)")
    timeline_ms = page.evaluate("() => window.__timeline.then(t => t - window.__start)")
    partitions_ms = page.evaluate("() => window.__partitions.then(t => t - window.__start)")
    wall = time.monotonic() - started
    timeline = sidebar.locator(".jp-icedtea-TimelineView")
    expect(timeline.locator(".jp-icedtea-timeline-count")).to_have_text(count_text)
    first_draw_ms = float(timeline.get_attribute("data-draw-ms"))
    page.screenshot(path=str(artifacts / "large-run-open.png"))

    results: dict = {
        "machine": {"cpus": os.cpu_count(), "load_average_1min": round(os.getloadavg()[0], 2),
                    "note": "frame times are wall-clock: other processes on the machine add jitter"},
        "run": {"partitions": PARTITIONS, "interactions": n, "records": PARTITIONS * RECORDS_PER_PARTITION,
                "recorded_in_s": large_run.get("seconds"), "path": large_run["path"]},
        "open": {
            "cell_to_run_listed_ms": round(added, 1),
            "cell_to_timeline_rendered_ms": round(timeline_ms, 1),
            "cell_to_partition_list_rendered_ms": round(partitions_ms, 1),
            "run_listed_to_timeline_rendered_ms": round(timeline_ms - added, 1),
            "timeline_canvas_draw_ms_1x": round(first_draw_ms, 2),
            "wall_s": round(wall, 1),
            "note": "cell_to_* include the kernel's run.interactions/run.snapshot/run.state replies",
        },
    }

    # Scroll the interaction list (about 24 px a row) end to end, a wheel notch at a time.
    results["interaction_list_scroll"] = page.evaluate(
        "() => window.__icedteaBench.scroll('.jp-icedtea-interactions', 'y', 120, '.jp-icedtea-vlist-rows > *')")
    # The timeline at the highest zoom (64x), scrolled end to end.
    for _ in range(6):
        timeline.locator('button[data-zoom="1"]').click()
    expect(timeline.locator(".jp-icedtea-zoom-label")).to_have_text("64×")
    results["timeline_64x_scroll"] = page.evaluate(
        "() => window.__icedteaBench.scroll('.jp-icedtea-timeline-scroll', 'x', 240, null)")
    # The 200 partitions of G(θ) with their step controls.
    results["partition_list_scroll"] = page.evaluate(
        "() => window.__icedteaBench.scroll('.jp-icedtea-partitions', 'y', 120, '.jp-icedtea-vlist-rows > *')")

    # The 200 partitions of θ in the operators table (run.partitions).
    theta_row = sidebar.locator('.jp-icedtea-op-row[data-operator="tally"]')
    expect(theta_row).to_have_attribute("data-theta", "true")
    theta_row.click()
    expect(sidebar.locator(".jp-icedtea-partition-list .jp-icedtea-partition-row").first).to_be_visible(timeout=60_000)
    results["operator_partitions_scroll"] = page.evaluate(
        "() => window.__icedteaBench.scroll('.jp-icedtea-partition-list', 'y', 120, '.jp-icedtea-vlist-rows > *')")

    # Pick an interaction in the middle: its recorded snapshot replaces the shown one.
    middle = n // 2
    rows = sidebar.locator(".jp-icedtea-interactions")
    rows.evaluate(f"(el) => {{ el.scrollTop = {middle} * 24 - 48; }}")
    target = sidebar.locator(f'.jp-icedtea-interaction[data-index="{middle}"]')
    expect(target).to_be_visible()
    page.evaluate(f"""() => {{
      window.__start = performance.now();
      window.__selected = window.__icedteaBench.until(() => {{
        const title = document.querySelector('#icedtea-sidebar .jp-icedtea-snapshot-title');
        const workers = document.querySelectorAll('#icedtea-sidebar .jp-icedtea-worker[data-loading="false"] .jp-icedtea-state-tree');
        return title && title.textContent.startsWith('Recorded snapshot I{middle} ') && workers.length >= 1;
      }});
    }}""")
    target.click()
    results["select_interaction_ms"] = round(page.evaluate("() => window.__selected.then(t => t - window.__start)"), 1)

    for key in ("interaction_list_scroll", "timeline_64x_scroll", "partition_list_scroll", "operator_partitions_scroll"):
        results[key] = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in results[key].items()}
    page.screenshot(path=str(artifacts / "large-run-scrolled.png"))
    (artifacts / "ui_large_run.json").write_text(json.dumps(results, indent=1))
    print("\nui_large_run:", json.dumps(results, indent=1))

    # Windowing kept the DOM small while everything was reachable.
    assert results["interaction_list_scroll"]["last_row_rendered"] == n - 1
    assert results["interaction_list_scroll"]["max_rows_in_dom"] < 40
    assert results["partition_list_scroll"]["last_row_rendered"] == PARTITIONS - 1
    assert results["partition_list_scroll"]["max_rows_in_dom"] < 30
    assert results["operator_partitions_scroll"]["last_row_rendered"] == PARTITIONS - 1
    problems = [e for e in page.console_errors if "icedtea" in e.lower()]
    assert not problems, problems
