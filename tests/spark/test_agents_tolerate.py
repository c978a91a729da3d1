"""--tolerate N: the crash culprits in one pass equal Inspector Gadget's multi-pass search."""
import os

import pandas as pd
import pytest

pytestmark = pytest.mark.spark

RECORDS, PARTITIONS = 96, 4
PLANTED = {7, 50, 83}  # on partitions 0, 2 and 3 of parallelize(range(96), 4)


class Parser:
    """x -> x * 2, raising on the planted records; ``seen`` counts its calls (state)."""

    def __init__(self, planted):
        self.planted, self.seen = set(planted), 0

    def __call__(self, x):
        self.seen += 1
        if x in self.planted:
            raise ValueError(f"cannot parse {x}")
        return x * 2


def job_fails(sc, records):
    """One pass of the search: does the pipeline fail on these records?"""
    try:
        sc.parallelize(records, 1).map(Parser(PLANTED)).count()
    except Exception:
        return True
    return False


def multi_pass_culprits(sc, records):
    """Inspector Gadget's search without the agent: re-run on halves of a failing input
    until single records remain."""
    if not job_fails(sc, records):
        return set()
    if len(records) == 1:
        return set(records)
    half = len(records) // 2
    return multi_pass_culprits(sc, records[:half]) | multi_pass_culprits(sc, records[half:])


def test_one_pass_quarantine_equals_the_multi_pass_search(record, sc):
    run = record(f"out = sc.parallelize(range({RECORDS}), {PARTITIONS})"
                 ".map(Parser(planted)).setName('parse').collect()",
                 {"Parser": Parser, "planted": PLANTED}, tolerate=len(PLANTED))
    assert run.status == "finished", run.error
    assert sorted(run.namespace["out"]) == [x * 2 for x in range(RECORDS) if x not in PLANTED]
    quarantine = run.quarantine()
    assert set(quarantine["reason"]) == {"raised"}
    oracle = multi_pass_culprits(sc, list(range(RECORDS)))
    assert oracle == PLANTED
    assert set(quarantine["value"]) == oracle
    size = RECORDS // PARTITIONS
    for row in quarantine.itertuples():
        assert row.operator == "parse" and row.exception == "ValueError"
        assert row.partition == row.value // size and row.index == row.value % size
        assert f"cannot parse {row.value}" in row.message and "__call__" in row.traceback
        assert row.state["seen"] == str(row.index + 1)  # the worker's state then
    stored = pd.read_json(f"{run.path}/agents/quarantine.jsonl", lines=True)
    assert set(stored["value"]) == PLANTED  # a file pandas reads as it is
    alerts = run.alerts()
    assert set(alerts[alerts["tool"] == "tolerate"]["record"]) == {str(x) for x in PLANTED}


def test_one_more_than_n_fails_the_run_saying_n_was_reached(record):
    planted = {3, 9}  # both on partition 0: its worker counts them in order
    run = record("out = sc.parallelize(range(40), 2).map(Parser(planted)).setName('parse')"
                 ".collect()", {"Parser": Parser, "planted": planted}, tolerate=1)
    assert run.status == "failed"
    assert "--tolerate 1 reached" in run.error["message"]
    assert run.error["record"]["repr"] == "9"
    assert list(run.quarantine()["value"]) == [3]  # what was quarantined is kept


class FailsTogether:
    """x -> x, raising on ``planted`` only once every partition's worker has reached its
    planted record (files in ``meeting``): the failures happen at the same instant."""

    def __init__(self, planted, meeting):
        self.planted, self.meeting = set(planted), meeting

    def __call__(self, x):
        if x in self.planted:
            import os
            import time

            open(os.path.join(self.meeting, str(x)), "w").close()
            deadline = time.monotonic() + 30
            while len(os.listdir(self.meeting)) < len(self.planted) \
                    and time.monotonic() < deadline:
                time.sleep(0.001)
            raise ValueError(f"cannot parse {x}")
        return x


def test_two_workers_failing_at_once_cannot_both_take_the_last_place(record, tmp_path):
    meeting = tmp_path / "meeting"
    meeting.mkdir()
    planted = {5, 25}  # one on each partition of parallelize(range(40), 2)
    run = record("out = sc.parallelize(range(40), 2).map(FailsTogether(planted, meeting))"
                 ".setName('parse').collect()",
                 {"FailsTogether": FailsTogether, "planted": planted,
                  "meeting": str(meeting)}, tolerate=1)
    assert sorted(os.listdir(meeting)) == ["25", "5"]  # both workers met
    assert run.status == "failed"  # the second failure found the one place taken
    assert "--tolerate 1 reached" in run.error["message"]
    quarantine = run.quarantine()
    assert len(quarantine) == 1 and quarantine["value"].iloc[0] in planted
    assert run.error["record"]["value"] == ({5, 25} - {quarantine["value"].iloc[0]}).pop()


def test_functions_and_operators_in_blocks_skip_exactly_the_culprits(record):
    """A map's function and an Operator run in blocks (their C loops resumed after a
    quarantined record): the outputs, the culprits and the Operator's state are exact."""
    code = """
from icedtea_jupyter import Operator

class Total(Operator):
    def open(self):
        self.total = 0
    def process(self, x):
        if x % 50 == 7:
            raise ValueError(f"bad total {x}")
        self.total += x
        yield self.total

def parse(x):
    if x % 50 == 3:
        raise ValueError(f"cannot parse {x}")
    return x

out = sc.parallelize(range(200), 2).map(lambda x: parse(x)).setName('parse') \\
    .mapPartitions(Total()).setName('total').collect()
"""
    run = record(code, tolerate=8)
    assert run.status == "finished", run.error
    bad_parse, bad_total = {3, 53, 103, 153}, {7, 57, 107, 157}
    expected = []
    for part in (range(100), range(100, 200)):
        total = 0
        for x in part:
            if x in bad_parse or x in bad_total:
                continue
            total += x
            expected.append(total)
    assert run.namespace["out"] == expected
    quarantine = run.quarantine()
    by_operator = quarantine.groupby("operator")["value"].apply(set).to_dict()
    assert by_operator == {"parse": bad_parse, "total": bad_total}
    for row in quarantine[quarantine["operator"] == "total"].itertuples():
        start = row.value - row.value % 100  # its partition's first record
        kept = [x for x in range(start, row.value) if x not in bad_parse | bad_total]
        assert row.state["total"] == str(sum(kept))  # the Operator's state then
