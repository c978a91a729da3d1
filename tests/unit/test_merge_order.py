"""A spilled PySpark merger's order, rebuilt from the order of one that stayed in memory.

Replay merges in memory; the run's merger may have spilled (its process passed
``spark.python.worker.memory``), and the reduce side logged positions into the order it
spilled in. ``merge_order`` claims that order is the first-seen order stably sorted by
bucket: these tests hold PySpark's own merger to it.
"""
import operator

from pyspark.serializers import CPickleSerializer
from pyspark.shuffle import Aggregator, ExternalGroupBy, ExternalMerger

from icedtea_jupyter.executor.input_order import Origins, tag_origins
from icedtea_jupyter.executor.merge_order import (
    SPILLED,
    bucket,
    has_spilled,
    new_merger,
    position,
    spilled_order,
)

SUM = Aggregator(lambda v: v, operator.add, operator.add)
KEYS = [f"k{i % 701}" for i in range(9000)] + [(i % 37, "t") for i in range(900)] + \
    list(range(400))


def merged(memory, replaying=False):
    merger = new_merger(ExternalMerger, SUM, memory, CPickleSerializer(), replaying)
    records = list(enumerate(KEYS))
    for chunk in (records[:3000], records[3000:7000], records[7000:]):  # as a task's batches
        merger.mergeValues((key, i) for i, key in chunk)  # each checks the memory at its end
    return merger


def test_a_spilled_mergers_order_is_the_first_seen_order_sorted_by_bucket():
    spilled, in_memory = merged(memory=1), merged(memory=1, replaying=True)
    assert has_spilled(spilled) and spilled.spills > 1  # spilled several times, on the way
    assert not has_spilled(in_memory)
    kept = list(in_memory.items())
    assert [k for k, _ in kept] == list(dict.fromkeys(KEYS))  # first seen, first out
    rebuilt = [kept[i] for i in spilled_order([bucket(k) for k, _ in kept])]
    assert list(spilled.items()) == rebuilt
    assert spilled_order([bucket(k) for k, _ in rebuilt]) == list(range(len(rebuilt)))


def test_replay_merges_in_memory_however_big_its_process_is():
    # memory 1 MB: any process is over it; replaying, the merger never spills
    grouped = new_merger(ExternalGroupBy, SUM, 1, CPickleSerializer(), replaying=True)
    grouped.mergeCombiners((key, [i]) for i, key in enumerate(KEYS))
    assert not has_spilled(grouped) and len(list(grouped.items())) == 701 + 37 + 400


def test_a_spilled_map_sides_positions_are_marked_and_read_back():
    tagged = list(tag_origins(4, [("a", 1), ("b", 2)], spilled=True))
    assert [t[1][:2] for t in tagged] == [(4, SPILLED), (4, SPILLED + 1)]
    assert [position(t[1][1]) for t in tagged] == [(0, True), (1, True)]
    origins = Origins()
    assert list(origins.tap(tagged)) == [("a", 1), ("b", 2)]
    log, _ = origins.replay_log(None, 2)
    assert log["kind"] == "origins" and isinstance(log["hash_probe"], int)
    assert [position(t[1][1]) for t in tag_origins(0, [("a", 1)])] == [(0, False)]
