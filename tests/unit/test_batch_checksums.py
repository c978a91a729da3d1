"""Checksums of batch inputs: the same between θ's worker and the kernel's regeneration."""
import pickle

import pandas as pd
import pyarrow as pa

from icedtea_jupyter.executor.batches import batch_checksum
from icedtea_jupyter.executor.state import encode


def frame(values):
    return pd.DataFrame({"customer": ["Bob", "Ann", None][:len(values)], "amount": values})


def test_a_batch_sums_the_same_after_travelling_pickled():
    """Regenerated batches come back to the kernel pickled: their sum does not change."""
    pdf = frame([5000.0, 45.0, float("nan")])
    batch = pa.RecordBatch.from_pandas(pdf, preserve_index=False)
    assert batch_checksum(pickle.loads(pickle.dumps(pdf))) == batch_checksum(pdf)
    assert batch_checksum(pickle.loads(pickle.dumps(batch))) == batch_checksum(batch)
    # a slice (as Spark's reader may hand one) sums as its own rows do
    assert batch_checksum(batch.slice(1, 2)) == batch_checksum(
        pa.RecordBatch.from_pandas(pdf.iloc[1:3].reset_index(drop=True), preserve_index=False))
    key_and_series = (("Bob",), pdf.amount)  # a group's key, or a UDF's Series
    assert batch_checksum(pickle.loads(pickle.dumps(key_and_series[1]))) == \
        batch_checksum(key_and_series[1])


def test_a_changed_value_changes_the_sum():
    assert batch_checksum(frame([5000.0, 45.0])) != batch_checksum(frame([33.3, 45.0]))
    assert batch_checksum(frame([5000.0, 45.0])) != batch_checksum(frame([45.0, 5000.0]))


def test_a_pandas_frame_in_a_state_shows_as_its_table():
    """Not as pandas' internals (whose weakref addresses differ in every process)."""
    encoded = encode(frame([5000.0, 45.0]))
    assert encoded["type"] == "pandas.core.frame.DataFrame" and "attrs" not in encoded
    assert "5000.0" in encoded["repr"] and encode(frame([5000.0, 45.0])) == encoded
