"""``--agent latency`` on fast operators in blocks: one record in 64 timed, the outputs
unchanged, the histogram still counting every record, a slow stretch still alerted."""
import time

import pytest

from icedtea_jupyter import Operator
from icedtea_jupyter.agents import latency
from icedtea_jupyter.agents.latency import LatencyAgent
from icedtea_jupyter.executor import observed

from .chains import hosted_chain, plain_chain
from .test_blocks import ended_by_operator

N = 20_000


class CountingLatency(LatencyAgent):
    """The latency agent, counting the records it was shown."""

    shown = 0
    records: list = []

    def observe_outputs(self, record, outputs, seconds):
        type(self).shown += 1
        type(self).records.append(record)
        super().observe_outputs(record, outputs, seconds)


def double(x):
    return 2 * x


def keep_odd(x):
    return x % 3 != 0


def twice(x):
    return (x, x)


def slow_from_12000(x):
    """Fast, but 1 ms a record for records 12,000 to 12,199."""
    if 12_000 <= x < 12_200:
        time.sleep(0.001)
    return x


class RunningTotal(Operator):
    """Stateful: each record with the total so far, and the total at the end."""

    def open(self):
        self.total = 0

    def process(self, x):
        self.total += x
        return [(x, self.total)]

    def close(self):
        return [("end", self.total)]


class FailsAt(Operator):
    def process(self, x):
        if x == 5001:  # not a timed record: the first of each 64 is here (5001 = 78 × 64 + 9)
            raise RuntimeError("at 5001")
        return [x]


def same(x):
    return x + 0


def fails_at_5001(x):
    if x == 5001:
        raise RuntimeError("at 5001")
    return x


def latency_payloads(channel):
    return [m for m in channel.sent if m.get("type") == "agent" and m["agent"] == "latency"]


def test_fast_operators_are_timed_on_a_sample_and_give_the_same_outputs(monkeypatch):
    functions = [("map", double), ("filter", keep_odd), ("flatMap", twice),
                 ("mapPartitions", RunningTotal())]
    CountingLatency.shown = 0
    outputs, channel = hosted_chain(monkeypatch, functions, agents=(CountingLatency,), n=N)
    plain = [("map", double), ("filter", keep_odd), ("flatMap", twice),
             ("mapPartitions", RunningTotal())]
    assert list(outputs) == list(plain_chain(plain, n=N))
    kept = len([x for x in range(N) if keep_odd(2 * x)])
    inputs = [N, N, kept, 2 * kept]  # each operator's
    assert CountingLatency.shown < sum(inputs) / 16  # a sample, not every record
    payloads = latency_payloads(channel)
    assert len(payloads) == 4
    for payload, records in zip(payloads, inputs):
        counted = sum(payload["payload"]["histogram"].values())
        assert records - 64 <= counted <= records + 64  # each timed record counts for 64


def test_a_slow_stretch_in_a_fast_operator_is_alerted_and_listed_slowest(monkeypatch):
    outputs, channel = hosted_chain(monkeypatch, [("map", slow_from_12000)],
                                    agents=(LatencyAgent,), n=N)
    assert list(outputs) == list(range(N))
    alerts = [m for m in channel.sent if m.get("type") == "alert" and m["source"] == "latency"]
    assert any(12_000 <= a["record"]["value"] < 12_200 for a in alerts if "record" in a)
    slowest = latency_payloads(channel)[0]["payload"]["slowest"]
    slow = [int(r) for s, r in slowest if s >= 0.001]
    stretch = [r for r in slow if 12_000 <= r < 12_200]
    # One record of each group of 64 is timed, drawn at random: any 200 records in a row
    # hold at least two whole groups, so at least two slow ones are timed (3.1 on average).
    # A fast record timed while the machine preempted the test can pass 1 ms too (CI
    # listed record 17,099 once): such records stay fewer than the stretch's.
    assert len(stretch) >= 2 and len(slow) - len(stretch) < len(stretch), slow
    assert slowest[0][0] >= 0.001  # listed first


@pytest.mark.parametrize("api,f", [("map", fails_at_5001), ("mapPartitions", FailsAt())])
def test_an_untimed_record_that_raises_is_named(monkeypatch, api, f):
    monkeypatch.setattr(observed, "random", lambda: 0.0)  # the first of each 64 timed
    stream, channel = hosted_chain(monkeypatch, [("map", same), (api, f)],
                                   agents=(LatencyAgent,), n=6000)
    with pytest.raises(RuntimeError, match="at 5001"):
        list(stream)
    assert ended_by_operator(channel)[1]["error"]["record"]["value"] == 5001


def test_the_timed_record_of_each_64_is_drawn_at_random(monkeypatch):
    CountingLatency.records = []
    outputs, _ = hosted_chain(monkeypatch, [("map", double)], agents=(CountingLatency,), n=N)
    assert list(outputs) == [2 * x for x in range(N)]
    sampled = CountingLatency.records[latency.WARMUP:]
    assert len(sampled) < N / 16
    assert len({x % 64 for x in sampled}) > 32  # not always the first of its 64


def wait_30us(x):
    """About 30 µs a record: over the 20 µs at which this machine times every record."""
    end = time.perf_counter() + 30e-6
    while time.perf_counter() < end:
        pass
    return x


def test_the_choice_to_time_every_record_follows_the_machines_speed(monkeypatch):
    # the machine's timing cost is measured at the worker's start: pinned here, as a
    # preempted measurement on a loaded machine would move the 20 µs line past 30 µs
    monkeypatch.setattr(latency, "timing_cost", lambda: 0.1e-6)  # this machine, unloaded
    CountingLatency.shown = 0
    outputs, _ = hosted_chain(monkeypatch, [("map", wait_30us)], agents=(CountingLatency,),
                              n=3000)
    assert list(outputs) == list(range(3000))
    assert CountingLatency.shown == 3000  # slow here: every record timed
    monkeypatch.setattr(latency, "timing_cost", lambda: 1e-4)  # a machine 700× slower
    CountingLatency.shown = 0
    outputs, _ = hosted_chain(monkeypatch, [("map", wait_30us)], agents=(CountingLatency,),
                              n=3000)
    assert list(outputs) == list(range(3000))
    assert CountingLatency.shown < 3000 / 8  # there, as fast as a 0.04 µs operator here


def test_overhead_times_the_sampled_path_the_run_takes_without_it(monkeypatch):
    from icedtea_jupyter.agents.overhead import OverheadAgent

    CountingLatency.shown = 0
    outputs, channel = hosted_chain(monkeypatch, [("map", double)],
                                    agents=(CountingLatency, OverheadAgent), n=N)
    assert list(outputs) == [2 * x for x in range(N)]
    assert CountingLatency.shown < N / 16  # still a sample with --agent overhead
    spent = [m["payload"] for m in channel.sent
             if m.get("type") == "agent" and m["agent"] == "overhead"][0]
    assert spent["records"] == N
    timed = spent["agents"]["latency"]  # its hooks, outputs_sample's asks included
    assert CountingLatency.shown + N / 64 <= timed["calls"] < N / 16
    assert timed["seconds"] > 0
