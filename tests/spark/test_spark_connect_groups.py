"""Group operators as θ on Spark Connect: ``cogroup().applyInPandas`` (a record a key with
its two groups) and a grouped-aggregate ``@pandas_udf`` in ``groupBy().agg`` (a record a
group). Their inputs are regenerated with one query over Connect, and every jump equals
the recorded snapshot; the states equal an oracle computed here."""
import pytest

from tests.moments import distinct_moments
from tests.spark.test_dataframe_window_udf import SPREAD

pytestmark = pytest.mark.spark

COGROUP = """
import time
import pandas as pd
class Matched:
    def __init__(self):
        self.groups, self.left, self.right, self.keys = 0, 0, 0, []
    def __call__(self, key, left, right):
        time.sleep(0.05)
        self.groups += 1
        self.left += len(left)
        self.right += len(right)
        self.keys.append(int(key[0]))
        return pd.DataFrame({"k": [key[0]], "n": [len(left) * len(right)]})
orders = spark.range(0, 600, 1, 2).selectExpr("id % 20 AS k", "id AS v")
refunds = spark.range(0, 300, 1, 2).selectExpr("id % 25 AS k", "id AS r")
out = orders.groupBy("k").cogroup(refunds.groupBy("k")).applyInPandas(
    Matched(), "k long, n long").collect()
"""
AGGREGATE = """
import time
import pandas as pd
from pyspark.sql.functions import col, pandas_udf
def make():
    state = {"keys": [], "sums": {}}
    @pandas_udf("double")
    def spread(k: pd.Series, v: pd.Series) -> float:
        time.sleep(0.05)
        state["keys"].append(int(k.iloc[0]))
        state["sums"][int(k.iloc[0])] = float(v.sum())
        return float(v.max() - v.min())
    return spread
spread = make()
df = spark.range(0, 600, 1, 2).selectExpr("id % 20 AS k", "CAST(id AS DOUBLE) AS v")
out = df.groupBy("k").agg(spread(col("k"), col("v")).alias("s")).collect()
"""


def jumps_equal_the_snapshots(run, name):
    """Every jump's state of ``name`` equals the run's snapshot; the states seen in the
    middle of a partition, and the final states."""
    assert run.status == "finished", run.error
    assert run.dag.interesting.name == name
    partitions = sorted({w["partition"] for w in run.partitions(name)})
    finals = [run.final_state(name, p) for p in partitions]
    dbg = run.debugger()
    middles = []
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        assert not jumped.notes, jumped.notes
        for p, final in zip(partitions, finals):
            if recorded.status(name, p) in ("running", "finished"):
                assert jumped.state(name, p) == recorded.state(name, p), (k, p)
                if recorded.state(name, p) != final:
                    middles.append(recorded.state(name, p))
    assert set(dbg.inputs.source.values()) == {"regenerated"}
    dbg.close()
    assert middles  # some interactions found a partition half done
    return middles, finals


def test_a_cogroup_apply_in_pandas_theta_over_connect_jumps_to_its_snapshots(
        record_connect):
    run = record_connect(COGROUP, interact_every=0.1)
    middles, finals = jumps_equal_the_snapshots(run, "Matched")
    for state in middles + finals:  # a record is a key with its two groups
        keys = state["keys"]
        assert state["groups"] == len(keys)
        assert state["left"] == sum(30 for k in keys if k < 20)  # 600 orders, 20 keys
        assert state["right"] == 12 * len(keys)  # 300 refunds, 25 keys
    assert sorted(k for state in finals for k in state["keys"]) == list(range(25))


def test_a_grouped_aggregate_udf_theta_over_connect_jumps_to_its_snapshots(record_connect):
    run = record_connect(AGGREGATE, interact_every=0.1)
    middles, finals = jumps_equal_the_snapshots(run, "spread")
    for state in middles + finals:  # a record is a group: key k's ids are k, k + 20, …
        keys = state["state"]["keys"]
        assert state["state"]["sums"] == {k: float(sum(range(k, 600, 20))) for k in keys}
    assert sorted(k for state in finals for k in state["state"]["keys"]) == list(range(20))


WINDOW = ("import time\nimport pandas as pd\nfrom pyspark.sql.functions import pandas_udf\n"
          + SPREAD.replace("SLEEP", "0.1") + """
df = spark.range(0, 600, 1, 2).selectExpr("id", "CAST(id AS DOUBLE) AS v")
""")
WINDOW_AS_THETA = WINDOW + """
out = df.withColumn("s", spread("v").over(Window.partitionBy(df.id % 8))).collect()
"""
WINDOW_AFTER_THETA = WINDOW + """
def running(batches):
    total = 0.0
    for pdf in batches:
        time.sleep(0.02)
        total += float(pdf.v.sum())
        yield pdf.assign(total=total)
theta = df.mapInPandas(running, "id long, v double, total double")
out = theta.withColumn("s", spread("v").over(Window.partitionBy(theta.id % 8))).collect()
"""


def test_a_window_udf_theta_over_connect_jumps_and_steps_a_call_at_a_time(record_connect):
    """The Connect client's ``.over`` is wrapped too: a window UDF θ (one call a window
    partition: key ``id % 8``, 75 rows whose least id is the key) replays there."""
    run = record_connect(WINDOW_AS_THETA, interact_every=0.1)
    middles, finals = jumps_equal_the_snapshots(run, "spread")
    for state in middles + finals:
        assert state["state"]["rows"] == 75 * state["state"]["calls"]
    assert sorted(m for s in finals for m in s["state"]["mins"]) == [float(k) for k in range(8)]
    dbg = run.debugger()
    partition = next(p for p in sorted({w["partition"] for w in run.partitions("spread")})
                     if run.final_state("spread", p)["state"]["calls"])
    dbg.jump(0)
    moved = dbg.step_over(partition).state("spread", partition)["state"]
    assert (moved["calls"], moved["rows"]) == (1, 75)
    dbg.close()


def test_a_window_udf_after_theta_over_connect_is_replayed(record_connect):
    run = record_connect(WINDOW_AFTER_THETA, interesting="running", interact_every=0.1)
    assert run.status == "finished", run.error
    assert run.dag.node("spread").in_g
    dbg = run.debugger()
    partitions = dbg.partitions("spread")
    finals = [run.final_state("spread", q) for q in partitions]
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        assert not [n for n in jumped.notes if "not replayed" in n], jumped.notes
        for q in partitions:
            if recorded.state("spread", q) is not None:
                assert jumped.state("spread", q) == recorded.state("spread", q), (k, q)
    dbg.jump(0)
    for q in (0, 1):  # once θ has ended everywhere, the window's stage runs every call
        while not dbg.ended(q):
            last = dbg.step_over(partition=q)
            calls = [last.state("spread", r)["state"]["calls"] for r in partitions]
            assert calls == [0] * len(partitions) or dbg.ended(1 - q), calls
    assert [last.state("spread", q) for q in partitions] == finals
    assert sorted(m for s in finals for m in s["state"]["mins"]) == [float(k) for k in range(8)]
    dbg.close()
