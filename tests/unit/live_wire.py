"""Workers in threads of this process and a real ``LiveController``, wired as the control
channel wires them (every message checked against the protocol's schemas): live control
tested without Spark."""
from __future__ import annotations

import threading
import uuid

from icedtea_jupyter.control.controller import LiveController
from icedtea_jupyter.dag import Dag
from icedtea_jupyter.executor import control_state, protocol
from icedtea_jupyter.executor import host as host_module
from icedtea_jupyter.executor.spec import OperatorSpec, RunSpec
from icedtea_jupyter.executor.wrappers import PartitionFunction

from .fakes import RecordingChannel


class FakeTask:
    """What a host reads of PySpark's TaskContext."""

    def __init__(self, task: int, partition: int) -> None:
        self.task, self.partition = task, partition

    def stageId(self) -> int:  # noqa: N802 - PySpark's names
        return 1

    def attemptNumber(self) -> int:  # noqa: N802
        return 0

    def taskAttemptId(self) -> int:  # noqa: N802
        return self.task

    def partitionId(self) -> int:  # noqa: N802
        return self.partition


class WireChannel(RecordingChannel):
    def __init__(self, wire: Wire) -> None:
        super().__init__()
        self.wire = wire
        self.lock = threading.Lock()

    def send(self, message: dict, body: bytes = b"") -> None:
        protocol.validate(message, protocol.WORKER_MESSAGES)
        with self.lock:
            self.sent.append(message)
        handler = self.wire.handlers.get(message["type"])
        if handler is not None:
            handler(message)


class Wire:
    """``run(kind, f, records, partition)`` starts a task in a thread; ``controller`` is
    the coordinator's side; ``outputs[partition]`` what each task produced so far."""

    def __init__(self, monkeypatch, tmp_path, on_error: str = "fail",
                 operators: tuple = ("op0",)) -> None:
        self.run_spec = RunSpec(f"run-{uuid.uuid4().hex[:8]}", ("127.0.0.1", 1), b"",
                                str(tmp_path), on_error=on_error)
        self.channel = WireChannel(self)
        self.local = threading.local()
        monkeypatch.setattr(host_module, "channel_for", lambda run: self.channel)
        monkeypatch.setattr(host_module, "_task_context", lambda: getattr(self.local, "task", None))
        self.dag = Dag()
        for name in operators:
            self.dag.add(name, "python", "map", [])
        self.controller = LiveController(str(tmp_path), self.dag, self.broadcast,
                                         self.running, lambda kind, data: None)
        c = self.controller
        self.handlers = {"paused": c.on_paused, "hit": c.on_hit,
                         "global_report": c.on_global_report, "live_state": c.on_live_state}
        self.outputs: dict[int, list] = {}
        self.errors: dict[int, BaseException] = {}
        self.threads: list[threading.Thread] = []

    def broadcast(self, message: dict) -> int:
        protocol.validate(message, protocol.COORDINATOR_MESSAGES)
        control_state.observe(self.run_spec.run_id, message)
        for host in list(self.channel.hosts):
            host.deliver(message)
        return 1

    def running(self, op: int | None) -> set:
        return {h.worker["task"] for h in list(self.channel.hosts)
                if not h.status.ended and (op is None or h.worker["operator"] == op)}

    def run(self, kind: str, f, records, partition: int, op: int = 0) -> None:
        self.run_chain([(kind, f)], records, partition, first_op=op)

    def run_chain(self, functions: list, records, partition: int, first_op: int = 0) -> None:
        """``functions`` ((kind, f), operators ``first_op`` on) chained in one task."""
        out = self.outputs.setdefault(partition, [])

        def build():
            stream = iter(records)
            for op, (kind, f) in enumerate(functions, first_op):
                spec = OperatorSpec(op, self.run_spec, kind, self.dag.node(op).name)
                stream = PartitionFunction(spec, kind, f)(partition, stream)
            return stream

        def task() -> None:
            self.local.task = FakeTask(100 + partition, partition)
            try:
                for value in build():
                    out.append(value)
            except BaseException as exc:  # noqa: BLE001 - the test reads it
                self.errors[partition] = exc
        thread = threading.Thread(target=task, daemon=True)
        self.threads.append(thread)
        thread.start()

    def join(self, timeout: float = 30.0) -> None:
        for thread in self.threads:
            thread.join(timeout)
            assert not thread.is_alive(), "a task is still running"

    def of_type(self, kind: str) -> list[dict]:
        with self.channel.lock:
            return [m for m in self.channel.sent if m["type"] == kind]
