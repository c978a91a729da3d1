"""Crash culprit in one pass (``--tolerate N``, Inspector Gadget's crash culprit).

A per-record operator's record that raises is quarantined instead of failing its task:
the record, the exception, its traceback and the worker's state at that moment go to
the coordinator side, which keeps them (``run.quarantine()``, ``agents/quarantine.jsonl``
in the run store) and puts an alert on the stream. Up to N records in the whole run:
the coordinator tells every worker the count of each worker after each quarantine,
and a worker that would go past N lets the exception fail its task, with the message
saying N was reached. (Two workers failing within the same few milliseconds can both
take the last place: the run then keeps N + 1 or so, and says so in an alert.)
Whole-partition functions (mapPartitions) cannot skip a record: their exceptions fail
the task as without the flag.
"""
from __future__ import annotations

import threading
import traceback
from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent
from ..executor.records import describe_record

MAX_STATE_REPR = 500


def _worker_id(operator: Any, partition: int, stage: int, attempt: int) -> str:
    return f"{operator}-{partition}-{stage}-{attempt}"


class QuarantineCoordinator(CoordinatorAgent):
    """Keeps the quarantined records and tells the workers how many each has taken."""

    def init(self, run: Any) -> None:
        self.limit = int(self.options.get("limit", 0))
        self.by_worker: dict[str, int] = {}
        self._lock = threading.Lock()

    def receive_message(self, worker: dict, payload: Any) -> None:
        if payload.get("reached"):
            self.alert(f"--tolerate {self.limit} reached: the next failing record "
                       f"failed its task", operator=worker["operator_name"],
                       partition=worker["partition"], check=f"--tolerate {self.limit}",
                       level="error", record=payload.get("record"))
            return
        key = _worker_id(worker["operator"], worker["partition"], worker["stage"],
                         worker["attempt"])
        with self._lock:
            self.by_worker[key] = self.by_worker.get(key, 0) + 1
            counts, total = dict(self.by_worker), sum(self.by_worker.values())
        self.send_to_agents({"counts": counts})
        row = {"operator": worker["operator_name"], "partition": worker["partition"],
               "stage": worker["stage"], "attempt": worker["attempt"], **payload}
        self.keep("quarantine", [row])
        over = f" (over --tolerate {self.limit}: workers failed at once)" \
            if total > self.limit else ""
        self.alert(f"quarantined: {payload['exception']}: {payload['message']}{over}",
                   operator=row["operator"], partition=row["partition"],
                   check=f"--tolerate {self.limit}", level="error",
                   record=payload["describe"], index=payload["index"])


class Quarantine(Agent):
    """Worker side: takes a failing record while the run's count is under the limit."""

    name = "tolerate"
    coordinator = QuarantineCoordinator
    options = {"limit": 0}

    def init(self, context: Any) -> None:
        self.limit = int(self.options.get("limit", 0))
        self.mine = 0
        self.others = 0  # what the other workers took, as last told
        self.me = _worker_id(context.operator_id, context.partition, context.stage,
                             context.attempt)

    def receive_message(self, message: Any) -> None:
        counts = message.get("counts", {})
        self.others = sum(n for worker, n in counts.items() if worker != self.me)

    def record_failed(self, record: Any, exception: Exception) -> bool:
        context = self.context
        if self.mine + self.others >= self.limit:
            exception.add_note(f"--tolerate {self.limit} reached: {self.mine + self.others} "
                               "records quarantined before this one")
            self.send_to_coordinator({"reached": True, "record": describe_record(record)})
            return False
        self.mine += 1
        described = describe_record(record)
        self.send_to_coordinator({
            "index": context.taken() - 1 if context else -1,
            "record": described["repr"], "value": described["value"],
            "describe": described, "exception": type(exception).__name__,
            "message": str(exception)[:2000],
            "traceback": "".join(traceback.format_exception(exception))[-8000:],
            "state": _state_reprs(context.state() if context else {})})
        return True


def _state_reprs(state: dict) -> dict:
    out = {}
    for name, value in state.items():
        try:
            text = repr(value)
        except Exception as exc:  # a state that cannot be shown is named, not fatal
            text = f"<unrepresentable: {type(exc).__name__}>"
        out[str(name)] = text[:MAX_STATE_REPR]
    return out
