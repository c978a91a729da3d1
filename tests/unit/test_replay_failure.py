"""A failed run in the replay engine (no Spark): ``jump_to_failure`` and the step onto the
culprit record, which reproduces the recorded exception instead of a ReplayError."""
from __future__ import annotations

import pytest

from icedtea_jupyter.executor.operator import Operator
from icedtea_jupyter.executor.wrappers import PartitionFunction
from icedtea_jupyter.replay.cursor import StepRefused
from icedtea_jupyter.replay.debugger import Debugger
from icedtea_jupyter.replay.logs import Failure, MemoryLogs, Target
from icedtea_jupyter.replay.worker import ReplayError


class Fragile(Operator):
    """10 // x: raises ZeroDivisionError on 0."""

    def open(self):
        self.seen = 0
        self.total = 0

    def process(self, x):
        self.seen += 1
        self.total += 10 // x
        yield self.total


class Inputs:
    def __init__(self, data):
        self.data = data

    def records(self, partition):
        return list(self.data[partition])


DATA = {0: [5, 2, 1, 0, 4], 1: [1, 2]}
# I1: partition 0 after two records; partition 1 had ended
TARGETS = [{0: Target(0), 1: Target(0)}, {0: Target(2), 1: Target(2, True)}]
CULPRIT = Failure(partition=0, operator="fragile", index=3, scope=3,
                  exception="ZeroDivisionError", before=1)


def engine(failure=CULPRIT, targets=TARGETS):
    logs = MemoryLogs(chain=["fragile"], targets=targets, failure=failure,
                      operators={"fragile": lambda: PartitionFunction(None, "mapPartitions",
                                                                      Fragile())})
    return Debugger(logs, Inputs(DATA))


def test_jump_to_failure_stands_before_the_culprit_and_the_step_reproduces_it():
    dbg = engine()
    try:
        at = dbg.jump_to_failure()
        assert at.partition == 0 and at.failure is None and at.index is None
        assert at.state("fragile", 0) == {"seen": 3, "total": 2 + 5 + 10}
        assert at.state("fragile", 1) == {"seen": 2, "total": 15}  # as at I1
        assert dbg.pending(0)["fragile"]["records"][0] == 0  # the culprit is next
        end = dbg.step_over(0)
        assert end.failure["exception"] == "ZeroDivisionError" and end.failure["index"] == 3
        assert "self.total += 10 // x" in end.failure["traceback"]
        assert end.state("fragile", 0) == {"seen": 4, "total": 17}  # as it raised
        assert dbg.ended(0) and 0 in dbg.step_options()["ended"]
        with pytest.raises(StepRefused, match="ended as in the recorded run"):
            dbg.step_into(0, "fragile")
        again = dbg.jump_to_failure()  # and back, as often as wanted
        assert again.failure is None and again.state("fragile", 0)["seen"] == 3
    finally:
        dbg.close()


def fragile(rows):
    """A generator operator: its state is its local variables."""
    seen = 0
    for x in rows:
        seen += 1
        yield 10 // x


def test_a_generators_locals_are_its_state_when_it_raised():
    logs = MemoryLogs(chain=["fragile"], targets=TARGETS, failure=CULPRIT,
                      operators={"fragile": lambda: PartitionFunction(None, "mapPartitions",
                                                                      fragile)})
    dbg = Debugger(logs, Inputs(DATA))
    try:
        assert dbg.jump_to_failure().state("fragile", 0) == {"seen": 3, "x": 1}
        end = dbg.step_over(0)
        assert end.failure["exception"] == "ZeroDivisionError"
        assert end.state("fragile", 0) == {"seen": 4, "x": 0}  # not a closed frame's {}
    finally:
        dbg.close()


def test_a_jump_past_the_failure_shows_the_partition_ended_by_it():
    dbg = engine(targets=TARGETS + [{0: Target(4, True), 1: Target(2, True)}])
    try:
        snapshot = dbg.jump(2)
        assert snapshot.failure["operator"] == "fragile" and snapshot.failure["partition"] == 0
    finally:
        dbg.close()


@pytest.mark.parametrize("failure", [
    None,  # a run that did not fail there: the exception is a divergence
    Failure(0, "fragile", 3, 3, "ValueError", before=1),  # another exception
    Failure(0, "fragile", 4, 4, "ZeroDivisionError", before=1),  # another record
])
def test_an_exception_the_run_did_not_raise_is_a_replay_error(failure):
    dbg = engine(failure=failure)
    try:
        dbg.jump(1)
        dbg.step_over(0)
        with pytest.raises(ReplayError, match="the recorded run did not"):
            dbg.step_over(0)
    finally:
        dbg.close()


def test_jump_to_failure_says_why_there_is_none():
    dbg = engine(failure=None)
    try:
        with pytest.raises(StepRefused, match="did not fail: there is no failure to jump to"):
            dbg.jump_to_failure()
    finally:
        dbg.close()
