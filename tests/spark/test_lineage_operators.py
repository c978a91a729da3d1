"""Lineage through the other operator kinds: keyBy, mapValues, flatMapValues, groupByKey,
a generator's mapPartitions, an Operator with a closing output, a JVM distinct."""
import pytest

from icedtea_jupyter import Operator

pytestmark = pytest.mark.spark


def rows(frame):
    return [tuple(row) for row in frame.itertuples(index=False)]


KEYED = """
pets = sc.parallelize(["cat:tom", "dog:rex", "cat:kit", "cow:moo"], 2)
grouped = (pets.keyBy(lambda s: s.split(":")[0]).setName("by kind")
               .mapValues(lambda s: s.split(":")[1]).setName("names")
               .flatMapValues(lambda n: [n, n.upper()]).setName("both cases")
               .groupByKey(2).setName("group")
               .mapValues(sorted).setName("sorted").collect())
"""


def test_keyed_operators_and_a_group_trace_both_ways(record):
    run = record(KEYED, lineage=True)
    assert run.status == "finished", run.error
    assert dict(run.namespace["grouped"])["cat"] == ["KIT", "TOM", "kit", "tom"]
    t = run.trace_back(lambda row: row[0] == "cat")
    assert rows(t.to_pandas()) == [("parallelize", 0, 0, "cat:tom"), ("parallelize", 1, 0, "cat:kit")]
    # partition 0: tom, TOM, rex, REX; partition 1: kit, KIT, moo, MOO
    assert rows(t.at("both cases")) == [
        ("both cases", 0, 0, ("cat", "tom")), ("both cases", 0, 1, ("cat", "TOM")),
        ("both cases", 1, 0, ("cat", "kit")), ("both cases", 1, 1, ("cat", "KIT"))]
    f = run.trace_forward("dog:rex")
    assert [r[3] for r in rows(f.to_pandas())] == [("dog", ["REX", "rex"])]


def running_sums(numbers):
    total = 0
    for x in numbers:
        total += x
        yield total


DISTINCT = """
sums = sc.parallelize([3, 1, 3, 2, 5, 1], 2).mapPartitions(running_sums).setName("running")
out = sorted(sums.distinct(2).map(lambda x: x * 100).setName("hundreds").collect())
"""


def test_a_generator_and_a_distinct_link_by_position_and_by_equal_records(record):
    run = record(DISTINCT, {"running_sums": running_sums}, lineage=True)
    assert run.namespace["out"] == [200, 300, 400, 700, 800]  # sums 3 4 7 | 2 7 8
    t = run.trace_back(700)
    # 7 is the running sum at position 2 of partition 0 and at position 1 of partition 1
    assert rows(t.at("running")) == [("running", 0, 2, 7), ("running", 1, 1, 7)]
    assert rows(t.to_pandas()) == [("parallelize", 0, 2, 3), ("parallelize", 1, 1, 5)]
    assert t.notes == ["'distinct' (a JVM distinct) is traced by record equality: records "
                       "equal to a traced one are linked with it"]
    assert [r[3] for r in rows(run.trace_forward(lambda x: x == 5).to_pandas())] == [700]


class Dedupe(Operator):
    """Passes each value the first time it is seen; at the end, how many were seen."""

    def open(self):
        self.seen = set()

    def process(self, x):
        if x not in self.seen:
            self.seen.add(x)
            yield x

    def close(self):
        yield ("seen", len(self.seen))


def test_an_operators_closing_output_comes_from_every_input_of_its_partition(record):
    run = record("out = sc.parallelize([3, 1, 3, 2, 5, 1], 2).mapPartitions(Dedupe())"
                 ".setName('dedupe').collect()", {"Dedupe": Dedupe}, lineage=True)
    assert run.namespace["out"] == [3, 1, ("seen", 2), 2, 5, 1, ("seen", 3)]
    assert [r[2] for r in rows(run.trace_back(("seen", 2)).to_pandas())] == [0, 1, 2]
    assert rows(run.trace_back(3).to_pandas()) == [("parallelize", 0, 0, 3)]  # not the repeat
    repeat = run.trace_forward(lambda x: x == 3)  # both 3s: the first passes, both are seen
    assert [r[3] for r in rows(repeat.to_pandas())] == [3, ("seen", 2)]


class Total(Operator):
    """The running total of a partition, beside each value."""

    def open(self):
        self.total = 0

    def process(self, x):
        self.total += x
        yield x, self.total


def test_jump_to_a_traced_record_puts_theta_just_before_it(record):
    run = record("out = (sc.parallelize(list(range(1, 21)), 2).mapPartitions(Total())"
                 ".setName('total').filter(lambda r: r[0] % 5 == 0).setName('fives').collect())",
                 {"Total": Total}, lineage=True)
    assert run.namespace["out"][2] == (15, 65)  # partition 1 holds 11..20
    t = run.trace_back((15, 65))
    assert t.first() == ("parallelize", 1, 4, 15) and t.first().theta_input() == (1, 4)
    dbg = run.debugger()
    snapshot = dbg.jump_to(t.first())
    assert snapshot.count("total", 1) == 4  # 11, 12, 13, 14 processed; 15 comes next
    assert dbg.state("total", 1)["total"] == 11 + 12 + 13 + 14
    with pytest.raises(TypeError, match="jump_to takes a record of a lineage trace"):
        dbg.jump_to("15")


def test_a_union_of_inputs_partitioned_alike_says_it_is_not_traced(record):
    run = record("""
a = sc.parallelize([(1, "a"), (2, "b")], 2).partitionBy(2)
b = sc.parallelize([(3, "c"), (4, "d")], 2).partitionBy(2)
out = a.union(b).mapValues(str.upper).setName("upper").collect()
""", lineage=True)
    t = run.trace_back((3, "C"))
    assert rows(t.to_pandas()) == [("union", 1, 1, (3, "c"))]  # where the trace stops
    assert t.notes == ["the trace stops at 'union': a union of inputs partitioned alike (each "
                       "of its partitions holds every input's) is not traced yet"]
