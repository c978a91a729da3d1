"""Recording for time travel: θ and G(θ), interactions while the job runs, tuple-consistent
snapshots, replay logs."""
import time

import pytest

from icedtea_jupyter import Operator
from icedtea_jupyter.dag import Dag
from icedtea_jupyter.examples import fraud
from icedtea_jupyter.session.execution import RunOptions, start_run
from icedtea_jupyter.session.run import Run
from icedtea_jupyter.store.replay_logs import read_replay_log
from icedtea_jupyter.store.run_store import RunStore
from tests.waiting import wait_until

pytestmark = pytest.mark.spark

FRAUD_NS = {name: getattr(fraud, name) for name in
            ("PAYMENTS", "FeatureEnrichment", "FraudDetector", "FraudFilter")}


def partition_of(run, customer):
    for p in range(2):
        if customer in (run.snapshot(len(run.interactions) - 1).state("enrich", p) or {}).get(
                "highest", {}):
            return p
    raise AssertionError(f"{customer} in no partition")


def test_the_yen_payment_yields_figure_6s_tuple_consistent_snapshot(record):
    run = record(fraud.PIPELINE, FRAUD_NS, interesting="enrich",
                 interact_when='"¥" in row.currency', record_inputs=True)
    assert run.status == "finished", run.error
    assert [n.name for n in run.dag.g_theta] == ["enrich", "detect", "filter"]
    assert run.dag.interesting.name == "enrich"
    assert ("partitionBy", "enrich") in run.dag.edges
    initial, yen = run.interactions
    assert (initial.index, initial.trigger) == (0, "initial")
    assert (yen.index, yen.trigger) == (1, "condition")
    assert yen.record["value"]["currency"] == "¥"
    p = partition_of(run, "Bob")
    rows = run.recorded_inputs(p)
    assert sorted(tuple(r) for r in rows) == sorted(
        r for r in fraud.PAYMENTS if r[0] in run.snapshot(1).state("enrich", p)["highest"]
        or r[0] in {x.customer for x in rows})
    position = next(i for i, r in enumerate(rows) if r.currency == "¥") + 1
    assert yen.counts[("enrich", p)] == position
    assert yen.counts[("detect", p)] == position and yen.counts[("filter", p)] == position
    snapshot = run.snapshot(1)
    assert snapshot.state("enrich", p)["highest"]["Bob"] == 5000.0  # the bug, caught
    assert snapshot.state("detect", p)["blacklist"] == {"Bob"}
    assert snapshot.state("filter", p)["frauds"] == 1
    assert snapshot.changed("detect", p)["variables"] == ["blacklist", "checked"]
    page = snapshot.page("enrich", p, "highest", start=0, size=2)
    assert page["total"] == len(snapshot.state("enrich", p)["highest"]) and len(page["items"]) == 2
    with pytest.raises(KeyError, match="no state variable 'nope'"):
        snapshot.page("enrich", p, "nope")
    assert run.snapshot(0).state("detect", p) == {"blacklist": set(), "checked": 0}


def _inputs_and_outputs(log) -> tuple[int, int]:
    """A worker's inputs and the outputs they had, from its replay log: per input, or at
    its last block boundary (a host that ran in blocks)."""
    if log.boundaries is not None and not len(log.boundaries):
        assert log.records_in == 0
        return 0, 0
    if log.boundaries is not None:
        assert log.records_in == int(log.boundaries[-1, 0])
        return int(log.boundaries[-1, 0]), int(log.boundaries[-1, 1])
    return len(log.outputs), int(log.outputs.sum())


def test_replay_logs_hold_outputs_per_input_and_are_small(record):
    run = record(fraud.PIPELINE, FRAUD_NS, interesting="enrich")
    logs = {}
    import glob
    import os

    for path in glob.glob(os.path.join(run.path, "logs", "*.arrow")):
        op = int(os.path.basename(path).split("-")[0][2:])
        logs.setdefault(run.dag.node(op).name, []).append(read_replay_log(path))
    filter_counts = [_inputs_and_outputs(log) for log in logs["filter"]]
    filtered = sum(n_in - n_out for n_in, n_out in filter_counts)
    frauds = sum(1 for c, a, cur in fraud.PAYMENTS if c in ("Bob", "Erin"))
    assert filtered >= 1 and filtered <= frauds
    enrich_counts = [_inputs_and_outputs(log) for log in logs["enrich"]]
    assert sum(n_in for n_in, _ in enrich_counts) == len(fraud.PAYMENTS)
    assert all(n_in == n_out for n_in, n_out in enrich_counts)
    assert sum(n_out for _, n_out in filter_counts) == len(run.namespace["approved"])


class Slow:
    """x -> x, summing what it saw. Record ``at`` of each partition (of ``size`` records)
    waits at ``gate``: the run records until the test opens it. Before the gate, 4 ms of
    work a record, so that interactions land while records flow; none after it."""

    def __init__(self, gate, size, at):
        self.gate, self.size, self.at = gate, size, at
        self.total = 0

    def __call__(self, x):
        if x % self.size == self.at:
            self.gate.wait(f"p{x // self.size}")
        elif not self.gate.is_open():
            time.sleep(0.004)
        self.total += x
        return x


def slow_running(run):
    """The slow operator's records in while its workers run (else 0); the run must still
    record (its workers wait at the gate)."""
    assert run.status == "running", run.error
    row = next((r for r in run.progress() if r["operator"] == "slow"), None)
    return row["records_in"] if row and row["running"] else 0


def test_manual_interactions_land_in_the_middle_of_partitions(spark, tmp_path, gate):
    code = ("out = sc.parallelize(range(1000), 2).map(Slow(gate, 500, 400)).setName('slow')"
            ".map(str).collect()")
    run = start_run(code, {"sc": spark.sparkContext, "Slow": Slow, "gate": gate},
                    RunOptions(store=str(tmp_path / "runs")))
    taken = []
    try:
        seen = 0
        for _ in range(3):  # each once more records came in (or once workers wait at the gate)
            wait_until(lambda before=seen: slow_running(run) > before or gate.held(), 60,
                       "the slow operator to take in more records")
            seen = slow_running(run)
            taken.append(run.interact())
    finally:
        gate.open()
    run.wait(60)
    assert taken and all(i.trigger == "manual" for i in taken)
    middle = [(i, p) for i in taken for p in (0, 1) if 0 < (i.counts[("slow", p)] or 0) < 500]
    assert middle, [i.counts for i in taken]
    interaction, p = middle[0]
    n = interaction.counts[("slow", p)]
    state = run.snapshot(interaction.index).state("slow", p)
    assert state["total"] == sum(range(p * 500, p * 500 + n))  # exactly n records processed
    assert interaction.counts[("str", p)] == n  # downstream: the same records, no more
    assert interaction.latency is not None and interaction.latency < 2.0


def test_periodic_interactions_and_reopening(spark, tmp_path, gate):
    code = "out = sc.parallelize(range(600), 2).map(Slow(gate, 300, 250)).setName('slow').count()"
    run = start_run(code, {"sc": spark.sparkContext, "Slow": Slow, "gate": gate},
                    RunOptions(store=str(tmp_path / "runs"), interact_every=0.3))
    try:  # the workers wait at the gate until two periodic interactions were asked for
        wait_until(lambda: sum(i.trigger == "periodic" for i in run.interactions) >= 2, 60,
                   "two periodic interactions")
    finally:
        gate.open()
    run.wait(60)
    periodic = [i for i in run.interactions if i.trigger == "periodic"]
    assert len(periodic) >= 2
    assert [i.index for i in run.interactions] == list(range(len(run.interactions)))
    from icedtea_jupyter.session import registry

    registry._RUNS.remove(run)
    reopened = registry.open_run(run.path)
    assert [i.counts for i in reopened.interactions] == [i.counts for i in run.interactions]
    k = periodic[0].index
    assert reopened.snapshot(k).state("slow", 0) == run.snapshot(k).state("slow", 0)


def test_nondeterministic_operators_are_warned_about(record):
    code = "import random\nout = sc.parallelize(range(10)).map(lambda x: x + random.random())" \
           ".setName('noisy').collect()"
    run = record(code)
    assert any("noisy" in w and "unseeded randomness" in w for w in run.warnings)


def test_an_interesting_operator_that_is_not_there_is_refused_before_any_task(record):
    run = record("out = sc.parallelize(range(4), 2).map(str).setName('show').collect()",
                 interesting="shwo")
    assert run.status == "failed" and "out" not in run.namespace
    assert run.error["message"] == (
        "--interesting 'shwo' names no Python operator of this cell (its Python operators: "
        "show); nothing ran. Did you mean 'show'? Name one of them, or give yours that name "
        "with .setName('shwo')")
    assert run.manifest["jobs"] == [] and run.metrics().empty  # no job, no task
    assert not any("--interesting" in w for w in run.warnings)  # said once, as the error


@pytest.mark.parametrize("column", ["plus(df.id)", "scaled(df.id)"])
def test_a_dataframe_cell_naming_no_interesting_operator_is_refused_before_any_job(
        record, column):
    code = ("from pyspark.sql.functions import pandas_udf, udf\n"
            "plus = udf(lambda x: x + 1, 'long')\n"
            "scaled = pandas_udf(lambda s: s * 2, 'long')\n"
            "df = spark.range(20)\n"
            f"out = df.select({column}.alias('y')).collect()")
    run = record(code, interesting="nope")
    assert run.status == "failed" and "out" not in run.namespace
    assert run.error["message"].startswith("--interesting 'nope' names no Python operator")
    assert run.manifest["jobs"] == [] and run.warnings == []  # the error says it all


def test_an_interesting_operator_of_a_later_job_of_the_cell_is_waited_for(record):
    run = record("n = sc.parallelize(range(4)).map(str).count()\n"
                 "out = sc.parallelize(range(4)).map(abs).setName('later').collect()",
                 interesting="later")
    assert run.status == "finished" and run.dag.interesting.name == "later"


def test_log_result_values_are_kept_in_the_replay_log(record):
    import glob
    import os
    import random

    from icedtea_jupyter import log_result

    code = ("out = sc.parallelize(range(20), 2).map(lambda x: x + log_result(random.random))"
            ".setName('jitter').collect()")
    run = record(code, {"log_result": log_result, "random": random})
    assert not any("jitter" in w for w in run.warnings)  # wrapped: nothing to warn about
    logged = []
    for path in glob.glob(os.path.join(run.path, "logs", "op1-*.arrow")):
        logged += read_replay_log(path).results
    assert sorted(round(x, 9) for x in logged) == sorted(
        round(o - i, 9) for i, o in zip(range(20), run.namespace["out"]))


def test_the_panels_interact_button_takes_a_manual_interaction(spark, tmp_path, gate):
    from icedtea_jupyter.ui.panel import RunPanel

    code = "out = sc.parallelize(range(800), 2).map(Slow(gate, 400, 300)).setName('slow').count()"
    run = start_run(code, {"sc": spark.sparkContext, "Slow": Slow, "gate": gate},
                    RunOptions(store=str(tmp_path / "runs")))
    panel = RunPanel(run)
    try:  # the workers wait at the gate until the button was clicked
        wait_until(lambda: slow_running(run), 60, "the slow operator's workers to run")
        panel.refresh()
        assert not panel.interact_button.disabled
        panel.interact_button.click()
        wait_until(lambda: len(run.interactions) >= 2, 10, "the button's interaction")
        live_marks = run.interaction_marks()  # the panel's timeline, from the coordinator
        assert [(m.index, m.trigger) for m in live_marks][:2] == [(0, "initial"), (1, "manual")]
    finally:
        gate.open()
    run.wait(60)
    panel.refresh()
    assert [i.trigger for i in run.interactions][:2] == ["initial", "manual"]
    assert "I1<sub>m</sub>" in panel.timeline.value and panel.interact_button.disabled
    # the marks the panel draws are the interactions without their counts, live and kept
    full = [(i.index, i.time, i.trigger, i.complete) for i in run.interactions]
    assert [(m.index, m.time, m.trigger, m.complete) for m in run.interaction_marks()] == full
    assert [(m.index, m.time, m.trigger) for m in live_marks] == [f[:3] for f in full[:2]]
    store = RunStore.open(run.path)  # the store as a later kernel reads it
    manifest = store.read_manifest()
    reopened = Run(store, manifest, Dag.from_json(manifest["dag"]))
    assert [(m.index, m.time, m.trigger, m.complete)
            for m in reopened.interaction_marks()] == full


class Tally(Operator):
    def open(self):
        self.seen = []

    def process(self, x):
        self.seen.append(x)
        yield x


def test_a_union_before_a_stateful_operator_logs_its_input_order(record):
    code = """
left = sc.parallelize(range(10), 2).map(lambda x: x).setName('left')
right = sc.parallelize(range(100, 106), 3).map(lambda x: x).setName('right')
out = left.union(right).mapPartitions(Tally()).setName('tally').collect()
"""
    run = record(code, {"Tally": Tally}, interesting="tally", interact_when="row % 4 == 0")
    assert run.status == "finished", run.error
    assert {(up, down) for up, down in run.dag.edges if down == "union"} == {
        ("left", "union"), ("right", "union")}
    assert [run.input_order("tally", p) for p in range(5)] == [
        [("left", 5)], [("left", 5)], [("right", 2)], [("right", 2)], [("right", 2)]]
    partitions = [list(range(0, 5)), list(range(5, 10)), [100, 101], [102, 103], [104, 105]]
    assert len(run.interactions) == 1 + sum(1 for part in partitions for x in part if x % 4 == 0)
    for interaction in run.interactions[1:]:
        snapshot = run.snapshot(interaction.index)
        for p, records in enumerate(partitions):
            if snapshot.status("tally", p) in ("running", "finished"):
                count = interaction.counts[("tally", p)]
                assert snapshot.state("tally", p)["seen"] == records[:count]


def test_two_paths_from_theta_to_a_downstream_operator(record):
    # Figure 13: θ feeds two paths that meet again. In Spark the union's partitions come
    # from one path each, so each path is its own chain θ → path, snapshotted
    # consistently; the operator after the union runs in another Python process of the
    # same task and reports only how far it got.
    code = """
theta = sc.parallelize(range(40), 2).mapPartitions(Tally()).setName('theta')
up = theta.map(lambda x: x * 10).setName('up')
down = theta.map(lambda x: -x).setName('down')
out = up.union(down).mapPartitions(Tally()).setName('meet').collect()
"""
    run = record(code, {"Tally": Tally}, interesting="theta", interact_when="row % 7 == 3")
    assert run.status == "finished", run.error
    assert sorted(n.name for n in run.dag.g_theta if n.kind == "python") == [
        "down", "meet", "theta", "up"]
    assert [run.input_order("meet", q)[0][0] for q in range(4)] == ["up", "up", "down", "down"]
    chains_seen = 0
    for interaction in run.interactions[1:]:
        for chain in run.snapshot(interaction.index).task_chains().values():
            names = sorted(w["operator"] for w in chain)
            assert names in (["theta", "up"], ["down", "theta"]), chain
            assert len({w["count"] for w in chain}) == 1, chain  # one record in, one out
            chains_seen += 1
        statuses = {run.snapshot(interaction.index).status("meet", q) for q in range(4)}
        assert statuses <= {"outside θ's chain", "not started", "finished"}
    assert chains_seen >= 2
    up_fed, down_fed = run.final_state("meet", 0)["seen"], run.final_state("meet", 2)["seen"]
    assert up_fed and all(x >= 0 for x in up_fed)  # fed by `up` only
    assert down_fed and all(x <= 0 for x in down_fed)  # fed by `down` only
