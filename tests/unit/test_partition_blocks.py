"""Whole-partition functions (generator ``mapPartitions``, an aggregation's side) in blocks:
PySpark's outputs and exact counts, the record they failed on, their final state, an early
stop that is theirs to make, and logs at block boundaries in G(θ)."""
import zlib
from itertools import islice

import numpy as np
import pytest

from .chains import ended_by_operator, hosted_chain, plain_chain

pytestmark = pytest.mark.usefixtures("task_modes")  # each test guarded and in a worker


def seen(rows):
    """A generator holding a set, as users write them."""
    users = set()
    for x in rows:
        fresh = x % 97 not in users
        users.add(x % 97)
        if x % 3:
            yield x, fresh


def doubled(rows):
    for x in rows:
        yield x
        yield -x


CHAIN = [("map", lambda x: x + 1), ("mapPartitions", seen), ("filter", lambda r: r[1]),
         ("map", lambda r: r[0]), ("mapPartitions", doubled)]


@pytest.mark.parametrize("theta", [None, 1, 4])
def test_generators_in_blocks_give_pysparks_outputs_and_exact_counts(monkeypatch, theta):
    stream, channel = hosted_chain(monkeypatch, CHAIN, theta=theta)
    expected = plain_chain(CHAIN)
    assert list(stream) == expected
    ends = ended_by_operator(channel)
    stages = [len(plain_chain(CHAIN[:i])) for i in range(1, 6)]
    assert [(ends[i]["records_in"], ends[i]["records_out"]) for i in range(5)] == [
        (10_000, stages[0])] + list(zip(stages, stages[1:]))
    assert stages[1] == 6_667 and stages[2] < stages[1] and stages[4] == 2 * stages[3]
    assert all(e["status"] == "ok" and e["exhausted"] for e in ends.values())


def test_a_generator_runs_in_blocks_with_a_feed_of_its_own(monkeypatch):
    stream, channel = hosted_chain(monkeypatch, CHAIN, in_worker=False)
    hosts = stream.gi_frame.f_locals["self"].hosts  # the chain behind its guard
    assert [h.feed is not None for h in hosts] == [True, True, False, False, True]


def test_a_failing_generator_names_the_record_it_pulled_last(monkeypatch):
    def breaks(rows):
        total = 0
        for x in rows:
            total += 10 // (x - 4_321)
            yield total

    stream, channel = hosted_chain(monkeypatch, [("map", lambda x: x * 1),
                                                 ("filter", lambda x: x > 0),
                                                 ("mapPartitions", breaks),
                                                 ("map", lambda t: t)])
    with pytest.raises(ZeroDivisionError):
        list(stream)
    ends = ended_by_operator(channel)
    error = ends[2]["error"]
    assert ends[2]["status"] == "failed" and error["record"]["value"] == 4_321
    assert error["operator"] == 2 and "breaks" in error["traceback"]
    assert ends[2]["records_in"] == 4_321  # 1..4321 reached it
    assert ends[3]["status"] == "failed" and ends[3]["error"] is None
    assert ends[0]["status"] == "ok" and ends[1]["status"] == "ok"


@pytest.mark.parametrize("theta,ahead", [(None, [True, True, True]), (1, [True, True, False]),
                                         (4, [True, True, True])])
def test_feeds_read_ahead_except_after_hosts_in_g_theta(monkeypatch, theta, ahead):
    """Spark's input and the outputs of hosts upstream of θ are read a block ahead; a
    feed after a host of G(θ) pulls in step (its snapshots are one moment with θ's)."""
    stream, _ = hosted_chain(monkeypatch, CHAIN, theta=theta, in_worker=False)
    hosts = stream.gi_frame.f_locals["self"].hosts
    assert [h.feed.read_ahead for h in hosts if h.feed is not None] == ahead
    assert list(stream) == plain_chain(CHAIN)


@pytest.mark.parametrize("at", [0, 1, 2_500, 9_999])
def test_a_generator_reading_spark_input_ahead_names_its_record_and_count(monkeypatch, at):
    def breaks(rows):
        for x in rows:
            if x == at:
                raise KeyError(x)
            yield x

    stream, channel = hosted_chain(monkeypatch, [("mapPartitions", breaks)])
    with pytest.raises(KeyError):
        list(stream)
    end = ended_by_operator(channel)[0]
    assert end["error"]["record"]["value"] == at
    assert (end["records_in"], end["records_out"]) == (at + 1, at)


def test_reading_ahead_counts_only_what_the_function_took(monkeypatch):
    stream, channel = hosted_chain(monkeypatch, [("mapPartitions", lambda rows: islice(rows, 3)),
                                                 ("map", lambda x: x * 2)])
    assert list(stream) == [0, 2, 4]
    assert ended_by_operator(channel)[0]["records_in"] == 3


def test_a_failure_upstream_is_not_blamed_on_the_generator(monkeypatch):
    def parse(x):
        if x == 900:
            raise ValueError("bad line")
        return x

    stream, channel = hosted_chain(monkeypatch, [("map", parse), ("mapPartitions", seen)])
    with pytest.raises(ValueError):
        list(stream)
    ends = ended_by_operator(channel)
    assert ends[0]["error"]["record"]["value"] == 900
    assert ends[1]["status"] == "failed" and ends[1]["error"] is None


def test_a_partition_function_may_stop_reading_early(monkeypatch):
    functions = [("map", lambda x: x), ("mapPartitions", lambda rows: islice(rows, 3)),
                 ("map", lambda x: x * 2)]
    stream, channel = hosted_chain(monkeypatch, functions)
    assert list(stream) == [0, 2, 4]
    ends = ended_by_operator(channel)
    assert all(e["status"] == "ok" and e["exhausted"] for e in ends.values())
    assert (ends[1]["records_in"], ends[1]["records_out"]) == (3, 3)


def test_a_generator_that_returns_early_ends_its_task_normally(monkeypatch):
    """A generator's outputs pass on as the generator itself: their end is its return."""
    def first_three(rows):
        for i, x in enumerate(rows):
            if i == 3:
                return
            yield x

    functions = [("map", lambda x: x), ("mapPartitions", first_three), ("map", lambda x: x * 2)]
    stream, channel = hosted_chain(monkeypatch, functions)
    assert list(stream) == [0, 2, 4]
    ends = ended_by_operator(channel)
    assert all(e["status"] == "ok" and e["exhausted"] for e in ends.values())
    assert (ends[1]["records_in"], ends[1]["records_out"]) == (4, 3)


def test_stop_iteration_after_a_generator_still_fails_the_task(monkeypatch):
    def stops(x):
        if x == 500:
            raise StopIteration
        return x

    stream, channel = hosted_chain(monkeypatch, [("mapPartitions", doubled), ("map", stops)])
    with pytest.raises(RuntimeError, match="StopIteration"):
        list(stream)
    assert not any(e["exhausted"] for e in ended_by_operator(channel).values())


def test_a_finished_generator_keeps_its_final_locals(monkeypatch):
    stream, channel = hosted_chain(monkeypatch, CHAIN, theta=1)
    list(stream)
    finals = {m["worker"]["operator"]: m for m in channel.of_type("snapshot") if m["index"] == -1}
    delta = finals[1]["delta"]
    users = delta["full"]["users"] if "full" in delta else delta["set"]["users"]
    assert users["$t"] == "set" and sorted(users["v"]) == list(range(97))


def test_generators_in_g_theta_log_outputs_at_block_boundaries(monkeypatch):
    stream, channel = hosted_chain(monkeypatch, CHAIN, theta=1)
    list(stream)
    for message, body in zip(channel.ended, channel.bodies):
        if message["worker"]["operator"] != 1:
            continue
        assert message["log"]["kind"] == "blocks"
        pairs = np.frombuffer(zlib.decompress(body), np.uint32).reshape(-1, 2)
        kept = np.cumsum([(x + 1) % 3 != 0 for x in range(10_000)])
        assert len(pairs) > 5 and all(kept[n - 1] == out for n, out in pairs)
