"""Live control beside a worker (Amber): pause and resume, conditional and exception
breakpoints, skipping or replacing the record, global COUNT/SUM breakpoints.

``LiveControl`` is a worker plugin (``plugin.py``) on every host. With no breakpoint on
its operator and no ``--on-error pause`` it adds nothing per record: a pause arrives as a
control message, which the host hands over at its next check (``host.box[0] = 0``), a
record boundary of the whole task chain. There the worker acknowledges (``paused``) and
holds, handling control messages of every host of its task (``live_state`` answers from
the states of suspended workers), until the pause ends.

With a breakpoint on its operator, the host's input goes through its breakpoints: its
per-record loop's input, or in blocks the input of a feed of its own (``feed_input``),
taken in step with the function (``_wrap``). Where that input is Spark's, conditions are
tested on lists of records read ahead (``breakpoint_scan.py``: a loop compiled once, no
call a record) and the handlers run on a matching record only, as the operator pulls it;
else, and for a SUM, one handler per breakpoint in a C ``map``: one Python call a record. A conditional hit sends the record and the worker's state (``hit``) and holds
until the user decides (``decide``: skip, replace, resume, stop). A global breakpoint adds
each record to the worker's count or sum; at its local target the worker reports
(``global_report``) and holds until the coordinator gives it a new target (Amber's
protocol, ``control/``). ``--on-error pause`` wraps a per-record function: an exception
becomes a hit.

Records skipped or replaced at a conditional breakpoint never reach the operator: the
host does not count them, and replay applies the same edits to its inputs. A record
skipped after an exception was counted (it produced no output): replay meets a
``SkippedRecord`` in its place and gives no output for it either.
"""
from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator
from itertools import filterfalse
from typing import Any

from .breakpoint_scan import ScannedInput
from .control_state import CONTROL_TYPES as _HANDLED
from .control_state import TaskControl, state_for
from .feeds import Counter, from_spark
from .plugin import WorkerPlugin
from .records import describe_record
from .state import bounded_state, decode, encode, encode_state
from .watches import _IS_SKIP, _SKIP, Watch

_HITS = itertools.count(1)
ACTIONS = ("skip", "replace", "resume", "stop")  # a hit's actions (control/hits.py)
MAX_STATE_BYTES = 256 * 1024  # a hit's state beyond this travels as names only
HOLD_POLL = 0.25  # seconds between two looks while holding (a wake-up comes sooner)
ROW_UDF = "udf"  # a row @udf column's operator (a pandas or Arrow UDF's is a batch's)
ROW_UDF_REFUSAL = (
    "a breakpoint on {op!r} is not checked: {op!r} is a row @udf column, which Spark calls "
    "row by row from its own loop. Use --on-error pause to stop at a row that raises, or "
    "put the condition on a mapInPandas or RDD operator before it")


class RunStopped(BaseException):
    """The user stopped the run while this worker was held: its task ends (a
    BaseException: no ``except Exception`` of the user's holds it up)."""


class SkippedRecord:
    """In replay's input, a record skipped after it made the operator raise."""

    def __repr__(self) -> str:
        return "<skipped record>"


def _row(fields: dict) -> Any:
    try:
        from pyspark.sql import Row
    except ImportError:  # pragma: no cover - workers always have pyspark
        return fields
    return Row(**fields)


class LiveControl(WorkerPlugin):
    name = "live control"
    essential = True  # a stop must end the task; its own failures become alerts

    def __init__(self, host: Any) -> None:
        self.host = host
        self.state: TaskControl = state_for(host.spec.run.run_id)
        self.on_error = host.spec.run.on_error == "pause"
        self.replaying = host.spec.run.run_id == "icedtea-replay"
        self.watches: list[Watch] = []
        self.applied: set[int] = set()  # the watches its input goes through
        self.version = -1
        self.counter: Counter | None = None  # counts the input the watches see ...
        self.base = 0  # ... from this index
        self.skipped = 0  # records skipped at conditional breakpoints
        self.scanner: ScannedInput | None = None  # tests conditions on lists read ahead ...
        self.scanned: set[int] = set()  # ... of these watches
        self.index_at: int | None = None  # the scanner's record being handled: its index
        self.refused: set[int] = set()  # breakpoints this operator cannot check: said once
        self._refresh()

    # --- the host's hooks ----------------------------------------------------------------
    def needs_records(self, host: Any) -> bool:
        """``--on-error pause`` guards a per-record function; breakpoints wrap the input
        of the per-record loop or, in blocks, the host's feed (``feed_input``). A UDF's
        or grouped map's calls are guarded where they are made (``udf_errors.py``): its
        rows go through ``records`` (``calls.CallFeed``, a generator step a row) only
        for breakpoints armed on it before its first call, as before."""
        if host.per_call:
            return self.on_error and bool(self.watches)
        return self.on_error

    def records(self, host: Any, records: Iterable) -> Iterable:
        if not self.watches:
            return records
        return self._wrap(records, self.watches, 0, from_spark(records))

    def feed_input(self, host: Any, iterator: Iterable) -> Iterable | None:
        if not self.watches:
            return None
        return self._wrap(iterator, self.watches, 0, from_spark(iterator))

    def partition_outputs(self, host: Any, outputs: Iterable) -> Iterable:
        """``--on-error pause``: a whole-partition function's exception is a hit."""
        if not self.on_error or outputs is None:
            return outputs
        from .error_guard import guard_outputs

        return guard_outputs(self, host, outputs)

    def first_record(self, host: Any) -> None:
        if self.state.paused is not None:
            self._pause(self.state.paused)

    def boundary(self, host: Any, inputs: int, outputs: int) -> None:
        if self.state.version != self.version:
            self._refresh()
        for watch in self.watches:  # a global COUNT: the host counts, checks at its target
            if watch.kind == "count" and watch.armed:
                if inputs >= watch.target:
                    self.reach(watch)
                if watch.armed:
                    host.check_within(int(watch.target) - host.processed)

    def accepts(self, host: Any, message: dict) -> bool:
        task = message.get("task")
        return message["type"] in _HANDLED and (task is None or task == host.worker["task"])

    def control(self, host: Any, message: dict) -> bool:
        """Acts on live control's messages; False: other plugins may see them too."""
        kind = message["type"]
        if kind == "pause" and isinstance(message.get("pause"), int):
            self._pause(message["pause"])
        elif kind == "breakpoints":
            self._refresh()
        elif kind == "live_state":
            self._send_state(message["request"])
        elif kind == "query":
            watch = self._watch(message["breakpoint"])
            if watch is not None:
                self._report(watch, reached=False)  # a tally asked for, then a target
        if self.state.stopped:
            raise RunStopped("the run was stopped")
        return False

    def end(self, host: Any, message: dict) -> None:
        for watch in self.watches:
            if watch.kind != "condition":
                if watch.kind == "count":
                    host.processed = message["records_in"]
                self._report(watch, reached=False, final=True, hold=False)

    # --- pause ----------------------------------------------------------------------------
    def _pause(self, pause: int) -> None:
        """Acknowledge pause ``pause`` (once per task) and hold until it ends."""
        state, host = self.state, self.host
        key = (host.worker["task"], pause)
        if state.paused != pause or key in state.acked:
            return
        state.acked.add(key)
        base = {"type": "paused", "worker": host.worker, "pause": pause}
        host.channel.send(dict(base, paused=True, processed=host.live_count()))
        self.hold(lambda: state.paused != pause)
        host.channel.send(dict(base, paused=False, processed=host.live_count()))

    def hold(self, until: Callable[[], bool]) -> None:
        """Stay between two records, handling the control messages of every host of this
        task (they are all suspended), until ``until()`` or the run is stopped."""
        state, host = self.state, self.host
        task = host.worker["task"]
        while not (until() or state.stopped):
            state.wake.clear()
            for other in list(host.channel.hosts):
                if other.worker["task"] == task:
                    other.handle_control()
            if until() or state.stopped:
                break
            state.wake.wait(HOLD_POLL)
        if state.stopped:
            raise RunStopped("the run was stopped")

    def _send_state(self, request: int) -> None:
        host = self.host
        host.channel.send({"type": "live_state", "worker": host.worker, "request": request,
                           "processed": host.live_count(), "state": self._state()})

    def _state(self) -> dict:
        try:
            state = encode_state(bounded_state(self.host.state()))
        except Exception as exc:  # never fail the task for a view of its state
            return {"$error": f"{type(exc).__name__}: {exc}"}
        if len(json.dumps(state, default=str)) > MAX_STATE_BYTES:
            return {name: {"$t": "summary", "note": "too large to send while running"}
                    for name in state}
        return state

    # --- breakpoints -----------------------------------------------------------------------
    def _refuse(self, item: dict) -> None:
        """A breakpoint on a row ``@udf`` column: never armed (Spark calls the UDF row by
        row from its own loop, where a paused row could not be skipped or replaced), and
        the run told so once per worker instead of the breakpoint never hitting."""
        if item["id"] in self.refused:
            return
        self.refused.add(item["id"])
        self.host.channel.send({
            "type": "alert", "worker": self.host.worker, "source": f"breakpoint {item['id']}",
            "level": "warning", "message": ROW_UDF_REFUSAL.format(op=self.host.spec.name)})

    def _refresh(self) -> None:
        """The breakpoints on this operator, as armed now (a global one keeps its counts);
        one armed while the host runs in blocks wraps its feed's next blocks."""
        self.version = self.state.version
        old = {w.id: w for w in self.watches}
        watches = []
        for item in self.state.breakpoints.values():
            if item.get("operator") != self.host.spec.op_id:
                continue
            if self.host.spec.api == ROW_UDF:
                self._refuse(item)
                continue
            watch = old.pop(item["id"], None)
            if watch is None:
                try:
                    watch = Watch(item, self)
                except SyntaxError as exc:
                    self.host.alert(f"breakpoint {item['id']}", "compile", exc)
                    continue
            watches.append(watch)
        for gone in old.values():
            gone.armed = False
        fresh = [w for w in watches if w.id not in self.applied]
        self.watches = watches
        if fresh and self.scanner is not None:  # it tests them from its next record on
            fresh = self._scan_too(fresh)
            self.scanner.rescan()
        feed = getattr(self.host, "feed", None)
        if fresh and feed is not None and feed.owner is self.host and feed.started \
                and not feed.ended:
            base = feed.count() + 1  # its block's first record was pulled already
            read_ahead, feed.read_ahead = feed.read_ahead, False  # the watches read ahead
            feed.source = self._wrap(feed.source, fresh, base, read_ahead)

    def _watch(self, bp: int) -> Watch | None:
        return next((w for w in self.watches if w.id == bp), None)

    def _wrap(self, records: Iterable, watches: list[Watch], base: int,
              read_ahead: bool) -> Iterator:
        """``records`` through the watches: conditions tested on lists read ahead where
        ``read_ahead`` allows (``ScannedInput``), else and for a SUM through their
        handlers, in C but for their one call each; the first such wrap counts the input
        (a hit's index)."""
        if read_ahead and self.scanner is None and any(w.kind == "condition" for w in watches):
            self.scanner = ScannedInput(records, self._first_match, self._at_match, _SKIP,
                                        base)
            records = iter(self.scanner)
            watches = self._scan_too(watches)
        if self.counter is None and self.scanner is None:
            self.counter, self.base = Counter(), base
            records = self.counter.tap(records)
        for watch in watches:
            if watch.kind != "count":  # a COUNT costs nothing a record (see boundary)
                records = map(watch.handler, records)
            self.applied.add(watch.id)
        if any(w.kind == "condition" for w in watches):
            records = filterfalse(_IS_SKIP, records)
        return iter(records)

    def _scan_too(self, watches: list[Watch]) -> list[Watch]:
        """The conditions among ``watches`` join the scanner's; returns the others."""
        for watch in watches:
            if watch.kind == "condition":
                self.scanned.add(watch.id)
                self.applied.add(watch.id)
        return [w for w in watches if w.kind != "condition"]

    def _first_match(self, rows: list, start: int) -> int:
        """The first of ``rows[start:]`` an armed scanned condition holds for, or -1."""
        first = -1
        for watch in self.watches:
            if watch.armed and watch.id in self.scanned:
                found = watch.scan(rows, start)
                if found >= 0 and (first < 0 or found < first):
                    first = found
        return first

    def _at_match(self, record: Any, index: int) -> Any:
        """The scanned conditions' handlers on a matching record (input ``index``), as
        the operator pulls it: the record to pass on, its replacement, or _SKIP."""
        self.index_at = index
        try:
            for watch in list(self.watches):
                if watch.id in self.scanned:
                    record = watch.handler(record)
                    if record is _SKIP:
                        break
        finally:
            self.index_at = None
        return record

    def raw_index(self) -> int:
        """The input index of the record being tested (edits not applied)."""
        if self.index_at is not None:
            return self.index_at
        if self.counter is not None:
            return self.base + self.counter.value() - 1
        return self.host.live_count() - 1 + self.skipped

    def hit(self, watch: Watch, record: Any) -> Any:
        """A conditional breakpoint's condition held: ask, unless it was removed."""
        if watch.id not in self.state.breakpoints:
            return record
        out = self.ask("condition", record, watch.id)
        self.skipped += out is _SKIP
        return out

    def broken(self, watch: Watch, record: Any, exc: Exception) -> Any:
        """An expression raised: said once, that breakpoint off on this worker."""
        if watch.armed:
            watch.armed = False
            self.host.alert(f"breakpoint {watch.id}", "evaluate", exc)
        return record

    def reach(self, watch: Watch) -> None:
        """A global breakpoint's local target: report and hold (a COUNT given no more
        to take holds on)."""
        self._report(watch, reached=True)
        while watch.kind == "count" and watch.value >= watch.target and watch.armed:
            self._report(watch, reached=True)

    def ask(self, kind: str, record: Any, bp: int, error: dict | None = None,
            actions: tuple[str, ...] = ACTIONS, refused: str = "",
            index: int | None = None) -> Any:
        """A hit: send the record and the state, hold until the user decides; returns
        the record to process, its replacement, or _SKIP. ``actions``: those the user may
        take (``refused``: why not the others); ``index``: the record's input index, if
        not the host's (a pandas UDF's row in the batch it holds on)."""
        host, state = self.host, self.state
        hit, task = next(_HITS), host.worker["task"]
        host.processed = host.live_count()  # the records before this one: all processed
        try:
            encoded = encode(record)
        except Exception:
            encoded = None
        host.channel.send({"type": "hit", "worker": host.worker, "hit": hit, "kind": kind,
                           "breakpoint": bp,
                           "index": self.raw_index() if index is None else index,
                           "record": encoded,
                           "described": describe_record(record), "error": error,
                           "state": self._state(), "processed": host.live_count(),
                           "time": time.time(), "actions": list(actions),
                           "refused": refused})
        if kind == "error":
            state.error_holds.add(task)
        try:
            self.hold(lambda: (task, hit) in state.decisions)
        finally:
            state.error_holds.discard(task)
        decision = state.decisions.pop((task, hit))
        action = decision["action"]
        if action == "stop":
            raise RunStopped("the run was stopped at a breakpoint")
        if action not in actions:  # refused by the coordinator: never sent
            return record
        if action == "skip":
            return _SKIP
        if action == "replace":
            return decode(decision.get("record"), _row)
        return record

    def _report(self, watch: Watch, reached: bool, final: bool = False,
                hold: bool = True) -> None:
        """A global breakpoint's count or sum to the coordinator; if ``hold``, wait for a
        new local target (or the breakpoint's end)."""
        host, state = self.host, self.state
        key = (watch.id, host.worker["task"])
        if watch.kind == "count":
            watch.value = host.processed  # inputs processed at this check
        host.channel.send({"type": "global_report", "worker": host.worker,
                           "breakpoint": watch.id, "value": watch.value, "reached": reached,
                           "final": final})
        if not hold:
            return
        if watch.kind != "count":  # a SUM holds in its handler: before the record
            host.processed = host.live_count()
        asked = watch.seq  # a nested report (a query while held) may move watch.seq

        def answered() -> bool:
            seq, _ = state.targets.get(key, (0, 0.0))
            return seq > asked or watch.id not in state.breakpoints
        self.hold(answered)
        watch.seq, watch.target = state.targets.get(key, (watch.seq, watch.target))
        if state.version != self.version:
            self._refresh()  # it may have been hit or removed: then disarmed
