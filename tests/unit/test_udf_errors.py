"""A pandas or Arrow UDF's batch that raised (``executor/udf_errors.py``): its rows that
raise alone are found by halving, each given its own outcome; a batch whose values
depend on it is one record."""
from types import SimpleNamespace

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from icedtea_jupyter.executor.udf_errors import LiveAnswers, UdfErrors


def policy(limit, rows_before=0):
    """A ``--tolerate limit`` stand-in: takes failing records while under the limit;
    ``indexes``: the input index the host says each was at (``context.taken() - 1``)."""
    taken, indexes = [], []
    host = SimpleNamespace(records_in=rows_before)

    def on_failure(record, exc):
        if len(taken) >= limit:
            return False
        taken.append((record, type(exc).__name__))
        indexes.append(host.records_in - 1)
        return True
    errors = UdfErrors(host, LiveAnswers(host, None, on_failure))
    errors.indexes = indexes
    return errors, taken, host


def checked(x):
    if x in (3, 12):
        raise ValueError(f"bad {x}")
    return x * 10


def inverses(s):
    return s.map(checked)


def run(f, *args):
    try:
        return f(*args)
    except Exception as exc:
        return exc


def test_the_rows_that_raise_alone_are_taken_and_the_others_keep_their_values():
    errors, taken, host = policy(5, rows_before=100)
    batch = pd.Series(range(16))
    exc = run(inverses, batch)
    out = errors.batch(inverses, (batch,), exc)
    assert out.tolist() == [None if x in (3, 12) else x * 10 for x in range(16)]
    assert taken == [(3, "ValueError"), (12, "ValueError")]  # rows, in order
    assert errors.indexes == [103, 112]  # each row's input index in its partition
    assert host.records_in == 100  # and back


def test_a_culprit_past_the_limit_raises_its_own_exception():
    errors, taken, _ = policy(1)
    batch = pd.Series(range(16))
    with pytest.raises(ValueError, match="bad 12"):
        errors.batch(inverses, (batch,), run(inverses, batch))
    assert taken == [(3, "ValueError")]


def test_a_batch_whose_values_depend_on_it_is_one_record_and_all_null():
    def centered(s):
        if (s == 5).any():
            raise ValueError("5 in the batch")
        return s - s.mean()
    errors, taken, _ = policy(5)
    batch = pd.Series(range(8))
    out = errors.batch(centered, (batch,), run(centered, batch))
    assert out.tolist() == [None] * 8
    assert len(taken) == 1 and taken[0][0].tolist() == list(range(8))  # the batch


def test_a_failure_no_single_row_makes_is_the_batch_and_its_shape_is_kept():
    def pairs(s):
        if len(s) > 4:
            raise ValueError("too long")
        return pd.DataFrame({"a": s, "b": s.astype(str)})
    errors, taken, _ = policy(5)
    batch = pd.Series(range(6))
    out = errors.batch(pairs, (batch,), run(pairs, batch))
    assert list(out.columns) == ["a", "b"] and len(out) == 6
    assert out.isna().all().all() and len(taken) == 1


def test_arrow_arguments_and_results():
    def arrow_inverses(v):
        return pa.array([checked(x) for x in v.to_pylist()], type=pa.int64())
    errors, taken, _ = policy(5)
    batch = pa.array(range(16), type=pa.int64())
    out = errors.batch(arrow_inverses, (batch,), run(arrow_inverses, batch))
    assert out.type == pa.int64()
    assert out.to_pylist() == [None if x in (3, 12) else x * 10 for x in range(16)]
    assert [record for record, _ in taken] == [3, 12]
    assert pc.sum(out).as_py() == sum(x * 10 for x in range(16) if x not in (3, 12))


def test_a_row_udf_of_two_arguments():
    errors, taken, _ = policy(1)
    assert errors.row(lambda a, b: a // b, (4, 0), ZeroDivisionError()) is None  # null
    assert taken == [((4, 0), "ZeroDivisionError")]
    errors, taken, _ = policy(0)  # no place: the exception fails the task
    with pytest.raises(ZeroDivisionError):
        errors.row(lambda a, b: a // b, (4, 0), ZeroDivisionError())
