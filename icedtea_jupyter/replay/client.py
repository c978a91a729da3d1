"""The kernel's end of the replay processes: start the root, talk to every process.

``ReplayHub`` starts the root replay process of one run (never a fork of the kernel,
which has ZMQ and py4j threads) and keeps one connection per process: the root, each
parked fork, the active process. One reader thread reads them all, resolves replies by
request id and hands events (a fork parked, progress) to ``on_event``. Requests block
only their caller; ``kill`` ends a process, which fails its pending requests with
``ReplayCancelled``.
"""
from __future__ import annotations

import itertools
import logging
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from .wire import FrameReader, WireError, send_frame

LOG = logging.getLogger("icedtea_jupyter")

OnEvent = Callable[["Link", dict], None]


class ReplayCancelled(RuntimeError):
    """The replay process working on a request ended before it answered."""


class ReplayProcessError(RuntimeError):
    """A replay process answered with an error of a kind the kernel does not know."""


class Link:
    """One replay process, as the kernel sees it."""

    def __init__(self, sock: socket.socket, pid: int, role: str, index: int | None) -> None:
        self.sock = sock
        self.pid = pid
        self.role = role  # "root" | "parked" | "active"
        self.index = index  # the interaction a parked or active process started from
        self.reader = FrameReader(sock)
        self.pending: dict[int, Future] = {}
        self.closed = False
        self.why = ""  # why it ended, once it has

    def __repr__(self) -> str:
        return f"<replay {self.role} pid={self.pid} I{self.index}>"


class ReplayHub:
    def __init__(self, on_event: OnEvent) -> None:
        self.on_event = on_event
        self.links: dict[int, Link] = {}  # by socket fd
        self.process: subprocess.Popen | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._read_loop, daemon=True,
                                        name="icedtea-replay-hub")
        self._stopped = False
        self._log_path: str | None = None

    def start(self, run_path: str, log_path: str,
              command: list[str] | None = None) -> Link:
        """Start the root replay process of the run at ``run_path`` (``command``: the
        program to run instead, given ``--fd N --run PATH --parent PID``; tests use
        in-memory logs). The root leads a process group of its own, which its forks join:
        ``close()`` ends the group, and the root ends it when this process ends."""
        if self._stopped:
            raise ReplayCancelled("the debugger was closed")
        ours, theirs = socket.socketpair()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.setdefault("PYTHONHASHSEED", "0")  # as PySpark's workers hash (a partitionBy)
        command = command or [sys.executable, "-m", "icedtea_jupyter.replay.process"]
        self._log_path = log_path
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                [*command, "--fd", str(theirs.fileno()), "--run", run_path,
                 "--parent", str(os.getpid())],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env=env, start_new_session=True)
        theirs.close()
        root = self._add(ours, self.process.pid, "root", None)
        if self._stopped:  # closed while it started: close() may have missed it
            self._end_group()
            self._close(root, "the debugger was closed")
            raise ReplayCancelled("the debugger was closed")
        self._thread.start()
        return root

    # --- requests ------------------------------------------------------------------------
    def request(self, link: Link, op: str, **params: Any) -> Future:
        future: Future = Future()
        with self._lock:
            if link.closed:
                future.set_exception(ReplayCancelled(link.why or f"{link!r} has ended"))
                return future
            request_id = next(self._ids)
            link.pending[request_id] = future
        try:
            send_frame(link.sock, {"id": request_id, "op": op, **params})
        except OSError as exc:
            # the process ended before the request reached it (a broken pipe): say so, with
            # its log's end, as when it ends while answering
            self._close(link, f"{link!r} ended (it cannot be reached: {exc})"
                              f"{self._log_tail(link)}")
        return future

    def tell(self, link: Link, op: str) -> None:
        """A request whose answer nobody waits for (``exit``)."""
        try:
            send_frame(link.sock, {"op": op})
        except OSError:
            pass

    def kill(self, link: Link) -> None:
        """End ``link``'s process now; its pending requests fail with ReplayCancelled."""
        try:
            os.kill(link.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._close(link, f"{link!r} was cancelled")

    def close(self) -> None:
        """End every replay process of this hub."""
        self._stopped = True
        for link in list(self.links.values()):
            self.tell(link, "exit")
            self._close(link, "the debugger was closed")
        self._end_group(wait=2.0)  # a fork still busy (a long jump) ends now, not when done
        if not self._thread.is_alive() and self._thread.ident is None:
            self._release()  # never started: no reader thread to release them
            return
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass  # released already

    def _end_group(self, wait: float = 0.0) -> None:
        """SIGKILL the root's process group (the root and every fork it made), once the
        root has exited by itself or ``wait`` seconds have passed. The root is reaped
        only after: until then its pid, the group's id, can be no one else's."""
        process = self.process
        if process is None or process.returncode is not None:
            return  # ended and reaped already (by an earlier close)
        deadline = time.monotonic() + wait
        try:
            while not os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) \
                    and time.monotonic() < deadline:
                time.sleep(0.02)
            os.killpg(process.pid, signal.SIGKILL)
        except (ChildProcessError, ProcessLookupError, PermissionError):
            pass
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            LOG.warning("icedtea: the replay process %s did not end", process.pid)

    # --- the reader thread -----------------------------------------------------------------
    def _add(self, sock: socket.socket, pid: int, role: str, index: int | None) -> Link:
        link = Link(sock, pid, role, index)
        with self._lock:
            self.links[sock.fileno()] = link
        self._selector.register(sock, selectors.EVENT_READ, link)
        return link

    def adopt(self, fd: int, pid: int, role: str, index: int | None) -> Link:
        """A new process's connection, received from its parent."""
        return self._add(socket.socket(fileno=fd), pid, role, index)

    def _read_loop(self) -> None:
        try:
            while not self._stopped:
                for key, _ in self._selector.select(1.0):
                    link = key.data
                    if link is None:
                        self._wake_r.recv(64)
                        continue
                    self._read(link)
        finally:
            self._release()

    def _release(self) -> None:
        """The hub's own files (its selector, its wake-up pair), once it has stopped: a
        kernel debugging many runs would otherwise keep three a run."""
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()

    def _read(self, link: Link) -> None:
        try:
            link.reader._receive()
            while link.reader.pending():
                message, fds = link.reader.read()
                self._dispatch(link, message, fds)
        except (WireError, OSError) as exc:
            self._close(link, f"{link!r} ended: {exc}{self._log_tail(link)}")

    def _log_tail(self, link: Link, lines: int = 12) -> str:
        """The last lines the root process wrote to its log: why it ended, if it said."""
        if link.role != "root" or not self._log_path:
            return ""
        try:
            with open(self._log_path, "rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - 4096))
                tail = log.read().decode("utf-8", "replace").splitlines()[-lines:]
        except OSError:
            return ""
        return f"; its log ({self._log_path}) ends:\n" + "\n".join(tail) if tail else ""

    def _dispatch(self, link: Link, message: dict, fds: list[int]) -> None:
        if "id" not in message:
            self._event(link, message, fds)
            return
        with self._lock:
            future = link.pending.pop(message["id"], None)
        if future is None:
            for fd in fds:
                os.close(fd)
            return
        if "error" in message:
            future.set_exception(remote_error(message["error"]))
        elif fds:
            body = message["ok"]
            future.set_result(self.adopt(fds[0], body["pid"], "active", body.get("index")))
        else:
            future.set_result(message.get("ok"))

    def _event(self, link: Link, message: dict, fds: list[int]) -> None:
        if message.get("event") == "parked" and fds:
            message = dict(message, link=self.adopt(fds[0], message["pid"], "parked",
                                                     message["index"]))
        try:
            self.on_event(link, message)
        except Exception:  # noqa: BLE001 - a listener's failure must not stop the reader
            LOG.exception("icedtea: a replay event listener failed on %r", message.get("event"))

    def _close(self, link: Link, why: str) -> None:
        with self._lock:
            if link.closed:
                return
            link.closed = True
            link.why = why
            self.links.pop(link.sock.fileno(), None)
            pending, link.pending = link.pending, {}
        try:
            self._selector.unregister(link.sock)
        except (KeyError, ValueError):
            pass
        link.sock.close()
        for future in pending.values():
            if not future.done():
                future.set_exception(ReplayCancelled(why))
        self._event(link, {"event": "closed", "why": why}, [])


def remote_error(error: dict) -> BaseException:
    """The exception a replay process reported, as the class the API documents."""
    from .cursor import StepRefused
    from .inputs import InputsChanged
    from .worker import ReplayError

    known: dict[str, type[BaseException]] = {
        "StepRefused": StepRefused, "ReplayError": ReplayError, "InputsChanged": InputsChanged,
        "IndexError": IndexError, "KeyError": KeyError, "LookupError": LookupError,
        "ValueError": ValueError, "RuntimeError": RuntimeError}
    kind = known.get(str(error.get("type")), ReplayProcessError)
    message = error.get("message", "")
    if kind is KeyError and message.startswith(("'", '"')) and message.endswith(("'", '"')):
        message = message[1:-1]  # str(KeyError) quotes its argument
    return kind(message)
