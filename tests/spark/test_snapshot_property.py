"""Property: every snapshot equals what a plain sequential loop holds after the same prefix."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icedtea_jupyter import Operator

pytestmark = pytest.mark.spark


class RunningSum(Operator):
    def open(self):
        self.total = 0

    def process(self, x):
        self.total += x
        yield x


class KeepEven(Operator):
    def open(self):
        self.dropped = 0

    def process(self, x):
        if x % 2:
            self.dropped += 1
        else:
            yield x


class Twice(Operator):
    def open(self):
        self.seen = []

    def process(self, x):
        self.seen.append(x)
        yield x
        yield x + 1


class Highest(Operator):
    def open(self):
        self.best = None

    def process(self, x):
        self.best = x if self.best is None else max(self.best, x)
        yield x


LIBRARY = {"RunningSum": RunningSum, "KeepEven": KeepEven, "Twice": Twice, "Highest": Highest}


def reference(chain, records):
    """States after pushing ``records`` one by one through fresh operators, and input counts."""
    operators = [LIBRARY[name]() for name in chain]
    for op in operators:
        op.open()
    counts = [0] * len(operators)

    def push(level, record):
        counts[level] += 1
        for out in operators[level].process(record):
            if level + 1 < len(operators):
                push(level + 1, out)

    for record in records:
        push(0, record)
    return [vars(op) for op in operators], counts


def partition_slices(data, partitions):
    n = len(data)
    return [data[i * n // partitions:(i + 1) * n // partitions] for i in range(partitions)]


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.lists(st.integers(0, 50), min_size=1, max_size=40),
       chain=st.lists(st.sampled_from(sorted(LIBRARY)), min_size=1, max_size=3))
def test_snapshots_equal_a_sequential_reference(record, data, chain):
    names = [f"op{i}" for i in range(len(chain))]
    steps = "".join(f".mapPartitions({kind}()).setName('{name}')"
                    for kind, name in zip(chain, names))
    code = f"out = sc.parallelize(data, 2){steps}.collect()"
    run = record(code, dict(LIBRARY, data=data), interact_when="row % 5 == 0")
    assert run.status == "finished", run.error
    slices = partition_slices(data, 2)
    hits = sum(1 for x in data if x % 5 == 0)
    assert len(run.interactions) == 1 + hits
    for interaction in run.interactions:
        snapshot = run.snapshot(interaction.index)
        for p, records in enumerate(slices):
            processed = interaction.counts[("op0", p)]
            if snapshot.status("op0", p) == "not started":
                continue
            states, counts = reference(chain, records[:processed])
            for level, name in enumerate(names):
                if counts[level] == 0 and snapshot.state(name, p) is None:
                    continue  # no record reached it yet: nothing to compare
                assert snapshot.state(name, p) == states[level], (
                    interaction, p, name, data, chain, snapshot.workers())
                assert interaction.counts[(name, p)] == counts[level], (interaction, p, name)


SOURCES = {  # θ's input: straight from parallelize, after a union, after a shuffle
    "chain": ("sc.parallelize(data, 2)", lambda data: partition_slices(data, 2)),
    "union": ("sc.parallelize(data[:len(data) // 2], 1).union(sc.parallelize("
              "data[len(data) // 2:], 1))",
              lambda data: [data[:len(data) // 2], data[len(data) // 2:]]),
    "shuffle": ("sc.parallelize(data, 2).map(lambda x: (x, x)).partitionBy(2, lambda k: k % 2)"
                ".values()", None),
}


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.lists(st.integers(0, 50), min_size=1, max_size=40),
       chain=st.lists(st.sampled_from(sorted(LIBRARY)), min_size=1, max_size=3),
       source=st.sampled_from(sorted(SOURCES)))
def test_every_jump_equals_a_sequential_reference(record, data, chain, source):
    names = [f"op{i}" for i in range(len(chain))]
    steps = "".join(f".mapPartitions({kind}()).setName('{name}')"
                    for kind, name in zip(chain, names))
    code, slicer = SOURCES[source]
    run = record(f"out = {code}{steps}.collect()", dict(LIBRARY, data=data),
                 interact_when="row % 5 == 0", record_inputs=source == "shuffle",
                 interesting="op0")
    assert run.status == "finished", run.error
    slices = ([run.recorded_inputs(p) for p in range(2)] if slicer is None else slicer(data))
    dbg = run.debugger()
    assert dbg.chain == names
    for interaction in reversed(run.interactions):
        jumped = dbg.jump(interaction.index)
        assert not jumped.notes, jumped.notes  # replay matched the logs
        for p, records in enumerate(slices):
            processed = interaction.counts[("op0", p)] or 0
            states, counts = reference(chain, records[:processed])
            for level, name in enumerate(names):
                assert jumped.state(name, p) == states[level], (interaction, p, name, source)
                assert jumped.count(name, p) == counts[level], (interaction, p, name, source)
