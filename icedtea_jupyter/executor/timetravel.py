"""The time-travel side of a worker of G(θ): snapshots at interactions, replay logs.

Within a task PySpark pulls each record through the whole chain of Python functions
before the next one enters. So when θ's host is about to hand θ its next input,
every downstream worker of the same task has processed exactly the scopes of θ's
earlier inputs and waits for its next record: that moment is tuple-consistent (IcedTea
Def. 3.4). θ's host takes the snapshot of the whole chain there, for I0 before its
first record and for each interaction the coordinator announces. Workers of G(θ) outside
θ's chain — in a later stage (after a shuffle), or in another Python process of the same
task (after a union, the JVM passes records between two Python workers in batches) —
report only how far they had got; replay computes their states after the same records.

``TimeTravel`` is a worker plugin (``plugin.py``), registered by the host for workers of
G(θ). It is ``essential``: its recording errors fail the task, as they always did, and
what it can survive (a checkpoint it cannot write, a condition that raises) it reports
as alerts of its own.
"""
from __future__ import annotations

import itertools
import json
import time
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..checkpoints.file import CheckpointWriter, saved_state
from .artifacts import deliver
from .batches import batch_checksum
from .control_state import state_for
from .incremental import IncrementalState
from .loops import batch_rows
from .pins import PINNED, Pins
from .plugin import WorkerPlugin
from .protocol import EncodedJSON
from .records import describe_record
from .state import bounded_state
from .worker_file import inputs_table

FINAL = -1  # the index of a worker's final snapshot
MAX_REPORT_BYTES = 256 * 1024  # a report's state beyond this travels in summary
SPLICED_REPORT_BYTES = 16 * 1024  # a change this large is encoded once, not again to send
_REQUESTS = itertools.count(1)
BATCH_SUM_PERIOD = 0.05  # θ sums one input batch about this often (and always the first)
ANSWER_TIMEOUT = 2.0  # seconds an --interact-when hit waits for the coordinator's answer


class TimeTravel(WorkerPlugin):
    """Snapshots and logs of one G(θ) worker; plugged only into hosts in G(θ)."""

    name = "time travel"
    essential = True

    def __init__(self, host: Any) -> None:
        self.host = host
        self.theta = host.spec.theta
        self.control_state = state_for(host.spec.run.run_id)  # live control's, per process
        self.deferred: list[dict] = []  # interactions held back at an exception hit
        self.sent = IncrementalState()  # the state as last sent: what changed travels
        self.outputs = array("I")  # cumulative outputs when each input was pulled
        self.drops: array | None = None  # a filter: indices of the inputs it dropped
        self.deviations = array("I")  # (input index, outputs) where outputs != 1
        self.blocks: array | None = None  # in blocks: (inputs, outputs) so far at boundaries
        self.kind = "ones"  # how the loop logs outputs per input (see on_end)
        self.results: list = []  # log_result values, in call order
        self.started = False
        self.condition: Callable[[Any], Any] | None = \
            self._compile(host.spec.run.condition) if self.theta else None
        self._hit: Any = None
        self._waiting: int | None = None
        self.inputs: list[bytes] | None = [] if self.theta and host.spec.run.record_inputs else None
        self.fingerprints = array("I") if self.theta else None  # (input index, crc32) pairs
        self.writer: CheckpointWriter | None = None
        self.in_chain = self.theta  # in θ's chain: known at the first record
        self.batch_rows: array | None = None  # a batch function: the rows of each input
        self._next_sum = 0.0  # a batch function's θ: when to sum an input batch next
        self.pins = Pins(host.spec.run.interact_at if self.theta else (),
                         host.worker["partition"])  # --interact-at

    def _compile(self, expression: str | None) -> Any:
        if not expression:
            return None
        try:
            return eval(compile(f"lambda row: ({expression})", "<--interact-when>", "eval"), {})
        except SyntaxError as exc:
            self.host.alert("interact-when", "compile", exc)
            return None

    # --- the host's hooks (plugin.py) ----------------------------------------------------
    def needs_records(self, host: Any) -> bool:
        """θ sees every input record to record it (--record-inputs) or to evaluate
        --interact-when on it."""
        return self.inputs is not None or self.condition is not None or bool(self.pins)

    def records(self, host: Any, records: Iterable) -> Iterable:
        if self.inputs is not None:
            records = self._recorded(records)
        if self.condition is not None:
            records = self.conditioned(records)
        if self.pins:
            records = self.pins.taken(records, self._pinned, self._input_rows, self._missed)
        return records

    def outputs_log(self, host: Any, kind: str, in_blocks: bool) -> Callable | None:
        """How this worker logs its outputs per input (IcedTea's output counts). An
        aggregation's outputs all follow its inputs: it logs none (see on_end)."""
        if host.state_source is not None:
            return None
        if in_blocks:
            if kind != "map":  # a map in blocks has one output per input: nothing to log
                self.blocks_log()
            return None
        if kind == "filter":
            return self.drops_log()
        if kind in ("flatMap", "operator"):
            return self.deviations_log()
        if kind == "partition":
            return self.cumulative_log()
        if kind == "batches":  # the rows of each input batch (see batch)
            self.kind = "batches"
            self.batch_rows = array("I")
        return None

    def first_record(self, host: Any) -> None:
        self.on_first_record()

    def batch(self, host: Any, index: int, batch: Any, rows: int) -> None:
        """A batch function's input batch, or a grouped map's group (``index`` -1,
        ``batch`` its arguments): its rows logged (replay counts records by them); it
        sums the first one and one about every BATCH_SUM_PERIOD, and records groups."""
        if self.batch_rows is None:
            self.kind, self.batch_rows = "batches", array("I")
        if host.per_call and self.condition is not None:
            self.condition_on_call(batch)
        index = len(self.batch_rows)
        self.batch_rows.append(rows)
        if host.per_call and self.inputs is not None:
            self.record_input(batch)
        if self.fingerprints is None:  # a DataFrame operator after θ: its inputs are
            self.fingerprints = array("I")  # regenerated for replay and checked by these
        now = time.monotonic()
        if now >= self._next_sum:
            self._next_sum = now + BATCH_SUM_PERIOD
            self.fingerprints.append(index)
            self.fingerprints.append(batch_checksum(batch[-1] if host.per_call else batch))

    def sample(self, host: Any, index: int, pickled: bytes) -> None:
        if self.fingerprints is not None:
            self.fingerprint(index, pickled)

    def accepts(self, host: Any, message: dict) -> bool:
        """An interaction: θ takes its chain's snapshot, so the G(θ) workers of its task
        leave it to θ; the others report how far they had got."""
        if message["type"] == "interact_refused":  # θ's --interact-when: no interaction
            return self.theta
        return message["type"] == "interact" and (self.theta or not self.theta_in_task())

    def control(self, host: Any, message: dict) -> bool:
        if message["type"] == "interact_refused":
            self.answered(message)
            return True
        if message["type"] != "interact":
            return False
        if host.worker["task"] in self.control_state.error_holds:
            self.deferred.append(message)  # its record is not done: after it (boundary)
            return True
        if message["index"] not in self.pins.named:  # a pinned one: taken at its count
            self.on_interact(message, host.processed)
        self.answered(message)
        return True

    def _answer_deferred(self, processed: int) -> None:
        """The interactions that came while the task held at an exception hit, answered
        now that its record is done (a replacement's effect on the state included)."""
        deferred, self.deferred = self.deferred, []
        for message in deferred:
            if message["index"] not in self.pins.named:
                self.on_interact(message, processed)
            self.answered(message)

    def end(self, host: Any, message: dict) -> bytes:
        if self.deferred:
            self._answer_deferred(message["records_in"])
        message["log"], body = self.on_end(message["records_in"])
        return body

    # --- who is in the snapshot ---------------------------------------------------------
    def chain(self) -> list[TimeTravel]:
        """The time travel of θ's worker and of the G(θ) workers of the same task,
        upstream first."""
        task = self.host.worker["task"]
        hosts = [h for h in list(self.host.channel.hosts)
                 if h.worker["task"] == task and not h.status.ended]
        return [tt for tt in (h.plugins.get(TimeTravel) for h in hosts) if tt is not None]

    def theta_in_task(self) -> bool:
        task = self.host.worker["task"]
        return any(h.worker["task"] == task and h.spec.theta for h in self.host.channel.hosts)

    # --- events from the host ------------------------------------------------------------
    def on_first_record(self) -> None:
        self.started = True
        self.in_chain = self.theta or self.theta_in_task()
        if self.theta:
            self.snapshot_chain(0, "initial", 0)
            for index in self.pins.initial:  # --interact-at's count 0: with I0
                self.snapshot_chain(index, PINNED, 0)
        elif not self.theta_in_task():
            self.send(0, "initial", 0, "later")

    def on_interact(self, message: dict, processed: int) -> None:
        if self.theta:
            self.snapshot_chain(message["index"], message.get("trigger", ""), processed)
            if message.get("checkpoint"):
                for tt in self.chain():
                    count = processed if tt is self else tt.host.live_count()
                    tt.checkpoint(message["index"], count, processed, False)
        elif self.batch_rows is not None or self.host.per_call:  # a DataFrame operator
            # outside θ's chain (a UDF too): how far it had got and its state there
            # (replay regenerates its inputs)
            self.send(message["index"], message.get("trigger", ""), processed, "later")
        else:  # outside θ's chain: whether it had started, and how far
            self.host.channel.send({"type": "snapshot", "worker": self.host.worker,
                                    "index": message["index"], "count": processed,
                                    "status": "later", "time": time.time()})

    def snapshot_chain(self, index: int, trigger: str, theta_processed: int) -> None:
        """The whole chain's reports in one message: downstream workers first, θ last
        (θ's report completes the interaction)."""
        reports = [tt.report(index, trigger, tt.host.live_count(), "running")
                   for tt in self.chain() if tt is not self]
        reports.append(self.report(index, trigger, theta_processed, "running"))
        self.host.channel.send({"type": "snapshots", "reports": reports})

    def send(self, index: int, trigger: str, count: int, status: str) -> None:
        self.host.channel.send(self.report(index, trigger, count, status))

    def report(self, index: int, trigger: str, count: int, status: str) -> dict:
        """This worker's snapshot message: its count and what changed in its state."""
        view, change = self.sent.update(bounded_state(self.host.state()), final=index == FINAL)
        delta: dict | EncodedJSON = change
        text = json.dumps(change, separators=(",", ":"))
        if len(text) > MAX_REPORT_BYTES:  # a huge state: its variables in summary, never a crash
            self.sent = IncrementalState()  # the next report is whole again
            delta = {"full": {name: _too_large(value, len(text))
                              for name, value in view.items()}}
        elif len(text) > SPLICED_REPORT_BYTES:  # measured once, sent as it is
            delta = EncodedJSON(text)
        return {"type": "snapshot", "worker": self.host.worker, "index": index,
                "trigger": trigger, "count": count, "status": status, "time": time.time(),
                "delta": delta}

    def checkpoint(self, index: int, processed: int, position: int, ended: bool) -> None:
        """Write this worker's restorable state (not a generator's: it cannot be restored)."""
        host = self.host
        if host.user_generator is not None:
            return
        if self.writer is None:
            self.writer = CheckpointWriter()
        where = dict(host.worker, index=index)  # its key: operator and task (θ on two
        extra = {"processed": processed, "position": position,  # paths: two tasks)
                 "results": len(self.results), "ended": ended}
        try:
            self.writer.write(index, saved_state(host), extra,
                              lambda data: deliver(host.spec.run, "checkpoint", where, data))
        except Exception as exc:  # an unpicklable state: jumps replay from further back
            host.alert("checkpoint", "write", exc)

    def on_end(self, records_in: int) -> tuple[dict, bytes]:
        """The final snapshot, and the replay log that travels with ``worker_end``."""
        if self.started or self.theta:
            self.send(FINAL, "end", records_in, "final")
        if self.host.spec.run.checkpoint in ("all", "online") and self.host.status.wire == "ok" \
                and self.in_chain:
            self.checkpoint(FINAL, records_in, records_in, True)
        if self.inputs is not None:
            try:
                deliver(self.host.spec.run, "inputs", self.host.worker,
                        inputs_table(self.inputs))
            except OSError as exc:
                self.host.alert("record-inputs", "write", exc)
        kind = "after_last" if self.host.state_source is not None else self.kind
        data = {"drops": self.drops, "deviations": self.deviations,
                "cumulative": self.outputs, "blocks": self.blocks,
                "batches": self.batch_rows}.get(kind)
        log = {"results": self.results, "kind": kind,
               "fingerprints": list(self.fingerprints or ())}
        body = zlib.compress(data.tobytes(), 1) if data is not None and len(data) else b""
        return log, body

    # --- pinned interactions (--interact-at, pins.py) ----------------------------------
    def _pinned(self, index: int, processed: int) -> None:
        self.snapshot_chain(index, PINNED, processed)

    def _input_rows(self, record: Any) -> int:
        """How many of θ's counted records an input is: a batch function counts rows."""
        return batch_rows(record) if self.kind == "batches" else 1

    def _missed(self, message: str) -> None:
        self.host.channel.send({"type": "alert", "worker": self.host.worker,
                                "source": "interact-at", "level": "warning",
                                "message": message})

    # --- conditional interactions (--interact-when) ------------------------------------
    def conditioned(self, iterator: Iterable) -> Iterator:
        """θ's input, evaluating the condition; a hit interacts once its scope is done."""
        condition: Callable[[Any], Any] = self.condition or _never
        for record in iterator:
            if self._hit is not None:
                self._interact_for(self._hit)
            try:
                hit = condition(record)
            except Exception as exc:
                self.host.alert("interact-when", "evaluate", exc)
                self.condition, hit = None, False
                condition = _never
            if hit:
                self._hit = record
            yield record
        if self._hit is not None:
            self._interact_for(self._hit)

    def condition_on_call(self, arguments: tuple) -> None:
        """A UDF's or grouped map's call, about to be made: a hit on the previous call
        interacts now (its scope is done), then the condition is tested on this one,
        ``row`` being its one argument (a batch's Series, a group's frame) or the tuple
        of them. A hit on a partition's last call has no next call to interact at."""
        if self._hit is not None:
            self._interact_for(self._hit)
        record = arguments[0] if len(arguments) == 1 else arguments
        try:
            hit = (self.condition or _never)(record)
        except Exception as exc:
            self.host.alert("interact-when", "evaluate", exc)
            self.condition, hit = None, False
        if hit:
            self._hit = record

    def _interact_for(self, record: Any) -> None:
        self._hit = None
        request = next(_REQUESTS)
        self._waiting = request
        self.host.channel.send({"type": "interact_request", "worker": self.host.worker,
                                "trigger": "condition", "request": request,
                                "record": describe_record(record)})
        # the coordinator answers in milliseconds: ``interact``, or ``interact_refused``
        self.host.hold(lambda: self._waiting is None, ANSWER_TIMEOUT)

    def answered(self, message: dict) -> None:
        if message.get("request") == self._waiting and \
                message.get("origin") == self.host.worker["task"]:
            self._waiting = None

    # --- logs --------------------------------------------------------------------------
    def deviations_log(self) -> Any:
        """Operators and flatMaps log the inputs whose number of outputs is not one."""
        self.kind = "deviations"
        return self.deviation

    def cumulative_log(self) -> Any:
        """Whole-partition functions log the outputs so far at each input pull."""
        self.kind = "cumulative"
        return self.outputs.append

    def blocks_log(self) -> None:
        """A host in blocks logs its input and output counts at block boundaries."""
        self.kind = "blocks"
        self.blocks = array("I")

    def boundary(self, host: Any, inputs: int, outputs: int) -> None:
        """A check: the inputs processed so far and their outputs, logged in blocks."""
        if self.deferred:
            self._answer_deferred(inputs)
        blocks = self.blocks
        if blocks is not None and inputs and (not blocks or blocks[-2] != inputs):
            blocks.append(inputs)
            blocks.append(outputs)

    def deviation(self, index: int, outputs: int) -> None:
        self.deviations.append(index)
        self.deviations.append(outputs)

    def drops_log(self) -> Any:
        """A filter logs only the inputs it drops (every other input has one output)."""
        self.kind = "drops"
        self.drops = array("I")
        return self.drops.append

    def fingerprint(self, index: int, pickled: bytes) -> None:
        """A checksum of a sampled input record: replay checks regenerated inputs with it."""
        fingerprints = self.fingerprints
        if fingerprints is not None:
            fingerprints.append(index)
            fingerprints.append(zlib.crc32(pickled))

    def _recorded(self, records: Iterable) -> Iterator:
        for record in records:
            self.record_input(record)
            yield record

    def record_input(self, record: Any) -> None:
        import pickle

        if self.inputs is not None:
            self.inputs.append(pickle.dumps(record, protocol=5))


def _never(record: Any) -> bool:
    return False


def _too_large(encoded: Any, total: int) -> Any:
    """A variable of a state too large to send at an interaction: small ones as they are,
    large ones as a summary saying so (the debugger replays them in full)."""
    if len(json.dumps(encoded, separators=(",", ":"))) <= MAX_REPORT_BYTES // 16:
        return encoded
    summary: dict[str, Any] = {"$t": "summary", "type": "state", "note":
               f"the worker's state was {total / 1024:,.0f} KB encoded, too large to send at "
               "an interaction: jump to it with run.debugger() to see it whole"}
    if isinstance(encoded, dict) and "$t" not in encoded:
        summary["len"] = len(encoded)
    elif isinstance(encoded, dict) and encoded.get("$t") == "dict":
        summary["len"] = len(encoded.get("items", []))
    elif isinstance(encoded, list):
        summary["len"] = len(encoded)
    return summary
