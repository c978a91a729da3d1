"""Every export path re-executes under nbval with the same states: the API, ``%icedtea
export`` and the sidebar's comm request; with states too large to keep whole, lineage
traces among the moves, and a kernel history full of cells that must not run again."""
import json
import re

import pytest

from icedtea_jupyter.comm import target
from tests.spark.test_export import fresh_history, nbval, run  # noqa: F401 (a fixture)
from tests.unit.fakes import FakeComm

pytestmark = pytest.mark.spark

KEEP = ("from icedtea_jupyter import Operator\n\n\n"
        "class Keep(Operator):\n"
        "    def open(self):\n        self.seen = {}\n\n"
        "    def process(self, x):\n"
        "        self.seen[x] = 'record %06d ' % x + '.' * 100\n        yield x")


def code_cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def assert_reexecutes(path, cwd):
    done = nbval(path, cwd)
    assert done.returncode == 0, done.stdout[-4000:]
    assert f"{len(code_cells(path))} passed" in done.stdout, done.stdout[-2000:]


def test_large_states_and_traces_export_and_reexecute_with_the_same_states(shell, tmp_path):
    run(shell, KEEP)
    run(shell, f"%%icedtea --wait --no-panel --store {tmp_path / 'runs'} --interesting keep "
               "--lineage --interact-when 'row == 3500'\n"
               "out = (sc.parallelize(range(8000), 2).mapPartitions(Keep()).setName('keep')\n"
               "       .map(lambda x: x * 2).setName('double').collect())")
    run(shell, "import icedtea_jupyter\nrun = icedtea_jupyter.last_run()\n"
               "dbg = run.debugger()\ndbg.jump(1)")
    run(shell, "dbg.step_over(partition=0)")
    run(shell, "back = run.trace_back(out[10])\nforward = run.trace_forward(7)\n"
               "replayed = back.replay()")
    run(shell, "dbg.jump(0)")  # a jump after the traces: the debugger moves again
    run(shell, "read = run.snapshot(1).state('keep', 0)")
    recorded = shell.user_ns["run"]
    actions = recorded.actions
    assert [a["call"] for a in actions] == [
        "dbg.jump(1)", "dbg.step_over(partition=0)", "run.trace_back(20)",
        "run.trace_forward(7)", "run.trace_back(20).replay()", "dbg.jump(0)",
        "run.snapshot(1).state('keep', 0)"]
    big = [a["call"] for a in actions if a.get("bounded")]
    assert big == ["dbg.jump(1)", "dbg.step_over(partition=0)"]
    for action in actions[:2]:  # states of over 200,000 characters, kept as digests
        lengths = re.findall(r"\[([\d,]+) characters, sha256 [0-9a-f]{64}\]", action["shown"])
        assert sum(int(n.replace(",", "")) for n in lengths) > 200_000
        assert len(action["shown"]) < 20_000
    assert actions[2]["shown"].startswith("back trace ends at 1 record(s)")
    assert actions[4]["shown"] == "[20]"

    path = tmp_path / "debug-keep.ipynb"
    assert recorded.export_notebook(str(path)) == []
    cells = json.loads(path.read_text())["cells"]
    sources = [c["source"] for c in cells if c["cell_type"] == "code"]
    assert "print(traced(run.trace_back(20)))" in sources
    assert "print(traced(run.trace_forward(7)))" in sources
    assert "print(stable(run.trace_back(20).replay()))" in sources
    assert "dbg.jump(0)\nprint(shown(dbg.snapshot()))" in sources
    assert "dbg.jump(1)\nprint(shown(dbg.snapshot(), bounded_states=True))" in sources
    assert "print(stable(run.snapshot(1).state('keep', 0)))" in sources  # summarised
    notes = [c["source"] for c in cells if c["cell_type"] == "markdown"]
    assert sum("SHA-256 digest" in n for n in notes) == 2  # each bounded move says so
    assert_reexecutes(path, tmp_path)

    again = tmp_path / "again.ipynb"
    run(shell, f"%icedtea export {again}")  # the line magic: the run being debugged
    assert [c["source"] for c in code_cells(again)] == sources


BREAKS = "--break-when 'hold: row == 3'"


def test_the_sidebars_export_is_the_debugged_runs_and_keeps_only_what_it_needs(shell,
                                                                               tmp_path):
    store = tmp_path / "runs"
    magic = f"%%icedtea --wait --no-panel --store {store}"
    run(shell, "data = list(range(400))")
    run(shell, "factor = 3")
    run(shell, KEEP)
    bad = [f"%%icedtea --wait --no-panel --store {store} --intresting keep\n"  # flag typo
           "factor = 4\nx = sc.parallelize(data, 2).collect()",
           f"{magic}\nboom = sc.parallelize(data, 2).map(lambda x: 1 // (x - x))"
           ".setName('boom').collect()\nfactor = 5",  # RunFailed
           f"{magic}\nboom = sc.parallelize(data, 2).map(lambda x: x // 0)"
           ".setName('boom').collect()\ndata = boom",  # RunFailed
           "factor = defined_nowhere + 1",  # NameError
           "data = [d * factor for d in data_nowhere]"]  # NameError
    for cell in bad:
        assert not shell.run_cell(cell, store_history=True).success
    run(shell, f"%%icedtea --no-panel --store {store} {BREAKS}\n"
               "held = sc.parallelize(data, 2).map(lambda x: x).setName('hold').collect()\n"
               "factor = 6")  # a breakpoint: this run never ends by itself
    import icedtea_jupyter

    paused = icedtea_jupyter.last_run()
    paused.wait_for_hit(120)
    paused.stop()
    paused.wait(120)
    assert paused.status == "stopped"
    run(shell, f"{magic} --interesting keep --interact-when 'row % 100 == 50'\n"
               "out = (sc.parallelize(data, 2).mapPartitions(Keep()).setName('keep')\n"
               "       .map(lambda x: x * factor).setName('scale').collect())")
    run(shell, "import icedtea_jupyter\ndebugged = icedtea_jupyter.last_run()\n"
               "dbg = debugged.debugger()\n"
               "dbg.jump(2)\ndbg.step_over(partition=0)")
    run(shell, f"{magic}\nlater = sc.parallelize(range(10), 1).map(lambda x: x)"
               ".setName('later').collect()")  # the sidebar selects this newer run
    debugged, selected = shell.user_ns["debugged"], icedtea_jupyter.last_run()
    assert selected is not debugged

    target.watch_runs()
    comm = FakeComm()
    target._on_open(comm, {})
    try:
        path = tmp_path / "debug-sidebar.ipynb"
        reply = comm.request("run.export", run=selected.id, path=str(path))
    finally:
        comm.close()
    assert reply["ok"], reply["error"]
    assert reply["result"]["run"] == debugged.id and reply["result"]["hand"] == []
    notebook = json.loads(path.read_text())
    sources = [c["source"] for c in notebook["cells"] if c["cell_type"] == "code"]
    assert sources[1:4] == ["data = list(range(400))", "factor = 3", KEEP]
    assert sources[4].startswith("%%icedtea --wait --no-panel") and "mapPartitions" in \
        sources[4] and "--break-when" not in sources[4]
    assert not any(s in c for c in sources for s in ("defined_nowhere", "data_nowhere",
                                                      "boom", "held", "later", "intresting"))
    title = notebook["cells"][0]["source"]
    assert "**Left out:**" in title
    for why in ("raised UsageError", "raised RunFailed", "raised NameError",
                "its %%icedtea run was stopped"):
        assert why in title, title
    assert_reexecutes(path, tmp_path)
