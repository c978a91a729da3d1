"""The records of a ``partitionBy`` of θ's outputs, as the run's reduce side read them.

The reduce side logged (map partition, records) runs, one per block it read
(``executor/shuffle_read.py``). Replay routes what each map partition's leaf emits with
the run's partitioner, keeps the records of this reduce partition in order, and hands
them over run after run: the same records, in the same order, as the run read.
"""
from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..executor.merge_order import HASH_PROBE
from .worker import ReplayError


class ShuffleRuns:
    """Partition ``q``'s inputs after a ``partitionBy`` of ``leaf``'s outputs: ``log``
    is the reduce side's replay log (kind ``"shuffle_runs"``), ``route`` the run's
    partitioner. Like ``OriginOrder``, it hands over what has been emitted and stops at
    the first record that has not."""

    def __init__(self, log: Any, leaf: str, q: int, route: Callable[[Any], int]) -> None:
        order = None if log is None else log.order
        self.runs = [] if order is None else [(int(m), int(n)) for m, n in order]
        self.leaf, self.q, self.route = leaf, q, route
        self.hashing = HashedAsWorkers(route, None if log is None else log.hash_probe)
        self.run = self.taken = 0  # the current run, and how much of it was handed over
        self.routed: dict[int, list] = {}  # map partition -> its records routed to q
        self.scanned: dict[int, int] = {}  # map partition -> its outputs routed so far
        self.used: dict[int, int] = {}  # map partition -> its routed records handed over

    def next_records(self, cursors: dict) -> list:
        records: list = []
        while self.run < len(self.runs):
            m, n = self.runs[self.run]
            routed, used = self._routed(m, cursors), self.used.get(m, 0)
            take = min(n - self.taken, len(routed) - used)
            records.extend(routed[used:used + take])
            self.used[m], self.taken = used + take, self.taken + take
            if self.taken < n:
                if m in cursors and cursors[m].ended:
                    raise ReplayError(
                        f"after the partitionBy of {self.leaf!r}, partition {self.q} read "
                        f"{n} records of map partition {m} in one block of the run, but "
                        f"replay routes only {len(routed) - used} more of that partition's "
                        "records there: the partition function gives other partitions "
                        "now (is it deterministic?)")
                break
            self.run, self.taken = self.run + 1, 0
        return records

    def complete(self, cursors: dict) -> bool:
        return self.run >= len(self.runs) and all(c.ended for c in cursors.values())

    def _routed(self, m: int, cursors: dict) -> list:
        """Map partition ``m``'s outputs so far that the partitioner sends to ``q``."""
        routed = self.routed.setdefault(m, [])
        sink = cursors[m].sinks[self.leaf] if m in cursors else ()
        start = self.scanned.get(m, 0)
        if len(sink) <= start:
            return routed
        fresh = sink[start:]
        routes = self.hashing.routes([r[0] for r in fresh])
        routed.extend(r for r, to in zip(fresh, routes) if to == self.q)
        self.scanned[m] = len(sink)
        return routed


class HashedAsWorkers:
    """``route`` applied to keys as Spark's workers hashed them: here, or (in a process
    that hashes strings otherwise) by a helper process that hashes as they did
    (``WorkersHashing``). ``probe`` is the workers' hash of ``HASH_PROBE`` (None: as here)."""

    def __init__(self, route: Callable[[Any], int], probe: int | None) -> None:
        self.route, self.probe = route, hash(HASH_PROBE) if probe is None else probe
        self.helper: WorkersHashing | None = None

    def routes(self, keys: list) -> list[int]:
        if self.probe == hash(HASH_PROBE):
            with _hash_seed_set():
                return [self.route(k) for k in keys]
        self.helper = self.helper or workers_hashing(self.route, self.probe)
        return self.helper.routes(keys)


_HELPERS: dict[tuple[int, bytes], WorkersHashing] = {}
_HELPERS_LOCK = threading.Lock()


def workers_hashing(route: Callable[[Any], int], probe: int) -> WorkersHashing:
    """The helper process for ``route`` and the workers' hashing ``probe``: one for all
    of this process's feeds and jumps (a feed is made each jump), started when first
    needed; it ends with this process."""
    from pyspark import cloudpickle

    key = (probe, cloudpickle.dumps(route))
    with _HELPERS_LOCK:
        helper = _HELPERS.get(key)
        if helper is None or helper.process.poll() is not None:
            helper = _HELPERS[key] = WorkersHashing(route, probe)
        return helper


_ROUTER = """
import pickle, sys
from pyspark import cloudpickle
route, probe = pickle.load(sys.stdin.buffer)
if hash(probe) != %d:
    sys.exit("the workers' string hashing is not PYTHONHASHSEED=%s")
while True:
    pickle.dump([route(k) for k in pickle.load(sys.stdin.buffer)], sys.stdout.buffer)
    sys.stdout.flush()
"""


class WorkersHashing:
    """A helper process that routes keys with ``route`` as Spark's workers did: with
    PYTHONHASHSEED as PySpark gives them (the kernel's, else 0), checked against the
    hash of ``HASH_PROBE`` they logged (``probe``). It exits with its parent's pipe."""

    def __init__(self, route: Callable[[Any], int], probe: int) -> None:
        import subprocess
        import sys

        from pyspark import cloudpickle

        self.seed = os.environ.get("PYTHONHASHSEED", "0")
        self._lock = threading.Lock()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ROUTER % (probe, self.seed)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONHASHSEED=self.seed))
        self._send(cloudpickle.dumps((route, HASH_PROBE)))

    def routes(self, keys: list) -> list[int]:
        from pyspark import cloudpickle

        with self._lock:  # one question, one answer: feeds in two threads take turns
            self._send(cloudpickle.dumps(keys))
            try:
                return pickle.load(self.process.stdout)  # type: ignore[arg-type]
            except EOFError:
                raise self._failed() from None

    def _send(self, data: bytes) -> None:
        try:
            self.process.stdin.write(data)  # type: ignore[union-attr]
            self.process.stdin.flush()  # type: ignore[union-attr]
        except BrokenPipeError:
            raise self._failed() from None

    def _failed(self) -> ReplayError:
        self.process.wait()
        why = self.process.stderr.read().decode(errors="replace").strip()  # type: ignore
        return ReplayError(
            "replay routes the records of a partitionBy with the run's partitioner, as "
            f"Spark's workers did, but could not hash as they did: {why[-300:]}. Debug "
            "in the replay process (unset ICEDTEA_REPLAY)")


@contextmanager
def _hash_seed_set() -> Iterator[None]:
    """PySpark's ``portable_hash`` refuses to run without PYTHONHASHSEED in the
    environment; the hashing itself is checked with the workers' probe instead."""
    if "PYTHONHASHSEED" in os.environ:
        yield
        return
    os.environ["PYTHONHASHSEED"] = "0"
    try:
        yield
    finally:
        os.environ.pop("PYTHONHASHSEED", None)
