"""Live control of a running Spark job (Amber): pause and resume, conditional and exception
breakpoints with skip/replace/resume/stop, global COUNT breakpoints, stopping."""
import time

import pytest

from icedtea_jupyter.session import registry
from icedtea_jupyter.session.execution import RunOptions, start_run
from tests.moments import distinct_moments
from tests.waiting import wait_until

pytestmark = pytest.mark.spark


def slow_totals(rows):
    """A running total per partition: its locals are the worker's state."""
    total, seen = 0, 0
    for row in rows:
        time.sleep(0.004)
        total += row
        seen += 1
        yield total


def plain_totals(rows):
    total = 0
    for row in rows:
        total += row
        yield total


def slow_square(x):
    time.sleep(0.001)
    return x * x


def gated_identity(gate, size):
    """x -> x (a Python function: its host runs in blocks); the first record of each
    partition of ``size`` waits at ``gate``."""
    def ident(x):
        if x % size == 0:
            gate.wait(f"p{x // size}")
        time.sleep(0.0005)
        return x
    return ident


def inverse(x):
    return 100 // (x - 13)


@pytest.fixture
def live(spark, tmp_path):
    """Start a cell as %%icedtea does without --wait; a run left running is stopped."""
    started = []

    def start(code, namespace=None, **options):
        ns = {"spark": spark, "sc": spark.sparkContext, "slow_totals": slow_totals,
              "slow_square": slow_square, "inverse": inverse, **(namespace or {})}
        options.setdefault("store", str(tmp_path / "runs"))
        run = start_run(code, ns, RunOptions(**options))
        run.namespace = ns
        started.append(run)
        return run

    yield start
    for run in started:
        if run.status == "running":
            run.stop()
            run.wait(60)


def both_started(run, operator, at_least=20):
    def check():
        if operator not in run.dag.names().values():
            return False  # the cell has not built it yet
        running = [w for w in run.partitions(operator) if w["status"] == "running"]
        return len(running) == 2 and all(w["records_in"] >= at_least for w in running)
    wait_until(check, 120, f"both partitions of {operator} past {at_least} records")


def test_pause_freezes_the_job_states_match_time_travel_and_resume_ends_as_plain(live):
    code = ("out = sc.parallelize(range(1600), 2).mapPartitions(slow_totals)"
            ".setName('totals').collect()")
    run = live(code, interesting="totals")
    both_started(run, "totals")
    report = run.pause()
    assert report.complete and report.acknowledged == 2 and run.paused
    states = {p: run.live_state("totals", p) for p in (0, 1)}
    time.sleep(1.0)
    assert {p: run.live_state("totals", p) for p in (0, 1)} == states  # nothing moved
    for p in (0, 1):
        assert states[p]["total"] == sum(range(800 * p, 800 * p + states[p]["seen"]))
    interaction = run.interact()  # taken while paused: the same states
    for p in (0, 1):
        assert run.snapshot(interaction.index).state("totals", p) == states[p]
    assert run.resume() >= 0 and not run.paused
    run.wait(120)
    assert run.status == "finished", run.error
    plain = list(plain_totals(range(800))) + list(plain_totals(range(800, 1600)))
    assert run.namespace["out"] == plain
    jumped = run.debugger().jump(interaction.index)  # time travel agrees with the pause
    for p in (0, 1):
        assert jumped.state("totals", p) == states[p]
    assert "run.pause()" in [a["call"] for a in run.actions]


def test_a_paused_job_survives_60_seconds_and_finishes_after_resume(live):
    code = "out = sc.parallelize(range(4000), 2).map(slow_square).setName('square').collect()"
    run = live(code)
    both_started(run, "square")
    assert run.pause().complete
    time.sleep(60)
    assert run.status == "running" and run.paused
    run.resume()
    run.wait(180)
    assert run.status == "finished", run.error
    assert run.namespace["out"] == [x * x for x in range(4000)]


def test_conditional_breakpoints_hit_exactly_the_matching_records_skip_and_replace(live):
    code = ("out = sc.parallelize(range(1000), 2).mapPartitions(slow_totals)"
            ".setName('totals').collect()")
    run = live(code, interesting="totals", interact_every=0.3,
               break_when=["totals: row % 250 == 7"])
    decisions = {7: ("skip",), 257: ("replace", 1000), 507: ("resume",), 757: ("skip",)}
    seen = []
    for _ in decisions:
        hit = run.wait_for_hit(120)
        assert run.paused and hit.operator == "totals" and hit.kind == "condition"
        assert hit.partition == hit.record // 500
        seen.append(hit.record)
        action, *argument = decisions[hit.record]
        getattr(hit, action)(*argument)
    run.wait(120)
    assert run.status == "finished", run.error
    assert sorted(seen) == [7, 257, 507, 757]  # exactly the records matching, once each
    taken = [[1000 if x == 257 else x for x in range(500) if x != 7],
             [x for x in range(500, 1000) if x != 757]]
    assert run.namespace["out"] == list(plain_totals(taken[0])) + list(plain_totals(taken[1]))
    quarantine = run.quarantine()
    assert sorted(quarantine["value"]) == [7, 757]
    assert set(quarantine["reason"]) == {"skipped"}
    assert [h.decision for h in sorted(run.breakpoints, key=lambda h: h.record)] == \
        ["skip", "replace", "resume", "skip"]
    dbg = run.debugger()  # time travel replays the edited inputs: every jump agrees
    for k in distinct_moments(run, 1):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for p in (0, 1):
            if recorded.status("totals", p) == "running":
                assert jumped.state("totals", p) == recorded.state("totals", p), (k, p)
    reopened = registry.open_run(run.path)
    assert len(reopened.breakpoints) == 4 and len(reopened.quarantine()) == 2


def test_a_breakpoint_added_while_the_job_runs_takes_effect(live, gate):
    code = ("out = sc.parallelize(range(1000), 2).map(gated_identity(gate, 500))"
            ".setName('ident').collect()")
    run = live(code, {"gated_identity": gated_identity, "gate": gate})
    wait_until(lambda: len(gate.held()) == 2, 120, "both tasks at the gate")
    bp = run.add_breakpoint("ident", when="row in (300, 900)")
    gate.open()
    for _ in range(2):
        hit = run.wait_for_hit(120)
        assert hit.record in (300, 900) and hit.breakpoint == bp.id
        hit.skip()
    run.wait(120)
    assert run.namespace["out"] == [x for x in range(1000) if x not in (300, 900)]


def test_on_error_pause_lets_the_user_replace_the_culprit(live):
    code = "out = sc.parallelize(range(40), 2).map(inverse).setName('inverse').collect()"
    run = live(code, on_error="pause")
    hit = run.wait_for_hit(120)
    assert (hit.kind, hit.record, hit.partition) == ("error", 13, 0)
    assert hit.error["exception"] == "ZeroDivisionError"
    hit.replace(113)
    run.wait(120)
    assert run.status == "finished" and run.error is None
    assert run.namespace["out"] == [1 if x == 13 else 100 // (x - 13) for x in range(40)]


def test_stop_at_a_hit_ends_the_job_cleanly(live):
    code = "out = sc.parallelize(range(2000), 2).map(slow_square).setName('square').collect()"
    run = live(code, break_when=["square: row == 100"])
    run.wait_for_hit(120).stop()
    run.wait(120)
    assert run.status == "stopped" and run.error is None
    reopened = registry.open_run(run.path)  # the store says so, and reads whole
    assert reopened.status == "stopped" and reopened.breakpoints[0].decision == "stop"
    assert set(reopened.metrics()["operator"]) <= {"square"}


def test_stopping_a_paused_run_ends_its_job_and_leaves_the_store_consistent(live):
    code = "out = sc.parallelize(range(4000), 2).map(slow_square).setName('square').collect()"
    run = live(code)
    both_started(run, "square")
    assert run.pause().complete
    run.stop()  # what the kernel's interrupt does under %%icedtea --wait
    run.wait(120)
    assert run.status == "stopped" and run.error is None
    reopened = registry.open_run(run.path)
    assert reopened.status == "stopped"
    metrics = reopened.metrics()  # the workers' files read whole: each ended once
    assert set(metrics["partition"]) <= {0, 1} and (metrics["records_in"] < 2000).all()
    assert [a["call"] for a in reopened.actions] == ["run.pause()", "run.stop()"]


def test_a_global_count_breakpoint_stops_at_its_target(live, gate):
    code = ("out = sc.parallelize(range(4000), 4).map(gated_identity(gate, 1000))"
            ".setName('ident').count()")
    run = live(code, {"gated_identity": gated_identity, "gate": gate})
    wait_until(lambda: len(gate.held()) == 2, 120, "two tasks at the gate")
    run.add_global_breakpoint("ident", count_at_least=1500)
    gate.open()
    hit = run.wait_for_hit(120)
    assert hit.kind == "count" and hit.total == 1500
    run.resume()
    run.wait(120)
    assert run.status == "finished" and run.namespace["out"] == 4000


def test_bad_breakpoints_are_refused_and_lose_nothing(live):
    with pytest.raises(ValueError, match="operator: expression"):
        live("sc.parallelize([1]).count()", break_when=["no colon here"])
    code = "out = sc.parallelize(range(600), 2).map(slow_square).setName('square').collect()"
    run = live(code)
    wait_until(lambda: "square" in run.dag.names().values(), 60, "the operator built")
    with pytest.raises(ValueError, match="no operator 'nope'"):
        run.add_breakpoint("nope", when="row > 1")
    with pytest.raises(ValueError, match="not a Python expression"):
        run.add_breakpoint("square", when="row >")
    run.wait(120)
    assert run.status == "finished" and run.namespace["out"] == [x * x for x in range(600)]
    assert run.armed_breakpoints == []
