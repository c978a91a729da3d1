"""A row UDF's host per task (``executor/calls.py``): kept between rows, ended and
replaced when PySpark's worker starts another task or a flush ends it."""
import pickle

import pytest
from pyspark.taskcontext import TaskContext

from icedtea_jupyter.executor import calls
from icedtea_jupyter.executor import host as host_module

from .fakes import RecordingChannel, make_spec


class Tally:
    def __init__(self) -> None:
        self.rows = 0

    def __call__(self, value: int) -> int:
        self.rows += 1
        return value * 2


@pytest.fixture
def channel(monkeypatch):
    channel = RecordingChannel()
    monkeypatch.setattr(host_module, "channel_for", lambda run: channel)
    calls._CALL_HOSTS.clear()
    yield channel
    calls._CALL_HOSTS.clear()
    TaskContext._setTaskContext(None)


def _task(partition: int) -> TaskContext:
    """A task as PySpark's worker starts it: a new ``TaskContext`` each time."""
    TaskContext._setTaskContext(None)
    task = TaskContext._getOrCreate()
    task._partitionId, task._stageId, task._attemptNumber = partition, 1, 0
    task._taskAttemptId = 100 + partition
    return task


def test_a_new_task_ends_the_last_tasks_host_with_its_counts(channel):
    udf = calls.CallFunction(make_spec(api="udf"), Tally(), "row")
    _task(0)
    assert [udf(v) for v in range(5)] == [0, 2, 4, 6, 8]
    assert channel.ended == []  # the task's host is kept between rows
    _task(1)
    assert [udf(v) for v in range(3)] == [0, 2, 4]
    (first,) = channel.ended
    assert (first["worker"]["partition"], first["records_in"], first["records_out"]) == (0, 5, 5)
    second = calls._CALL_HOSTS[("run-1", 0)]
    assert (second.worker["partition"], second.records_in) == (1, 3)


def test_two_columns_of_one_udf_share_the_tasks_host(channel):
    spec, tally = make_spec(api="udf"), Tally()
    first, second = (calls.CallFunction(spec, tally, "row") for _ in range(2))
    _task(0)
    first(1), second(2), first(3)
    _task(1)
    second(4)
    first(5)
    assert [end["records_in"] for end in channel.ended] == [3]
    assert calls._CALL_HOSTS[("run-1", 0)].records_in == 2


def test_a_flushed_host_is_replaced_within_the_task(channel):
    udf = calls.CallFunction(make_spec(api="udf"), Tally(), "row")
    _task(0)
    udf(1)
    calls._CALL_HOSTS[("run-1", 0)].deliver({"type": "flush"})
    udf(2)
    assert [end["records_in"] for end in channel.ended] == [1]
    assert calls._CALL_HOSTS[("run-1", 0)].records_in == 1


def test_a_shipped_row_udf_is_a_function_with_a_host_of_its_own(channel):
    """A row UDF is shipped as a plain function (cheaper per row than an object's
    ``__call__``): it carries no host, and counts its task's rows like the original."""
    udf = calls.CallFunction(make_spec(api="udf"), Tally(), "row")
    _task(0)
    udf(1)
    shipped = pickle.loads(pickle.dumps(udf))
    assert not isinstance(shipped, calls.CallFunction) and shipped.__closure__ is not None
    _task(1)
    assert [shipped(v) for v in (3, 4)] == [6, 8]
    assert [end["records_in"] for end in channel.ended] == [1]
    assert calls._CALL_HOSTS[("run-1", 0)].records_in == 2


def test_a_check_at_its_step_sees_the_row_taken_not_processed(channel):
    """Rows between two checks pay no check; the row at the step is checked before its
    call, with the rows before it processed."""
    udf = pickle.loads(pickle.dumps(calls.CallFunction(make_spec(api="udf"), Tally(), "row")))
    _task(0)
    udf(0)
    host = calls._CALL_HOSTS[("run-1", 0)]
    seen = []

    def check(n_in: int, n_out: int, record: tuple) -> None:
        seen.append((n_in, n_out, record))
        host.box[0] = n_in + 100  # the next step

    host.check = check
    host.box[0] = 4
    assert [udf(v) for v in range(1, 6)] == [2, 4, 6, 8, 10]
    assert seen == [(4, 3, (3,))]
    assert (host.records_in, host.records_out) == (6, 6)


def test_a_row_udf_under_on_error_pause_takes_its_rows_without_a_feed(channel):
    """``--on-error pause`` guards a UDF's calls where they are made: with no breakpoint
    on it, its rows do not also go one by one through a generator (``CallFeed``)."""
    spec = make_spec(api="udf")
    spec.run.on_error = "pause"
    udf = calls.CallFunction(spec, Tally(), "row")
    _task(0)
    assert [udf(v) for v in range(5)] == [0, 2, 4, 6, 8]
    host = calls._CALL_HOSTS[("run-1", 0)]
    assert host.udf_errors is not None  # the rows are guarded ...
    assert host.call_feed is None  # ... and not fed through the plugins' records hooks
