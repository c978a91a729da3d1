"""An aggregation's map side with few keys keeps each input's combiner during the run
(issue 12): a trace crosses it with no Spark job, in the kernel that ran the cell and in
a reopened run; with many keys (a text's words) it keeps none and a trace numbers them
in one job, as before."""
import os
from operator import add

import pyarrow as pa
import pytest

from icedtea_jupyter.executor.lineage import FEW_KEYS, KEY_OUT
from icedtea_jupyter.lineage import steps
from icedtea_jupyter.session import registry
from icedtea_jupyter.store import layout
from tests.spark.test_dataframe_frames_ahead import writer_of

pytestmark = pytest.mark.spark

PARITY = """
pairs = sc.parallelize(NUMBERS, 2).map(lambda n: (n % 2, n)).setName("parity")
sums = pairs.reduceByKey(add).setName("sum").collect()
"""
NUMBERS = [3, 4, 7, 9, 10, 12, 15, 1]  # partition 0: 3 4 7 9; partition 1: 10 12 15 1


def map_side_files(run):
    """Partition -> the map side's (``sum (combine)``) lineage table."""
    op = run.dag.node("sum (combine)").id
    tables = {}
    for name, path in layout.lineage_files(run.path):
        if name.operator == op:
            with pa.memory_map(path) as source:
                tables[name.partition] = pa.ipc.open_file(source).read_all()
    return tables


def no_job(monkeypatch):
    def refused(node, parts):
        raise AssertionError(f"the trace ran a job to number the keys of {node} on {parts}")
    monkeypatch.setattr(steps.Lineage, "_key_numbers", lambda self, node, parts: refused(node, parts))


def sources(trace):
    return sorted((r.operator, r.partition, r.position) for r in trace.to_pandas().itertuples())


def test_few_keys_are_kept_and_a_trace_needs_no_job(record, monkeypatch):
    run = record(PARITY, {"NUMBERS": NUMBERS, "add": add}, lineage=True)
    assert run.status == "finished", run.error
    tables = map_side_files(run)
    # each input's combiner: its key's number as first seen on its partition
    assert tables[0].column(KEY_OUT).to_pylist() == [0, 1, 0, 0]  # 3 odd, 4 even, 7, 9
    assert tables[1].column(KEY_OUT).to_pylist() == [0, 0, 1, 1]  # 10 even, 12, 15 odd, 1
    no_job(monkeypatch)
    odd = run.trace_back((1, 3 + 7 + 9 + 15 + 1))
    assert sources(odd) == [("parallelize", 0, 0), ("parallelize", 0, 2), ("parallelize", 0, 3),
                            ("parallelize", 1, 2), ("parallelize", 1, 3)]
    assert sorted(out for _, _, _, out in run.trace_forward(NUMBERS[5]).rows()) == \
        [(0, 4 + 10 + 12)]
    with monkeypatch.context() as patched:
        patched.setattr(registry, "runs", lambda: [])  # as after a kernel restart
        reopened = registry.open_run(run.path)
    _, outputs = run.lineage_outputs()
    at = next((part, pos) for part, pos, out in outputs if out == (0, 26))
    assert sources(reopened.trace_back(at=at)) == [
        ("parallelize", 0, 1), ("parallelize", 1, 0), ("parallelize", 1, 1)]


MANY = """
counts = sc.parallelize(WORDS, 2).map(lambda w: (w, 1)).setName("pair")\\
    .reduceByKey(add).setName("sum").collect()
"""
WORDS = [f"w{i}" for i in range(FEW_KEYS + 200)] * 2  # every word twice, one partition each


def test_many_keys_are_numbered_by_the_trace(record):
    run = record(MANY, {"WORDS": WORDS, "add": add}, lineage=True, prepare=False)
    assert run.status == "finished", run.error
    tables = map_side_files(run)
    assert all(KEY_OUT not in table.schema.names and table.num_rows == 0
               for table in tables.values())
    combine = run.dag.node("sum (combine)").id
    assert not os.path.exists(layout.derived_key_links_path(run.path, combine, 0))
    t = run.trace_back(("w7", 2))  # position 7 of both partitions
    assert sources(t) == [("parallelize", 0, 7), ("parallelize", 1, 7)]
    # the numbers the trace's job derived, kept
    assert os.path.exists(layout.derived_key_links_path(run.path, combine, 0))


def test_many_keys_are_numbered_when_the_run_ends_and_the_first_trace_runs_no_job(
        record, monkeypatch):
    run = record(MANY, {"WORDS": WORDS, "add": add}, lineage=True)  # --prepare: the default
    assert run.status == "finished", run.error
    writer = writer_of(run)  # it starts just after wait() returns
    assert writer.wait(120) and writer.outcome == "written"
    combine = run.dag.node("sum (combine)").id
    assert all(os.path.exists(layout.derived_key_links_path(run.path, combine, p))
               for p in (0, 1))
    no_job(monkeypatch)
    t = run.trace_back(("w7", 2))
    assert sources(t) == [("parallelize", 0, 7), ("parallelize", 1, 7)]
