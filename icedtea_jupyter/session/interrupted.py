"""Runs whose kernel died before they ended: told apart from runs still recording, and
marked ``interrupted`` in their store, with what was recorded up to then.

A running run's manifest names its kernel (host, pid, and the process's start time, so a
pid the system gave to another process later does not count as the kernel). Opening a
run whose manifest still says ``running`` asks whether that kernel lives: if it does,
the run is being recorded elsewhere; if not, it was interrupted, and the store says so
from then on.
"""
from __future__ import annotations

import os
import socket
import time
from typing import Any

from ..store import layout
from ..store.run_store import RunStore


def kernel_identity() -> dict[str, Any]:
    """This process, as a running run's manifest names it."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "since": _started(os.getpid())}


def _started(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def kernel_alive(kernel: dict | None) -> bool | None:
    """Whether the kernel a manifest names still runs; None if this host cannot tell
    (another host, or no kernel named)."""
    if not kernel or kernel.get("host") != socket.gethostname():
        return None
    pid = kernel.get("pid")
    if not isinstance(pid, int):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    since = _started(pid)
    return since is None or kernel.get("since") in (None, since)


def mark_interrupted(store: RunStore, manifest: dict) -> dict:
    """The manifest of a run whose kernel died, as it now stands in the store:
    ``interrupted``, ended when the store was last written, the last complete
    interaction named."""
    interactions = store.interactions()
    complete = [i["index"] for i in interactions if i.get("complete", True)]
    last = max(complete) if complete else 0
    host = (manifest.get("kernel") or {}).get("host", "?")
    pid = (manifest.get("kernel") or {}).get("pid", "?")
    warning = (f"The kernel that recorded this run (pid {pid} on {host}) stopped before the "
               f"run ended: it holds what was recorded up to then; interaction {last} is "
               "the last complete one, and time travel reaches it.")
    manifest = dict(manifest, status="interrupted", ended=_last_write(store.path),
                    last_complete_interaction=last,
                    warnings=list(manifest.get("warnings") or []) + [warning])
    store.write_manifest(manifest)
    return manifest


def _last_write(path: str) -> float:
    stats = layout.file_stats(path, frozenset({layout.MANIFEST}))
    return max((stat.st_mtime for stat in stats), default=0.0) or time.time()
