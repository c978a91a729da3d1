"""A DataFrame run's lineage frames are written ahead, when the run ends: the first trace
then writes nothing; ``--no-prepare`` writes none ahead; a new run stops the writing and
the first trace writes the rest. Every trace against the oracle of
``test_dataframe_lineage``."""
import os
import time

import pytest

from tests.spark.test_dataframe_lineage import PIPELINE, SALES, SHOPS, oracle_total

pytestmark = pytest.mark.spark

NAMES = {"SALES": SALES, "SHOPS": SHOPS}


def frame_files(run):
    """Each written frame's folder -> the time its _SUCCESS file was written."""
    root = os.path.join(run.path, "lineage", "frames")
    if not os.path.isdir(root):
        return {}
    return {node: os.stat(os.path.join(root, node, "_SUCCESS")).st_mtime_ns
            for node in os.listdir(root) if os.path.exists(os.path.join(root, node, "_SUCCESS"))}


def writer_of(run, timeout=30):
    """The run's frames writer (it starts just after ``wait()`` returns)."""
    deadline = time.monotonic() + timeout
    while run.lineage_writer is None:
        assert time.monotonic() < deadline, "no frames written ahead"
        time.sleep(0.05)
    return run.lineage_writer


def assert_traces_shop_b(run):
    t = run.trace_back(lambda r: r.shop == "b")
    sales = t.to_pandas()
    sales = sales[sales.operator == "createDataFrame"]
    assert sorted(tuple(r) for r in sales.record) == sorted(
        s for s in SALES if s[1] == "b" and s[2] > 10)
    assert [tuple(r) for r in t.at("agg").record] == [("b", oracle_total("b"))]


def test_the_frames_are_written_when_the_run_ends_and_the_first_trace_writes_none(record):
    run = record(PIPELINE, NAMES, lineage=True)
    writer = writer_of(run)
    assert writer.wait(120) and writer.outcome == "written"
    written = frame_files(run)
    traced = run._frame_lineage().graph.how
    assert len(written) == len(traced) == 7
    assert_traces_shop_b(run)
    assert frame_files(run) == written  # the trace rewrote nothing


def test_no_prepare_writes_no_frames_until_the_first_trace(record):
    run = record(PIPELINE, NAMES, lineage=True, prepare=False)
    time.sleep(1)
    assert run.lineage_writer is None and frame_files(run) == {}
    assert_traces_shop_b(run)
    assert len(frame_files(run)) == 7


def test_a_new_run_stops_the_writing_and_the_first_trace_writes_the_rest(spark, record,
                                                                          tmp_path):
    from icedtea_jupyter.lineage.dataframe import run_lock
    from icedtea_jupyter.session.execution import RunOptions, start_run

    ns = {"spark": spark, "sc": spark.sparkContext, **NAMES}
    run = start_run(PIPELINE, ns, RunOptions(store=str(tmp_path / "held"), lineage=True))
    lock = run_lock(run.path)
    with lock:  # the writer waits here, as behind a trace
        run.wait(180)
        writer = writer_of(run)
        record("rows = spark.range(3).collect()")  # a new run
        assert writer.done and writer.outcome.startswith("stopped")
    assert frame_files(run) == {}
    assert_traces_shop_b(run)
    assert len(frame_files(run)) == 7
