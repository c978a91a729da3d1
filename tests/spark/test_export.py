"""A debugging session exported as a notebook re-executes under nbval, in a fresh kernel."""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.spark

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def fresh_history(shell):
    """Each test's export holds its own cells only (the shell is the session's)."""
    shell.history_manager.reset()


def run(shell, code):
    result = shell.run_cell(code, store_history=True)
    result.raise_error()
    return result.result


def test_the_fraud_story_session_exports_and_reexecutes_with_the_same_states(shell, tmp_path):
    run(shell, "from icedtea_jupyter.examples.fraud import (PAYMENTS, FeatureEnrichment,\n"
               "    FraudDetector, FraudFilter)")
    run(shell, f"%%icedtea --wait --no-panel --store {tmp_path / 'runs'} --interesting enrich "
               "--interact-when \"row.amount == 60 or '¥' in row.currency\"\n"
               "payments = spark.createDataFrame(PAYMENTS, 'customer string, amount double, "
               "currency string')\n"
               "approved = (payments.rdd.keyBy(lambda r: r.customer).partitionBy(2).values()\n"
               "            .mapPartitions(FeatureEnrichment()).setName('enrich')\n"
               "            .mapPartitions(FraudDetector()).setName('detect')\n"
               "            .mapPartitions(FraudFilter()).setName('filter').collect())")
    run(shell, "import icedtea_jupyter\nrun = icedtea_jupyter.last_run()\n"
               "dbg = run.debugger()\ndbg.jump(1)\n"
               "p = next(p for p, rows in dbg.pending().items() if rows['enrich']['records']\n"
               "         and rows['enrich']['records'][0].amount == 10.0)")
    run(shell, "dbg.step_over(partition=p)\n"
               "dbg.step_into(partition=p, operator='enrich')\ndbg.step_out(partition=p)")
    run(shell, "highest = run.snapshot(2).state('enrich', p)['highest']")  # a state read
    recorded = shell.user_ns["run"]
    path = tmp_path / "debug-fraud.ipynb"
    assert recorded.export_notebook(str(path)) == []  # nothing needs the user's hand

    notebook = json.loads(path.read_text())
    sources = [c["source"] for c in notebook["cells"] if c["cell_type"] == "code"]
    assert "getOrCreate" in sources[0] and "FraudDetector" in sources[1]
    assert sources[2].startswith("%%icedtea --wait --no-panel --store")
    moves = [c for c in notebook["cells"] if c["cell_type"] == "code" and c["outputs"]]
    p = shell.user_ns["p"]
    assert [m["source"].splitlines()[0] for m in moves] == [
        "dbg.jump(1)", f"dbg.step_over(partition={p})",
        f"dbg.step_into(partition={p}, operator='enrich')", f"dbg.step_out(partition={p})",
        f"print(stable(run.snapshot(2).state('enrich', {p})))"]
    assert "'Bob': 5000.0" in moves[-1]["outputs"][0]["text"]  # the ¥5,000 read as dollars
    out = moves[-2]["outputs"][0]["text"]
    assert f"detect p{p} after" in out and "'Bob'" in out.split(f"detect p{p}")[1]

    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "pytest", "--nbval", str(path), "-q",
                           "-p", "no:cacheprovider", "--nbval-cell-timeout", "300"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    assert f"{len(sources)} passed" in done.stdout


def nbval(path, cwd):
    """``pytest --nbval`` on the exported notebook in a fresh kernel."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "pytest", "--nbval", str(path), "-q",
                           "-p", "no:cacheprovider", "--nbval-cell-timeout", "300"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


TALLY = ("import time\nfrom icedtea_jupyter import Operator\n\n\n"
         "class Tally(Operator):\n"
         "    def open(self):\n        self.seen = 0\n        self.by_key = {}\n\n"
         "    def process(self, x):\n        time.sleep(0.002)\n        self.seen += 1\n"
         "        self.by_key[x % 5] = self.by_key.get(x % 5, 0) + x\n        yield x")


def test_periodic_interactions_are_pinned_and_the_export_shows_the_same_states(shell,
                                                                                tmp_path):
    run(shell, TALLY)
    run(shell, f"%%icedtea --wait --no-panel --store {tmp_path / 'runs'} --interesting tally "
               "--interact-every 0.15\n"
               "out = (sc.parallelize(range(1000), 2).mapPartitions(Tally()).setName('tally')\n"
               "       .map(lambda x: x * 2).setName('double').collect())")
    run(shell, "import icedtea_jupyter\nrun = icedtea_jupyter.last_run()\n"
               "last = len(run.interactions) - 1\ndbg = run.debugger()")
    last = shell.user_ns["last"]
    assert last >= 3, "the run took too few periodic interactions to test"
    run(shell, f"dbg.jump({last - 1})\ndbg.jump(1)")
    run(shell, f"read = run.snapshot({last}).state('tally', 1)")
    recorded = shell.user_ns["run"]
    points = recorded.interaction_points()
    assert len(points) == last and all(set(p) == {0, 1} for p in points)
    path = tmp_path / "debug-tally.ipynb"
    assert recorded.export_notebook(str(path)) == []  # pinned: nothing left to chance

    notebook = json.loads(path.read_text())
    line = next(c["source"] for c in notebook["cells"]
                if c["cell_type"] == "code" and c["source"].startswith("%%icedtea"))
    first = line.splitlines()[0]
    assert "--interact-every" not in first and "--interact-at" in first
    moves = [c for c in notebook["cells"] if c["cell_type"] == "code" and c["outputs"]]
    assert [m["source"].splitlines()[0] for m in moves] == [
        f"dbg.jump({last - 1})", "dbg.jump(1)",
        f"print(stable(run.snapshot({last}).state('tally', 1)))"]
    assert f"'seen': {shell.user_ns['read']['seen']}" in moves[-1]["outputs"][0]["text"]

    done = nbval(path, tmp_path)  # the states printed again must equal those recorded
    assert done.returncode == 0, done.stdout[-3000:]
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert f"{len(code)} passed" in done.stdout


def test_the_export_says_which_cell_needs_the_users_hand(shell, tmp_path):
    data = tmp_path / "amounts.csv"
    data.write_text("1\n2\n3\n")
    run(shell, f"lines = open({str(data)!r}).read().split()")
    run(shell, "globals().update(factor=3)")  # a name no assignment makes
    run(shell, f"%%icedtea --wait --no-panel --store {tmp_path / 'runs'}\n"
               "scaled = sc.parallelize(lines, 1).map(lambda s: int(s) * factor)"
               ".setName('scale').collect()")
    data.unlink()
    import icedtea_jupyter

    hand = icedtea_jupyter.last_run().export_notebook(str(tmp_path / "export.ipynb"))
    notebook = json.loads((tmp_path / "export.ipynb").read_text())
    cells = notebook["cells"]
    reading = next(i for i, c in enumerate(cells) if c["source"].startswith("lines = open"))
    before = cells[reading - 1]
    assert before["cell_type"] == "markdown" and "**Needs your hand**" in before["source"]
    number = cells[reading]["execution_count"]
    assert f"cell [{number}]: the data at {str(data)!r} no longer exists" in before["source"]
    magic = next(i for i, c in enumerate(cells) if c["source"].startswith("%%icedtea"))
    assert f"cell [{cells[magic]['execution_count']}]: the %%icedtea cell uses 'factor'" \
        in cells[magic - 1]["source"]
    assert len(hand) == 2 and all(item in cells[0]["source"] for item in hand)
