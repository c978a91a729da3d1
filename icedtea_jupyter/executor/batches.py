"""Checksums of the batches a batch function takes (mapInPandas, mapInArrow, iterator UDFs).

θ's worker sums a sample of its input batches; replay sums the batches it regenerated
or recorded the same way, in the kernel, and compares. The sum is a crc32 of the batch's
Arrow IPC record-batch message: the column values, their validity and the row count —
stable between the run's worker and the kernel, where a pickled pandas frame is not.
"""
from __future__ import annotations

import zlib
from typing import Any


def batch_checksum(batch: Any) -> int:
    """crc32 of ``batch`` (a ``pyarrow.RecordBatch``/``Table``, a pandas ``DataFrame`` or
    ``Series``, or a tuple of those: an iterator UDF's columns) as Arrow IPC."""
    import pyarrow as pa

    if isinstance(batch, tuple):
        crc = 0
        for part in batch:
            crc = zlib.crc32(batch_checksum(part).to_bytes(4, "little"), crc)
        return crc
    if isinstance(batch, pa.Table):
        batch = batch.combine_chunks().to_batches()[0] if batch.num_rows else \
            pa.RecordBatch.from_pylist([], schema=batch.schema)
    elif isinstance(batch, (pa.Array, pa.ChunkedArray)):
        batch = pa.RecordBatch.from_arrays([pa.concat_arrays(batch.chunks)
                                            if isinstance(batch, pa.ChunkedArray) else batch],
                                           ["v"])
    elif not isinstance(batch, pa.RecordBatch):  # pandas, converted as Arrow sees it
        if hasattr(batch, "columns"):
            batch = pa.RecordBatch.from_pandas(batch, preserve_index=False)
        else:
            batch = pa.RecordBatch.from_arrays([pa.Array.from_pandas(batch)], ["v"])
    return zlib.crc32(batch.serialize())
