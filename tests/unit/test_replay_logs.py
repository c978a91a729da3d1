"""Replay logs: the compact forms a worker sends expand to outputs per input record."""
import zlib
from array import array

import pytest

from icedtea_jupyter.executor.worker_file import write_replay_log
from icedtea_jupyter.store.replay_logs import read_replay_log

WORKER = {"operator": 1, "partition": 0, "stage": 0, "attempt": 0, "task": 5}


@pytest.mark.parametrize("kind, values, n_in, n_out, outputs, after_last", [
    ("drops", [1, 3], 5, 3, [1, 0, 1, 0, 1], 0),
    ("deviations", [0, 2, 2, 0], 4, 4, [2, 1, 0, 1], 0),
    ("deviations", [], 3, 4, [1, 1, 1], 1),  # an Operator whose close() emitted one more
    ("cumulative", [0, 2, 2, 5], 3, 6, [2, 0, 3], 1),
    ("after_last", [], 4, 2, [0, 0, 0, 0], 2),
    ("ones", [], 3, 3, [1, 1, 1], 0),
])
def test_every_log_kind_expands_to_outputs_per_input(tmp_path, kind, values, n_in, n_out,
                                                     outputs, after_last):
    body = zlib.compress(array("I", values).tobytes()) if values else b""
    message = {"worker": WORKER, "records_in": n_in, "records_out": n_out,
               "log": {"kind": kind, "results": [0.5]}}
    log = read_replay_log(write_replay_log(str(tmp_path), message, body))
    assert log.outputs.tolist() == outputs and log.after_last == after_last
    assert log.results == [0.5] and log.kind == kind


def test_a_log_removed_after_the_listing_reads_as_never_written(monkeypatch, tmp_path):
    """A replay log gone between the listing and the read (a user cleaning the store
    while the replay process starts) is one the run lacks: a jump that needs it says the
    worker left no log, instead of failing on the missing file."""
    from types import SimpleNamespace

    from icedtea_jupyter.replay import logs as logs_module
    from icedtea_jupyter.store.layout import WorkerName

    gone = str(tmp_path / "logs" / "op2-p0-s1-a0-t7.arrow")
    monkeypatch.setattr(logs_module.layout, "replay_logs",
                        lambda run: iter([(WorkerName(2, 0, 1, 0, 7), gone)]))
    run_logs = logs_module.RunLogs.__new__(logs_module.RunLogs)
    run_logs.run = SimpleNamespace(path=str(tmp_path))
    assert run_logs._successful_logs({7}) == {}
