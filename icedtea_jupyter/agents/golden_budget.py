"""Golden logic within a budget: ``--golden`` without ``--golden-sample`` (the default).

Each worker tests every record while golden's measured cost stays within ``budget``
(20 % by default) of the operator's own time, and lowers its rate to stay within it
otherwise. Both are measured on the worker: the operator's time per record as the
wrapper times it (``seconds`` of ``observe_outputs``), golden's time per tested record
(the reference's call, the comparison, any alert and its own bookkeeping, less the
time the worker's thread was not running during the block of tests: a test the
machine's scheduler interrupted is not golden's cost), plus, when
the host shows golden a sample of a map, filter, flatMap or ``Operator`` running in
blocks, the cost of showing a record (``SHOW_OVER_TIMING`` × ``latency.timing_cost``,
measured when the worker starts). The first ``WARMUP`` records are all tested; after
that the rate is

    min(1, budget × operator's time a record / golden's cost a tested record)

updated every ``ADAPT_EVERY`` tests, so that it follows the operator's speed; a
host that shows a sample shows one record in ``1/rate`` (at most 64). A difference found is an alert as with a fixed
rate (check ``parse: golden``). When the partition ends the rate reached is stated:
an ``info`` alert with no count (``parse: golden, 14% of records tested (budget 20%)``
or ``parse: golden, 100% of records tested``) and a row of
``run.agent_table("golden")`` (operator, partition, attempt, records, tested, rate,
budget).

What a lowered rate misses: each record is tested with the rate's chance, so a defect
in one record in a million is found with about that chance; ``--golden-sample 1``
tests every record whatever it costs (up to about twice the operator's time when the
reference is as slow as the operator).
"""
from __future__ import annotations

from statistics import median
from time import perf_counter, thread_time
from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.observed import SAMPLE
from .alert_sampler import AlertSampler
from .golden import Golden
from .latency import timing_cost

BUDGET = 0.2  # golden's cost at most this share of the operator's own time
WARMUP = 20  # records tested before the rate may drop
LEAST_RATE = 1e-4  # the rate never drops below one record in 10,000
ADAPT_EVERY = 16  # tests between two updates of the rate
# showing a record (the host's wrapper, the agents' dispatch, the hook's frame) costs
# about this many ``timing_cost()``s: 0.63 µs against 0.14 µs here (bench/REPORT.md)
SHOW_OVER_TIMING = 4.5


def budget_rate(budget: float, operator_seconds: float, shown: int,
                test_seconds: float, tests: int, show_cost: float) -> float:
    """The share of records to test so that testing costs ``budget`` of the operator's
    time: 1 until ``WARMUP`` tests, then budget × the operator's mean time over golden's
    mean cost a test (its own time plus ``show_cost``), between ``LEAST_RATE`` and 1."""
    if tests < WARMUP or shown == 0:
        return 1.0
    per_test = test_seconds / tests + show_cost
    if per_test <= 0:
        return 1.0
    return max(LEAST_RATE, min(1.0, budget * (operator_seconds / shown) / per_test))


def block_seconds(times: list[float], not_running: float) -> float:
    """Golden's time on a block of tests: their sum less ``not_running``, the time
    the worker's thread was off the CPU while the block lasted (the scheduler gave it
    to another process, or the thread waited); at least the block's median a test, as
    the thread may have been off the CPU during the operator's time, not golden's."""
    if not times:
        return 0.0
    return max(sum(times) - not_running, median(times) * len(times))


def stated_rate(tested: int, records: int, budget: float) -> str:
    """``", 100% of records tested"`` or ``", 14% of records tested (budget 20%)"``."""
    share = tested / records if records else 1.0
    text = f", {share * 100:.3g}% of records tested"
    return text if tested >= records else f"{text} (budget {budget * 100:.3g}%)"


class GoldenRates(CoordinatorAgent):
    """Keeps each worker's rate reached in the run store (``agent_table("golden")``)."""

    def receive_message(self, worker: dict, payload: Any) -> None:
        self.keep("golden", [{"operator": worker["operator_name"],
                              "partition": worker["partition"],
                              "attempt": worker["attempt"], **payload}])


class BudgetGolden(Golden):
    """``Golden`` testing as many records as ``budget`` of the operator's time allows."""

    coordinator = GoldenRates
    options: dict = {"references": (), "budget": BUDGET}

    def init(self, context: Any) -> None:
        super().init(context)
        self.budget = float(self.options.get("budget", BUDGET))
        self.rate = self.shown_rate = 1.0
        self.sampler = AlertSampler(self, f"{context.operator}: golden")
        self.shown, self.operator_seconds = 0, 0.0  # records shown, the operator's time
        self.tests, self.test_seconds = 0, 0.0  # records tested, golden's time on them
        self.block: list[float] = []  # the times of the tests since the last update
        self.block_started = (perf_counter(), thread_time())  # wall, thread's CPU
        self.show_cost = 0.0  # showing a record, once the host shows a sample
        self.host_samples = False
        self.group, self.next_adapt = 1, WARMUP

    def outputs_sample(self) -> int:
        """Asked by a host that can show a sample: one record in ``1/rate`` (at most
        ``SAMPLE``), each shown one tested with probability rate × group."""
        if not self.host_samples:
            self.host_samples = True
            self.show_cost = SHOW_OVER_TIMING * timing_cost()
            self._adapt()
        return self.group

    def observe_outputs(self, record: Any, outputs: list, seconds: float) -> None:
        if record is None:
            return
        self.shown += 1
        self.operator_seconds += seconds
        self.skip -= 1
        if self.skip > 0:
            return
        started = perf_counter()
        expected = self._expected(record)
        if expected != outputs:
            self._differs(record, expected, outputs)
        self.tests += 1
        self.skip = self._gap()
        self.block.append(perf_counter() - started)
        if self.tests >= self.next_adapt:
            self._adapt()

    def _adapt(self) -> None:
        """The rate and the host's group for the costs measured so far (every
        ``ADAPT_EVERY`` tests after the warm-up)."""
        wall, cpu = perf_counter(), thread_time()
        not_running = max(0.0, (wall - self.block_started[0]) - (cpu - self.block_started[1]))
        self.test_seconds += block_seconds(self.block, not_running)
        self.block.clear()
        self.block_started = (wall, cpu)
        self.next_adapt = max(WARMUP, self.tests + ADAPT_EVERY)
        self.rate = budget_rate(self.budget, self.operator_seconds, self.shown,
                                self.test_seconds, self.tests, self.show_cost)
        self.group = min(SAMPLE, max(1, int(1.0 / self.rate))) if self.host_samples else 1
        self.shown_rate = min(1.0, self.rate * self.group)

    def finish(self) -> None:
        super().finish()
        if self.context is None or self.reference is None:
            return
        records = max(self.context.counts().get("records_in", 0), self.shown)
        self.alert(f"golden tested {self.tests:,} of this partition's {records:,} records "
                   f"(budget: {self.budget * 100:.3g}% of the operator's time)",
                   check=f"{self.context.operator}: golden"
                         f"{stated_rate(self.tests, records, self.budget)}",
                   level="info", count=0, tested=self.tests, records=records)
        self.send_to_coordinator({"records": records, "tested": self.tests,
                                  "rate": self.tests / records if records else 1.0,
                                  "budget": self.budget})
