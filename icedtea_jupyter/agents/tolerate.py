"""Crash culprit in one pass (``--tolerate N``, Inspector Gadget's crash culprit).

A per-record operator's record that raises is quarantined instead of failing its task:
the record, the exception, its traceback and the worker's state at that moment go to
the coordinator side, which keeps them (``run.quarantine()``, ``agents/quarantine.jsonl``
in the run store) and puts an alert on the stream. Up to N records in the whole run:
a worker whose record raises asks the coordinator for a place and waits for the answer
(a round trip per failing record only); the coordinator grants places under a lock, so
two workers failing at the same instant cannot both take the last one. A worker refused
a place (or that already knows the N places are taken: the coordinator tells every
worker the counts after each grant) lets the exception fail its task, with the message
saying N was reached. Whole-partition functions (mapPartitions) cannot skip a record:
their exceptions fail the task as without the flag.
"""
from __future__ import annotations

import threading
import traceback
from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent
from ..executor.records import describe_record
from ..executor.state import encode

MAX_STATE_REPR = 500
ANSWER_TIMEOUT = 30.0  # seconds a worker waits for the coordinator's grant


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
            self._reached(worker, payload.get("record"))
            return
        key = _worker_id(worker["operator"], worker["partition"], worker["stage"],
                         worker["attempt"])
        with self._lock:  # one grant at a time: the N-th place is given once
            granted = sum(self.by_worker.values()) < self.limit
            if granted:
                self.by_worker[key] = self.by_worker.get(key, 0) + 1
            counts = dict(self.by_worker)
        # to every worker: the asker reads its answer, the others the counts
        self.send_to_agents({"answer": payload["ask"], "granted": granted, "counts": counts})
        if not granted:
            self._reached(worker, payload["describe"])
            return
        row = {"operator": worker["operator_name"], "partition": worker["partition"],
               "stage": worker["stage"], "attempt": worker["attempt"],
               **{k: v for k, v in payload.items() if k != "ask"}}
        self.keep("quarantine", [row])
        self.alert(f"quarantined: {payload['exception']}: {payload['message']}",
                   operator=row["operator"], partition=row["partition"],
                   check=f"--tolerate {self.limit}", level="error",
                   record=payload["describe"], index=payload["index"])

    def _reached(self, worker: dict, record: Any) -> None:
        self.alert(f"--tolerate {self.limit} reached: the next failing record "
                   f"failed its task", operator=worker["operator_name"],
                   partition=worker["partition"], check=f"--tolerate {self.limit}",
                   level="error", record=record)


class Quarantine(Agent):
    """Worker side: takes a failing record while the run's count is under the limit."""

    name = "tolerate"
    coordinator = QuarantineCoordinator
    options = {"limit": 0}

    def init(self, context: Any) -> None:
        self.limit = int(self.options.get("limit", 0))
        self.mine = 0
        self.others = 0  # what the other workers took, as last told
        self.asked = 0  # places asked for
        self.answers: dict[str, bool] = {}  # the coordinator's answers not yet read
        self.me = _worker_id(context.operator_id, context.partition, context.stage,
                             context.attempt)

    def receive_message(self, message: Any) -> None:
        counts = message.get("counts", {})
        self.others = sum(n for worker, n in counts.items() if worker != self.me)
        if str(message.get("answer", "")).startswith(f"{self.me}:"):
            self.answers[message["answer"]] = bool(message["granted"])

    def record_failed(self, record: Any, exception: Exception) -> bool:
        context = self.context
        if self.mine + self.others >= self.limit:  # known to be full: no round trip
            exception.add_note(f"--tolerate {self.limit} reached: {self.mine + self.others} "
                               "records quarantined before this one")
            self.send_to_coordinator({"reached": True, "record": describe_record(record)})
            return False
        self.asked += 1
        ask = f"{self.me}:{self.asked}"
        described = describe_record(record)
        self.send_to_coordinator({
            "ask": ask, "index": context.taken() - 1 if context else -1,
            "record": described["repr"], "value": described["value"],
            "describe": described, "encoded": _encoded(record),
            "exception": type(exception).__name__,
            "message": str(exception)[:2000],
            "traceback": "".join(traceback.format_exception(exception))[-8000:],
            "state": _state_reprs(context.state() if context else {})})
        if context is not None:
            context.wait(lambda: ask in self.answers, ANSWER_TIMEOUT)
        granted = self.answers.pop(ask, None)
        if granted is None:
            exception.add_note(f"--tolerate {self.limit}: no answer from the coordinator "
                               f"within {ANSWER_TIMEOUT:g} s, so the record was not skipped")
        elif not granted:
            exception.add_note(f"--tolerate {self.limit} reached: the places were taken "
                               "by other workers' records")
        else:
            self.mine += 1
        return bool(granted)


def _encoded(record: Any) -> Any:
    """The record as tagged JSON (``executor/state.py``): a tuple reads back a tuple, as
    a record skipped at a hit does (``value`` is plain JSON, for pandas readers)."""
    try:
        return encode(record)
    except Exception:  # never fail the task for a view of its record
        return None


def _state_reprs(state: dict) -> dict:
    out = {}
    for name, value in state.items():
        try:
            text = repr(value)
        except Exception as exc:  # a state that cannot be shown is named, not fatal
            text = f"<unrepresentable: {type(exc).__name__}>"
        out[str(name)] = text[:MAX_STATE_REPR]
    return out
