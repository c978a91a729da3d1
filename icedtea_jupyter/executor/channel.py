"""The worker end of the control channel: one authenticated connection per process and run.

``channel_for(run)`` returns a connected ``ControlChannel``, or a ``LocalChannel``
that records into the run store when the coordinator cannot be reached, or a
``NullChannel`` when the run has already ended (an RDD of a finished run that is
computed again records nothing).
"""
from __future__ import annotations

import itertools
import json
import os
import socket
import sys
import threading
from typing import Any, Protocol

from ..store import layout
from . import control_state, protocol
from .spec import RunSpec
from .store_check import host_name, store_view
from .worker_file import append_local_event, write_replay_log, write_worker_file


class Channel(Protocol):
    connected: bool
    operator_names: dict[int, str]
    g_theta: set[int]

    def send(self, message: dict, body: bytes = b"") -> None: ...
    def end_worker(self, message: dict, body: bytes = b"") -> None: ...
    def register(self, host: Any) -> None: ...
    def unregister(self, host: Any) -> None: ...


class _HostRegistry:
    """Hosts alive in this process, to route control messages to them."""

    def __init__(self) -> None:
        self.hosts: list = []
        self.operator_names: dict[int, str] = {}
        self.g_theta: set[int] = set()  # G(θ) as the coordinator said (in_g_now)

    def register(self, host: Any) -> None:
        self.hosts.append(host)

    def unregister(self, host: Any) -> None:
        if host in self.hosts:
            self.hosts.remove(host)


_ARTIFACT_IDS = itertools.count(1)  # per process: the coordinator keys them by connection


class _Ack:
    """The coordinator's answer to one artifact: ``reason`` None once it is written;
    ``refused``: it answered that it could not write it."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.reason: str | None = "no answer"
        self.refused = False


class ControlChannel(_HostRegistry):
    connected = True
    closed = False  # the coordinator closed the connection (the run ended, or it died)

    def __init__(self, run: RunSpec, sock: socket.socket, welcome: dict) -> None:
        super().__init__()
        self.run = run
        self._sock = sock
        self._lock = threading.Lock()
        self.operator_names = {int(k): v for k, v in welcome.get("operators", {}).items()}
        self.g_theta = {int(i) for i in welcome.get("g", [])}
        self.theta = welcome.get("theta")  # θ's id as the cell named it (theta_now)
        self._fallback: LocalChannel | NullChannel | None = None
        self._acks: dict[int, _Ack] = {}
        control_state.state_for(run.run_id).observe_welcome(welcome.get("control"))
        threading.Thread(target=self._read_loop, name="icedtea-control", daemon=True).start()

    @classmethod
    def connect(cls, run: RunSpec) -> ControlChannel:
        sock = socket.create_connection(run.address, timeout=run.connect_timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        challenge, _ = protocol.read_frame(sock)
        protocol.validate(challenge, protocol.COORDINATOR_MESSAGES)
        hello = {"type": "hello", "v": protocol.PROTOCOL_VERSION, "run": run.run_id,
                 "mac": protocol.sign(run.secret, challenge["nonce"]), "pid": os.getpid(),
                 "host": host_name(), "store": store_view(run).reason}
        sock.sendall(protocol.encode(hello))
        welcome, _ = protocol.read_frame(sock)
        if welcome.get("type") != "welcome":
            raise ConnectionError(f"coordinator refused the worker: {welcome.get('reason')}")
        sock.settimeout(None)
        return cls(run, sock, welcome)

    def send(self, message: dict, body: bytes = b"") -> None:
        if self._fallback is not None:
            return self._fallback.send(message)
        try:
            frame = protocol.encode(message, body)
            with self._lock:
                self._sock.sendall(frame)
        except OSError as exc:
            self._degrade(f"lost the coordinator connection ({exc})").send(message)

    def end_worker(self, message: dict, body: bytes = b"") -> None:
        if self._fallback is not None:
            return self._fallback.end_worker(message, body)
        self.send(message, body)
        if self._fallback is not None:  # the send above failed
            self._fallback.end_worker(message, body)

    def deliver_artifact(self, kind: str, where: dict, data: bytes,
                         timeout: float) -> tuple[str, bool] | None:
        """Send an artifact in frames of at most ``ARTIFACT_FRAME_BYTES`` and wait for the
        coordinator's ``artifact_ack``: None once it is written, else why not and whether
        the coordinator refused it (else it never answered)."""
        if self._fallback is not None:
            return (f"the coordinator connection was lost "
                    f"({getattr(self._fallback, 'reason', '')})", False)
        ident, ack = next(_ARTIFACT_IDS), _Ack()
        self._acks[ident] = ack  # before the check: a read loop ending now answers it
        if self.closed:
            self._acks.pop(ident, None)
            return "the coordinator had closed the connection", False
        step, view = protocol.ARTIFACT_FRAME_BYTES, memoryview(data)
        frames = max(1, -(-len(data) // step))
        try:
            for seq in range(frames):
                frame = protocol.encode({"type": "artifact", "kind": kind, "where": where,
                                         "id": ident, "seq": seq, "last": seq == frames - 1,
                                         "size": len(data)},
                                        bytes(view[seq * step:(seq + 1) * step]))
                with self._lock:
                    self._sock.sendall(frame)
            if not ack.done.wait(timeout):
                return f"the coordinator did not acknowledge it within {timeout:g} s", False
            return None if ack.reason is None else (ack.reason, ack.refused)
        except OSError as exc:
            self._degrade(f"lost the coordinator connection ({exc})")
            return f"the connection to the coordinator broke ({exc})", False
        finally:
            self._acks.pop(ident, None)

    def _acknowledged(self, message: dict) -> None:
        ack = self._acks.get(message["id"])
        if ack is not None:
            ack.reason = None if message["ok"] else str(message.get("reason", "refused"))
            ack.refused = not message["ok"]
            ack.done.set()

    def _degrade(self, reason: str) -> LocalChannel | NullChannel:
        # a reused Python worker after its run ended (a job regenerating records for
        # replay or lineage): the run's store must not count it
        self._fallback = NullChannel() if _run_has_ended(self.run) else LocalChannel(self.run,
                                                                                      reason)
        _CHANNELS[self.run.run_id] = self._fallback
        return self._fallback

    def _read_loop(self) -> None:
        try:
            while True:
                message, _ = protocol.read_frame(self._sock)
                protocol.validate(message, protocol.COORDINATOR_MESSAGES)
                if message["type"] == "g_theta":
                    self.g_theta = {int(i) for i in message["operators"]}
                    continue
                if message["type"] == "artifact_ack":
                    self._acknowledged(message)
                    continue
                control_state.observe(self.run.run_id, message)  # before any host sees it
                for host in list(self.hosts):
                    host.deliver(message)
        except (OSError, ConnectionError, protocol.ProtocolError):
            self.closed = True
            for ack in list(self._acks.values()):  # waiting for an answer that cannot come
                ack.reason = "the coordinator closed the connection"
                ack.done.set()


class LocalChannel(_HostRegistry):
    """Records into the run store directly; the run shows a warning with ``reason``. A
    process that has not shown it shares the store (``store_check``) writes nothing
    there: it says so on its stderr (the executor's log), once."""

    connected = False

    def __init__(self, run: RunSpec, reason: str) -> None:
        super().__init__()
        self.run = run
        self.reason = reason
        self.said = False

    def writable(self) -> bool:
        view = store_view(self.run)
        if not view.shared and not self.said:
            self.said = True
            print(f"icedtea: {host_name()}: run {self.run.run_id}: nothing of this worker "
                  f"process is recorded: {self.reason}, and it does not share the run store "
                  f"({view.reason}). Fix: let executors reach the coordinator at "
                  f"{self.run.address[0]}:{self.run.address[1]} (%%icedtea --bind)"
                  " or give the run a store every executor can write (--store)",
                  file=sys.stderr)
        return view.shared

    def send(self, message: dict, body: bytes = b"") -> None:
        if not self.writable():
            return
        if message.get("type") == "snapshots":
            for report in message["reports"]:
                self.send(report)
            return
        worker = message.get("worker")
        if worker is None or message.get("type") == "worker_start":
            return
        message = dict(message, local_reason=self.reason)
        try:
            append_local_event(self.run.store_path, worker, message)
        except OSError as exc:
            print(f"icedtea: cannot record locally: {exc}", file=sys.stderr)

    def end_worker(self, message: dict, body: bytes = b"") -> None:
        if not self.writable():
            return
        message = dict(message, local_reason=self.reason)
        try:
            write_worker_file(self.run.store_path, message, local=True)
            if message.get("log") is not None:
                write_replay_log(self.run.store_path, message, body)
            append_local_event(self.run.store_path, message["worker"],
                               {"type": "local", "worker": message["worker"], "reason": self.reason})
        except OSError as exc:
            print(f"icedtea: cannot record locally: {exc}", file=sys.stderr)


class NullChannel(_HostRegistry):
    """The run has ended: operators run as plain functions, nothing is recorded."""

    connected = False

    def send(self, message: dict, body: bytes = b"") -> None:
        pass

    def end_worker(self, message: dict, body: bytes = b"") -> None:
        pass


_CHANNELS: dict[str, Channel] = {}
_CONNECT_LOCK = threading.Lock()


def in_g_now(spec: Any, channel: Channel) -> bool:
    """Whether ``spec``'s operator is in G(θ): as pickled, or as the coordinator says
    now (a UDF's spec is pickled with its column, before the column is applied to θ's
    output)."""
    return spec.in_g or spec.op_id in getattr(channel, "g_theta", ())


def theta_now(spec: Any, channel: Channel) -> bool:
    """Whether ``spec``'s operator is θ: as pickled, or as the coordinator says now (an
    aggregation's map side is pickled before the cell's ``.setName`` names it θ)."""
    return spec.theta or spec.op_id == getattr(channel, "theta", None)


def channel_for(run: RunSpec) -> Channel:
    """The process-wide channel of ``run``, connecting on first use."""
    channel = _CHANNELS.get(run.run_id)
    if channel is not None and (isinstance(channel, NullChannel) or not _run_has_ended(run)):
        return channel
    with _CONNECT_LOCK:
        if _run_has_ended(run):  # a job after the run (a trace's records, a selective
            channel = _CHANNELS[run.run_id] = NullChannel()  # replay): the store must
            return channel  # not count its workers, even in a worker reused from the run
        channel = _CHANNELS.get(run.run_id)
        if channel is None:
            channel = _open(run)
            _CHANNELS[run.run_id] = channel
    return channel


def _open(run: RunSpec) -> Channel:
    try:
        return ControlChannel.connect(run)
    except (OSError, ConnectionError, protocol.ProtocolError) as exc:
        if _run_has_ended(run):
            return NullChannel()
        host, port = run.address
        return LocalChannel(run, f"cannot reach the coordinator at {host}:{port} ({exc})")


def _run_has_ended(run: RunSpec) -> bool:
    """As the manifest says; in a process that does not share the store (it cannot read
    the manifest), once the coordinator has closed this process's connection."""
    try:
        with open(layout.manifest_path(run.store_path), encoding="utf-8") as f:
            return json.load(f).get("status") != "running"
    except (OSError, ValueError):
        closed = getattr(_CHANNELS.get(run.run_id), "closed", False)
        return bool(closed) and not store_view(run).shared
