"""Lineage (Titian) of RDD pipelines: traces back and forward against oracles by hand."""
import os
import shutil
from operator import add

import pytest

from icedtea_jupyter.lineage.tables import NoLineage, load_links
from tests.faults import flaky

pytestmark = pytest.mark.spark

LINES = ["# a comment", "spark is fast", "the cat sat", "spark and the dog",  # partition 0
         "zzrare", "a spark", "# another", "spark spark"]                       # partition 1

CHAIN = """
words = (sc.parallelize(LINES, 2)
           .filter(lambda line: not line.startswith("#")).setName("no comments")
           .flatMap(lambda line: line.split()).setName("split")
           .map(lambda word: word.upper()).setName("upper")
           .collect())
"""


def rows(frame):
    return [tuple(row) for row in frame.itertuples(index=False)]


def test_a_map_flatmap_filter_chain_traces_back_to_its_source_lines(record):
    run = record(CHAIN, {"LINES": LINES}, lineage=True)
    assert run.status == "finished", run.error
    t = run.trace_back("SPARK")
    # "SPARK" comes from the lines at positions 1 and 3 of partition 0, 1 and 3 of partition 1
    assert rows(t.to_pandas()) == [
        ("parallelize", 0, 1, "spark is fast"), ("parallelize", 0, 3, "spark and the dog"),
        ("parallelize", 1, 1, "a spark"), ("parallelize", 1, 3, "spark spark")]
    assert len(t) == 4 and t.engine == "duckdb" and t.notes == []
    # after the filter, partition 0 keeps 3 lines; the split words "spark" stand at these
    # positions of split's output: p0 "spark is fast" → 0, "spark and the dog" → 6;
    # p1 "zzrare" → 0, "a spark" → 1, 2, "spark spark" → 3, 4
    assert rows(t.at("split")) == [("split", 0, 0, "spark"), ("split", 0, 6, "spark"),
                                   ("split", 1, 2, "spark"), ("split", 1, 3, "spark"),
                                   ("split", 1, 4, "spark")]
    assert rows(t.at("no comments")) == [
        ("no comments", 0, 0, "spark is fast"), ("no comments", 0, 2, "spark and the dog"),
        ("no comments", 1, 1, "a spark"), ("no comments", 1, 2, "spark spark")]
    assert t.first() == ("parallelize", 0, 1, "spark is fast")


def test_forward_from_a_line_reaches_its_words_and_a_filtered_line_reaches_nothing(record):
    run = record(CHAIN, {"LINES": LINES}, lineage=True)
    f = run.trace_forward("the cat sat")
    assert rows(f.to_pandas()) == [("upper", 0, 3, "THE"), ("upper", 0, 4, "CAT"),
                                   ("upper", 0, 5, "SAT")]
    dropped = run.trace_forward("# another")
    assert len(dropped) == 0 and dropped.to_pandas().empty
    assert dropped.operators == {"parallelize": 1, "no comments": 0}
    with pytest.raises(LookupError, match="no source record of 'parallelize' matches"):
        run.trace_forward("not a line")


WORDS = ["spark a", "b spark", "spark zzrare c", "spark spark"]  # one line a partition

COUNT = """
counts = (sc.parallelize(WORDS, 4).flatMap(lambda line: line.split()).setName("split")
            .map(lambda word: (word, 1)).setName("pair")
            .reduceByKey(add, 3).setName("count").collect())
"""


def test_a_key_group_spanning_every_partition_traces_back_to_all_of_them(record):
    run = record(COUNT, {"WORDS": WORDS, "add": add}, lineage=True)
    assert sorted(run.namespace["counts"])[-2:] == [("spark", 5), ("zzrare", 1)]
    t = run.trace_back(("spark", 5))
    assert rows(t.to_pandas()) == [("parallelize", p, 0, WORDS[p]) for p in range(4)]
    # the map side's combiner of "spark" on each partition, and the five pairs
    assert sorted(r[3] for r in rows(t.at("count (combine)"))) == \
        [("spark", 1), ("spark", 1), ("spark", 1), ("spark", 2)]
    assert sorted(rows(t.at("pair"))) == [("pair", 0, 0, ("spark", 1)), ("pair", 1, 1, ("spark", 1)),
                                          ("pair", 2, 0, ("spark", 1)), ("pair", 3, 0, ("spark", 1)),
                                          ("pair", 3, 1, ("spark", 1))]
    rare = run.trace_back(("zzrare", 1))
    assert rows(rare.to_pandas()) == [("parallelize", 2, 0, "spark zzrare c")]
    several = run.trace_back(lambda row: row[0] in ("a", "c"))
    assert [r[3] for r in rows(several.to_pandas())] == ["spark a", "spark zzrare c"]


def _many_keys(run, operator="count (combine)"):
    """The run as if its map side had seen too many keys to keep each input's combiner
    (a text's words: ``executor/lineage.FEW_KEYS``): its files keep their metadata only.
    The run is recorded with ``prepare=False``: nothing derives its numbers ahead."""
    import pyarrow as pa

    from icedtea_jupyter.executor.lineage import KEY_OUT, write_links
    from icedtea_jupyter.store import layout

    op = run.dag.node(operator).id
    for name, path in layout.lineage_files(run.path):
        if name.operator == op:
            with pa.memory_map(path) as source:
                schema = pa.ipc.open_file(source).schema
            assert KEY_OUT in schema.names  # few keys here: kept by the run
            write_links(path, pa.schema([], metadata=schema.metadata).empty_table())


def test_a_trace_through_an_aggregation_derives_its_key_links_once(record, monkeypatch):
    # a map side with many keys captures nothing per record (their numbers would cost
    # their entropy in bytes): the first trace that crosses it numbers its regenerated
    # inputs' keys in one job over its partitions; the output rows are what the cell
    # collected, and later traces run no job for positions (their records, when asked, do)
    from icedtea_jupyter.lineage import records as lineage_records
    from icedtea_jupyter.lineage import steps as tracing

    run = record(COUNT, {"WORDS": WORDS, "add": add}, lineage=True, prepare=False)
    _many_keys(run)
    jobs: list = []

    def counted(rdd, parts, real=lineage_records.key_numbers):
        jobs.append(sorted(parts))
        return real(rdd, parts)

    def no_job(*args):
        raise AssertionError("the trace ran a Spark job")
    monkeypatch.setattr(tracing, "fetch", no_job)
    monkeypatch.setattr(tracing, "key_index", no_job)
    monkeypatch.setattr(tracing, "key_numbers", counted)
    t = run.trace_back(("spark", 5))
    assert t.operators == {"parallelize": 4, "split": 5, "pair": 5, "count (combine)": 4,
                           "count": 1}
    assert jobs == [[0, 1, 2, 3]]
    assert t.operators == run.trace_back(lambda row: row == ("spark", 5)).operators
    assert run.trace_forward(at=(2, 1), operator="pair").operators["count"] == 1
    monkeypatch.undo()
    assert rows(t.to_pandas()) == [("parallelize", p, 0, WORDS[p]) for p in range(4)]


def _reopened(run, monkeypatch):
    from icedtea_jupyter.session import registry

    with monkeypatch.context() as patched:
        patched.setattr(registry, "runs", lambda: [])  # as after a kernel restart
        return registry.open_run(run.path)


def _spark_at(run):
    _, outputs = run.lineage_outputs()
    return next((part, pos) for part, pos, row in outputs if row == ("spark", 5))


# "spark" stands on every partition: WORDS[p] is partition p's one line
SPARK_POSITIONS = {"parallelize": 4, "split": 5, "pair": 5, "count (combine)": 4, "count": 1}


def test_a_reopened_run_traces_by_id_to_an_aggregations_map_side_and_says_why_it_stops(
        record, monkeypatch):
    run = record(COUNT, {"WORDS": WORDS, "add": add}, lineage=True, prepare=False)
    _many_keys(run)
    reopened = _reopened(run, monkeypatch)
    t = reopened.trace_back(at=_spark_at(run))
    # the map side links by key: no trace derived its links, no inputs were recorded
    assert t.operators == {"pair": 0, "count (combine)": 4, "count": 1}
    stop = next(note for note in t.notes if "aggregation's map side" in note)
    assert "'count (combine)'" in stop and "no trace crossed it" in stop
    assert "a trace through it in the kernel that recorded the run keeps its links" in stop


def test_a_reopened_run_traces_through_the_key_links_a_live_trace_kept(record, monkeypatch):
    run = record(COUNT, {"WORDS": WORDS, "add": add}, lineage=True, prepare=False)
    _many_keys(run)
    at = _spark_at(run)
    assert run.trace_back(at=at).operators == SPARK_POSITIONS  # derives, keeps them
    reopened = _reopened(run, monkeypatch)
    t = reopened.trace_back(at=at)
    assert t.operators == SPARK_POSITIONS
    # line 0 of each partition, by id (a reopened run has no records to show)
    assert rows(t.to_pandas()) == [("parallelize", p, 0, None) for p in range(4)]
    assert not any("map side" in note for note in t.notes)
    forward = reopened.trace_forward(operator="parallelize", at=(2, 0))  # "spark zzrare c"
    assert forward.operators["count"] == 3


def test_a_line_forward_reaches_the_count_of_each_of_its_words(record):
    run = record(COUNT, {"WORDS": WORDS, "add": add}, lineage=True)
    f = run.trace_forward("spark zzrare c")
    assert sorted(r[3] for r in rows(f.to_pandas())) == [("c", 1), ("spark", 5), ("zzrare", 1)]


UNION = """
left = sc.parallelize([1, 2, 3, 4], 2).map(lambda x: x * 10).setName("tens")
right = sc.parallelize([5, 6, 7], 1)
out = left.union(right).map(lambda x: x + 1).setName("plus one").collect()
"""


def test_a_union_traces_each_output_to_the_side_it_came_from(record):
    run = record(UNION, lineage=True)
    assert run.namespace["out"] == [11, 21, 31, 41, 6, 7, 8]
    assert rows(run.trace_back(31).to_pandas()) == [("parallelize", 1, 0, 3)]
    assert rows(run.trace_back(7).to_pandas()) == [("parallelize#2", 0, 1, 6)]
    # the union's partition 2 is the right side's partition 0
    assert rows(run.trace_forward(6).to_pandas()) == [("plus one", 2, 1, 7)]
    assert rows(run.trace_forward(4).to_pandas()) == [("plus one", 1, 1, 41)]


JOIN = """
orders = sc.parallelize([("ann", 10), ("bob", 20), ("ann", 30), ("eve", 40)], 2)
names = sc.parallelize([("ann", "Ann A."), ("bob", "Bob B."), ("cid", "Cid C.")], 2)
joined = orders.join(names, 2).setName("joined").collect()
"""


def test_a_join_traces_to_every_record_of_its_key_on_both_sides(record, monkeypatch):
    from icedtea_jupyter.lineage import join_keys

    run = record(JOIN, lineage=True)
    assert sorted(run.namespace["joined"]) == [("ann", (10, "Ann A.")), ("ann", (30, "Ann A.")),
                                               ("bob", (20, "Bob B."))]
    # the keys were captured in the run: no Spark job for them
    monkeypatch.setattr(join_keys, "key_columns", lambda wanted: pytest.fail("a keys job"))
    t = run.trace_back(("ann", (30, "Ann A.")))
    # key-based links (Titian): the join's output of key "ann" comes from every "ann"
    assert rows(t.to_pandas()) == [("parallelize", 0, 0, ("ann", 10)),
                                   ("parallelize", 1, 0, ("ann", 30)),
                                   ("parallelize#2", 0, 0, ("ann", "Ann A."))]
    f = run.trace_forward(("bob", "Bob B."))
    assert [r[3] for r in rows(f.to_pandas())] == [("bob", (20, "Bob B."))]
    assert len(run.trace_forward(("eve", 40))) == 0  # no "eve" on the other side


def _uncaptured(run):
    """The run as if its join inputs' keys had not been captured (recorded before)."""
    shutil.rmtree(os.path.join(run.path, "lineage", "derived"))


def test_join_input_keys_not_captured_are_fetched_in_one_job_and_kept(record, monkeypatch):
    # the first trace through the join fetches the keys of every input record in one
    # job (the join's own were captured) and keeps them in the store: a fresh Lineage
    # and a reopened run (no pipeline) trace through the join by id, both ways, no job
    from icedtea_jupyter.lineage import join_keys

    run = record(JOIN, lineage=True)
    _uncaptured(run)
    jobs: list = []

    def counted(wanted, real=join_keys.key_columns):
        jobs.append({node: sorted(parts) for node, (_, parts) in wanted.items()})
        return real(wanted)
    monkeypatch.setattr(join_keys, "key_columns", counted)
    back = run.trace_back(("ann", (30, "Ann A.")))
    ann = [(op, part, pos) for op, part, pos, _ in rows(back.to_pandas())]
    assert ann == [("parallelize", 0, 0), ("parallelize", 1, 0), ("parallelize#2", 0, 0)]
    forward = run.trace_forward(("ann", "Ann A."))
    assert sorted(r[3] for r in rows(forward.to_pandas())) == [("ann", (10, "Ann A.")),
                                                                ("ann", (30, "Ann A."))]
    assert len(jobs) == 1  # the inputs' keys, every partition, kept for the forward trace
    orders, names = (run.dag.node(n).id for n in ("parallelize", "parallelize#2"))
    assert jobs[0] == {orders: [0, 1], names: [0, 1]}
    assert os.listdir(os.path.join(run.path, "lineage", "derived"))

    def no_job(wanted):
        raise AssertionError("the trace ran a Spark job")
    monkeypatch.setattr(join_keys, "key_columns", no_job)
    run._lineage_cache = None  # a fresh Lineage reads the kept keys
    again = run.trace_back(("ann", (30, "Ann A.")))
    assert [(op, part, pos) for op, part, pos, _ in rows(again.to_pandas())] == ann
    reopened = _reopened(run, monkeypatch)
    _, outputs = run.lineage_outputs()
    at = next((part, pos) for part, pos, row in outputs if row == ("ann", (30, "Ann A.")))
    t = reopened.trace_back(at=at)
    assert [(op, part, pos) for op, part, pos, _ in rows(t.to_pandas())] == ann
    assert not any("stops" in note for note in t.notes)
    f = reopened.trace_forward(at=(0, 0), operator="parallelize#2")
    assert f.operators["joined"] == 2, (f.operators, f.notes)  # "ann" with 10 and with 30


def test_an_aggregation_after_a_join_numbers_its_keys_and_keeps_the_joins_in_one_pass(
        record, monkeypatch):
    # the job numbering the map side of "total" runs "named" over the join's outputs and
    # keeps their keys as it goes; the join's inputs' keys were captured in the run
    from icedtea_jupyter.lineage import join_keys

    run = record(JOIN.replace('.setName("joined").collect()', """.setName("joined").map(
    lambda kv: (kv[1][1], kv[1][0])).setName("named").reduceByKey(add).setName("total").collect()
"""), {"add": add}, lineage=True)
    assert sorted(run.namespace["joined"]) == [("Ann A.", 40), ("Bob B.", 20)]
    jobs: list = []

    def counted(wanted, real=join_keys.key_columns):
        jobs.append(set(wanted))
        return real(wanted)
    monkeypatch.setattr(join_keys, "key_columns", counted)
    t = run.trace_back(("Ann A.", 40))
    assert rows(t.to_pandas()) == [("parallelize", 0, 0, ("ann", 10)),
                                   ("parallelize", 1, 0, ("ann", 30)),
                                   ("parallelize#2", 0, 0, ("ann", "Ann A."))]
    assert jobs == []
    reopened = _reopened(run, monkeypatch)
    _, outputs = run.lineage_outputs()
    at = next((part, pos) for part, pos, row in outputs if row == ("Ann A.", 40))
    again = reopened.trace_back(at=at)
    assert [r[:3] for r in rows(again.to_pandas())] == [r[:3] for r in rows(t.to_pandas())]


def test_a_reopened_run_without_its_joins_input_keys_stops_there_and_says_why(
        record, monkeypatch):
    run = record(JOIN, lineage=True)
    _uncaptured(run)
    reopened = _reopened(run, monkeypatch)
    t = reopened.trace_back(at=(0, 0))
    assert t.operators.get("parallelize", 0) == 0 and t.operators["joined"] == 1
    assert any("stops at 'joined', a join" in note for note in t.notes)


OUTER = """
orders = sc.parallelize([("ann", 10), ("bob", 20), ("ann", 30), ("eve", 40)], 2).partitionBy(2)
names = sc.parallelize([("ann", "Ann A."), ("bob", "Bob B."), ("cid", "Cid C.")], 2).partitionBy(2)
left = orders.leftOuterJoin(names).setName("left").collect()
groups = (orders.cogroup(names).mapValues(lambda g: (sorted(g[0]), sorted(g[1])))
          .setName("groups").collect())
"""


def test_outer_joins_and_cogroups_of_inputs_partitioned_alike_link_by_key(record):
    # inputs partitioned alike share the union's partitions: each side is still traced
    # to exactly its records of the key
    run = record(OUTER, lineage=True)
    assert run.status == "finished", run.error
    eve = run.trace_back(("eve", (40, None)), "left")
    assert rows(eve.to_pandas()) == [("parallelize", 1, 1, ("eve", 40))]  # no "eve" name
    cid = run.trace_back(("cid", ([], ["Cid C."])))
    assert rows(cid.to_pandas()) == [("parallelize#2", 1, 1, ("cid", "Cid C."))]
    ann = run.trace_back(("ann", ([10, 30], ["Ann A."])))
    assert {r[3] for r in rows(ann.to_pandas())} == {("ann", "Ann A."), ("ann", 10), ("ann", 30)}
    f = run.trace_forward(("ann", "Ann A."))
    assert [r[3] for r in rows(f.to_pandas())] == [("ann", ([10, 30], ["Ann A."]))]
    assert sorted(r[3] for r in rows(f.at("left"))) == [("ann", (10, "Ann A.")),
                                                         ("ann", (30, "Ann A."))]


def test_a_join_after_theta_records_for_replay_and_traces_by_key(record):
    # θ ("plus") feeds the join: its map side is kept for time travel's replay, as
    # without --lineage, and the trace still links by key through θ
    run = record("""
orders = sc.parallelize([("ann", 10), ("bob", 20), ("ann", 30)], 2).map(
    lambda kv: (kv[0], kv[1] + 1)).setName("plus")
names = sc.parallelize([("ann", "A"), ("bob", "B")], 2)
out = orders.join(names, 2).setName("joined").collect()
""", lineage=True)
    assert run.status == "finished", run.error
    assert run.dag.require_interesting().name == "plus"
    t = run.trace_back(("bob", (21, "B")))
    assert rows(t.to_pandas()) == [("parallelize", 1, 0, ("bob", 20)),
                                   ("parallelize#2", 1, 0, ("bob", "B"))]
    assert rows(t.at("plus")) == [("plus", 1, 0, ("bob", 21))]


def test_a_run_without_lineage_says_how_to_get_it(record):
    run = record("out = sc.parallelize([1, 2], 1).map(lambda x: x).collect()")
    with pytest.raises(NoLineage, match="recorded without --lineage.*%%icedtea --lineage"):
        run.trace_back(1)


def test_a_retried_task_adds_no_duplicate_lineage(record):
    run = record("out = sc.parallelize(range(20), 2).map(flaky).setName('flaky').collect()",
                 {"flaky": flaky}, lineage=True)
    assert run.status == "finished", run.error
    assert run.metrics().set_index("partition").loc[0, "attempts"] == 2
    links = load_links(run.store)[0].to_pandas()
    flaky_links = links[links.op == run.dag.node("flaky").id]
    assert flaky_links.groupby("part").out_count.sum().tolist() == [10, 10]
    t = run.trace_back(lambda x: x < 8)
    assert rows(t.to_pandas()) == [("parallelize", 0, i, i) for i in range(8)]


def test_tracing_leaves_the_runs_counts_as_they_were(record):
    # the trace's records are regenerated by jobs that run the hosts again, after the run
    run = record(CHAIN, {"LINES": LINES}, lineage=True)
    before = run.metrics()[["operator", "partition", "records_in", "attempts"]]
    assert len(run.trace_back("SPARK").to_pandas()) == 4
    assert len(run.trace_forward("zzrare").to_pandas()) == 1
    after = run.metrics()[["operator", "partition", "records_in", "attempts"]]
    assert after.equals(before) and set(after.attempts) == {1}


def test_a_dataframes_rdd_is_a_source_and_a_dataframe_output_traces_back_to_its_rows(record):
    run = record("""
df = spark.createDataFrame([("ann", 5.0), ("bob", 7.0)], "name string, amount double")
doubled = df.rdd.map(lambda r: (r.name, r.amount * 2)).setName("double").collect()
same = df.mapInPandas(lambda frames: frames, df.schema).collect()
""", lineage=True)
    assert run.status == "finished", run.error
    [(operator, _, _, row)] = rows(run.trace_back(("bob", 14.0), operator="double").to_pandas())
    assert operator == "rdd" and row.name == "bob" and row.amount == 7.0
    # the cell's last operator is the DataFrame's mapInPandas: DataFrame lineage
    t = run.trace_back(lambda row: row.name == "ann")
    assert [(r.operator, tuple(r.record)) for r in t.to_pandas().itertuples()] == [
        ("createDataFrame", ("ann", 5.0))]


def test_a_reopened_run_traces_by_id_and_says_it_has_no_records(record, monkeypatch):
    from icedtea_jupyter.session import registry

    run = record(CHAIN, {"LINES": LINES}, lineage=True)
    monkeypatch.setattr(registry, "runs", lambda: [])  # as after a kernel restart
    reopened = registry.open_run(run.path)
    assert reopened is not run and reopened.output_rdd(0) is None
    with pytest.raises(LookupError, match=r"no longer has its pipeline.*at=\(partition, position\)"):
        reopened.trace_back("SPARK")
    # "THE" of "the cat sat" is upper's output 3 on partition 0 (after "SPARK", "IS", "FAST")
    t = reopened.trace_back(at=(0, 3))
    assert rows(t.to_pandas()) == [("parallelize", 0, 2, None)]
    assert "reopened run" in t.notes[0]
    f = reopened.trace_forward(operator="parallelize", at=(1, 2))  # "# another": filtered out
    assert len(f) == 0


def test_replay_reruns_the_operators_on_only_the_traced_source_records(record):
    run = record(COUNT, {"WORDS": WORDS, "add": add}, lineage=True)
    # the lines with "zzrare": only "spark zzrare c", so spark counts 1 in the replay
    assert sorted(run.trace_back(("zzrare", 1)).replay()) == [("c", 1), ("spark", 1),
                                                               ("zzrare", 1)]
    assert dict(run.trace_back(("spark", 5)).replay())["spark"] == 5  # all four lines
    chain = record(CHAIN, {"LINES": LINES}, lineage=True)
    assert chain.trace_back("CAT").replay() == ["THE", "CAT", "SAT"]
    with pytest.raises(ValueError, match="replay re-runs the sources a backward trace"):
        chain.trace_forward("the cat sat").replay()
