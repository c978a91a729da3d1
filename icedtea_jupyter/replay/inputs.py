"""θ's input records for replay: recorded with ``--record-inputs``, or regenerated.

Regeneration runs θ's upstream for one partition with Spark (``SparkContext.runJob``)
and checks the records against what the run logged — their number and the checksums
of the records θ's worker sampled — so a rewritten source or a different shuffle read
order gives a clear error instead of wrong states.
"""
from __future__ import annotations

import pickle
import zlib

from ..store.staged_inputs import read_staged_inputs, write_staged_inputs
from .logs import Logs, RecordedRun


class InputsChanged(RuntimeError):
    """The records θ would replay are not the ones it processed in the run."""


class ReplayInputs:
    """``records(partition)``: θ's inputs on a partition, in the run's order (cached)."""

    def __init__(self, run: RecordedRun, logs: Logs) -> None:
        self.run = run
        self.logs = logs
        self._cache: dict[int, list] = {}
        self.source: dict[int, str] = {}  # partition -> "recorded" | "regenerated"
        self._staged: set[int] = set()  # partitions whose regenerated inputs are on disk

    def records(self, partition: int) -> list:
        if partition not in self._cache:
            self._cache[partition] = self._load(partition)
        return self._cache[partition]

    def stage(self) -> None:
        """Make every partition's inputs loadable without Spark: regenerate and keep in
        the run store those that were neither recorded nor staged (for the replay process)."""
        for partition in self.logs.partitions:
            self.records(partition)
            if self.source[partition] == "regenerated" and partition not in self._staged:
                write_staged_inputs(self.run.path, partition, self._cache[partition])
                self._staged.add(partition)

    def _load(self, partition: int) -> list:
        try:
            records = self.run.recorded_inputs(partition)
            self.source[partition] = "recorded"
        except LookupError:
            try:
                records = read_staged_inputs(self.run.path, partition)
                self.source[partition] = "regenerated"
                self._staged.add(partition)
                return records  # checked when they were staged
            except LookupError:
                records = self._regenerate(partition)
                self.source[partition] = "regenerated"
        return self._checked(partition, records)

    def _regenerate(self, partition: int) -> list:
        theta = self.run.dag.require_interesting()
        upstream = self.run.upstream_rdd(theta.id)
        if upstream is None:
            raise LookupError(
                f"θ's inputs on partition {partition} were not recorded and this kernel no "
                f"longer has the pipeline that produced them: record the run with "
                "--record-inputs to debug it after a restart")
        return list(upstream.context.runJob(upstream, lambda records: records, [partition]))

    def _checked(self, partition: int, records: list) -> list:
        log = self.logs.log(self.logs.chain[0], partition)
        if log is None:
            return records
        if len(records) < log.records_in:
            raise InputsChanged(
                f"partition {partition} of θ's input now has {len(records)} records; in the "
                f"run θ processed {log.records_in}. The source changed since the run: "
                "record with --record-inputs to keep what the run saw")
        for index, crc in log.checks():
            if index < len(records) and zlib.crc32(pickle.dumps(records[index], 5)) != crc:
                raise InputsChanged(
                    f"record #{index} of θ's input on partition {partition} differs from the "
                    f"one θ processed in the run (now: {records[index]!r:.200}). The source "
                    "changed since the run, or its order is not deterministic (a shuffle "
                    "read): record the run with --record-inputs")
        return records[:log.records_in]
