"""Skew without Spark: the heavy-hitter sketch against exact counts, its tap, the two
skew rules on synthetic loads, advice, and the checks behind s.mitigate()."""
import random
from collections import Counter
from itertools import islice
from operator import add

import pytest

from icedtea_jupyter.executor.salting import Salt, Salted, unsalt
from icedtea_jupyter.executor.skew import HeavyHitters, SkewCounter
from icedtea_jupyter.skew.advice import Situation, advise, salted_code
from icedtea_jupyter.skew.keys import merge_summaries
from icedtea_jupyter.skew.mitigate import MitigationRefused, assigned_names, check_associative, same
from icedtea_jupyter.skew.rules import Rules, aqe_flags, reshape_flags, skewed


def zipf_stream(n, universe, seed):
    rng = random.Random(seed)
    weights = [1 / (rank + 1) ** 1.1 for rank in range(universe)]
    return rng.choices(range(universe), weights, k=n)


def sketch_of(stream, capacity, block=5_000):
    sketch = HeavyHitters(capacity)
    for start in range(0, len(stream), block):
        sketch.add_block(Counter(stream[start:start + block]))
    return sketch


def test_sketch_counts_are_lower_bounds_within_the_stated_error():
    stream = zipf_stream(200_000, 50_000, seed=1)
    exact = Counter(stream)
    sketch = sketch_of(stream, capacity=64)
    assert sketch.n == len(stream) and len(sketch.counts) <= 64
    assert 0 < sketch.error <= sketch.bound()
    for key, count in sketch.counts.items():
        assert exact[key] - sketch.error <= count <= exact[key]
    # every key above the error bound is found, the heaviest ones in order
    assert {k for k, c in exact.items() if c > sketch.error} <= set(sketch.counts)
    assert [k for k, _ in sketch.top(5)] == [k for k, _ in exact.most_common(5)]


def test_merged_sketches_keep_the_bound():
    streams = [zipf_stream(50_000, 20_000, seed=s) for s in range(4)]
    merged = HeavyHitters(64)
    for stream in streams:
        merged.merge(sketch_of(stream, 64))
    exact = Counter(k for stream in streams for k in stream)
    assert merged.n == sum(exact.values()) and merged.error <= merged.bound()
    for key, count in merged.counts.items():
        assert exact[key] - merged.error <= count <= exact[key]


class FakeHost:
    class spec:
        shuffle = (3, hash)

    worker = {"partition": 1}


def test_the_tap_passes_records_unchanged_without_reading_ahead():
    counter = SkewCounter(FakeHost())
    pulled = []

    def source():
        for i in range(10):
            pulled.append(i)
            yield (f"k{i % 3}", i)

    tapped = counter.tap(source())
    assert list(islice(tapped, 4)) == [(f"k{i % 3}", i) for i in range(4)]
    assert pulled == [0, 1, 2, 3]  # the next record is not pulled before it is wanted
    assert list(tapped) == [(f"k{i % 3}", i) for i in range(4, 10)]
    counter.fold()
    assert counter.sketch.counts == {"k0": 4, "k1": 3, "k2": 3}
    summary = counter.summary(FakeHost(), 2)
    assert summary["n"] == 10 and len(summary["keys"]) == 2 and summary["error"] == 3
    assert summary["keys"][0] == ["k0", 4, hash("k0") % 3]
    keys = merge_summaries([summary, summary])
    assert keys.n == 20 and keys.frame()["count"].tolist()[0] == 8


def test_groups_of_a_join_count_values_and_inputs():
    counter = SkewCounter(FakeHost())
    counter.shuffle = None
    groups = [("a", [(0, 1), (0, 2), (1, "x")]), ("b", [(1, "y")])]
    assert list(counter.count_groups(iter(groups))) == groups
    assert counter.sketch.counts == {"a": 3, "b": 1} and counter.inputs == {0: 2, 1: 2}
    assert counter.partition_of(FakeHost(), "a") == 1  # a reduce side: its own partition


def test_a_large_join_counts_each_inputs_records_within_the_sampling_error():
    rng = random.Random(7)  # a hot key with 60,000 values, then 2,000 keys of 10
    groups = [("hot", [(0, i) for i in range(60_000)] + [(1, "x")] * 600)]
    groups += [(k, [(int(rng.random() < 0.2), k) for _ in range(10)]) for k in range(2_000)]
    exact = Counter(index for _, values in groups for index, _ in values)
    counter = SkewCounter(FakeHost())
    assert list(counter.count_groups(iter(groups))) == groups  # every group passes unchanged
    inputs = counter.input_counts()
    assert sum(counter.sampled_inputs.values()) > 0  # past EXACT values: sampled
    for index, count in exact.items():  # sampled: off by less than 4 standard deviations
        assert abs(inputs[index] - count) <= 4 * (15 * count) ** 0.5, (index, inputs)
    sketch = counter.sketch  # each key's values all counted, within the sketch's bound
    assert sketch.n == sum(exact.values()) and not sketch.estimated
    assert sketch.counts["hot"] <= 60_600 <= sketch.counts["hot"] + sketch.error


def test_a_spilled_group_counts_its_inputs_exactly():
    class External:  # PySpark's ExternalListOfList (a spilled group): iterable, no slices
        def __init__(self, values):
            self.values = values

        def __len__(self):
            return len(self.values)

        def __iter__(self):
            return iter(self.values)

    values = [(0, 1)] * 20_000 + [(1, 2)] * 3
    counter = SkewCounter(FakeHost())
    list(counter.count_groups(iter([("a", values), ("b", External(values))])))
    assert counter.input_counts() == {0: 40_000, 1: 6} and not counter.sampled_inputs


LOADS = {0: 100.0, 1: 110.0, 2: 900.0, 3: 95.0, 4: 105.0}


def test_both_rules_flag_the_skewed_partition_and_not_the_others():
    assert [f["partition"] for f in reshape_flags(LOADS, eta=300, tau=200)] == [2]
    assert "C = partition 3" in reshape_flags(LOADS, eta=300, tau=200)[0]["why"]
    assert [f["partition"] for f in aqe_flags(LOADS, factor=5, threshold=0)] == [2]
    assert aqe_flags(LOADS, factor=5, threshold=1000) == []  # not above the threshold
    frame = skewed(LOADS, Rules())  # defaults: η = 2 × median, τ = median
    assert sorted(zip(frame["partition"], frame["rule"])) == [(2, "aqe"), (2, "reshape")]
    assert skewed({p: 100.0 for p in range(4)}, Rules()).empty
    with pytest.raises(ValueError, match="load='rows' is not a load"):
        skewed(LOADS, Rules(load="rows"))


def test_with_most_partitions_empty_the_rules_flag_the_loaded_ones_not_the_empty():
    """Few keys over many partitions (20 keys, one hot, into 200): the median load is 0.
    Reshape's defaults (η = 2 × median, τ = median) had flagged all 199 partitions but
    the lightest, the empty ones too; the loads' mean is the scale there."""
    loads = {p: 0.0 for p in range(200)}
    loads[5] = 20_000.0
    loads.update({p: 1_000.0 for p in range(10, 30)})
    frame = skewed(loads, Rules(load="key_records"))
    for rule in ("reshape", "aqe"):
        assert sorted(frame[frame["rule"] == rule]["partition"]) == [5, *range(10, 30)]
    assert reshape_flags({p: 0.0 for p in range(8)}, eta=0, tau=0) == []  # nothing to move
    assert skewed({p: 0.0 for p in range(8)}, Rules()).empty


CELL = 'totals = sc.parallelize(E, 8).map(f).reduceByKey(add, 4).setName("sum").collect()'


def situation(api, inputs=()):
    return Situation(api, LOADS, {2: 700.0}, ["hot"], 700.0, CELL, list(inputs))


def test_advice_names_the_remedy_for_each_kind_of_operator():
    salt = advise(situation("reduceByKey"))[0]
    assert salt.remedy == "salt" and salt.after < salt.heaviest and salt.shrink > 0.5
    assert ".mapPartitionsWithIndex(Salt(HEAVY, 5)).reduceByKey(add, 4)" \
           ".map(unsalt).reduceByKey(add)" in salt.code
    assert [a.remedy for a in advise(situation("join", [20_000, 300]))] == \
        ["broadcast", "skew_join"]
    assert [a.remedy for a in advise(situation("join", [20_000, 19_000]))] == ["skew_join"]
    assert advise(situation("applyInPandas"))[0].remedy == "salt"
    assert advise(situation("groupByKey"))[0].remedy == "aggregate"
    assert advise(situation("map"))[0].remedy == "repartition"
    own = advise(situation("partitionBy"))
    assert [a.remedy for a in own] == ["own_partitions", "partitions"]
    assert own[0].after == max(700.0, *(load - (700.0 if p == 2 else 0)
                                        for p, load in LOADS.items()))
    assert "enumerate(['hot'])" in own[0].code and own[0].code.endswith(
        f".partitionBy({len(LOADS)} + len(HEAVY), spread)")
    assert "reduceByKey(<merge>)" in salted_code("x = 1", "foldByKey", ["a"], 2)


def test_salting_spreads_a_key_and_unsalting_merges_it_back():
    records = [("hot", 1)] * 6 + [("cold", 2)]
    salted = list(Salt({"hot"}, 3)(0, records))
    assert Counter(k for k, _ in salted) == {Salted("hot", 0): 2, Salted("hot", 1): 2,
                                             Salted("hot", 2): 2, "cold": 1}
    assert sorted(map(unsalt, salted)) == sorted(records)
    with pytest.raises(ValueError, match="at least 2"):
        Salt({"hot"}, 1)


def test_the_checks_behind_mitigate():
    check_associative((lambda v: v, add, add), [("k", v) for v in (1, 5, 9)])
    with pytest.raises(MitigationRefused, match="not associative"):
        check_associative((lambda v: v, None, lambda a, b: a - b), [("k", v) for v in (1, 5, 9)])
    assert same([("a", 0.1 + 0.2), ("b", 1)], [("b", 1), ("a", 0.3)])
    assert not same([("a", 1)], [("a", 2)])
    assert assigned_names("x = 1\ny, z = 2, 3\nprint(x)") == ["x", "y", "z"]


def test_the_coordinator_keeps_each_workers_latest_sketch_and_tells_the_run():
    from icedtea_jupyter.agents.skew import SkewCoordinator

    class FakeRun:
        events: list = []

        def emit(self, kind, data):
            self.events.append((kind, data))

    coordinator, run = SkewCoordinator(), FakeRun()
    coordinator.init(run)
    worker = {"operator": 1, "stage": 2, "partition": 0, "attempt": 0, "task": 9}
    coordinator.receive_message(worker, {"n": 10, "keys": []})
    coordinator.receive_message(worker, {"n": 25, "keys": [["hot", 20, 1]]})
    coordinator.receive_message(worker, "not a sketch")  # ignored
    (key, latest), = coordinator.latest().items()
    assert key == (1, 2, 0, 0, 9) and latest["n"] == 25
    assert run.events == [("skew", {"operator": 1})] * 2


def test_after_the_first_records_one_chunk_in_every_few_is_counted_and_weighted():
    from icedtea_jupyter.executor.skew import CHUNK, EVERY, EXACT

    counter = SkewCounter(FakeHost())
    total = EXACT + 64 * CHUNK
    records = [("hot" if i % 4 == 0 else f"k{i % 97}", i) for i in range(total)]
    assert list(counter.tap(iter(records))) == records
    counter.fold()
    sketch = counter.sketch
    assert sketch.n == EXACT + 64 * CHUNK  # 4 of 64 chunks counted, 16 times each
    assert sketch.estimated == 64 * CHUNK and 64 % EVERY == 0
    assert sketch.counts["hot"] == total // 4  # one key in four, in every chunk


def test_a_shuffle_reads_batches_are_counted_whole_then_one_record_in_every_few():
    from icedtea_jupyter.executor.skew import EVERY, EXACT

    counter = SkewCounter(FakeHost())
    batch = 4096  # PySpark's batches grow to thousands of records
    batches = [[("hot" if i % 5 == 0 else f"k{i % 97}", i) for i in range(start, start + batch)]
               for start in range(0, EXACT + 64 * batch, batch)]
    assert list(counter.tap_batches(iter(batches))) == batches  # the same lists, in order
    counter.fold()
    sketch = counter.sketch
    # the first EXACT records all counted, then one in EVERY of each batch, EVERY times
    assert sketch.n == EXACT + 64 * batch and sketch.estimated == 64 * batch
    exact = len(batches) * batch // 5
    assert abs(sketch.counts["hot"] - exact) <= 3 * (EVERY * exact) ** 0.5


def test_sampled_key_counts_stay_within_the_error_the_keys_table_states():
    from icedtea_jupyter.executor.skew import CHUNK, EXACT

    draw = random.Random(7)
    weights = [1 / (rank + 1) ** 1.1 for rank in range(2000)]
    keys = draw.choices([f"k{rank}" for rank in range(2000)], weights, k=EXACT + 400 * CHUNK)
    counter = SkewCounter(FakeHost())
    for _ in counter.tap(iter([(key, 1) for key in keys])):
        pass
    counter.fold()
    table = merge_summaries([counter.summary(FakeHost(), None)]).frame(20)
    exact = Counter(keys)
    assert counter.sketch.estimated > 0
    assert all(abs(exact[key] - count) <= error
               for key, count, error in zip(table["key"], table["count"], table["error"]))
    assert (table["error"] > counter.sketch.error).all()  # the sampling's part is stated


def test_which_chunk_is_sampled_is_drawn_so_a_periodic_order_does_not_bias_the_counts():
    from icedtea_jupyter.executor.skew import CHUNK, EVERY, EXACT

    total = EXACT + 256 * EVERY * CHUNK
    records = [("first" if (i // CHUNK) % EVERY == 0 else "other", i) for i in range(total)]
    counter = SkewCounter(FakeHost())
    for _ in counter.tap(iter(records)):
        pass
    counter.fold()
    exact = sum(1 for key, _ in records if key == "first")
    assert exact / 2 <= counter.sketch.counts["first"] <= exact * 2  # not all 16x as many


def test_mitigate_refuses_heavy_keys_that_travelled_as_descriptions():
    from types import SimpleNamespace

    from icedtea_jupyter.dag import Dag
    from icedtea_jupyter.executor.state import encode
    from icedtea_jupyter.skew import SkewReport, SkewSource
    from icedtea_jupyter.skew.mitigate import mitigate

    dag = Dag()
    dag.add("sum", "python", "reduceByKey", [], "merge")
    key = SimpleNamespace(user="hot")  # an object: it travels as its type, repr, attributes
    summary = {"n": 10, "capacity": 512, "error": 0, "keys": [[encode(key), 9, 0]]}
    source = SkewSource(dag, "", [], {0: [summary]}, rerun=lambda splits: None,
                        sample=lambda node, keys: [])
    with pytest.raises(MitigationRefused, match="came back from the workers as a description"):
        mitigate(SkewReport(source, "sum"), None, 1.0)


def test_live_waiting_on_spark_connect_is_said_to_be_unavailable():
    from types import SimpleNamespace

    from icedtea_jupyter.dag import Dag
    from icedtea_jupyter.session.skew_source import _live_sizes
    from icedtea_jupyter.skew import SkewReport, SkewSource

    dag = Dag()
    dag.add("by user", "python", "map", [])
    worker = {"operator": 0, "stage": 0, "partition": 0, "status": "running",
              "records_in": 5, "bytes_in": 50, "seconds": 0.1}
    source = SkewSource(dag, "", [worker], {}, live=True)
    _live_sizes(SimpleNamespace(manifest={"session": "connect"}), source)
    s = SkewReport(source, "by user")
    assert s.waiting_note.startswith("unavailable on Spark Connect")
    assert s.partitions["waiting"].isna().all() and s.to_json()["waiting_note"]


def test_live_waiting_for_a_push_answers_at_once_and_reads_spark_on_its_own_thread(
        monkeypatch):
    """A push does not wait for Spark's partition sizes (py4j into the driver's scheduler:
    seconds on busy cores): it gets the sizes as last read, and a thread reads them again
    once they are older than a second."""
    import threading
    import time

    from icedtea_jupyter.session import stage_sizes

    release, calls = threading.Event(), []

    def slow_read(sc, stage):
        calls.append(stage)
        release.wait(5)
        return {0: 10 * len(calls)}
    monkeypatch.setattr(stage_sizes, "stage_waiting", slow_read)
    waiting = stage_sizes.LiveWaiting(sc=None)
    started = time.monotonic()
    assert waiting(3) is None and time.monotonic() - started < 0.5  # not read yet
    assert waiting(3) is None and calls == [3]  # one read at a time
    release.set()
    deadline = time.monotonic() + 5
    while waiting(3) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert waiting(3) == {0: 10} and calls == [3]  # fresh: not read again
    waiting._known[3] = (time.monotonic() - 2 * waiting.REFRESH, {0: 10})
    assert waiting(3) == {0: 10}  # stale: the old sizes now, a new read started
    while len(calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert calls == [3, 3]


def test_a_dataframe_join_condition_splits_into_its_equalities_in_both_spellings():
    from icedtea_jupyter.session.frame_join_keys import EQUALITY, _conjuncts

    for text, terms in [("=(user, user)", [("user", "user")]),
                        ("and(=(t.x, u.z), <=>(y, w))", [("t.x", "u.z"), ("y", "w")]),
                        ("((x = y) AND (`a` = b))", [("x", "y"), ("`a`", "b")])]:
        found = [tuple(g for g in EQUALITY.match(term).groups() if g is not None)
                 for term in _conjuncts(text)]
        assert found == terms
    assert EQUALITY.match(_conjuncts("=(lower(x), y)")[0]) is None  # not two columns


def test_a_stage_shows_each_partitions_successful_task_else_its_running_one():
    """While a run records, a JVM stage's partition shows its successful task, else the
    running attempt furthest along; failed and killed attempts never count."""
    from icedtea_jupyter.skew.stages import stage_workers

    def task(partition, task_id, status, records, attempt=0):
        return {"stage": 3, "attempt": attempt, "partition": partition, "task": task_id,
                "status": status, "records": records, "bytes": records * 10,
                "seconds": 0.1, "operators": ""}

    tasks = [task(0, 10, "SUCCESS", 50), task(0, 14, "RUNNING", 70),  # a speculative copy
             task(1, 11, "FAILED", 90), task(1, 15, "RUNNING", 20),
             task(1, 16, "RUNNING", 30), task(2, 12, "KILLED", 5),
             task(3, 13, "RUNNING", 8), {**task(3, 17, "SUCCESS", 1), "stage": 4}]
    rows = stage_workers(tasks, 3)
    assert [(r["partition"], r["task"], r["status"], r["records_in"]) for r in rows] == [
        (0, 10, "finished", 50), (1, 16, "running", 30), (3, 13, "running", 8)]
    assert all(r["operator"] == -4 and r["stage"] == 3 for r in rows)


def test_live_stage_tasks_answer_at_once_and_read_an_ended_stage_once(monkeypatch):
    """A push gets the run's stages' tasks as last read, without waiting for Spark; a
    thread reads them again once they are older than a second, and a stage that had
    ended is not read again."""
    import threading
    import time
    from types import SimpleNamespace

    from icedtea_jupyter.session import stage_loads

    release, reads = threading.Event(), []
    stages = [{"id": 0, "name": "scan", "ended": True}, {"id": 1, "name": "agg", "ended": False}]

    def read(sc, wanted, operators):
        release.wait(5)
        reads.append(wanted[0]["id"])
        return [{"stage": wanted[0]["id"], "records": len(reads)}]
    monkeypatch.setattr(stage_loads, "run_stages", lambda sc, group: stages)
    monkeypatch.setattr(stage_loads, "stage_tasks", read)
    run = SimpleNamespace(id="r", dag=SimpleNamespace(stages={}))
    tasks = stage_loads.LiveStageTasks(sc=None, run=run)
    started = time.monotonic()
    assert tasks() is None and time.monotonic() - started < 0.5  # not read yet
    release.set()
    deadline = time.monotonic() + 5
    while tasks() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert tasks() == [{"stage": 0, "records": 1}, {"stage": 1, "records": 2}]
    tasks._read_at -= 2 * tasks.REFRESH  # stale: a new read; the ended stage is kept
    assert tasks() == [{"stage": 0, "records": 1}, {"stage": 1, "records": 2}]
    while len(reads) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    assert reads == [0, 1, 1] and tasks.now() == [{"stage": 0, "records": 1},
                                                  {"stage": 1, "records": 4}]
