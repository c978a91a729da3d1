"""Whether this worker process shares the run store with the kernel: evidence, not
assumption.

The kernel writes a random token into the run directory when it creates it
(``layout.store_token_path``) and ships the same token in the ``RunSpec``. A worker
reads the file once per process and run (``store_view``, cached): only if it finds
the token does it write into ``store_path`` itself. An executor on another host (YARN,
Kubernetes, a standalone worker in its own mount namespace) finds no file, or another
store's, and its artifacts travel over the control channel (``artifacts.py``).
"""
from __future__ import annotations

import hmac
import os
import socket
import threading
from typing import Any, NamedTuple

from ..store import layout

SHARED = "shared"


class StoreView(NamedTuple):
    """What this process found: ``shared``, and ``reason`` (``SHARED`` or why not)."""

    shared: bool
    reason: str


_VIEWS: dict[tuple[str, str, str], StoreView] = {}
_LOCK = threading.Lock()


def store_view(run: Any) -> StoreView:
    """This process's view of ``run``'s store, checked on first use."""
    key = (run.run_id, run.store_path, run.store_token)
    view = _VIEWS.get(key)
    if view is None:
        with _LOCK:
            view = _VIEWS.get(key)
            if view is None:
                view = _VIEWS[key] = check(run.store_path, run.store_token)
    return view


def shares_store(run: Any) -> bool:
    return store_view(run).shared


def check(store_path: str, token: str) -> StoreView:
    """Read the store's token file and compare it with ``token``."""
    path = layout.store_token_path(store_path) if store_path else ""
    if not token:
        return StoreView(False, "the run names no store token")
    try:
        with open(path, encoding="utf-8") as f:
            found = f.read().strip()
    except OSError as exc:
        return StoreView(False, f"cannot read {path} ({exc.strerror or type(exc).__name__})")
    if not hmac.compare_digest(found.encode(), token.encode()):
        return StoreView(False, f"{path} holds another run's token")
    return StoreView(True, SHARED)


def host_name() -> str:
    """This executor's host as Spark knows it (its local address), else the hostname."""
    name = socket.gethostname()
    local = os.environ.get("SPARK_LOCAL_HOSTNAME") or os.environ.get("SPARK_LOCAL_IP")
    return f"{local} ({name})" if local and local != name else name


def forget(run_id: str) -> None:
    """Drop the cached view of ``run_id`` (tests)."""
    with _LOCK:
        for key in [key for key in _VIEWS if key[0] == run_id]:
            del _VIEWS[key]
