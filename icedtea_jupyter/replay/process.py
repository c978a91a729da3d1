"""The replay process: the debugger's engine outside the kernel, and its fork checkpoints.

The kernel starts one per debugged run (``python -m icedtea_jupyter.replay.process``),
connected by a socket pair. It loads the run from its store, puts θ's tree on every
partition at I0 and then plays three roles, one per process:

- the **root** runs the checkpointing pass (``preparing.py``): it replays the run
  once, interaction after interaction, and at chosen ones forks;
- a **parked** fork is a frozen copy of every worker at one interaction: generator
  frames, closures, the workers fed after a shuffle or a union, what waits in their
  queues. It does nothing but fork again when asked;
- the **active** process is a fork of a parked one: it replays forward to the jump's
  target and then serves steps and views, until the next jump replaces it.

Every process has its own connection to the kernel (a parked fork hands its child's
end to the kernel over its own), speaks the frames of ``wire.py`` and exits when the
kernel's end closes; when the root ends, or sees the kernel gone, its process group ends
with it. Nothing in here is threaded (``fork()`` copies one thread) but the root's watch
on the kernel.
"""
from __future__ import annotations

import argparse
import gc
import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from .wire import FrameReader, WireError, error_of, send_frame


class Connection:
    """One process's end of its link to the kernel."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = FrameReader(sock)

    def send(self, message: dict, fds: list[int] | None = None) -> None:
        if fds:
            message = dict(message, fds=len(fds))
        send_frame(self.sock, message, fds)

    def reply(self, request: dict, value: Any = None, fds: list[int] | None = None) -> None:
        self.send({"id": request.get("id"), "ok": value}, fds)

    def readable(self, timeout: float) -> bool:
        """Whether the kernel's end has sent something (or closed) within ``timeout``
        seconds. ``poll``, not ``select``: a kernel with many files open hands its replay
        processes socket numbers past 1023, which ``select`` refuses."""
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        return bool(poller.poll(int(timeout * 1000)))

    def next_request(self, idle: Callable[[], None] | None = None) -> dict:
        """The next request; ``idle`` runs about once a second while none comes."""
        while not self.reader.pending():
            if self.readable(1.0):
                self.reader._receive()
            elif idle is not None:
                idle()
        return self.reader.read()[0]


def fork_child(conn: Connection, child_main: Callable[[Connection], None]) -> tuple[int, socket.socket]:
    """Fork; the child serves ``child_main`` on a new connection and never returns.
    Returns the child's pid and the kernel's end of its connection (to hand over)."""
    theirs, ours = socket.socketpair()
    gc.collect()
    gc.freeze()  # the collector leaves the copied objects alone: pages stay shared
    pid = os.fork()
    if pid == 0:
        try:
            theirs.close()
            os.close(conn.sock.detach())
            child_main(Connection(ours))
        except BaseException:  # noqa: BLE001 - a child never returns into its parent's loop
            traceback.print_exc()
        finally:
            os._exit(0)
    ours.close()
    return pid, theirs


def hand_over(conn: Connection, message: dict, request: dict | None,
              pid: int, theirs: socket.socket) -> None:
    """Send the kernel a new process's end of its connection, then close ours."""
    try:
        body = dict(message, pid=pid)
        if request is None:
            conn.send(body, [theirs.fileno()])
        else:
            conn.reply(request, body, [theirs.fileno()])
    finally:
        theirs.close()


def reap() -> None:
    """Collect exited children (active processes of a parked fork, forks of the root)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def private_bytes(pid: int | str = "self") -> int:
    """The memory a process holds alone (its copy-on-write pages that diverged)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
            return sum(int(line.split()[1]) * 1024 for line in rollup
                       if line.startswith(("Private_Clean:", "Private_Dirty:")))
    except (OSError, ValueError, IndexError):
        return 0


# --- the roles ---------------------------------------------------------------------------
def serve(conn: Connection, handlers: dict[str, Callable[[dict], Any]],
          idle: Callable[[], None] = reap) -> None:
    """Answer requests until ``exit`` or the kernel's end closes; errors become replies."""
    while True:
        try:
            request = conn.next_request(idle)
        except (WireError, OSError):
            return
        op = request.get("op")
        if op == "exit":
            return
        handler = handlers.get(op) if isinstance(op, str) else None
        try:
            if handler is None:
                raise ValueError(f"unknown request {op!r} (known: {', '.join(sorted(handlers))})")
            result = handler(request)
            message = None if result is _REPLIED else {"id": request.get("id"), "ok": result}
        except Exception as exc:  # noqa: BLE001 - every error is a reply
            message = {"id": request.get("id"), "error": error_of(exc)}
        try:
            if message is not None:
                conn.send(message)
        except OSError:
            return


_REPLIED = object()  # a handler that replied itself (with descriptors)


def parked(engine: Any, index: int) -> Callable[[Connection], None]:
    """A parked fork at interaction ``index``: forks an active process on request."""
    def main(conn: Connection) -> None:
        def spawn(request: dict) -> object:
            pid, theirs = fork_child(conn, active(engine, index))
            hand_over(conn, {"index": index}, request, pid, theirs)
            return _REPLIED

        serve(conn, {"spawn": spawn,
                     "memory": lambda _: {"private_bytes": private_bytes()}})
    return main


def active(engine: Any, base: int) -> Callable[[Connection], None]:
    """The process the debugger talks to: jumps forward from ``base``, steps, views."""
    from .views import EngineViews

    def main(conn: Connection) -> None:
        serve(conn, EngineViews(engine, base).handlers())
    return main


def end_group() -> None:
    """The root's end: SIGKILL its process group, the root and every fork (even one busy
    in a long replay, which would see its closed connection only when done), when the
    kernel started it as a group's leader; else nothing."""
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)


def end_with_parent(parent: int, period: float = 0.5) -> threading.Thread:
    """The root's watch on the kernel that started it (pid ``parent``): once the kernel
    has gone (this process was handed to another parent), the root's group ends. A
    thread, so that it also acts while the root works; a fork does not copy it."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period)
        end_group()
        os._exit(1)

    watcher = threading.Thread(target=watch, daemon=True, name="icedtea-replay-parent")
    watcher.start()
    return watcher


def main(argv: list[str] | None = None, load_engine: Callable[[str], Any] | None = None) -> None:
    """The root replay process: ``--fd`` is its end of the kernel's socket pair, ``--run``
    the run store, ``--parent`` the kernel's pid (the root ends when the kernel does).
    ``load_engine(path)`` builds the engine (default: from the store)."""
    parser = argparse.ArgumentParser(prog="icedtea-replay")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--parent", type=int, default=None)
    args = parser.parse_args(argv)
    if args.parent is not None:
        end_with_parent(args.parent)
    conn = Connection(socket.socket(fileno=args.fd))
    from .preparing import Root, engine_for_run

    try:
        root = Root.start(conn, (load_engine or engine_for_run)(args.run))
    except Exception as exc:  # noqa: BLE001 - the kernel hears why, then we stop
        conn.send({"event": "failed", "error": error_of(exc)})
        traceback.print_exc()
        sys.exit(1)
    try:
        root.serve()  # until the kernel asks it to exit, or its end closes (it died)
    finally:
        end_group()


if __name__ == "__main__":
    main()
