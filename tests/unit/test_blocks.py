"""Hosts in blocks (executor/blocks.py): same outputs and counts as PySpark's own chain,
failures named by the function that raised, checks between blocks, compact logs."""
import gc

import numpy as np
import pytest

from icedtea_jupyter import Agent, Operator
from icedtea_jupyter.executor import host as host_module
from icedtea_jupyter.executor.attributes import instance_attributes
from icedtea_jupyter.executor.state import capture
from icedtea_jupyter.replay.order import OutputCheck

from .chains import ended_by_operator, hosted_chain, plain_chain

pytestmark = pytest.mark.usefixtures("task_modes")  # each test guarded and in a worker


class Pairs(Operator):
    def open(self):
        self.seen = 0

    def process(self, x):
        self.seen += 1
        if x % 4:
            yield x, self.seen

    def close(self):
        yield "end", self.seen


CHAIN = [("map", lambda x: x * 3), ("filter", lambda x: x % 5 != 0),
         ("flatMap", lambda x: [x] * (x % 4)), ("mapPartitions", Pairs())]


@pytest.mark.parametrize("theta", [None, 0, 2])
def test_a_chain_in_blocks_gives_pysparks_outputs_and_exact_counts(monkeypatch, theta):
    stream, channel = hosted_chain(monkeypatch, CHAIN, theta=theta)
    expected = plain_chain([(api, f if api != "mapPartitions" else Pairs())
                            for api, f in CHAIN])
    assert list(stream) == expected
    ends = ended_by_operator(channel)
    mapped = [x * 3 for x in range(10_000)]
    kept = [x for x in mapped if x % 5 != 0]
    flat = [x for x in kept for _ in range(x % 4)]
    assert [(ends[i]["records_in"], ends[i]["records_out"]) for i in range(4)] == [
        (10_000, 10_000), (10_000, len(kept)), (len(kept), len(flat)),
        (len(flat), len(expected))]
    assert all(e["status"] == "ok" and e["exhausted"] for e in ends.values())


def test_a_failure_names_the_host_whose_function_raised_and_its_record(monkeypatch):
    def picky(x):
        if x == 3_000:
            raise ValueError("no 3000")
        return True

    stream, channel = hosted_chain(monkeypatch, [("map", lambda x: x * 2), ("filter", picky),
                                                 ("map", lambda x: x + 1)])
    with pytest.raises(ValueError):
        list(stream)
    ends = ended_by_operator(channel)
    assert ends[1]["status"] == "failed" and ends[1]["error"]["record"]["value"] == 3_000
    assert ends[1]["error"]["records_before"] == 1_500 and ends[1]["records_in"] == 1_501
    assert ends[2]["status"] == "failed" and ends[2]["error"] is None
    assert ends[2]["records_in"] == 1_500
    assert ends[0]["status"] == "ok" and not ends[0]["exhausted"]


def test_a_failing_map_counts_no_output_for_its_record(monkeypatch):
    def parse(x):
        if x == 7:
            raise KeyError(x)
        return x

    stream, channel = hosted_chain(monkeypatch, [("map", parse), ("map", str)])
    with pytest.raises(KeyError):
        list(stream)
    ends = ended_by_operator(channel)
    assert (ends[0]["records_in"], ends[0]["records_out"]) == (8, 7)
    assert ends[0]["error"]["record"]["value"] == 7
    assert ends[1]["error"] is None and ends[1]["records_in"] == 7


class Fails(Operator):
    def __init__(self, where):
        self.where = where

    def open(self):
        if self.where == "open":
            raise RuntimeError("in open")

    def process(self, x):
        if self.where == "process" and x == 5:
            raise RuntimeError("in process")
        yield x

    def close(self):
        if self.where == "close":
            raise RuntimeError("in close")


@pytest.mark.parametrize("where,record", [("open", None), ("process", 5), ("close", None)])
def test_an_operator_failure_has_a_record_only_when_process_raised(monkeypatch, where, record):
    stream, channel = hosted_chain(monkeypatch, [("map", lambda x: x), ("mapPartitions",
                                                                         Fails(where))], n=20)
    with pytest.raises(RuntimeError, match=f"in {where}"):
        list(stream)
    error = ended_by_operator(channel)[1]["error"]
    assert (error["record"] or {}).get("value") == record
    assert ended_by_operator(channel)[0]["error"] is None


def test_a_builtin_keeps_the_per_record_loop_and_names_its_record(monkeypatch):
    stream, channel = hosted_chain(monkeypatch, [("map", lambda x: str(x) if x != 9 else "x"),
                                                 ("map", int)], n=20)
    with pytest.raises(ValueError):
        list(stream)
    ends = ended_by_operator(channel)
    assert ends[1]["error"]["record"]["value"] == "x"
    assert ends[1]["records_in"] == 10


class Scaled:
    """A function object, as users parametrize a map: ``Scaled(k)(x)``."""

    def __init__(self, factor, fails_on=None):
        self.factor, self.fails_on, self.calls = factor, fails_on, 0

    def __call__(self, x):
        self.calls += 1
        if x == self.fails_on:
            raise ValueError(f"bad record {x}")
        return x * self.factor


def test_a_function_object_runs_in_blocks_with_pysparks_outputs_and_counts(monkeypatch):
    spy = []
    monkeypatch.setattr(host_module, "record_loop", lambda *a: spy.append(a) or iter(()))
    functions = [("map", Scaled(2)), ("filter", lambda x: x % 3), ("map", Scaled(5))]
    stream, channel = hosted_chain(monkeypatch, functions, n=1_000)
    assert list(stream) == plain_chain(functions, n=1_000) and spy == []  # no per-record loop
    ends = ended_by_operator(channel)
    assert [(ends[i]["records_in"], ends[i]["records_out"]) for i in range(3)] == [
        (1_000, 1_000), (1_000, 666), (666, 666)]


def test_a_function_object_that_raises_is_blamed_not_another_of_its_class(monkeypatch):
    functions = [("map", Scaled(2)), ("map", Scaled(3, fails_on=40)), ("map", Scaled(5))]
    stream, channel = hosted_chain(monkeypatch, functions, n=100)
    with pytest.raises(ValueError, match="bad record 40"):
        list(stream)
    ends = ended_by_operator(channel)
    assert ends[1]["error"]["record"]["value"] == 40
    assert ends[0]["error"] is None and ends[2]["error"] is None


def test_closing_early_ends_every_host_with_what_it_took(monkeypatch):
    stream, channel = hosted_chain(monkeypatch, [("map", lambda x: x), ("filter",
                                                                        lambda x: x % 2 == 0)])
    taken = [next(stream) for _ in range(50)]
    stream.close()
    ends = ended_by_operator(channel)
    assert taken[-1] == 98
    assert (ends[0]["records_in"], ends[1]["records_in"], ends[1]["records_out"]) == (99, 99, 50)
    assert not any(e["exhausted"] for e in ends.values())


def test_hosts_that_joined_a_feed_beat_between_blocks(monkeypatch):
    beats = []

    class Beat(Agent):
        def heartbeat(self):
            beats.append((self.context.operator_id, self.context.counts()["records_in"]))

    monkeypatch.setattr(host_module, "HEARTBEAT_PERIOD", 0.0)
    stream, _ = hosted_chain(monkeypatch, [("map", lambda x: x), ("filter", lambda x: x % 2)],
                             agents=(Beat,))
    list(stream)
    downstream = [n for op, n in beats if op == 1]
    assert len(downstream) > 5 and downstream == sorted(downstream)
    assert max(downstream) == 10_000


@pytest.mark.parametrize("theta", [0, 1])  # the filter owns its feed, or joins θ's
def test_in_g_theta_logs_outputs_at_block_boundaries(monkeypatch, theta):
    stream, channel = hosted_chain(monkeypatch, CHAIN, theta=theta)
    outputs = list(stream)
    import zlib

    for message, body in zip(channel.ended, channel.bodies):
        if message["worker"]["operator"] == 0:
            assert message["log"] is None or message["log"]["kind"] in ("ones", "blocks")
            continue
        assert message["log"]["kind"] == "blocks"
        pairs = np.frombuffer(zlib.decompress(body), np.uint32).reshape(-1, 2)
        assert len(pairs) > 5 and (np.diff(pairs[:, 0]) > 0).all()
        if message["worker"]["operator"] == 1:  # the filter: outputs of the first n inputs
            kept = np.cumsum([(x * 3) % 5 != 0 for x in range(10_000)])
            assert all(kept[n - 1] == out for n, out in pairs)
    assert outputs[-1][0] == "end"


def test_the_replay_check_compares_outputs_between_block_boundaries():
    counts = np.array([1, 0, 2, 1, 1, 0, 3, 1], np.int64)
    cumulative = np.cumsum(counts)
    boundaries = np.array([[n, cumulative[n - 1]] for n in (2, 5, 8)], np.uint32)
    check = OutputCheck("op", None, boundaries)
    check.check_many(0, counts[:3])
    check.check_many(3, counts[3:])
    assert check.divergence is None
    wrong = counts.copy()
    wrong[6] = 2
    check = OutputCheck("op", None, boundaries)
    for i, k in enumerate(wrong):
        check.check(i, int(k))
    assert "inputs #5–#7" in check.divergence and "3 record(s)" in check.divergence
    resumed = OutputCheck("op", None, boundaries)  # a cursor restored at input 5
    resumed.check_many(5, wrong[5:])
    assert resumed.divergence is not None


class Totals:
    label = "class attribute"

    def __init__(self):
        self.totals = {}
        self.count = 0

    @property
    def size(self):
        return len(self.totals)

    @size.setter
    def size(self, value):
        self.totals = dict.fromkeys(range(value), 0)


def test_a_snapshot_reads_attributes_without_making_a_dict_of_them():
    op = Totals()
    op.size = 3
    assert capture(op) == {"totals": {0: 0, 1: 0, 2: 0}, "count": 0}
    assert not any(r is not op.totals and isinstance(r, dict) for r in gc.get_referents(op))
    op.extra = "set from outside"  # a name no method assigns: read from __dict__
    assert instance_attributes(op) == {"totals": {0: 0, 1: 0, 2: 0}, "count": 0,
                                       "extra": "set from outside"}


@pytest.mark.parametrize("api", ["map", "filter", "flatMap"])
def test_stop_iteration_from_a_function_fails_the_task_as_pyspark_does(monkeypatch, api):
    def stops(x):
        if x == 500:
            raise StopIteration
        return [x] if api == "flatMap" else x

    stream, channel = hosted_chain(monkeypatch, [("map", lambda x: x), (api, stops)])
    with pytest.raises(RuntimeError, match="StopIteration"):
        list(stream)
    ends = ended_by_operator(channel)
    assert any(e["status"] == "failed" and e["error"] for e in ends.values())
    assert not any(e["exhausted"] for e in ends.values())


def test_a_host_handed_all_its_records_in_one_block_still_reports_its_final_state(monkeypatch):
    stream, channel = hosted_chain(monkeypatch, [("map", lambda x: x), ("map", lambda x: -x)],
                                   theta=0, n=1)
    assert list(stream) == [0]
    finals = {m["worker"]["operator"]: m for m in channel.of_type("snapshot") if m["index"] == -1}
    assert set(finals) == {0, 1} and finals[1]["count"] == 1
