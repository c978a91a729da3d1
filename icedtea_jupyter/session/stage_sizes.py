"""Bytes a running stage's partitions still have to read, where Spark knows their size
(the ``waiting`` column of ``run.skew(op).partitions`` while the run records).

A reduce stage's partitions: the map outputs' sizes Spark's ``MapOutputTrackerMaster``
keeps for each reduce partition (``getStatistics``; sizes up to
``spark.shuffle.accurateBlockThreshold`` are stored rounded to within about 10%), summed
over the shuffles the stage reads. A source stage's: its Hadoop or file splits' lengths.
Read so far: the task's shuffle and input bytes read in Spark's status store (updated at
each executor heartbeat and at the task's end). Only stages whose RDD maps partition
``i`` to input partition ``i`` (one-to-one dependencies) are sized; elsewhere, none.
"""
from __future__ import annotations

import math
import threading
import time
from typing import Any

SPLIT_LENGTH_GETTERS = (  # a leaf RDD's partition -> its split's length in bytes
    lambda p: p.inputSplit().value().getLength(),  # HadoopRDD (textFile)
    lambda p: p.serializableHadoopSplit().value().getLength(),  # NewHadoopRDD
    lambda p: sum(f.length() for f in p.files()),  # a DataFrame's file scan
)


def stage_waiting(sc: Any, stage_id: int) -> dict[int, int] | None:
    """partition -> bytes still to read in stage ``stage_id`` (0 once its task
    succeeded), or None if Spark does not know the partitions' sizes."""
    try:
        jsc = sc._jsc.sc()
        stage = jsc.dagScheduler().stageIdToStage().get(stage_id)
        if stage.isEmpty():
            return None
        stage = stage.get()
        known = _known_sizes(sc, stage.rdd())
        if known is None:
            return None
        read, done = _read_so_far(jsc, stage_id, stage.latestInfo().attemptNumber())
    except Exception:  # py4j: an internal API changed, or the stage ended meanwhile
        return None
    return {p: 0 if p in done else max(size - read.get(p, 0), 0)
            for p, size in enumerate(known)}


def _known_sizes(sc: Any, rdd: Any) -> list[int] | None:
    """Each partition's input size, through one-to-one dependencies to the shuffles
    the stage reads or to its source's splits."""
    deps = rdd.dependencies()
    if deps.size() == 0:
        return _split_lengths(rdd)
    sizes: list[int] | None = None
    part: list[int] | None
    for i in range(deps.size()):
        dep = deps.apply(i)
        name = dep.getClass().getSimpleName()
        if name == "ShuffleDependency":
            part = list(_tracker(sc).getStatistics(dep).bytesByPartitionId())
        elif name == "OneToOneDependency":
            part = _known_sizes(sc, dep.rdd())
        else:  # a union, a coalesce, a cartesian: partition i reads other partitions
            return None
        if part is None or (sizes is not None and len(part) != len(sizes)):
            return None
        sizes = part if sizes is None else [a + b for a, b in zip(sizes, part)]
    return sizes


def _split_lengths(rdd: Any) -> list[int] | None:
    partitions = list(rdd.partitions())
    for getter in SPLIT_LENGTH_GETTERS:
        lengths = _lengths(getter, partitions)
        if lengths is not None:
            return lengths
    return None  # parallelize and other in-memory sources: no known size


def _lengths(getter: Any, partitions: list) -> list[int] | None:
    try:
        return [int(getter(p)) for p in partitions]
    except Exception:  # not this kind of partition (py4j: no such method)
        return None


def _tracker(sc: Any) -> Any:
    """The driver's MapOutputTrackerMaster. ``SparkEnv``'s methods cannot be listed by
    py4j (one of their types needs a class PySpark's classpath lacks), its field can."""
    field = sc._jvm.java.lang.Class.forName("org.apache.spark.SparkEnv") \
        .getDeclaredField("mapOutputTracker")
    field.setAccessible(True)
    return field.get(sc._jsc.sc().env())


def _read_so_far(jsc: Any, stage_id: int, attempt: int) -> tuple[dict[int, int], set[int]]:
    """partition -> the most bytes an attempt of its task has read so far; the
    partitions whose task succeeded."""
    read: dict[int, int] = {}
    done: set[int] = set()
    tasks = jsc.statusStore().taskList(stage_id, attempt, 1 << 30).iterator()
    while tasks.hasNext():
        task = tasks.next()
        partition = int(task.index())
        if task.status() == "SUCCESS":
            done.add(partition)
        metrics = task.taskMetrics()
        if metrics.isDefined():
            shuffle = metrics.get().shuffleReadMetrics()
            bytes_read = int(shuffle.localBytesRead() + shuffle.remoteBytesRead()
                             + metrics.get().inputMetrics().bytesRead())
            read[partition] = max(read.get(partition, 0), bytes_read)
    return read, done


class LiveWaiting:
    """``stage_waiting`` off the caller's thread, for the sidebar's live pushes: each
    call answers at once with the stage's sizes as last read (None before the first
    read), and reads them again on a thread of its own when they are older than
    ``REFRESH`` seconds. Reading them asks the driver's scheduler and status store
    through py4j: 1.5–2 s while a job of 200 partitions runs on 2 busy cores, which a
    push held the sidebar's update for."""

    REFRESH = 1.0

    def __init__(self, sc: Any) -> None:
        self.sc = sc
        self._known: dict[int, tuple[float, dict[int, int] | None]] = {}
        self._reading: set[int] = set()
        self._lock = threading.Lock()

    def __call__(self, stage_id: int) -> dict[int, int] | None:
        now = time.monotonic()
        with self._lock:
            read_at, sizes = self._known.get(stage_id, (-math.inf, None))
            stale = now - read_at > self.REFRESH and stage_id not in self._reading
            if stale:
                self._reading.add(stage_id)
        if stale:
            threading.Thread(target=self._read, args=(stage_id,), daemon=True,
                             name=f"icedtea-stage-sizes-{stage_id}").start()
        return sizes

    def _read(self, stage_id: int) -> None:
        sizes = None
        try:
            sizes = stage_waiting(self.sc, stage_id)  # None on py4j's errors
        finally:
            with self._lock:
                self._known[stage_id] = (time.monotonic(), sizes)
                self._reading.discard(stage_id)
