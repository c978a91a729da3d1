"""Reading the replay logs of G(θ)'s workers (``logs/*.arrow`` in the run store)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pyarrow.feather as feather


@dataclass
class ReplayLog:
    """One worker's log: outputs per input record, outputs after its last input, results."""

    outputs: np.ndarray | None  # uint32, one entry per input record (None: in blocks)
    after_last: int  # outputs emitted after the last input (a flush, an aggregation)
    results: list  # log_result values (tagged JSON), in call order
    kind: str
    records_in: int = 0
    fingerprints: list = field(default_factory=list)  # θ: (input index, crc32) pairs
    # a join's or cogroup's merge (kind "order"): (input index, combiners) rows, in arrival order
    order: np.ndarray | None = None
    # an aggregation's reduce side (kind "origins"): the same rows hold (map partition,
    # position of the combiner in that partition's output) per consumed combiner
    # a partitionBy's reduce side (kind "shuffle_runs"): (map partition, records) rows,
    # one per block read, in arrival order
    # a host in blocks (kind "blocks"): (inputs, outputs) so far at each block boundary
    boundaries: np.ndarray | None = None
    # a batch function (kind "batches"): the rows of each input batch, in order
    batch_rows: np.ndarray | None = None
    hash_probe: int | None = None  # hash(executor.shuffle_read.HASH_PROBE) in the worker

    def row_ranges(self, records: list[int]) -> list[list[int]]:
        """A batch function's or grouped map's records (batches, groups) as their rows,
        ``[start, stop)`` in the partition."""
        rows = self.batch_rows if self.batch_rows is not None else np.ones(0, np.int64)
        ends = np.cumsum(rows).tolist()
        return [[ends[i] - int(rows[i]), ends[i]] for i in records if i < len(ends)]

    def checks(self) -> list[tuple[int, int]]:
        """θ's sampled input checksums as (input index, crc32): of the pickled record, or
        of a batch function's input batch (``executor/batches.py``)."""
        return list(zip(self.fingerprints[0::2], self.fingerprints[1::2]))


def read_replay_log(path: str) -> ReplayLog:
    table = feather.read_table(path)
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    kind = meta.get("kind", "ones")
    n_in, n_out = int(meta.get("records_in", 0)), int(meta.get("records_out", 0))
    values = table.column("values").to_numpy()
    if meta.get("steps") == "1" and kind in ("drops", "cumulative"):
        values = np.cumsum(values, dtype=np.uint64).astype(np.uint32)
    if kind == "cumulative":
        outputs = np.diff(values).astype(np.uint32) if len(values) > 1 else values[:0]
        after_last = n_out - int(values[-1]) if len(values) else n_out
    elif kind == "blocks":  # outputs per input are not kept, only at block boundaries
        outputs, last = None, values.reshape(-1, 2)[-1:]
        after_last = n_out - int(last[0, 1]) if len(last) and int(last[0, 0]) == n_in else 0
    elif kind == "batches":  # a record is a batch: outputs per batch are not logged
        outputs, after_last = None, 0
    elif kind in ("after_last", "order", "origins", "shuffle_runs"):  # every output last
        outputs, after_last = np.zeros(n_in, np.uint32), n_out
    else:
        outputs = np.ones(n_in, np.uint32)
        if kind == "drops":
            outputs[values] = 0
        elif kind == "deviations":
            outputs[values[0::2]] = values[1::2]
        after_last = n_out - int(outputs.sum())
    pairs = values.reshape(-1, 2) if kind in ("order", "origins", "shuffle_runs", "blocks") \
        else None
    return ReplayLog(outputs, after_last, json.loads(meta.get("results", "[]")), kind, n_in,
                     json.loads(meta.get("fingerprints", "[]")),
                     order=None if kind == "blocks" else pairs,
                     boundaries=pairs if kind == "blocks" else None,
                     batch_rows=values.astype(np.int64) if kind == "batches" else None,
                     hash_probe=int(meta["hash_probe"]) if meta.get("hash_probe") else None)
