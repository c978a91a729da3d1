"""RDD operators PySpark builds from its own calls or a JVM round trip (a sort, a
partitionBy, a zip with an index, a pipe...): the DAG runs through them to the real
source, and traces return the records the pipeline really read and made."""
import ast
import collections
import random
from operator import add

import pytest

from icedtea_jupyter import Operator

pytestmark = pytest.mark.spark

_rnd = random.Random(37)
# (user, time, page); u000 makes 40% of the clicks
CLICKS = [("u000" if i % 5 < 2 else f"u{_rnd.randrange(1, 12):03d}", _rnd.randrange(0, 20_000),
           _rnd.choice(["home", "cart", "buy"])) for i in range(1500)]
GAP = 1800


class Sessionize(Operator):
    """Numbers each user's sessions (a gap of more than GAP seconds starts one)."""

    GAP = GAP

    def open(self):
        self.last = {}
        self.n = {}

    def process(self, kv):
        (user, t), page = kv
        if user not in self.last or t - self.last[user] > self.GAP:
            self.n[user] = self.n.get(user, 0) + 1
        self.last[user] = t
        yield (user, self.n[user]), 1


SESSIONS = """
from pyspark.rdd import portable_hash
clicks = sc.parallelize(CLICKS, 4)
keyed = clicks.map(lambda c: ((c[0], c[1]), c[2])).setName("key by user, time")
s = (keyed.repartitionAndSortWithinPartitions(4, partitionFunc=lambda k: portable_hash(k[0]))
     .mapPartitions(Sessionize()).setName("sessionize")
     .reduceByKey(add).setName("clicks per session")
     .map(lambda kv: (kv[0][0], 1)).reduceByKey(add).setName("sessions per user"))
out = s.collect()
"""


def sessions_per_user():
    """The oracle: each user's sessions, from the clicks sorted by time."""
    times = collections.defaultdict(list)
    for user, t, _ in CLICKS:
        times[user].append(t)
    return {user: 1 + sum(b - a > GAP for a, b in zip(sorted(ts), sorted(ts)[1:]))
            for user, ts in times.items()}


def ancestors(dag, name):
    parents = {down: set() for _, down in dag.edges}
    for up, down in dag.edges:
        parents[down].add(up)
    found, todo = set(), [name]
    while todo:
        for up in parents.get(todo.pop(), ()):
            if up not in found:
                found.add(up)
                todo.append(up)
    return found


def records(trace):
    return sorted(map(tuple, trace.to_pandas()[["operator", "record"]].itertuples(index=False)))


def test_the_sessionize_pipeline_traces_through_its_sort_to_the_clicks(record):
    run = record(SESSIONS, {"CLICKS": CLICKS, "Sessionize": Sessionize, "add": add},
                 lineage=True, skew=True, interesting="sessionize")
    assert run.status == "finished", run.error
    oracle = sessions_per_user()
    assert dict(run.namespace["out"]) == oracle
    assert ancestors(run.dag, "sessionize") == {
        "repartitionAndSortWithinPartitions", "key by user, time", "parallelize"}
    back = run.trace_back(("u000", oracle["u000"]))
    assert records(back) == sorted(("parallelize", c) for c in CLICKS if c[0] == "u000")
    assert back.notes == ["'repartitionAndSortWithinPartitions' (a JVM repartitionAndSort"
                          "WithinPartitions) is traced by record equality: records equal to "
                          "a traced one are linked with it"]
    user = CLICKS[5][0]
    forward = run.trace_forward(CLICKS[5])
    assert records(forward) == [("sessions per user", (user, oracle[user]))]


def user_of_kv(kv):
    return kv[0][0], 1


def user_of_zipped(pair):
    return pair[0][0][0], 1


# operator -> (the code applied to `keyed`, the map to the user, or None: not traced)
MOVES = {
    "repartitionAndSortWithinPartitions": "repartitionAndSortWithinPartitions(3)",
    "sortByKey": "sortByKey(numPartitions=3)",
    "sortBy": "sortBy(lambda kv: kv[0][1], numPartitions=3)",
    "partitionBy": "partitionBy(3)",
    "coalesce": "coalesce(2)",
    "repartition": "repartition(3)",
}
ZIPS = {"zipWithIndex": "zipWithIndex()", "zipWithUniqueId": "zipWithUniqueId()"}
CUT = """
keyed = sc.parallelize(CLICKS, 4).map(lambda c: ((c[0], c[1]), c[2])).setName("key")
moved = keyed.{op}
out = moved.map(USER).setName("user").reduceByKey(add).setName("count").collect()
"""


def per_user():
    return collections.Counter(user for user, _, _ in CLICKS)


def check_traces(run, first, source="parallelize", to_source=lambda c: c):
    """The output row of the clicks' first user traces back to exactly that user's
    source records; the first click traces forward to that user's count."""
    counts = per_user()
    assert dict(run.namespace["out"]) == counts
    user = first[0]
    back = run.trace_back((user, counts[user]))
    assert records(back) == sorted((source, to_source(c)) for c in CLICKS if c[0] == user)
    forward = run.trace_forward(to_source(first))
    assert records(forward) == [("count", (user, counts[user]))]
    return back, forward


@pytest.mark.parametrize("op", [*MOVES, *ZIPS])
def test_the_operator_after_a_cut_reads_the_real_source_and_traces_pass_it(record, op):
    code = CUT.format(op={**MOVES, **ZIPS}[op])
    run = record(code, {"CLICKS": CLICKS, "add": add,
                        "USER": user_of_zipped if op in ZIPS else user_of_kv},
                 lineage=True, skew=True, interesting="user")  # --skew: hosted shuffles
    assert run.status == "finished", run.error
    assert ancestors(run.dag, "user") == {op, "key", "parallelize"}
    assert [n.name for n in run.dag.operators if not n.parents] == ["parallelize"]
    back, forward = check_traces(run, CLICKS[7])
    moved = [f"{op!r} (a JVM {op}) is traced by record equality: records equal to a "
             "traced one are linked with it"] if op in MOVES else []
    assert back.notes == forward.notes == moved


def user_of_line(line):
    return ast.literal_eval(line)[0][0], 1


def users_of_partition(part):
    return [(kv[0][0], 1) for kv in part]


@pytest.mark.parametrize("op, after", [("pipe", "pipe('cat').map(USER)"),
                                       ("glom", "glom().flatMap(USERS)")])
def test_an_operator_lineage_cannot_pass_is_named_both_ways(record, op, after):
    code = CUT.format(op=after).replace("moved.map(USER)", "moved")
    run = record(code, {"CLICKS": CLICKS, "add": add, "USER": user_of_line,
                        "USERS": users_of_partition}, lineage=True)
    assert run.status == "finished", run.error
    assert op in ancestors(run.dag, "count") and "parallelize" in ancestors(run.dag, "count")
    counts = per_user()
    assert dict(run.namespace["out"]) == counts
    note = f"the trace stops at {op!r}: lineage through a jvm {op} is not captured"
    back = run.trace_back(("u000", counts["u000"]))
    assert back.notes == [note]
    assert {r[0] for r in records(back)} == {op}  # where it stopped, not a source
    forward = run.trace_forward(CLICKS[0])
    assert len(forward) == 0 and forward.notes == [note]


@pytest.mark.parametrize("keep", ["cache()", "persist()", "checkpoint()", "localCheckpoint()"])
def test_an_rdd_kept_in_the_cell_stays_one_node_of_its_pipeline(record, sc, tmp_path, keep):
    sc.setCheckpointDir(str(tmp_path / "checkpoints"))
    code = ("keyed = sc.parallelize(CLICKS, 4).map(lambda c: ((c[0], c[1]), c[2]))"
            f".setName('key')\nkeyed.{keep}\nn = keyed.count()\n"
            "out = keyed.map(USER).setName('user').reduceByKey(add).setName('count').collect()")
    run = record(code, {"CLICKS": CLICKS, "add": add, "USER": user_of_kv}, lineage=True,
                 interesting="user")
    assert run.status == "finished", run.error
    assert ancestors(run.dag, "user") == {"key", "parallelize"}
    back, forward = check_traces(run, CLICKS[3])
    assert back.notes == forward.notes == []


EARLIER = ("keyed = sc.parallelize(CLICKS, 4).map(lambda c: ((c[0], c[1]), c[2]))"
           ".setName('key by user, time').cache()\nn = keyed.count()")
LATER = "out = keyed.map(USER).setName('user').reduceByKey(add).setName('count').collect()"


@pytest.mark.parametrize("recorded", [True, False])
def test_an_rdd_of_an_earlier_cell_is_a_node_made_before_the_cell(record, sc, recorded):
    names = {"CLICKS": CLICKS, "add": add, "USER": user_of_kv}
    if recorded:
        earlier = record(EARLIER, names, lineage=True)
        assert earlier.status == "finished", earlier.error
        names.update(keyed=earlier.namespace["keyed"])
    else:
        plain = dict(names, sc=sc)
        exec(EARLIER, plain)
        names.update(keyed=plain["keyed"])
    run = record(LATER, names, lineage=True)
    assert run.status == "finished", run.error
    before = "key by user, time (made before the cell)"
    assert run.dag.edges[0] == (before, "user")
    assert [n.name for n in run.dag.operators if not n.parents] == [before]
    back, _ = check_traces(run, CLICKS[9], before, lambda c: ((c[0], c[1]), c[2]))
    assert back.notes == [f"the trace ends at {before!r}: the cell did not make it, so its "
                          "records are where this cell's lineage starts"]


UNFOLLOWED = """
from pyspark.core.rdd import RDD
keyed = sc.parallelize(CLICKS, 4).map(lambda c: ((c[0], c[1]), c[2])).setName("key")
cut = RDD(keyed._jrdd, sc, keyed._jrdd_deserializer)  # a JVM round trip no patch sees
out = cut.map(USER).setName("user").reduceByKey(add).setName("count").collect()
"""


def test_an_rdd_built_by_a_call_not_followed_is_a_cut_the_traces_name(record):
    run = record(UNFOLLOWED, {"CLICKS": CLICKS, "add": add, "USER": user_of_kv}, lineage=True)
    assert run.status == "finished", run.error
    cut = "rdd built by an untracked call"
    assert ancestors(run.dag, "user") == {cut}
    said = (f"the DAG is cut at {cut!r}: PySpark built it by a call the recorder does not "
            "follow, so what comes before it is not linked to what reads it")
    back = run.trace_back(("u000", per_user()["u000"]))
    assert said in back.notes and {r[0] for r in records(back)} == {cut}
    forward = run.trace_forward(CLICKS[0])
    assert len(forward) == 0 and said in forward.notes
