"""What an exported notebook holds, without Spark: the earlier cells a run needs (and
those left out, with why), the bounded form of a large state, the cell of each move."""
from icedtea_jupyter.export.cells import Earlier, choose, free_names
from icedtea_jupyter.export.moves import moves
from icedtea_jupyter.export.states import bounded, shown
from icedtea_jupyter.session.moves import LARGEST, kept_text, shown_by

PIPELINE = ("out = (sc.parallelize(data, 2).mapPartitions(Tally()).setName('tally')\n"
            "       .map(lambda x: x * factor).collect())")
TALLY = "from icedtea_jupyter import Operator\n\nclass Tally(Operator):\n    pass"


def finished(run_id):
    return {"r-ok": "finished", "r-failed": "failed", "r-paused": "running",
            "r-stopped": "stopped"}.get(run_id)


def test_free_names_follow_statement_order_and_nested_scopes():
    assert free_names(PIPELINE) == {"sc", "data", "Tally", "factor"}
    assert free_names("x = x + 1\ny = x\ndef f(a):\n    return a + g + y\n") == {"x", "g"}
    assert free_names("import math\nrows = [r * math.pi for r in given if r > bound]") == \
        {"given", "bound"}
    assert free_names("%%time\nprint(len(seen))\n!ls") == {"seen"}


def test_only_the_cells_the_run_needs_are_kept_in_order_and_the_rest_said():
    history = [Earlier("data = list(range(10))"),
               Earlier("factor = 2"),
               Earlier("unused = 5"),  # needed by nothing: left out without a word
               Earlier(TALLY),
               Earlier("data.append(10)"),  # changes a needed name in place
               Earlier("%%icedtea --intresting tally\nfactor = 4", error="UsageError"),
               Earlier("%%icedtea --wait\nboom = sc.parallelize(data).collect()\nfactor = 5",
                       error="RunFailed"),
               Earlier("factor = nowhere + 1", error="NameError"),
               Earlier("%%icedtea --break-when 'tally: row == 3'\nx = 1\nfactor = 6",
                       run="r-paused"),
               Earlier("%%icedtea --no-panel\nfactor = 7\ndone = 1", run="r-stopped"),
               Earlier("%%icedtea --no-panel\ndata = list(range(3))", run="r-failed"),
               Earlier("dbg = run.debugger()\nfactor = dbg.jump(1).count('tally', 0)")]
    chosen = choose(history, PIPELINE, finished)
    assert chosen.kept == ["data = list(range(10))", "factor = 2", TALLY, "data.append(10)"]
    reasons = "\n".join(chosen.reasons)
    for why, cells in [("raised UsageError", "#6"), ("raised RunFailed", "#7"),
                       ("raised NameError", "#8"), ("has not ended", "#9"),
                       ("was stopped", "#10"), ("its %%icedtea run failed", "#11"),
                       ("debugged or traced", "#12")]:
        line = next(r for r in chosen.reasons if why in r)
        assert f"cell(s) {cells} " in line, reasons
    assert "#3" not in reasons


def test_a_needed_icedtea_cell_runs_as_plain_pyspark_and_a_file_it_writes_is_followed():
    history = [Earlier("import pandas as pd"),
               Earlier("pd.DataFrame({'a': [1]}).to_csv('rows.csv')"),
               Earlier("%%icedtea --wait --break-when 'm: row == 1'\nlimit = 3", run="r-ok")]
    cell = "rows = spark.read.csv('rows.csv').limit(limit).collect()"
    assert choose(history, cell, finished).kept == [
        "import pandas as pd", "pd.DataFrame({'a': [1]}).to_csv('rows.csv')", "limit = 3"]


class View:
    """A debugger view with ``workers`` states of ``size`` entries each."""

    def __init__(self, workers, size):
        self.outputs = []
        self._states = {("keep", p): {i: "x" * 60 for i in range(size)} for p in range(workers)}

    def workers(self):
        return [{"operator": op, "partition": p, "count": len(s)}
                for (op, p), s in self._states.items()]

    def state(self, op, p):
        return self._states[(op, p)]


def test_a_view_too_large_to_keep_whole_is_kept_bounded_and_the_same_each_time():
    small = shown_by(View(2, 10))
    assert set(small) == {"shown"} and small["shown"] == shown(View(2, 10))
    large = shown_by(View(2, 4000))
    assert len(shown(View(2, 4000))) > LARGEST and large["bounded"] is True
    assert len(large["shown"]) < 3_000 and large["shown"].count("sha256") == 2
    assert large["shown"] == shown(View(2, 4000), bounded_states=True)  # deterministic
    other = View(2, 4000)
    other._states[("keep", 1)][3999] = "y"  # one entry differs: its digest too
    assert shown(other, bounded_states=True) != large["shown"]
    assert shown_by(View(65, 1)) == {"unshown": "the view has 65 workers, more than the 64 "
                                                "an exported move prints"}
    text = "z" * (LARGEST + 1)
    assert kept_text(text) == {"shown": bounded(text), "bounded": True}
    assert bounded("short") == "short"


def test_each_move_becomes_its_own_call_and_what_cannot_be_made_is_said():
    actions = [{"call": "dbg.jump(1)", "shown": "a"},
               {"call": "run.trace_back(20)", "shown": "back trace ends at 1 record(s)"},
               {"call": "run.trace_back(20).replay()", "shown": "[20]"},
               {"call": "run.snapshot(1).state('keep', 0)", "shown": "b", "bounded": True},
               {"call": "dbg.step_over(partition=0)", "unshown": "too many workers"},
               {"call": "run.trace_back(is_big)", "shown": "c"},
               {"call": "run.trace_forward(<lambda>)", "shown": "d"},
               {"call": "run.breakpoints[0].resume()"}]
    cells = moves(actions, {"data"})
    code = [c["source"] for c in cells if c["cell_type"] == "code"]
    assert code == ["dbg.jump(1)\nprint(shown(dbg.snapshot()))",
                    "print(traced(run.trace_back(20)))",
                    "print(stable(run.trace_back(20).replay()))",
                    "print(bounded(stable(run.snapshot(1).state('keep', 0))))",
                    "dbg.step_over(partition=0)\nprint(shown(dbg.snapshot()))"]
    unchecked = [c for c in cells if c["cell_type"] == "code"][-1]
    assert unchecked["metadata"]["tags"] == ["nbval-ignore-output"]
    notes = [c["source"] for c in cells if c["cell_type"] == "markdown"]
    assert any("not kept (too many workers)" in n for n in notes)
    assert any("`run.trace_back(is_big)` uses `is_big`" in n for n in notes)
    assert any("`run.trace_forward(<lambda>)` uses a function without a name" in n
               for n in notes)
    assert any("`run.breakpoints[0].resume()` was made while the run recorded" in n
               for n in notes)


def test_each_cells_outcome_is_noted_by_its_place_in_the_history():
    from IPython.core.interactiveshell import InteractiveShell

    from icedtea_jupyter import cell_outcomes

    shell = InteractiveShell.instance()
    cell_outcomes.watch(shell)
    cell_outcomes.watch(shell)  # once per shell
    shell.history_manager.reset()
    for cell in ["a = 1", "b = nowhere", "1 / 0",
                 "from icedtea_jupyter import cell_outcomes as c\n"
                 "c.note_run(get_ipython(), 'r1')"]:
        shell.run_cell(cell, store_history=True)
    assert cell_outcomes.outcomes(shell, 4) == [
        {"error": None, "run": None}, {"error": "NameError", "run": None},
        {"error": "ZeroDivisionError", "run": None}, {"error": None, "run": "r1"}]
    shell.history_manager.reset()  # the same places again: nothing of the old cells kept
    for cell in ["a = 2"] * 4:
        shell.run_cell(cell, store_history=True)
    assert cell_outcomes.outcomes(shell, 4) == [{"error": None, "run": None}] * 4
