"""The live skew chart in real JupyterLab (issue 13's UI budgets): how long after the
agents' sketch reaches the kernel the sidebar's chart shows it, and the sidebar's frame
times while the chart updates live at 200 partitions x 12 Python operators.

Run (a Playwright test against the JupyterLab tests/browser starts; wrap it in the
benchmark lock)::

    flock /tmp/icedtea-bench.lock env PYTHONPATH=$PWD:$PWD/tests/browser \\
        python -m pytest bench/skew_live_ui.py -p conftest -q -s

The pipeline: 40,000 records in 200 partitions through 10 chained maps, then a
``reduceByKey`` into 200 partitions (``--skew``). Half the records carry a key that
changes every 1.5 s of wall time (``m<phase>``), so each phase's key is a new bar in the
chart; fewer than 20 keys in all, so every key the kernel receives is drawn. The kernel
logs when the first sketch holding each key arrives (``SkewCoordinator.receive_message``
wrapped in the notebook); the page logs when a bar of that key first appears (a
MutationObserver) and every animation frame's duration (requestAnimationFrame) and long
task (PerformanceObserver). Both clocks are this machine's wall clock. The chart names
only the eight heaviest keys (the rest of a partition is ``other``), so a new key is
drawn only once it outgrows older ones: the second latency starts when the kernel's
report (``stacked_records``, for a fetch or a push) first names it.

Each animation frame over 100 ms is listed with when it came (seconds after the cell
started) and the scripts that ran in it (Chromium's Long Animation Frames), so a long
frame can be told apart: the sidebar's charts (``lib_index``), JupyterLab's own handlers
(``jlab_core``, which also deliver the comm's messages), or none (the page waited for
the CPU). Switches: ``SKEW_BASELINE=1`` (no chart drawn), ``SKEW_COLD_PAGE=1`` (no
widget shown before the run: the page's first widget output is the run's panel),
``SKEW_CELL_PER_PARTITION=1`` (the heat map a cell a partition), ``SKEW_PROFILE``.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import time

import pytest
from conftest import notebook_json
from test_sidebar import RUN_FINISHED, open_notebook, show_sidebar, widen_left_area
from test_skew import only_skew_open
from test_time_travel import run_cells, run_code

expect = pytest.importorskip("playwright.sync_api").expect

SETUP = """%load_ext icedtea_jupyter
import json, os, time
from operator import add
os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master('local[2]').appName('skew-live-ui')
         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())
spark.sparkContext.setLogLevel('ERROR')
from icedtea_jupyter.agents.skew import SkewCoordinator
ARRIVALS = {}
_receive = SkewCoordinator.receive_message
LAGS = []  # a sketch's worker -> the kernel's coordinator, seconds
def _logged(self, worker, payload):
    if isinstance(payload, dict) and 'sent' in payload:
        LAGS.append(time.time() - payload['sent'])
    _receive(self, worker, payload)
    for key, _, _ in (payload.get('keys', []) if isinstance(payload, dict) else []):
        ARRIVALS.setdefault(str(key), time.time())
SkewCoordinator.receive_message = _logged
import icedtea_jupyter.skew.report as _report
NAMED = {}
_stacked = _report.stacked_records
def _named(*args):
    rows = _stacked(*args)
    for row in rows:
        NAMED.setdefault(row['segment'].strip("'"), time.time())
    return rows
_report.stacked_records = _named
from icedtea_jupyter.comm import skew as _comm_skew
PUSHES = []  # (wall time, seconds) of each push the kernel built
_push = _comm_skew.SkewPusher.push
def _timed_push(self):
    started = time.time()
    _push(self)
    PUSHES.append((started, time.time() - started))
_comm_skew.SkewPusher.push = _timed_push
def phase_key(x):
    time.sleep(0.0005)
    return ('base' if x % 2 else 'm%d' % int(time.time() / 1.5), 1)
def step(x):
    return x
print('ready')"""

CELL = """%%icedtea --skew
rdd = spark.sparkContext.parallelize(range(40_000), 200)
for i in range(9):
    rdd = rdd.map(step).setName(f's{i}')
totals = rdd.map(phase_key).setName('keyed').reduceByKey(add, 200).setName('sum').collect()"""

# Before the page loads: the time each phase key first reaches the page in a pushed
# skew.changed message (the kernel's websocket, before JupyterLab handles it).
RECEIVED = r"""(() => {
  const received = window.__received = {};
  const decoder = new TextDecoder();
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', event => {
        const now = Date.now();
        if (typeof event.data !== 'string' && !(event.data instanceof ArrayBuffer)) return;
        const text = typeof event.data === 'string' ? event.data : decoder.decode(event.data);
        if (!text.includes('skew.changed')) return;
        for (const m of text.matchAll(/"segment": ?"'(m\d+)'/g))
          if (!(m[1] in received)) received[m[1]] = now;
        const since = /"since": ?([0-9.]+)/.exec(text);
        if (since) {
          const whole = /"report": ?\{/.test(text);
          const rows = ['bars', 'cells', 'timeline'].map(name =>
            text.includes('"' + name + '": [{') || text.includes('"' + name + '":[{'));
          const kinds = ['spec', 'heatmap', 'timeline'].filter((kind, i) => whole || rows[i]);
          (window.__pushes = window.__pushes || []).push({at: now, since: +since[1] * 1000, kinds, whole});
        }
      });
    }
  };
})()"""

OBSERVE = """() => {
  const bench = {frames: [], long: [], seen: {}, start: Date.now()};
  window.__bench = bench;
  let last = performance.now();
  const tick = t => { bench.frames.push(t - last); last = t; if (!bench.stop) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  new PerformanceObserver(list => list.getEntries().forEach(e => bench.long.push(e.duration)))
    .observe({entryTypes: ['longtask']});
  // each animation frame over 100 ms, with the scripts that ran in it (Long Animation
  // Frames): whose code made it, and when (ms after the cell started)
  bench.loaf = [];
  new PerformanceObserver(list => list.getEntries().forEach(e => {
    if (e.duration <= 100) return;
    bench.loaf.push({at: Math.round(performance.timeOrigin + e.startTime - bench.start),
      duration: Math.round(e.duration), blocking: Math.round(e.blockingDuration),
      layout: Math.round(e.startTime + e.duration - (e.styleAndLayoutStart || e.startTime + e.duration)),
      scripts: e.scripts.map(s => ({source: (s.sourceURL || '').split('/').pop().split('?')[0],
        invoker: s.invoker, duration: Math.round(s.duration),
        layout: Math.round(s.forcedStyleAndLayoutDuration)}))});
  })).observe({type: 'long-animation-frame', buffered: false});
  bench.updates = {};
  bench.ends = {};
  new PerformanceObserver(list => list.getEntries().forEach(e => {
    (bench.updates[e.name] = bench.updates[e.name] || []).push(e.duration);
    (bench.ends[e.name] = bench.ends[e.name] || []).push(performance.timeOrigin + e.startTime + e.duration);
  })).observe({entryTypes: ['measure']});
  const look = () => {
    const now = Date.now();
    document.querySelectorAll(".jp-icedtea-skew-chart svg path[aria-label*=\\"segment: 'm\\"]")
      .forEach(p => {
        const m = /segment: '(m\\d+)'/.exec(p.getAttribute('aria-label') || '');
        if (m && !(m[1] in bench.seen)) bench.seen[m[1]] = now;
      });
  };
  new MutationObserver(look).observe(document.body, {subtree: true, childList: true,
    attributes: true, attributeFilter: ['aria-label']});
}"""


class Profile:
    """With ``SKEW_PROFILE=<prefix>``: the page's JavaScript CPU profile (CDP ``Profiler``,
    ``<prefix>.cpuprofile``, opens in Chromium's Performance panel) and a Chromium trace
    (``<prefix>.trace.json``) of the live run; ``bench/skew_profile.py`` sums them."""

    def __init__(self, page) -> None:
        self.browser = page.context.browser
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Profiler.enable")
        self.cdp.send("Profiler.setSamplingInterval", {"interval": 500})
        self.cdp.send("Profiler.start")
        self.browser.start_tracing(page=page, categories=[
            "devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing"])

    def save(self, prefix: str) -> None:
        with open(f"{prefix}.trace.json", "wb") as out:
            out.write(self.browser.stop_tracing())
        with open(f"{prefix}.cpuprofile", "w") as out:
            json.dump(self.cdp.send("Profiler.stop")["profile"], out)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# Unless SKEW_COLD_PAGE=1: the setup cell shows one widget of each kind the in-cell panel
# uses, as a notebook that has shown any widget has. A page's first widget output loads
# and runs JupyterLab's widget manager and MathJax (100-230 ms frames, in the notebook,
# once a page): not the sidebar's frames, which this bench measures.
WARM_WIDGETS = """
import ipywidgets as _w
display(_w.VBox([_w.HBox([_w.HTML('<b>warm</b>'), _w.Button(description='b')]),
                 _w.Dropdown(options=['a'], description='d'), _w.IntProgress(value=1),
                 _w.IntSlider(description='s')]))"""


# SKEW_CELL_PER_PARTITION=1: the heat map drawn a cell a partition (2,400 cells), as
# before it took at most 40 columns (``skew/heatmap.py``), for a side-by-side comparison.
PER_PARTITION = """
import icedtea_jupyter.skew.heatmap as _heatmap
_heatmap.MAX_COLUMNS = 10**9"""


def test_live_chart_latency_and_frames(page, lab_server):
    setup = SETUP + (PER_PARTITION if os.environ.get("SKEW_CELL_PER_PARTITION") else "")
    warm = not os.environ.get("SKEW_COLD_PAGE")
    setup = setup.replace("print('ready')", (WARM_WIDGETS if warm else "") + "\nprint('ready')")
    (lab_server.root / "skew-live-ui.ipynb").write_text(
        json.dumps(notebook_json([setup, CELL]), indent=1))
    page.add_init_script(RECEIVED)
    notebook = open_notebook(page, lab_server, "skew-live-ui.ipynb")
    run_cells(page, notebook, 1)
    expect(notebook.locator(".jp-OutputArea-output", has_text="ready")).to_have_count(
        1, timeout=RUN_FINISHED)
    if warm:
        expect(notebook.locator(".widget-hslider")).to_be_visible(timeout=RUN_FINISHED)
        time.sleep(2.0)  # MathJax, loaded by the widgets' descriptions
    sidebar = show_sidebar(page)
    widen_left_area(page, 520)
    page.evaluate(OBSERVE)
    profile = Profile(page) if os.environ.get("SKEW_PROFILE") else None
    page.keyboard.press("Shift+Enter")  # the %%icedtea cell
    runs = sidebar.locator(".jp-icedtea-run-item")
    expect(runs).to_have_count(1, timeout=RUN_FINISHED)
    only_skew_open(sidebar)
    if os.environ.get("SKEW_BASELINE"):  # the same run with no chart drawn: the frames'
        # baseline on this machine (the Skew section collapsed once the run is live)
        wait_until_live(page)
        sidebar.locator('.lm-AccordionPanel-title[aria-controls="icedtea-section-skew"]').click()
        run_code(page, notebook, "import icedtea_jupyter as _it; _it.last_run().wait(); "
                 "print('bench-' + 'ended')", "bench-ended")
    else:
        wait_until_finished(page)
    time.sleep(1.0)  # the last fetch drawn
    if profile is not None:
        profile.save(os.environ["SKEW_PROFILE"])
    bench = page.evaluate("() => { window.__bench.stop = true; window.__bench.renderers = "
                          "[...document.querySelectorAll('#icedtea-sidebar [data-renderer]')]"
                          ".map(e => e.className + ': ' + e.dataset.renderer); "
                          "return window.__bench; }")
    arrivals = json.loads(run_code(page, notebook, "print(json.dumps(ARRIVALS))", "bench-got"))
    named = json.loads(run_code(page, notebook, "print(json.dumps(NAMED))", "bench-named"))
    seconds = json.loads(run_code(page, notebook, "import icedtea_jupyter as _it; "
                                  "print(json.dumps(_it.last_run().duration))", "bench-took"))
    kernel = json.loads(run_code(page, notebook, "print(json.dumps([LAGS, PUSHES]))",
                                 "bench-kernel"))
    bench["received"] = page.evaluate("() => window.__received")
    bench["pushes"] = page.evaluate("() => window.__pushes || []")
    report(bench, arrivals, named, seconds)
    report_data_latency(bench)
    report_kernel(*kernel)


def wait_until_finished(page, timeout: float = RUN_FINISHED / 1000) -> None:
    """Wait for the Skew view to turn live, then final (the run has ended), looking every
    0.25 s with one selector. Not the Run section's list: collapsed, it redraws only when
    expanded. Not Playwright's ``expect``: each of its failed polls builds an aria snapshot
    of the whole page (``ariaSnapshotForExpectFailure``), thousands of SVG marks here,
    which took ~20 s of the page's main thread in a 136 s run (the first profile)."""
    deadline = time.monotonic() + timeout
    seen_live = False
    while time.monotonic() < deadline:
        live = page.evaluate("() => document.querySelector('#icedtea-sidebar "
                             ".jp-icedtea-SkewView')?.dataset.live")
        seen_live = seen_live or live == "true"
        if seen_live and live == "false":
            return
        time.sleep(0.25)
    raise AssertionError("the run did not finish")


def wait_until_live(page, timeout: float = RUN_FINISHED / 1000) -> None:
    """Until the Skew view shows the run live."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if page.evaluate("() => document.querySelector('#icedtea-sidebar "
                         ".jp-icedtea-SkewView')?.dataset.live") == "true":
            return
        time.sleep(0.25)
    raise AssertionError("the run did not show live")


def latencies_from(bench: dict, sent: dict) -> list[float]:
    """Seconds from ``sent[key]`` (kernel) to the key's first bar drawn (page)."""
    return sorted(bench["seen"][key] / 1000 - sent[key] for key in bench["seen"]
                  if key in sent and sent[key] * 1000 > bench["start"])


def report(bench: dict, arrivals: dict, named: dict, wall: float) -> None:
    frames = bench["frames"][1:]
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"\nrun {wall:.1f} s; {len(frames)} frames; {load}")
    report_frames(bench, frames)
    latencies = latencies_from(bench, arrivals)
    from_named = latencies_from(bench, named)
    if not latencies or not from_named:
        print("no key's bar was seen drawn")
        return
    missed = [key for key in arrivals if key.startswith("m") and key not in bench["seen"]]
    print(f"latency (kernel got the sketch -> bar drawn), {len(latencies)} keys: "
          f"median {statistics.median(latencies):.3f} s, max {max(latencies):.3f} s, "
          f"all {[round(x, 3) for x in latencies]}; never drawn: {missed}")
    print(f"latency (the kernel's report first names the key -> bar drawn), "
          f"{len(from_named)} keys: median {statistics.median(from_named):.3f} s, max "
          f"{max(from_named):.3f} s, all {[round(x, 3) for x in from_named]}")
    received = {key: at / 1000 for key, at in bench["received"].items()}
    hops = [(received[k] - named[k], bench["seen"][k] / 1000 - received[k])
            for k in received if k in named and k in bench["seen"]]
    if hops:
        print(f"named -> page received, {len(hops)} keys: median "
              f"{statistics.median(h[0] for h in hops):.3f} s, max {max(h[0] for h in hops):.3f} s;"
              f" page received -> bar drawn: median {statistics.median(h[1] for h in hops):.3f}"
              f" s, max {max(h[1] for h in hops):.3f} s")
    for name, took in sorted(bench.get("updates", {}).items()):
        print(f"{name}: {len(took)} updates, median {statistics.median(took):.1f} ms, p95 "
              f"{quantile(took, 0.95):.1f} ms, max {max(took):.1f} ms")
    print(f"drawn as: {bench.get('renderers')}")


def report_frames(bench: dict, frames: list[float]) -> None:
    print(f"frames: median {statistics.median(frames):.1f} ms, p95 {quantile(frames, 0.95):.1f}"
          f" ms, p99 {quantile(frames, 0.99):.1f} ms, max {max(frames):.1f} ms, over 100 ms: "
          f"{sum(f > 100 for f in frames)}; long tasks: {len(bench['long'])}, max "
          f"{max(bench['long'], default=0):.0f} ms, over 100 ms: "
          f"{sum(d > 100 for d in bench['long'])}")
    for frame in bench.get("loaf", []):
        scripts = "; ".join(f"{s['source'] or '?'} {s['invoker']} {s['duration']} ms"
                            for s in sorted(frame["scripts"], key=lambda s: -s["duration"])[:3])
        print(f"  long animation frame at {frame['at'] / 1000:.1f} s: {frame['duration']} ms "
              f"(blocking {frame['blocking']}, style and layout {frame['layout']}): "
              f"{scripts or 'no script'}")


def data_latencies(bench: dict, only: str | None = None) -> list[float]:
    """Seconds from a pushed view's oldest new sketch leaving its worker (``since``) to
    the page having drawn every chart the push changed (each chart's first update or
    new draw that ended after the push arrived): the budget's "data reaches the sidebar"."""
    out = []
    for push in bench["pushes"]:
        kinds = [k for k in push["kinds"] if only in (None, k)]
        drawn = []
        for kind in kinds:
            ends = [t for name in (f"icedtea-skew-{kind}", f"icedtea-skew-draw-{kind}")
                    for t in bench["ends"].get(name, []) if t >= push["at"]]
            if ends:
                drawn.append(min(ends))
        if drawn and len(drawn) == len(kinds):
            out.append((max(drawn) - push["since"]) / 1000)
            if only is None and out[-1] > 0.5:
                print(f"  over 0.5 s: the push at {(push['at'] - bench['start']) / 1000:.1f} s "
                      f"({', '.join(kinds)}, {'whole report' if push.get('whole') else 'rows'}):"
                      f" sent {(push['at'] - push['since']) / 1000:.3f} s after the sketch, "
                      f"drawn {(max(drawn) - push['at']) / 1000:.3f} s after it arrived")
    return sorted(out)


def report_data_latency(bench: dict) -> None:
    arrived = sorted((p["at"] - p["since"]) / 1000 for p in bench["pushes"])
    if arrived:
        print(f"a sketch leaves its worker -> its push reaches the page, {len(arrived)} "
              f"pushes: median {statistics.median(arrived):.3f} s, p95 "
              f"{quantile(arrived, 0.95):.3f} s, max {max(arrived):.3f} s")
    for only, what in ((None, "every chart it changed"), ("spec", "the bars"),
                       ("timeline", "the load over time"), ("heatmap", "the heat map")):
        took = data_latencies(bench, only)
        if not took:
            print(f"data latency to {what}: no push was drawn")
            continue
        print(f"data latency (a sketch leaves its worker -> {what} drawn), {len(took)} of "
              f"{len(bench['pushes'])} pushes: median {statistics.median(took):.3f} s, p95 "
              f"{quantile(took, 0.95):.3f} s, max {max(took):.3f} s, over 0.5 s: "
              f"{sum(t > 0.5 for t in took)}")


def report_kernel(lags: list[float], pushes: list[list[float]]) -> None:
    """The kernel's part: sketches' worker -> coordinator lag, each push's build time."""
    if lags:
        print(f"a sketch leaves its worker -> the kernel's coordinator has it, {len(lags)} "
              f"sketches: median {statistics.median(lags):.3f} s, p95 "
              f"{quantile(lags, 0.95):.3f} s, max {max(lags):.3f} s")
    took = [p[1] for p in pushes]
    if took:
        print(f"a push built and sent by the kernel, {len(took)} pushes: median "
              f"{statistics.median(took) * 1000:.1f} ms, p95 {quantile(took, 0.95) * 1000:.1f}"
              f" ms, max {max(took) * 1000:.1f} ms")
