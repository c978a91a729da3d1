"""--tolerate N: the crash culprits in one pass equal Inspector Gadget's multi-pass search."""
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
