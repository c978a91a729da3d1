"""Skew key counts keep what they state, without Spark (issue 37): the exact part's
Misra–Gries bound on skewed streams, merged and truncated; the sampled part's intervals
on the tap's and the read-ahead lists' paths, for random, skewed, periodic, sorted and
grouped orders; inputs in runs counted whole; the note; advice that never predicts a
heavier heaviest partition, its code on the operator's own line."""
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icedtea_jupyter.executor.sketch import EVERY, HeavyHitters, KeySketch
from icedtea_jupyter.executor.skew import CHUNK, EXACT, SkewCounter, in_runs
from icedtea_jupyter.skew.advice import Situation, advise, find_call
from icedtea_jupyter.skew.keys import merge_summaries


class Host:
    """A map side's host: its reduce side's partitioner, the records it took in."""

    class spec:
        shuffle = (4, hash)

    def __init__(self, partition=0, records=0):
        self.worker = {"partition": partition}
        self.records_in = records


def skewed_keys(draw, n, hot, universe, exponent):
    """``n`` keys: ``hot`` of them one key, the rest Zipf-like over ``universe``."""
    weights = [1 / (rank + 1) ** exponent for rank in range(universe)]
    return ["hot" if draw.random() < hot else f"k{rank}"
            for rank in draw.choices(range(universe), weights, k=n)]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), hot=st.floats(0.0, 0.8), universe=st.integers(1, 3_000),
       exponent=st.floats(0.5, 2.0), capacity=st.integers(4, 64),
       blocks=st.lists(st.integers(1, 4_000), min_size=1, max_size=12),
       workers=st.integers(1, 4))
def test_exact_counts_stay_within_their_misra_gries_bound_merged(seed, hot, universe, exponent,
                                                                 capacity, blocks, workers):
    draw = random.Random(seed)
    merged, exact = KeySketch(capacity), Counter()
    for _ in range(workers):
        worker = KeySketch(capacity)
        for size in blocks:
            keys = skewed_keys(draw, size, hot, universe, exponent)
            exact.update(keys)
            worker.add_block(Counter(keys))
        merged.merge(worker)
    assert merged.n == sum(exact.values()) and not merged.sampled
    assert merged.error <= merged.bound()
    for key in set(exact) | set(merged.counts):
        low, high = merged.interval(key)
        assert low == merged.counts.get(key, 0) <= exact[key] <= high == low + merged.error


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), hot=st.floats(0.0, 0.6), universe=st.integers(50, 2_000),
       k=st.integers(1, 40))
def test_a_summary_cut_to_k_keys_keeps_every_kept_key_within_its_bound(seed, hot, universe, k):
    draw = random.Random(seed)
    keys = skewed_keys(draw, 6_000, hot, universe, 1.1)
    counter = SkewCounter(Host())
    for _ in counter.tap(iter([(key, 1) for key in keys])):
        pass
    counter.fold()
    table = merge_summaries([counter.summary(Host(), k)]).frame(None)
    exact = Counter(keys)
    assert len(table) <= k and table["exact"].all()
    for key, low, high in zip(table["key"], table["low"], table["high"]):
        assert low <= exact[key] <= high


def fed(records, path, partition):
    """A worker's summary of ``records`` through the tap or as read-ahead lists."""
    counter = SkewCounter(Host(partition))
    if path == "tap":
        for _ in counter.tap(iter(records)):
            pass
    else:
        at = 0
        while at < len(records):  # a block's first record alone, then lists of 256
            counter.take(records[at:at + 1])
            counter.take(records[at + 1:at + 257])
            at += 257
    counter.fold()
    return counter, counter.summary(Host(partition, len(records)), None)


def orders(draw, n):
    keys = skewed_keys(draw, n, 0.4, 300, 1.0)
    yield "random", keys, False
    yield "zipf", skewed_keys(draw, n, 0.0, 3_000, 1.2), False
    yield "periodic", [("a" if i % 2 else f"b{i // 2 % 50}") for i in range(n)], False
    yield "sorted", sorted(keys), True
    grouped: list = []
    while len(grouped) < n:  # runs of one key: a sessionizer's, a reduce side's output
        grouped += [f"r{draw.randrange(400)}"] * draw.randrange(1, 600)
    yield "grouped", grouped[:n], True


@pytest.mark.parametrize("path", ["tap", "take"])
def test_sampled_counts_are_estimates_whose_intervals_hold_as_often_as_they_say(path):
    """Over many workers' samples, a 99% interval misses about one key in a hundred; an
    input in runs is counted whole (a chunk sample would catch a run whole or miss it)."""
    n = EXACT + 200 * CHUNK
    misses, checked = Counter(), Counter()
    for seed in range(4):
        draw = random.Random(seed)
        for name, keys, runs in orders(draw, n):
            counter, summary = fed([(key, 1) for key in keys], path, 1000 + seed)
            table = merge_summaries([summary]).frame(50)
            exact = Counter(keys)
            assert merge_summaries([summary]).n == n  # as many records as there were
            if runs:
                assert summary["estimated"] == 0 and table["exact"].all()
                assert (table["count"] == [exact[k] for k in table["key"]]).all()
                continue
            assert summary["estimated"] > 0 and not table["exact"].any()
            checked[name] += len(table)
            misses[name] += sum(not low <= exact[key] <= high for key, low, high
                                in zip(table["key"], table["low"], table["high"]))
    for name in checked:
        assert misses[name] <= 0.03 * checked[name], (name, misses[name], checked[name])


def test_a_key_sampled_in_a_single_replicate_gets_the_whole_sample_as_its_margin():
    sketch = KeySketch()
    sketch.add_sample(0, Counter({"a": 10, "b": 5}))
    low, high = sketch.interval("a")
    assert sketch.counts["a"] == 10 * EVERY and low == 0 and high >= 15 * EVERY


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.integers(0, 30), min_size=2, max_size=400), run=st.integers(20, 60))
def test_runs_of_equal_keys_are_told_from_a_random_order(keys, run):
    ordered = [key for key in keys for _ in range(run)]  # each key in a run of ``run``

    def stats(stream):
        counts = Counter(stream)
        pairs = len(stream) - 1
        alike = sum(a == b for a, b in zip(stream, stream[1:]))
        return pairs, alike, (sum(c * c for c in counts.values()) - len(stream)) / len(stream)

    assert in_runs(*stats(ordered))
    shuffled = list(ordered)
    random.Random(len(keys)).shuffle(shuffled)
    if len(set(keys)) > 3:
        assert not in_runs(*stats(shuffled))


def test_the_note_says_what_the_counts_are():
    exact = merge_summaries([{"n": 100, "capacity": 512, "error": 0,
                              "keys": [["a", 60, 0], ["b", 40, 1]]}])
    assert exact.note() == "Counts are exact: every key of the 100 records was counted."
    bounded = merge_summaries([{"n": 100, "capacity": 512, "error": 7,
                                "keys": [["a", 55, 0]]}])
    assert bounded.note().startswith("Counts are lower bounds") and "7 more" in bounded.note()
    counter, summary = fed([(f"k{i % 7}", 1) for i in range(EXACT + 64 * CHUNK)], "tap", 3)
    sampled = merge_summaries([summary])
    assert sampled.note().startswith(f"Counts are estimates: the keys of "
                                     f"{sampled.sketch.estimated:,} of the")
    assert "99% interval" in sampled.note() and not sampled.frame()["exact"].any()


LOADS = st.dictionaries(st.integers(0, 11), st.floats(0, 1e6), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(loads=LOADS, heavy=st.dictionaries(st.integers(-1, 11), st.floats(0, 2e6), max_size=6),
       top=st.floats(0, 2e6), api=st.sampled_from(["reduceByKey", "groupByKey", "join",
                                                   "applyInPandas", "partitionBy", "map"]),
       inputs=st.lists(st.floats(0, 1e6), max_size=2))
def test_advice_never_predicts_a_heavier_heaviest_partition(loads, heavy, top, api, inputs):
    """Estimated heavy keys may be heavier than their partition, or sit in light ones:
    whatever the counts, a remedy advised makes the heaviest partition lighter."""
    advice = advise(Situation(api, loads, heavy, ["k"], top, "x = 1", inputs))
    heaviest = max(loads.values())
    for a in advice:
        assert a.heaviest == heaviest
        assert a.after < heaviest or (a.remedy == "none" and a.after == heaviest)
    assert [a.remedy for a in advice].count("none") <= 1


def test_salting_keys_of_light_partitions_is_not_advised_and_says_why():
    loads = {0: 10_000.0, 1: 4_000.0, 2: 4_000.0, 3: 4_000.0}
    advice = advise(Situation("reduceByKey", loads, {1: 3_900.0, 2: 3_900.0}, ["a", "b"],
                              3_900.0, "x = 1", []))
    assert "salt" not in [a.remedy for a in advice]
    (none,) = [a for a in advice if a.remedy == "none"]
    assert "salt would not make the heaviest partition (0, 10,000) lighter" in none.why


CELL = '''
per_session = (clicks.map(f).setName("one per click").reduceByKey(add).setName("per session"))
per_user = per_session.map(g).reduceByKey(max, 4).setName("per user").collect()
twice = other.reduceByKey(min).collect()
'''


def test_the_salted_code_rewrites_the_operators_own_call():
    assert find_call(CELL, "reduceByKey", "per user") == (
        "per_session.map(g).reduceByKey(max, 4)", "max")
    assert find_call(CELL, "reduceByKey", "per session")[1] == "add"
    assert find_call(CELL, "reduceByKey", None, 2) == ("other.reduceByKey(min)", "min")
    assert find_call(CELL, "reduceByKey", None, 1)[1] == "max"  # the cell's second
    assert find_call(CELL, "reduceByKey", "renamed", 9)[1] == "add"  # the first, at worst
    loads = {0: 9_000.0, 1: 1_000.0, 2: 1_000.0, 3: 1_000.0}
    (salt, *_) = advise(Situation("reduceByKey", loads, {0: 8_000.0}, ["u1"], 8_000.0, CELL,
                                  [], "per user", True, 1))
    assert salt.remedy == "salt" and "per_session.map(g).mapPartitionsWithIndex(Salt(HEAVY, 4))" \
        ".reduceByKey(max, 4).map(unsalt).reduceByKey(max)" in salt.code
    assert "one per click" not in salt.code


def test_merging_replicates_adds_them_replicate_by_replicate():
    one, two = KeySketch(), KeySketch()
    one.add_sample(0, Counter({"a": 3}))
    two.add_sample(0, Counter({"a": 2}))
    two.add_sample(1, Counter({"a": 4}))
    one.merge(two)
    assert [s.counts.get("a", 0) for s in one.samples[:2]] == [5, 4]
    assert one.counts["a"] == 9 * EVERY and one.estimated == 9 * EVERY
    plain = HeavyHitters(4)
    plain.add_block(Counter({"x": 2}))
    assert plain.top() == [("x", 2)]


def test_records_no_sketch_counted_widen_every_bound_and_the_note_says_so():
    """A map side whose workers took in more records than their sketches hold (a
    worker's sketch missing): no count claims to be exact."""
    keys = merge_summaries([{"n": 100, "capacity": 512, "error": 0,
                             "keys": [["a", 60, 0], ["b", 40, 1]]}])
    keys.uncounted(103)
    frame = keys.frame().set_index("key")
    assert keys.missing == 3 and keys.n == 103
    assert (frame.loc["a", "low"], frame.loc["a", "high"]) == (60, 63)
    assert keys.note().startswith("Counts are lower bounds: 3 of the 103 records were not "
                                  "counted")
    whole = merge_summaries([{"n": 100, "capacity": 512, "error": 0, "keys": [["a", 100, 0]]}])
    whole.uncounted(100)
    assert whole.missing == 0 and whole.note().startswith("Counts are exact")


@pytest.mark.parametrize("partition", range(6))
def test_records_past_the_exact_ones_before_any_sample_are_no_exact_count(partition):
    """A worker a few hundred records past EXACT: its run's sampled chunk is seldom
    among them, and nothing of them was counted; the summary had claimed every count
    exact (error 0). Now each key may have as many more: the bound holds."""
    records = [(f"k{i % 7}", 1) for i in range(EXACT + 300)]
    host = Host(partition, len(records))
    counter = SkewCounter(host)
    for _ in counter.tap(iter(records)):
        pass
    counter.fold()
    keys = merge_summaries([counter.summary(host, None)])
    exact = Counter(key for key, _ in records)
    assert keys.n == len(records)
    frame = keys.frame(None)
    for key, low, high in zip(frame["key"], frame["low"], frame["high"]):
        assert low <= exact[key] <= high
    if not keys.sketch.sampled:
        assert keys.error >= 300 and keys.note().startswith("Counts are lower bounds")
