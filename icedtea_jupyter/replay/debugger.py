"""``run.debugger()``: post-execution debugging of a recorded run (IcedTea §4).

Jumps put θ's chain on every partition in the state of an interaction; steps move one
partition forward record by record. Everything runs on one replay thread, because the
replayed operators live in greenlets, which belong to the thread that made them.
Callers on other threads (the kernel, the comm's subshell) take turns through ``lock``.
In a replay process (``replay/process.py``) the engine runs on the process's one thread
(``threaded=False``), so that ``fork()`` copies its greenlets with it.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..checkpoints import phase
from ..checkpoints.file import CheckpointStore
from ..checkpoints.restore import base_checkpoint, restore_paths
from ..snapshots.debug_snapshot import DebugSnapshot
from .cursor import PartitionCursor, StepRefused
from .fed_workers import FedWorkers, source_of
from .inputs import ReplayInputs
from .logs import Failure, Logs, RunLogs
from .order import OutputCheck, ResultFeed
from .paths import PartitionPaths
from .stages import Fed, regenerated_notes
from .worker import RecordedFailure, ReplayError, ReplayWorker, replay_spec

OnMove = Callable[[str, DebugSnapshot], None]  # (the equivalent Python call, the new view)


class Debugger:
    """Jump to any interaction, then step; see ``jump``, ``step_over``, ``step_into``.

    ``on_move(call, snapshot)`` hears of every jump and step, with the equivalent call
    (``"dbg.step_over(partition=0)"``), while ``lock`` is still held: hold ``lock`` to
    read a view (snapshot, pending records, step options) that no move interleaves."""

    def __init__(self, logs: Logs, inputs: Any, store: CheckpointStore | None = None,
                 on_move: OnMove | None = None, threaded: bool = True) -> None:
        self.logs = logs
        self.on_move = on_move
        self.lock = threading.RLock()
        self.inputs = inputs  # an object with records(partition) -> list
        self.cursors: dict[int, PartitionPaths] = {}
        self.fed: list[FedWorkers] = []  # workers fed by θ's cursors (after a shuffle, a union)
        self.restored_from: dict[int, int | None] = {}
        self.current: DebugSnapshot | None = None
        self.divergences: list[str] = []
        self.store = store  # a CheckpointStore, or None
        self.plan: dict | None = store.load_plan() if store is not None else None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="icedtea-replay") \
            if threaded else None
        self.moved: list[tuple[str, int]] = []  # the workers the last move re-encoded
        self.why_in_kernel: str | None = None  # set when a replay process was not possible

    @classmethod
    def for_run(cls, run: Any, on_move: OnMove | None = None) -> Debugger:
        if run.status == "running":
            raise RuntimeError(f"run {run.id} is still running: debug it once it has ended "
                               "(run.wait()); while it runs, take interactions with run.interact()")
        logs = RunLogs(run)
        return cls(logs, ReplayInputs(run, logs), CheckpointStore(run.path), on_move)

    def take_checkpoints(self, plan: str = "offline", tau: float = 1.0) -> dict:
        """Measure every interaction, plan under ``tau`` seconds and write the plan's
        checkpoints (``none``, ``all``, ``online`` or ``offline``); later jumps use them."""
        if self.store is None:
            raise RuntimeError("this debugger has no run store to keep checkpoints in")
        summary = self._call(phase.take, self, self.store, plan, tau)
        self.plan = summary
        return summary

    # --- the API ---------------------------------------------------------------------
    def jump(self, index: int) -> DebugSnapshot:
        """Every worker of θ's chain, on every partition, as it was at interaction ``index``."""
        return self._move(f"dbg.jump({index})", self._jump, index)

    def jump_to_failure(self) -> DebugSnapshot:
        """A failed run: θ's chain on the partition that failed, just before the culprit
        record's scope, with the states as they were (the other partitions as at the last
        interaction before the failure); the next ``step_over`` there reproduces the
        recorded exception (``snapshot.failure``) and ends the partition."""
        return self._move("dbg.jump_to_failure()", self._to_failure)

    def step_over(self, partition: int) -> DebugSnapshot:
        """θ's next record on ``partition`` and its whole scope (Def. 4.5)."""
        return self._move(f"dbg.step_over(partition={partition})", self._step, partition,
                          "step over", PartitionPaths.step_over)

    def step_into(self, partition: int, operator: str) -> DebugSnapshot:
        """``operator`` processes its next waiting record on ``partition`` (Def. 4.6)."""
        return self._move(f"dbg.step_into(partition={partition}, operator={operator!r})",
                          self._step, partition, f"step into {operator!r}",
                          lambda c: c.step_into(operator), operator)

    def step_out(self, partition: int) -> DebugSnapshot:
        """The rest of the current scope on ``partition``."""
        return self._move(f"dbg.step_out(partition={partition})", self._step, partition,
                          "step out", PartitionPaths.step_out)

    def jump_to(self, target: Any) -> DebugSnapshot:
        """θ's chain just before θ processes ``target``: a record of a lineage trace
        (``t.first()``), or θ's input as (partition, position) (``jump_to.py``)."""
        from .jump_to import jump_to_input

        return jump_to_input(self, self.logs, target)

    def pending(self, partition: int | None = None, limit: int = 20) -> dict:
        """The records waiting at each worker: ``{partition: {operator: {count, records,
        scopes}}}`` (θ's are its remaining inputs; a batch function's are Arrow or pandas
        batches, with ``rows``: each one's ``[start, stop)`` in the partition), or one
        partition's. Partitions are each
        operator's own: after a union, an operator has more partitions than θ."""
        with self.lock:
            self._need_jump()
            rows: dict[int, dict] = {p: c.pending(limit) for p, c in sorted(self.cursors.items())}
            for p, waiting in rows.items():  # a batch function's records are batches
                log = self.logs.log(self.logs.chain[0], p)
                if log is not None and log.batch_rows is not None:
                    theta = waiting[self.logs.chain[0]]
                    theta["rows"] = log.row_ranges(theta["scopes"])
            for stage in self.fed:
                for q, cursor in stage.cursors.items():
                    rows.setdefault(q, {}).update(cursor.pending(limit))
            if partition is None:
                return rows
            if partition not in rows:
                raise StepRefused(f"no worker the debugger replays has a partition "
                                  f"{partition} (partitions: {sorted(rows)})")
            return rows[partition]

    def step_options(self) -> dict:
        """How many step-overs and step-intos are possible now, why others are not, and
        θ's partitions whose tree has ended (nothing left to step over)."""
        with self.lock:
            self._need_jump()
            cursors = self.cursors.values()
            return {"step_over": sum(c.can_step_over() for c in cursors),
                    "step_into": sum(c.step_into_options() for c in cursors),
                    "refused": {p: c.overlap() for p, c in self.cursors.items() if c.overlap()},
                    "ended": sorted(p for p, c in self.cursors.items() if c.ended)}

    def cancel(self) -> bool:
        """Replay in the kernel cannot be stopped midway: always False (see RemoteDebugger)."""
        return False

    @property
    def progress(self) -> dict:
        """No fork checkpoints to place in the kernel: always ready."""
        return {"state": "ready", "done": 0, "of": 0}

    def ended(self, partition: int) -> bool:
        """Whether θ's tree on ``partition`` has ended: every record processed and the
        operators' closing outputs emitted (a step-over then has nothing left to do)."""
        with self.lock:
            self._need_jump()
            return self._cursor(partition).ended

    def state(self, operator: str, partition: int) -> dict:
        """A worker's state variables by name, as ``Snapshot.state`` gives them."""
        return self.snapshot().state(operator, partition)

    def snapshot(self) -> DebugSnapshot:
        return self._need_jump()

    def partitions(self, operator: str) -> list[int]:
        """The partitions of ``operator`` the debugger replays."""
        with self.lock:
            self._need_jump()
            if operator in self.logs.chain:
                return sorted(self.cursors)
            for fed, stage in zip(self.logs.fed, self.fed):
                if operator in fed.names:
                    return sorted(stage.cursors)
        raise KeyError(f"the debugger does not replay {operator!r} (it replays "
                       f"{', '.join(self.chain)})")

    @property
    def chain(self) -> list[str]:
        """The operators the debugger replays: θ and those pipelined after it, then an
        aggregation's reduce side and those pipelined after it."""
        return list(self.logs.chain) + [n for fed in self.logs.fed for n in fed.names]

    def close(self) -> None:
        with self.lock:
            self._call(self._abandon_all)
        if self._thread is not None:
            self._thread.shutdown(wait=False)

    # --- on the replay thread ----------------------------------------------------------
    def _call(self, fn: Callable, *args: Any) -> Any:
        if self._thread is None:
            return fn(*args)
        return self._thread.submit(fn, *args).result()

    def _move(self, call: str, fn: Callable, *args: Any) -> DebugSnapshot:
        """A jump or step on the replay thread, then ``on_move`` (unless it was refused)."""
        with self.lock:
            snapshot = self._call(fn, *args)
            if self.on_move is not None:
                self.on_move(call, snapshot)
        return snapshot

    def _jump(self, index: int) -> DebugSnapshot:
        if not 0 <= index < self.logs.interactions:
            raise IndexError(f"no interaction I{index}: this run has "
                             f"I0..I{self.logs.interactions - 1}")
        store = self.store if self._restores() else None
        found = store.available() if store is not None else {}
        cursors: dict[int, PartitionPaths] = {}
        bases: dict[int, int | None] = {}
        try:
            for partition in self.logs.partitions:
                base = self._base(found.get(partition, {}), index, partition)
                cursor = self._restored_cursor(store, partition, base) \
                    if store is not None and base else None
                bases[partition] = base if cursor is not None else None
                cursors[partition] = cursor = cursor or self._fresh_cursor(partition)
                self._advance(cursor, index)
        except BaseException:
            for cursor in cursors.values():  # the debugger stays where it was
                cursor.abandon()
            raise
        fed = self._fed_workers(cursors, index)
        self._abandon_all()
        self.cursors, self.fed = cursors, fed
        self.restored_from = bases  # partition -> the checkpoint restored (None: from I0)
        return self._arrived(index)

    def _to_failure(self) -> DebugSnapshot:
        self._jump(self.recorded_failure().before)
        return self.approach_failure()

    def recorded_failure(self) -> Failure:
        """The run's failure in θ's chain; StepRefused, saying why, if there is none."""
        if self.logs.failure is None:
            raise StepRefused(self.logs.no_failure)
        return self.logs.failure

    def approach_failure(self) -> DebugSnapshot:
        """From the interaction before the failure (no step since) to just before the
        culprit's scope on the failing partition."""
        failure = self.recorded_failure()
        scope = failure.scope if failure.scope is not None else self._culprit_scope(failure)
        paths = self._cursor(failure.partition)
        chain = paths.paths[failure.path]
        paths._guarded(chain, chain.advance_to, scope)
        for stage in self.fed:
            stage.feed(self.cursors)
        self.divergences = []
        encoded, counts = self._encode(self.cursors, *[stage.cursors for stage in self.fed])
        self.moved = list(encoded)
        self.current = DebugSnapshot(encoded, counts, self.current, None,
                                     f"jump to the failure on partition {failure.partition}",
                                     notes=self._notes())
        self.current.partition = failure.partition
        self.current.failure = self._failure_now()
        return self.current

    def _culprit_scope(self, failure: Failure) -> int:
        """θ's input whose scope raises the run's failure, found by stepping on (θ's log
        of the failed attempt was not kept); the debugger is back at the interaction."""
        chain = self._cursor(failure.partition).paths[failure.path]
        while not chain.ended:
            position = chain.position
            try:
                chain.step_over()
            except RecordedFailure:
                self._jump(failure.before)
                return position
        raise ReplayError(f"replaying partition {failure.partition} to its end did not "
                          f"reproduce the run's failure in {failure.operator!r}")

    def _failure_now(self) -> dict | None:
        """The recorded failure, once replay has reproduced it."""
        return next((c.failure for c in self.cursors.values() if c.failure), None)

    def forward(self, index: int, show: bool = True) -> DebugSnapshot | None:
        """From the interaction the debugger stands at (no step taken since) on to a later
        one, replaying only the records in between (the replay process's jumps from a
        parked fork, and its checkpointing pass). ``show=False`` skips building the view."""
        here = self.current.index if self.current is not None else None
        if here is None or not here <= index < self.logs.interactions:
            raise ValueError(f"cannot go forward from {self.current!r} to I{index}")
        if not self._reachable(index):  # the logs put a worker behind where it stands
            return self._jump(index)
        for cursor in self.cursors.values():
            self._advance(cursor, index)
        for stage in self.fed:
            stage.at(index)
            stage.feed(self.cursors)
        if not show:
            self.current = DebugSnapshot({}, {}, None, index, f"jump to I{index}")
            return None
        return self._arrived(index)

    def _reachable(self, index: int) -> bool:
        """Whether every path can go forward to its target at ``index``. Not when an
        earlier interaction's log said a worker had ended (it did not answer that one)
        and a later one finds it running: only a replay from the start gets there."""
        for partition, cursor in self.cursors.items():
            for i, path in enumerate(cursor.paths):
                target = self.logs.target(index, partition, i)
                if not target.finished and (path.ended or path.position > target.count):
                    return False
        return True

    def _arrived(self, index: int) -> DebugSnapshot:
        self.divergences = []
        self._check_counts(index)
        encoded, counts = self._encode(self.cursors, *[stage.cursors for stage in self.fed])
        self.moved = list(encoded)
        self.current = DebugSnapshot(encoded, counts, self.current, index, f"jump to I{index}",
                                     notes=self._notes())
        self.current.failure = self._failure_now()
        return self.current

    def _step(self, partition: int, label: str, action: Callable,
              operator: str | None = None) -> DebugSnapshot:
        current = self._need_jump()
        cursor = self._cursor(partition)
        before = cursor.marks()
        action(cursor)
        changed = [{q: stage.cursors[q] for q in stage.feed(self.cursors)}
                   for stage in self.fed]
        encoded, counts = dict(current._encoded), dict(current._counts)
        fresh, fresh_counts = self._encode({partition: cursor}, *changed)
        self.moved = list(fresh)
        encoded.update(fresh)
        counts.update(fresh_counts)
        self.current = DebugSnapshot(encoded, counts, current, None,
                                     f"{label} on partition {partition}",
                                     cursor.emitted_since(before), self._notes())
        self.current.partition, self.current.operator = partition, operator
        self.current.failure = self._failure_now()
        return self.current

    def _advance(self, cursor: PartitionPaths, index: int) -> None:
        """Each path of ``cursor`` to its logged place at interaction ``index``."""
        cursor.advance([self.logs.target(index, cursor.partition, i)
                        for i in range(len(cursor.paths))])

    def _restores(self) -> bool:
        """Whether jumps start from checkpoints. Not when workers after a shuffle or a
        union are replayed: they need everything θ's tree emitted since the partition's
        start, which a restored tree has not emitted again."""
        return self.store is not None and not any(
            kind != "regenerated" for fed in self.logs.fed for kind, *_ in fed.sources.values())

    def _base(self, found: dict[int, set], index: int, partition: int) -> int | None:
        """The checkpoint to restore before replaying to ``index`` (``base_checkpoint``)."""
        keys = {self.logs.key(name, partition, i)
                for i, path in enumerate(self.logs.paths) for name in path}
        return base_checkpoint(found, keys, index, lambda: all(
            self.logs.target(index, partition, i).finished for i in range(len(self.logs.paths))))

    def _restored_cursor(self, store: CheckpointStore, partition: int,
                         index: int) -> PartitionPaths | None:
        """θ's tree restored from the checkpoint at ``index`` (None: not restorable)."""
        cursor = self._fresh_cursor(partition)
        if not all(w.restorable for w in cursor.workers):
            cursor.abandon()
            return None  # a generator operator: replay from the partition's start
        try:
            restore_paths(cursor, store, index,
                          lambda name, path: self.logs.key(name, partition, path))
        except FileNotFoundError:
            cursor.abandon()
            return None
        return cursor

    def _fresh_cursor(self, partition: int) -> PartitionPaths:
        """θ's tree on ``partition`` before its first record: one chain per path."""
        inputs = self.inputs.records(partition)
        return PartitionPaths(partition, [self._chain(partition, names, inputs, i)
                                          for i, names in enumerate(self.logs.paths)])

    def _chain(self, partition: int, names: list[str], inputs: list,
               path: int = 0) -> PartitionCursor:
        workers, checks = [], []
        for name in names:
            log = self.logs.log(name, partition, path)
            feed = ResultFeed(name, partition, log.results if log is not None else [])
            workers.append(self._worker(name, partition, feed, self._expected(name, partition,
                                                                              path)))
            checks.append(OutputCheck(name, log.outputs if log is not None else None,
                                      log.boundaries if log is not None else None))
        return PartitionCursor(partition, names, workers, inputs, checks)

    def _worker(self, name: str, partition: int, feed: ResultFeed,
                expected: tuple[str, int] | None = None) -> ReplayWorker:
        wrapper = self.logs.operator(name)()
        wrapper.spec = replay_spec(-1, name, "replay")
        return ReplayWorker(name, wrapper, partition, feed, expected)

    def _expected(self, name: str, partition: int, path: int) -> tuple[str, int] | None:
        """The run's failure, if this worker raised it: (exception type, input index)."""
        f = self.logs.failure
        if f is None or (f.operator, f.partition, f.path) != (name, partition, path):
            return None
        return f.exception, f.index

    def _fed_workers(self, cursors: dict[int, PartitionPaths], index: int) -> list[FedWorkers]:
        """The workers fed by θ's cursors, given what those have emitted so far (and the
        DataFrame operators in workers of their own, as at interaction ``index``)."""
        stages: list[FedWorkers] = []
        try:
            for fed in self.logs.fed:
                stage = self._fed_stage(fed)
                stages.append(stage)
                stage.at(index)
                stage.feed(cursors)
        except BaseException:
            for stage in stages:
                stage.abandon()
            raise
        return stages

    def _fed_stage(self, fed: Fed) -> FedWorkers:
        return FedWorkers(fed.partitions, lambda q: self._chain(q, fed.names, []),
                          lambda q: source_of(fed, q, self.logs, self.inputs))

    @staticmethod
    def _encode(*groups: dict[int, Any]) -> tuple[dict, dict]:
        encoded, counts = {}, {}
        for partition, cursor in [item for group in groups for item in group.items()]:
            for name, worker in cursor.items():
                encoded[(name, partition)] = worker.encoded_state()
                counts[(name, partition)] = worker.processed
        return encoded, counts

    def _check_counts(self, index: int) -> None:
        for partition, cursor in self.cursors.items():
            for i, path in enumerate(cursor.paths):
                if self.logs.target(index, partition, i).finished:
                    continue
                logged = self.logs.counts(index, partition, i)
                for name, count in path.counts().items():
                    if logged.get(name) is not None and logged[name] != count:
                        self.divergences.append(
                            f"at I{index} {name!r} on partition {partition} had processed "
                            f"{logged[name]} records in the run and {count} in replay")

    def _notes(self) -> list[str]:
        notes = [c.divergence for cur in self.cursors.values() for c in cur.checks
                 if c.divergence]
        generators = {name for cur in self.cursors.values()  # in the kernel, not in forks
                      for name, worker in cur.items() if not worker.restorable} \
            if self._thread is not None else set()
        notes += [f"{name!r} is a generator operator: its local variables cannot be restored "
                  "from a checkpoint, so jumps replay its partitions from their start"
                  for name in generators]
        if self.why_in_kernel:
            notes.append(self.why_in_kernel)
        if self.logs.not_replayed:
            notes.append(self.logs.not_replayed)
        hows: dict[str, set[str]] = {}
        for stage in self.fed:
            for name, ways in stage.releases().items():
                hows.setdefault(name, set()).update(ways)
        notes += regenerated_notes(hows)
        rerun = sorted(self.logs.rerun)
        if rerun:
            notes.append(f"θ's partitions {rerun} were computed by several jobs of the cell; the "
                         "debugger replays the last job's tasks, so interactions taken during "
                         "an earlier job show that job's workers in run.snapshot(k), not here")
        return sorted(set(notes + self.divergences))

    def _abandon_all(self) -> None:
        for cursor in self.cursors.values():
            cursor.abandon()
        for stage in self.fed:
            stage.abandon()
        self.cursors, self.fed = {}, []

    def _cursor(self, partition: int) -> PartitionPaths:
        try:
            return self.cursors[partition]
        except KeyError:
            raise StepRefused(f"θ has no partition {partition} "
                              f"(partitions: {sorted(self.cursors)})") from None

    def _need_jump(self) -> DebugSnapshot:
        """Where the debugger stands; StepRefused before its first jump."""
        if self.current is None:
            raise StepRefused("jump to an interaction first: dbg.jump(k)")
        return self.current
