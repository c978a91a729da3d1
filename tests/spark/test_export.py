"""A debugging session exported as a notebook re-executes under nbval, in a fresh kernel."""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.spark

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
