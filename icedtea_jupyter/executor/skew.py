"""Skew counting (Reshape) beside a worker host: ``--skew``.

The load of every partition of every operator (records, bytes, seconds) is what every
host counts anyway (the worker table, the progress agent). What ``--skew`` adds is *which
keys* make a partition heavy: the workers of key-partitioned operators count their keys
in a bounded-memory heavy-hitter sketch (``HeavyHitters``) and send it to the
coordinator while they run (``beat``, at most once a second) and write it to the run
store when they end (``layout.skew_path``).

Where the keys are counted:

- an aggregation's map side (``combine`` of ``reduceByKey``, ``aggregateByKey``,
  ``foldByKey``, ``combineByKey``, ``groupByKey``): its input records, before the map-side
  combine. Where its feed reads Spark's input ahead in lists (``feeds.BlockFeed``), each
  list as it is read (``take``: all keys of the first ``EXACT`` records, then every
  ``EVERY``-th from an offset drawn a list, weighted ``EVERY``, a C slice a list: nothing
  of ours per record); else through ``tap`` — C iterators only (``tee``, ``itemgetter``,
  ``list.append``, ``compress``), Python once a chunk of ``CHUNK`` records; the keys are
  folded into the sketch between blocks (``boundary``). Counting a key costs about as
  much as PySpark's combine of its record, so a worker counts every key of its first
  ``EXACT`` records and then of one chunk in ``EVERY`` (a stratified sample: which chunk
  of each run of ``EVERY`` is drawn at random, so no order of the records biases it;
  each key counted ``EVERY`` times: ``estimated`` says how many records that covers; the
  Misra–Gries bound below holds for the sample, the sampling error comes on top:
  ``HeavyHitters.sampling_error``). Each key is then sent to the reduce partition
  ``partitionFunc(key) % numPartitions``, computed here for the sketch's keys only, with
  the job's own partitioner (the workers' hash seed is Spark's);
- a join's or cogroup's reduce side (``GroupMerge``): each key's group once (its values
  from every input), ``count_groups``; the partition is the worker's own. Each input's
  records (``inputs``, for the broadcast advice) are counted from every value's tag for
  the first ``EXACT`` values, then from every ``EVERY``-th value's (a C slice a group),
  weighted ``EVERY``: counting every tag cost a third of the merge's own time;
- a user's ``partitionBy`` (``ShuffleRead``, its reduce side): the keys of the batches
  it reads, ``tap_batches`` (all of the first ``EXACT`` records, then one record in
  ``EVERY`` of each batch, weighted ``EVERY``); the partition is the worker's own;
- a grouped pandas function (``applyInPandas``): each group's key and rows (the
  ``batch`` hook); Spark passes every group's key, also to a function that takes only
  the frame (shipped as one of ``(key, frame)``: ``calls.group_function``), whose host
  keeps it (``host.group_key``).

The sketch is Misra–Gries over exact counts of blocks (mergeable, Agarwal et al.): a
block's keys are counted exactly (``collections.Counter``, in C), its 2k most frequent
keys are added to the k counters, and whenever more than k counters are left, the
(k+1)-th largest count is taken off every counter. ``error`` adds up what was taken
off and the largest count dropped from each block, so for every key
``count <= true count <= count + error``, and ``error <= n/(k+1) + n/(2k+1)`` for
``n`` records: with k = 512 and 5M records, every key above 0.3% of them is found.
"""
from __future__ import annotations

import json
import math
import random
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from heapq import nlargest
from itertools import chain, compress, cycle, islice, tee
from operator import itemgetter, not_
from typing import Any

from .artifacts import deliver
from .plugin import WorkerPlugin

CAPACITY = 512  # k: counters a sketch keeps
EXACT = 16_384  # records of a map-side worker whose keys are all counted
CHUNK = 512  # after those, the keys of one chunk of CHUNK records in EVERY are counted
EVERY = 16
OFFSETS = 256  # offsets drawn ahead for the lists ``take`` samples, used in turn
FOLD = 32_768  # keys waiting in lists before a check folds them into the sketch
_END = object()
SENT = 64  # heavy keys in a live message
AGENT = "skew_keys"  # the live messages' agent name (agents/skew.py receives them)
SEND_PERIOD = 1.0  # seconds between two live messages of a worker
_INPUT = _KEY = itemgetter(0)
JOINS = frozenset({"join", "leftOuterJoin", "rightOuterJoin", "fullOuterJoin", "cogroup",
                   "groupWith"})
# their own partition's keys: a grouped pandas function's, a user partitionBy's read side
GROUPED = frozenset({"applyInPandas", "partitionBy"})


class HeavyHitters:
    """A mergeable Misra–Gries summary of key frequencies (see the module docstring)."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self.counts: dict = {}
        self.n = 0  # records counted
        self.error = 0  # for every key: count <= true count <= count + error
        self.estimated = 0  # records whose keys were sampled, not counted (see EVERY)

    def add_block(self, block: Counter, weight: int = 1) -> None:
        """Counts of a block of records, folded in (its 2k top keys), each ``weight``
        times (a sample's: its counts are estimates)."""
        self.n += block.total() * weight
        keep = 2 * self.capacity
        top = nlargest(keep + 1, block.items(), key=itemgetter(1)) \
            if len(block) > keep else list(block.items())
        if len(top) > keep:
            self.error += top[keep][1] * weight  # no dropped key had more in the block
            top = top[:keep]
        self.add_counts(((key, count * weight) for key, count in top))
        if weight > 1:
            self.estimated += block.total() * weight

    def add_counts(self, pairs: Iterable[tuple[Any, int]], error: int = 0) -> None:
        """Counts (lower bounds within ``error``) added; the counters cut back to k."""
        counts = self.counts
        for key, count in pairs:
            counts[key] = counts.get(key, 0) + count
        self.error += error
        if len(counts) > self.capacity:
            cut = nlargest(self.capacity + 1, counts.values())[-1]
            self.counts = {k: c - cut for k, c in counts.items() if c > cut}
            self.error += cut

    def merge(self, other: HeavyHitters) -> None:
        """Another worker's summary, merged: the bounds add up (no record counted twice)."""
        self.n += other.n
        self.estimated += other.estimated
        self.add_counts(other.counts.items(), other.error)

    def top(self, k: int | None = None) -> list[tuple[Any, int]]:
        """The heaviest keys, heaviest first."""
        ordered = sorted(self.counts.items(), key=itemgetter(1), reverse=True)
        return ordered if k is None else ordered[:k]

    def sampling_error(self, count: int) -> int:
        """How far a key's ``count`` may be off because part of it was sampled: three
        standard deviations of the estimate (binomial: each of the key's records in the
        sampled part was counted with probability 1/EVERY), for the share of its count
        that is estimated. Holds with ~99.7% confidence when the key's records are
        spread over the partition; 0 when nothing was sampled."""
        if not self.estimated or not self.n:
            return 0
        return math.ceil(3 * math.sqrt((EVERY - 1) * count * self.estimated / self.n))

    def bound(self) -> float:
        """The a priori bound on ``error``: n/(k+1) + n/(2k+1)."""
        return self.n / (self.capacity + 1) + self.n / (2 * self.capacity + 1)


class SkewCounter(WorkerPlugin):
    """Counts the keys a key-partitioned worker sees (see the module docstring)."""

    name = "skew counter"

    def __init__(self, host: Any) -> None:
        self.sketch = HeavyHitters()
        self.keys: list = []  # keys tapped since the last fold (C appends)
        self.sampled: list = []  # keys of sampled chunks since the last fold
        self.shuffle = getattr(host.spec, "shuffle", None)  # (partitions, partitionFunc)
        self.last_sent = 0.0
        self.inputs: Counter = Counter()  # a join's records per input, counted
        self.input_tags: list = []  # the sampled values' inputs, each standing for EVERY
        self.sampled_inputs: Counter = Counter()  # input_tags counted so far
        self.draw = random.Random(host.worker.get("partition", 0)).randrange  # sampled chunks
        # ``take``'s offsets, drawn ahead: a C call a list, not randrange's Python
        self.offsets = cycle([self.draw(EVERY) for _ in range(OFFSETS)]).__next__
        self.taken = 0  # records whose keys ``take`` and ``tap_batches`` have seen

    # --- taps ----------------------------------------------------------------------
    def tap(self, records: Iterable) -> Iterator:
        """The records, unchanged: the keys of the first ``EXACT`` and then of one chunk
        of ``CHUNK`` records in ``EVERY`` are appended to ``keys`` (those of the sampled
        chunks to ``sampled``) by C calls only; Python runs once a chunk."""
        return chain.from_iterable(self._chunks(iter(records)))

    def _chunks(self, records: Iterator) -> Iterator[Iterable]:
        position = phase = 0
        while True:
            first: Any = next(records, _END)  # pulled when the consumer wants it: no read-ahead
            if first is _END:
                return
            rest = islice(records, CHUNK - 1)
            within = (position // CHUNK) % EVERY  # the chunk's place in its run of EVERY
            if within == 0:
                phase = self.draw(EVERY)  # the run's sampled chunk
            if position < EXACT:
                append = self.keys.append
            elif within == phase:
                append = self.sampled.append
            else:  # two C iterators a record: islice, chain
                yield (first,)
                yield rest
                position += CHUNK
                continue
            append(first[0])
            yield (first,)
            yield _appending(rest, append)
            position += CHUNK

    def take(self, records: Sequence) -> None:
        """A list of ``(key, value)`` records read ahead: their keys until ``EXACT``
        records, then those of one record in ``EVERY`` (every ``EVERY``-th from an offset
        drawn at random a list), appended to ``keys`` (``sampled``) by C calls. A record
        without a key is left to fail where the aggregation takes it."""
        try:
            if self.taken < EXACT:
                self.keys.extend(map(_KEY, records))
            else:
                self.sampled.extend(map(_KEY, records[self.offsets()::EVERY]))
        except (TypeError, IndexError, KeyError):
            pass
        self.taken += len(records)

    def take_all(self, records: Iterable) -> Iterator:
        """The records, unchanged, every key appended to ``keys`` by C calls (a feed that
        stopped reading ahead: a breakpoint armed live on the aggregation)."""
        return _appending(records, self.keys.append)

    def tap_batches(self, batches: Iterable[list]) -> Iterator[list]:
        """A shuffle read's batches of ``(key, value)`` records, unchanged, each one
        ``take``-n (batches can hold thousands of records, too few to sample whole);
        Python runs once a batch."""
        take = self.take
        for batch in batches:
            take(batch)
            yield batch

    def count_groups(self, groups: Iterable) -> Iterator:
        """``(key, values)`` groups of a join's reduce side, each counted by its values
        (``(input, value)`` pairs: each input's records are counted too, all of the first
        ``EXACT`` values, then those at every ``EVERY``-th place from a random start)."""
        block: Counter = Counter()
        inputs, tags, phase, seen = self.inputs, self.input_tags, self.draw(EVERY), 0
        for key, values in groups:
            size = len(values)
            block[key] += size
            if seen < EXACT or not isinstance(values, list):  # a spilled group: not a list
                inputs.update(map(_INPUT, values))
            else:
                tags.extend(map(_INPUT, values[(phase - seen) % EVERY::EVERY]))
            seen += size
            if len(block) >= 4 * CAPACITY:
                self.sketch.add_block(block)
                block = Counter()
            yield key, values
        self.sketch.add_block(block)

    def input_counts(self) -> Counter:
        """A join's records per input: those counted, and the sampled ones weighted."""
        self.sampled_inputs.update(self.input_tags)
        self.input_tags.clear()
        counts = Counter(self.inputs)
        for index, sampled in self.sampled_inputs.items():
            counts[index] += sampled * EVERY
        return counts

    def fold(self) -> None:
        """The keys tapped since the last fold, into the sketch (a sampled chunk's keys
        count ``EVERY`` times)."""
        if self.keys:
            block = Counter(self.keys)
            self.keys.clear()
            self.sketch.add_block(block)
        if self.sampled:
            block = Counter(self.sampled)
            self.sampled.clear()
            self.sketch.add_block(block, EVERY)

    # --- the host's hooks ------------------------------------------------------------
    def boundary(self, host: Any, inputs: int, outputs: int) -> None:
        if len(self.keys) + len(self.sampled) >= FOLD:
            self.fold()

    def batch(self, host: Any, index: int, batch: Any, rows: int) -> None:
        """A grouped pandas function's group: ``(key, frame)``, or ``(frame,)`` whose
        key Spark passed to its host (``host.group_key``); counts its rows."""
        if not isinstance(batch, tuple):
            return
        key = batch[0] if len(batch) == 2 else getattr(host, "group_key", None)
        if key is not None and len(batch) in (1, 2):
            key = tuple(map(_plain, key)) if isinstance(key, tuple) else _plain(key)
            self.sketch.add_block(Counter({key: rows}))

    def beat(self, host: Any) -> None:
        now = time.monotonic()
        if now - self.last_sent >= SEND_PERIOD:
            self.last_sent = now
            self.fold()
            self._send(host, SENT)

    def end(self, host: Any, message: dict) -> None:
        self.fold()
        summary = self.summary(host, None)
        self._send(host, SENT)
        if host.status.wire == "ok" and _recording(host):
            try:
                deliver(host.spec.run, "skew", host.worker, summary)
            except Exception as exc:  # the run goes on; its skew report says what is missing
                host.alert(self.name, "write", exc)
        return None

    # --- what travels ----------------------------------------------------------------
    def summary(self, host: Any, k: int | None) -> dict:
        """The sketch as JSON: keys tagged (``state.encode``) with their reduce partition."""
        from .state import encode

        sketch = self.sketch
        top = sketch.top()
        error = sketch.error
        if k is not None and len(top) > k:  # the keys left out: no more than the k+1-th
            error += top[k][1]
            top = top[:k]
        return {"n": sketch.n, "capacity": sketch.capacity, "error": error,
                "estimated": sketch.estimated,
                "inputs": {str(i): n for i, n in self.input_counts().items()},
                "keys": [[encode(key), count, self.partition_of(host, key)]
                         for key, count in top]}

    def partition_of(self, host: Any, key: Any) -> int:
        """The reduce partition the job's partitioner sends ``key`` to (a reduce side's
        or a group's: this worker's own partition)."""
        if self.shuffle is None:
            return host.worker["partition"]
        partitions, partition_func = self.shuffle
        try:
            return int(partition_func(key) % partitions)
        except Exception:
            return -1

    def _send(self, host: Any, k: int) -> None:
        payload = dict(self.summary(host, k), sent=time.time())  # the live view's latency
        host.channel.send({"type": "agent", "agent": AGENT, "worker": host.worker,
                           "payload": payload})


def _plain(value: Any) -> Any:
    """A numpy scalar (PySpark's group keys) as the Python value it holds."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value


def _appending(records: Iterable, append: Any) -> Iterator:
    """The records, unchanged, each one's key passed to ``append`` by C calls only
    (``compress`` pulls the record, then its selector: the key of the same record)."""
    passing, keyed = tee(records)
    return compress(passing, map(not_, map(append, map(_KEY, keyed))))


def _recording(host: Any) -> bool:
    """Not after the run (a job regenerating records after it runs the hosts too)."""
    from .channel import _run_has_ended

    return not _run_has_ended(host.spec.run)


def keyed_worker(spec: Any) -> bool:
    """Whether a worker of ``spec`` counts keys under ``--skew``."""
    return spec.phase == "combine" or spec.api in JOINS or spec.api in GROUPED


def write_summary(path: str, summary: Mapping) -> str:
    """One worker's sketch as JSON (atomically: temp file, then rename)."""
    import os

    from ..store import layout

    layout.with_parent(path)
    tmp = layout.temp_path(path)
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(summary, out)
    os.replace(tmp, path)
    return path
