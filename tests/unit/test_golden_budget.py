"""``--golden`` at its default: every record tested while golden costs at most its
budget (20 %) of the operator's time, fewer when the reference is slow; the rate reached
is stated per partition, and a planted difference is still found."""
import time

import pytest

from icedtea_jupyter.agents.flags import golden_agents
from icedtea_jupyter.agents.golden import Golden, SampledGolden
from icedtea_jupyter.agents.golden_budget import BudgetGolden, block_seconds, budget_rate
from icedtea_jupyter.agents.latency import LatencyAgent

from .chains import hosted_chain

N = 5_000


def wait(seconds):
    """Busy for ``seconds`` (sleep would give the CPU away and time the scheduler)."""
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def buggy(x):
    """The planted defect: every tenth record is off by one."""
    return x + 1 if x % 10 == 0 else x


def slow_buggy(x):
    """An operator of 100 µs a record: golden's budget is 20 µs a test, and the
    first alerts (the one in ten records that differ) cost 50–100 µs each."""
    wait(100e-6)
    return buggy(x)


def reference(x):
    return x


def slow_reference(x):
    wait(50e-6)
    return x


def run_golden(monkeypatch, operator, ref, others=()):
    golden = BudgetGolden.with_options(references=(("op0", ref),))
    outputs, channel = hosted_chain(monkeypatch, [("map", operator)],
                                    agents=(golden, *others), n=N)
    assert list(outputs) == [buggy(x) for x in range(N)]
    alerts = [m for m in channel.sent if m.get("type") == "alert" and m["source"] == "golden"]
    found = [a for a in alerts if a["level"] != "info"]
    stated = [a for a in alerts if a["level"] == "info"]
    assert len(stated) == 1 and stated[0]["count"] == 0
    return found, stated[0]


@pytest.mark.parametrize("others", [(), (LatencyAgent,)], ids=["in blocks", "per record"])
def test_a_cheap_reference_tests_every_record(monkeypatch, others):
    found, stated = run_golden(monkeypatch, slow_buggy, reference, others)
    assert stated["check"] == "op0: golden, 100% of records tested"
    assert stated["tested"] == stated["records"] == N
    assert {a["check"] for a in found} == {"op0: golden"}
    assert sum(a["count"] for a in found) == N // 10


def interrupted_reference(x):
    """A cheap reference, but three of its calls are off the CPU for 5 ms, as when
    the machine's scheduler gives the CPU to another process in the middle of a test
    (two of them in one block of tests)."""
    if x in (5, 300, 301):
        time.sleep(5e-3)
    return x


def test_tests_the_scheduler_interrupted_do_not_lower_the_rate(monkeypatch):
    found, stated = run_golden(monkeypatch, slow_buggy, interrupted_reference)
    assert stated["check"] == "op0: golden, 100% of records tested"
    assert sum(a["count"] for a in found) == N // 10


def test_a_block_forgives_the_time_off_the_cpu_down_to_its_median():
    assert block_seconds([1.0, 2.0, 3.0, 100.0], 0.0) == 106.0  # a slow test counts
    assert block_seconds([2.0, 2.0, 3.0, 100.0], 95.0) == 12.0
    assert block_seconds([2.0, 2.0, 3.0, 100.0], 500.0) == 4 * 2.5  # off in the operator
    assert block_seconds([], 1.0) == 0.0


@pytest.mark.parametrize("others", [(), (LatencyAgent,)], ids=["in blocks", "per record"])
def test_a_slow_reference_lowers_the_rate_and_still_finds_the_planted_records(
        monkeypatch, others):
    found, stated = run_golden(monkeypatch, buggy, slow_reference, others)
    share = stated["tested"] / stated["records"]
    assert stated["records"] == N and share < 0.2
    assert stated["check"] == (f"op0: golden, {share * 100:.3g}% of records tested "
                               "(budget 20%)")
    assert "budget: 20% of the operator's time" in stated["message"]
    assert 0 < sum(a["count"] for a in found) < N // 50
    sampled = [a["record"]["value"] for a in found if "record" in a]
    assert sampled and all(x % 10 == 0 for x in sampled)


def test_the_rate_follows_the_measured_costs():
    assert budget_rate(0.2, 1.0, 100, 0.1, 100, 0.0) == 1.0  # golden 10% of the operator
    assert budget_rate(0.2, 1.0, 100, 1.0, 100, 0.0) == pytest.approx(0.2)
    assert budget_rate(0.2, 1.0, 100, 10.0, 100, 0.0) == pytest.approx(0.02)
    assert budget_rate(0.2, 1.0, 100, 10.0, 10, 0.0) == 1.0  # still warming up


def test_golden_sample_chooses_every_record_a_fixed_share_or_the_budget():
    def chosen(sample):
        return golden_agents(["op0: reference"], sample, {"reference": reference})[0]
    assert issubclass(chosen(None), BudgetGolden)
    assert issubclass(chosen(1.0), Golden) and not issubclass(chosen(1.0), BudgetGolden)
    assert issubclass(chosen(0.01), SampledGolden)
    with pytest.raises(ValueError, match="1 tests every record"):
        chosen(0.0)
