"""What --check reads: a DataFrame UDF's results as rows, and the compiled scan's matches."""
import numpy as np
import pandas as pd
import pyarrow as pa

from icedtea_jupyter.executor.agent import rows_of
from icedtea_jupyter.executor.breakpoint_scan import compile_matches


def test_batches_and_udf_results_become_rows():
    frame = pd.DataFrame({"id": [1, 2], "h": [0, 1]})
    assert [(r.id, r.h) for r in rows_of(frame)] == [(1, 0), (2, 1)]  # named tuples
    assert rows_of(pa.record_batch({"id": [1, 2]})) == [{"id": 1}, {"id": 2}]
    assert rows_of(pd.Series([3, 4])) == [3, 4]  # a pandas UDF's values
    assert rows_of(np.int64(5)) == [5]  # a scalar stays one row
    assert rows_of([1, 2]) == [[1, 2]]  # a row UDF's array result is one row


def test_matches_lists_the_rows_that_hold_or_raise():
    failing = compile_matches("not (row[1] >= 0)")
    rows = [(0, 1), (1, -1), (2, None), (3, 5), (4, -2)]
    assert failing(rows) == [1, 2, 4]  # None >= 0 raises: it fails the check
    assert failing([]) == []
