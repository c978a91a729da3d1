"""The keys an aggregation's map side counts under ``--skew``, run as a Python worker runs
it: taken from the lists its feed reads ahead (nothing of ours per record), or through C
iterators where its feed keeps in step with θ; against exact counts."""
from collections import Counter
from itertools import islice
from operator import add

import pytest
from pyspark.rdd import portable_hash

from icedtea_jupyter.executor import host as host_module
from icedtea_jupyter.executor.feeds import BlockFeed
from icedtea_jupyter.executor.skew import AGENT, EXACT, SkewCounter
from icedtea_jupyter.executor.spec import OperatorSpec, RunSpec
from icedtea_jupyter.executor.wrappers import CombineFunction, PartitionFunction
from icedtea_jupyter.skew.keys import merge_summaries

from .fakes import RecordingChannel


def pair(i):
    return ("hot" if i % 4 == 0 else f"k{i % 1000}", 1)


def pairs(rows):
    for i in rows:
        yield pair(i)


def map_side(monkeypatch, n, api, f, theta=False):
    """``api(f)`` on ``range(n)``, then reduceByKey's map side, in one task; returns the
    combiners and the keys the map side's last live message carried."""
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # as Spark's workers (portable_hash checks)
    channel = RecordingChannel()
    monkeypatch.setattr(host_module, "channel_for", lambda run: channel)
    run = RunSpec("run-1", ("127.0.0.1", 1), b"", "/nonexistent", skew=True)
    upstream = OperatorSpec(0, run, api, "pairs", theta=theta, in_g=theta)
    records = PartitionFunction(upstream, api, f)(0, iter(range(n)))
    spec = OperatorSpec(1, run, "reduceByKey", "sum (combine)", in_g=theta, phase="combine",
                        shuffle=(4, portable_hash))
    combine = CombineFunction(spec, "combine", (lambda v: v, add, add), 1 << 30, None, False)
    combined = list(combine(0, records))
    sent = [m["payload"] for m in channel.sent if m.get("agent") == AGENT]
    return combined, merge_summaries(sent[-1:])


@pytest.mark.parametrize("api, f", [("map", pair), ("mapPartitions", pairs)])
def test_a_map_side_reading_ahead_counts_its_keys_from_the_lists_it_read(monkeypatch, api, f):
    def no_per_record_tap(self, records):
        raise AssertionError("a per-record tap on a feed that reads ahead")

    monkeypatch.setattr(SkewCounter, "tap", no_per_record_tap)
    n = 8 * EXACT
    combined, keys = map_side(monkeypatch, n, api, f)
    exact = Counter(pair(i)[0] for i in range(n))
    assert len(combined) == len(exact)  # the aggregation's own result is untouched
    frame = keys.frame().set_index("key")
    assert frame.index[0] == "hot" and keys.sketch.estimated > 0  # sampled past EXACT
    assert abs(frame.loc["hot", "count"] - exact["hot"]) <= frame.loc["hot", "error"]
    assert abs(keys.sketch.n - n) <= 0.01 * n
    assert frame.loc["hot", "partition"] == portable_hash("hot") % 4


def test_a_small_map_side_counts_every_key_exactly(monkeypatch):
    n = EXACT // 2
    _, keys = map_side(monkeypatch, n, "map", pair)
    assert keys.sketch.n == n and keys.sketch.estimated == 0
    hot = keys.frame().set_index("key").loc["hot", "count"]
    assert hot <= n // 4 <= hot + keys.sketch.error  # Misra–Gries: a lower bound


def test_a_map_side_in_step_with_theta_counts_its_keys_through_c_iterators(monkeypatch):
    tapped = []
    tap = SkewCounter.tap
    monkeypatch.setattr(SkewCounter, "tap", lambda self, records: tapped.append(1) or
                        tap(self, records))
    n = 4 * EXACT
    combined, keys = map_side(monkeypatch, n, "map", pair, theta=True)
    assert len(combined) == len({pair(i)[0] for i in range(n)}) and tapped == [1]
    frame = keys.frame().set_index("key")
    assert abs(frame.loc["hot", "count"] - n // 4) <= frame.loc["hot", "error"]


class Owner:
    """A feed's owner host, as the feed sees it: its checks say how long a block is."""

    def block_check(self, count, first):
        return 100

    def block_boundary(self, ended=False):
        pass


def test_a_feed_that_stops_reading_ahead_counts_every_key_after(monkeypatch):
    counter = SkewCounter(type("Host", (), {"spec": None, "worker": {"partition": 0}})())
    records = [pair(i) for i in range(3 * EXACT)]
    feed = BlockFeed(iter(records), Owner(), read_ahead=True)
    feed.keys = counter
    source = iter(feed)
    assert list(islice(source, 2 * EXACT)) == records[:2 * EXACT]
    feed.read_ahead = False  # a breakpoint armed live on the aggregation (control.py)
    assert list(source) == records[2 * EXACT:]
    counter.fold()
    low, high = counter.sketch.interval("hot")
    assert counter.sketch.n == pytest.approx(3 * EXACT, rel=0.01)
    assert low <= 3 * EXACT // 4 <= high
