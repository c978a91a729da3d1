"""Skew counting (Reshape) beside a worker host: ``--skew``.

The load of every partition of every operator (records, bytes, seconds) is what every
host counts anyway (the worker table, the progress agent). What ``--skew`` adds is *which
keys* make a partition heavy: the workers of key-partitioned operators count their keys
in a bounded-memory heavy-hitter sketch (``sketch.KeySketch``) and send it to the
coordinator while they run (``beat``, at most once a second) and write it to the run
store when they end (``layout.skew_path``).

Where the keys are counted:

- an aggregation's map side (``combine`` of ``reduceByKey``, ``aggregateByKey``,
  ``foldByKey``, ``combineByKey``, ``groupByKey``): its input records, before the map-side
  combine. Where its feed reads Spark's input ahead in lists (``feeds.BlockFeed``), each
  list as it is read (``take``: all keys of the first ``EXACT`` records, then every
  ``EVERY``-th from an offset drawn a list, a C slice a list: nothing of ours per
  record); else through ``tap`` — C iterators only (``tee``, ``itemgetter``,
  ``list.append``, ``compress``), Python once a chunk of ``CHUNK`` records; the keys are
  folded into the sketch between blocks (``boundary``). Counting a key costs about as
  much as PySpark's combine of its record, so a worker counts every key of its first
  ``EXACT`` records and then of one chunk in ``EVERY`` (a stratified sample: which chunk
  of each run of ``EVERY`` is drawn at random). Sampled keys are estimates, not
  bounds: each sampling unit (a list's slice, a run's chunk) goes to one of the
  sketch's replicate samples in turn, whose spread gives each key's interval
  (``sketch.KeySketch``); ``estimated`` says how many records the sample stands for
  (all there were past the exact ones; where none was sampled yet, they widen every
  key's Misra–Gries bound instead: ``summary``).
  Each key is then sent to the reduce partition ``partitionFunc(key) % numPartitions``,
  computed here for the sketch's keys only, with the job's own partitioner (the
  workers' hash seed is Spark's);
- a join's or cogroup's reduce side (``GroupMerge``): each key's group once (its values
  from every input, spilled or not: ``len`` of PySpark's external lists counts them
  all), exactly, ``count_groups``; the partition is the worker's own. Each input's
  records (``inputs``, for the broadcast advice: estimates) are counted from every
  value's tag for the first ``EXACT`` values, then from every ``EVERY``-th value's (a C
  slice a group), weighted ``EVERY``: counting every tag cost a third of the merge's
  own time;
- a user's ``partitionBy`` (``ShuffleRead``, its reduce side): the keys of the batches
  it reads, ``tap_batches`` (all of the first ``EXACT`` records, then one record in
  ``EVERY`` of each batch, sampled as ``take`` samples); the partition is the worker's
  own;
- a grouped pandas function (``applyInPandas``): each group's key and rows (the
  ``batch`` hook); Spark passes every group's key, also to a function that takes only
  the frame (shipped as one of ``(key, frame)``: ``calls.group_function``), whose host
  keeps it (``host.group_key``).

The keys counted exactly go to a Misra–Gries summary (``sketch.HeavyHitters``, k = 512):
for every key ``count <= true count <= count + error``, and ``error <= n/(k+1) +
n/(2k+1)`` for ``n`` records: with 5M records, every key above 0.3% of them is found.
"""
from __future__ import annotations

import json
import random
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, compress, cycle, islice, tee
from operator import eq, itemgetter, mul, not_
from typing import Any

from .artifacts import deliver
from .plugin import WorkerPlugin
from .sketch import CAPACITY, EVERY, REPLICATES, KeySketch
from .sketch import HeavyHitters as HeavyHitters  # where it was, for its users

EXACT = 16_384  # records of a map-side worker whose keys are all counted
CHUNK = 512  # after those, the keys of one chunk of CHUNK records in EVERY are counted
OFFSETS = 256  # offsets drawn ahead for the lists ``take`` samples, used in turn
FOLD = 32_768  # keys waiting in lists before a check folds them into the sketch
RUNS = 0.9  # an input in runs: its adjacent keys this much more alike than by chance
_END = object()
SENT = 64  # heavy keys in a live message
AGENT = "skew_keys"  # the live messages' agent name (agents/skew.py receives them)
SEND_PERIOD = 1.0  # seconds between two live messages of a worker
_INPUT = _KEY = itemgetter(0)
JOINS = frozenset({"join", "leftOuterJoin", "rightOuterJoin", "fullOuterJoin", "cogroup",
                   "groupWith"})
# their own partition's keys: a grouped pandas function's, a user partitionBy's read side
GROUPED = frozenset({"applyInPandas", "partitionBy"})


class SkewCounter(WorkerPlugin):
    """Counts the keys a key-partitioned worker sees (see the module docstring)."""

    name = "skew counter"

    def __init__(self, host: Any) -> None:
        self.sketch = KeySketch()
        self.keys: list = []  # keys tapped since the last fold (C appends)
        # keys of sampled units since the last fold, one list a replicate sample
        self.sampled: list[list] = [[] for _ in range(REPLICATES)]
        self.shuffle = getattr(host.spec, "shuffle", None)  # (partitions, partitionFunc)
        self.last_sent = 0.0
        self.inputs: Counter = Counter()  # a join's records per input, counted
        self.input_tags: list = []  # the sampled values' inputs, each standing for EVERY
        self.sampled_inputs: Counter = Counter()  # input_tags counted so far
        self.draw = random.Random(host.worker.get("partition", 0)).randrange  # sampled chunks
        # ``take``'s offsets, drawn ahead: a C call a list, not randrange's Python
        self.offsets = cycle([self.draw(EVERY) for _ in range(OFFSETS)]).__next__
        # the replicate a worker's first unit goes to: workers merged fill them all
        self.units = self.first_replicate = self.draw(REPLICATES)
        self.taken = 0  # records whose keys ``take`` and ``tap_batches`` have seen
        self.tapped = 0  # records ``tap`` has seen, to its last chunk's start
        # all keys are counted up to this record; past EXACT, for an input in runs too
        self.exact_until = EXACT
        self.decided = False  # whether exact_until is final (``decide``)
        self.pairs = self.alike = 0  # adjacent keys counted, and the equal ones ...
        self.by_chance = 0.0  # ... and how many would be equal in a random order

    # --- taps ----------------------------------------------------------------------
    def tap(self, records: Iterable) -> Iterator:
        """The records, unchanged: the keys of the first ``EXACT`` and then of one chunk
        of ``CHUNK`` records in ``EVERY`` are appended to ``keys`` (those of the sampled
        chunks to ``sampled``, a run's chunk to the run's replicate) by C calls only;
        Python runs once a chunk."""
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
            self.tapped = position
            if position >= self.exact_until and not self.decided:
                self.decide()
            if position < self.exact_until:
                append = self.keys.append
            elif within == phase:  # the runs go to the replicates in turn
                append = self.sampled[(position // (CHUNK * EVERY) + self.first_replicate)
                                      % REPLICATES].append
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
        drawn at random a list), appended to ``keys`` (``sampled``: the lists go to the
        replicates in turn) by C calls. A record without a key is left to fail where the
        aggregation takes it."""
        if self.taken >= self.exact_until and not self.decided:
            self.decide()
        try:
            if self.taken < self.exact_until:
                self.keys.extend(map(_KEY, records))
            else:
                self.units += 1
                self.sampled[self.units % REPLICATES].extend(
                    map(_KEY, records[self.offsets()::EVERY]))
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

    def decide(self) -> None:
        """Past the first ``EXACT`` records: go on counting every key if the input comes
        in runs of equal keys (sorted, grouped, a reduce side's output): a sample of
        chunks or of lists' slices would catch a key's run whole or miss it, and no
        interval drawn from the sample could say how far off it is. The samples are
        watched too: an input that turns to runs later is counted whole from then on."""
        self.fold()
        self.decided = True
        if in_runs(self.pairs, self.alike, self.by_chance):
            self.exact_until = sys.maxsize

    def fold(self) -> None:
        """The keys tapped since the last fold, into the sketch (the sampled ones into
        their replicates: each stands for ``EVERY`` records)."""
        if self.keys:
            block = self._measured(self.keys)
            self.keys.clear()
            self.sketch.add_block(block)
        for replicate, keys in enumerate(self.sampled):
            if keys:
                block = self._measured(keys)
                keys.clear()
                self.sketch.add_sample(replicate, block)
        if self.decided and self.exact_until != sys.maxsize \
                and in_runs(self.pairs, self.alike, self.by_chance):
            self.exact_until = sys.maxsize  # the rest counted whole

    def _measured(self, keys: list) -> Counter:
        """``Counter(keys)``; how alike neighbours are, noted (C calls)."""
        block = Counter(keys)
        if self.exact_until != sys.maxsize and len(keys) > 1:
            self.pairs += len(keys) - 1
            self.alike += sum(map(eq, keys, islice(keys, 1, None)))
            self.by_chance += (sum(map(mul, block.values(), block.values()))
                               - len(keys)) / len(keys)
        return block

    # --- the host's hooks ------------------------------------------------------------
    def boundary(self, host: Any, inputs: int, outputs: int) -> None:
        if len(self.keys) + sum(map(len, self.sampled)) >= FOLD:
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
        """The sketch as JSON: keys tagged (``state.encode``) with their reduce partition,
        their exact count and, if anything was sampled, their count in each replicate
        (``samples``: each replicate's records sampled and Misra–Gries error)."""
        from .state import encode

        sketch = self.sketch
        rows, error, errors = sketch.truncated(k)
        taken_in = int(getattr(host, "records_in", 0) or 0) if self.shuffle else 0  # map side
        seen = max(self.taken, self.tapped, taken_in)
        # records past the exact ones and no sample drawn from them yet (a run's sampled
        # chunk not reached): any key's, so each key may have as many more
        skipped = 0 if sketch.samples else max(seen - self.keys_seen(), 0)
        summary: dict = {
            "n": sketch.n + skipped, "capacity": sketch.capacity, "error": error + skipped,
            "estimated": sketch.estimated,
            "inputs": {str(i): n for i, n in self.input_counts().items()},
            "keys": [[encode(key), count, self.partition_of(host, key)] + ([parts] if parts
                                                                          else [])
                     for key, count, parts in rows]}
        if sketch.samples:  # and the records the sample stands for, as many as there were
            summary["samples"] = [{"n": s.n, "error": e}
                                  for s, e in zip(sketch.samples, errors)]
            summary["region"] = max(seen - sketch.exact.n, 0)
        return summary

    def keys_seen(self) -> int:
        """Records whose keys were counted, folded or waiting."""
        return int(self.sketch.exact.n) + len(self.keys)

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


def in_runs(pairs: int, alike: int, by_chance: float, share: float = RUNS) -> bool:
    """Whether ``alike`` of ``pairs`` adjacent keys being equal, against ``by_chance``
    in a random order, says the keys come in runs: of the pairs a random order would
    make unequal, over ``share`` are equal (one key alone: a sorted input's first run
    looks so too)."""
    unlike = pairs - by_chance
    return pairs > 0 and alike - by_chance >= share * unlike


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
