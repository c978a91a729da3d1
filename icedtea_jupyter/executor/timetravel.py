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
"""
from __future__ import annotations

import itertools
import json
import time
import zlib
from array import array
from typing import Any, Iterable, Iterator

from ..store.layout import checkpoint_key, checkpoint_path
from ..checkpoints.file import CheckpointWriter, saved_state
from .incremental import IncrementalState
from .records import describe_record
from .state import bounded_state
from .worker_file import write_inputs

FINAL = -1  # the index of a worker's final snapshot
MAX_REPORT_BYTES = 256 * 1024  # a report's state beyond this travels in summary
_REQUESTS = itertools.count(1)


class TimeTravel:
    """Snapshots and logs of one G(θ) worker; created only for hosts in G(θ)."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self.theta = host.spec.theta
        self.sent = IncrementalState()  # the state as last sent: what changed travels
        self.outputs = array("I")  # cumulative outputs when each input was pulled
        self.drops: array | None = None  # a filter: indices of the inputs it dropped
        self.deviations = array("I")  # (input index, outputs) where outputs != 1
        self.blocks: array | None = None  # in blocks: (inputs, outputs) so far at boundaries
        self.kind = "ones"  # how the loop logs outputs per input (see on_end)
        self.results: list = []  # log_result values, in call order
        self.started = False
        self.condition = self._compile(host.spec.run.condition) if self.theta else None
        self._hit: Any = None
        self._waiting: int | None = None
        self.inputs: list[bytes] | None = [] if self.theta and host.spec.run.record_inputs else None
        self.fingerprints = array("I") if self.theta else None  # (input index, crc32) pairs
        self.writer: CheckpointWriter | None = None
        self.in_chain = self.theta  # in θ's chain: known at the first record

    def _compile(self, expression: str | None) -> Any:
        if not expression:
            return None
        try:
            return eval(compile(f"lambda row: ({expression})", "<--interact-when>", "eval"), {})
        except SyntaxError as exc:
            self.host._alert("interact-when", "compile", exc)
            return None

    # --- who is in the snapshot ---------------------------------------------------------
    def chain(self) -> list[Any]:
        """θ's worker and the G(θ) workers of the same task, upstream first."""
        task = self.host.worker["task"]
        return [h for h in list(self.host.channel.hosts)
                if h.worker["task"] == task and h.tt is not None and not h.ended]

    def theta_in_task(self) -> bool:
        task = self.host.worker["task"]
        return any(h.worker["task"] == task and h.spec.theta for h in self.host.channel.hosts)

    # --- events from the host ------------------------------------------------------------
    def on_first_record(self) -> None:
        self.started = True
        self.in_chain = self.theta or self.theta_in_task()
        if self.theta:
            self.snapshot_chain(0, "initial", 0)
        elif not self.theta_in_task():
            self.send(0, "initial", 0, "later")

    def on_interact(self, message: dict, processed: int) -> None:
        if self.theta:
            self.snapshot_chain(message["index"], message.get("trigger", ""), processed)
            if message.get("checkpoint"):
                for host in self.chain():
                    count = processed if host is self.host else host.live_count()
                    host.tt.checkpoint(message["index"], count, processed, False)
        else:  # outside θ's chain: whether it had started, and how far
            self.host.channel.send({"type": "snapshot", "worker": self.host.worker,
                                    "index": message["index"], "count": processed,
                                    "status": "later", "time": time.time()})

    def snapshot_chain(self, index: int, trigger: str, theta_processed: int) -> None:
        """The whole chain's reports in one message: downstream workers first, θ last
        (θ's report completes the interaction)."""
        reports = [host.tt.report(index, trigger, host.live_count(), "running")
                   for host in self.chain() if host is not self.host]
        reports.append(self.report(index, trigger, theta_processed, "running"))
        self.host.channel.send({"type": "snapshots", "reports": reports})

    def send(self, index: int, trigger: str, count: int, status: str) -> None:
        self.host.channel.send(self.report(index, trigger, count, status))

    def report(self, index: int, trigger: str, count: int, status: str) -> dict:
        """This worker's snapshot message: its count and what changed in its state."""
        view, change = self.sent.update(bounded_state(self.host.state()))
        size = len(json.dumps(change, separators=(",", ":")))
        if size > MAX_REPORT_BYTES:  # a huge state: its variables in summary, never a crash
            self.sent = IncrementalState()  # the next report is whole again
            change = {"full": {name: _too_large(value, size) for name, value in view.items()}}
        return {"type": "snapshot", "worker": self.host.worker, "index": index,
                "trigger": trigger, "count": count, "status": status, "time": time.time(),
                "delta": change}

    def checkpoint(self, index: int, processed: int, position: int, ended: bool) -> None:
        """Write this worker's restorable state (not a generator's: it cannot be restored)."""
        host = self.host
        if host.user_generator is not None:
            return
        if self.writer is None:
            self.writer = CheckpointWriter()
        key = checkpoint_key(host.spec.op_id, host.worker["task"])  # θ on two paths: two tasks
        extra = {"processed": processed, "position": position, "results": len(self.results),
                 "ended": ended}
        try:
            self.writer.write(checkpoint_path(host.spec.run.store_path, index,
                                              host.worker["partition"], key),
                              index, saved_state(host), extra)
        except Exception as exc:  # an unpicklable state: jumps replay from further back
            host._alert("checkpoint", "write", exc)

    def on_end(self, records_in: int) -> tuple[dict, bytes]:
        """The final snapshot, and the replay log that travels with ``worker_end``."""
        if self.started or self.theta:
            self.send(FINAL, "end", records_in, "final")
        if self.host.spec.run.checkpoint in ("all", "online") and self.host.status == "ok" \
                and self.in_chain:
            self.checkpoint(FINAL, records_in, records_in, True)
        if self.inputs is not None:
            try:
                write_inputs(self.host.spec.run.store_path, self.host.worker, self.inputs)
            except OSError as exc:
                self.host._alert("record-inputs", "write", exc)
        kind = "after_last" if self.host.state_source is not None else self.kind
        data = {"drops": self.drops, "deviations": self.deviations,
                "cumulative": self.outputs, "blocks": self.blocks}.get(kind)
        log = {"results": self.results, "kind": kind,
               "fingerprints": list(self.fingerprints or ())}
        body = zlib.compress(data.tobytes(), 1) if data is not None and len(data) else b""
        return log, body

    # --- conditional interactions (--interact-when) ------------------------------------
    def conditioned(self, iterator: Iterable) -> Iterator:
        """θ's input, evaluating the condition; a hit interacts once its scope is done."""
        condition = self.condition
        for record in iterator:
            if self._hit is not None:
                self._interact_for(self._hit)
            try:
                hit = condition(record)
            except Exception as exc:
                self.host._alert("interact-when", "evaluate", exc)
                self.condition, hit = None, False
                condition = _never
            if hit:
                self._hit = record
            yield record
        if self._hit is not None:
            self._interact_for(self._hit)

    def _interact_for(self, record: Any) -> None:
        self._hit = None
        self.host._processed = self.host.live_count()
        request = next(_REQUESTS)
        self._waiting = request
        self.host.channel.send({"type": "interact_request", "worker": self.host.worker,
                                "trigger": "condition", "request": request,
                                "record": describe_record(record)})
        deadline = time.monotonic() + 2.0  # the coordinator answers in milliseconds
        while self._waiting is not None:
            self.host._drain_mailbox()
            left = deadline - time.monotonic()
            if self._waiting is None or left <= 0 or not self.host.mail.wait(left):
                break

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

    def boundary(self, inputs: int, outputs: int) -> None:
        blocks = self.blocks
        if blocks is not None and inputs and (not blocks or blocks[-2] != inputs):
            blocks.append(inputs)
            blocks.append(outputs)

    def deviation(self, index: int, outputs: int) -> None:
        self.deviations.append(index)
        self.deviations.append(outputs)

    def dropped(self, host: Any) -> Any:
        """A filter logs only the inputs it drops (every other input has one output)."""
        self.kind = "drops"
        self.drops = array("I")
        return self.drops.append

    def fingerprint(self, index: int, pickled: bytes) -> None:
        """A checksum of a sampled input record: replay checks regenerated inputs with it."""
        self.fingerprints.append(index)
        self.fingerprints.append(zlib.crc32(pickled))

    def record_input(self, record: Any) -> None:
        import pickle

        self.inputs.append(pickle.dumps(record, protocol=5))


def _never(record: Any) -> bool:
    return False


def _too_large(encoded: Any, total: int) -> Any:
    """A variable of a state too large to send at an interaction: small ones as they are,
    large ones as a summary saying so (the debugger replays them in full)."""
    if len(json.dumps(encoded, separators=(",", ":"))) <= MAX_REPORT_BYTES // 16:
        return encoded
    summary = {"$t": "summary", "type": "state", "note":
               f"the worker's state was {total / 1024:,.0f} KB encoded, too large to send at "
               "an interaction: jump to it with run.debugger() to see it whole"}
    if isinstance(encoded, dict) and "$t" not in encoded:
        summary["len"] = len(encoded)
    elif isinstance(encoded, dict) and encoded.get("$t") == "dict":
        summary["len"] = len(encoded.get("items", []))
    elif isinstance(encoded, list):
        summary["len"] = len(encoded)
    return summary
