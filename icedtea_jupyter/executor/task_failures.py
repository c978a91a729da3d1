"""A task's failure, learnt where PySpark's worker reports it, so that chains of hosts
in blocks (``blocks.py``) need no Python frame per record to see an exception go by.

PySpark's worker runs each task inside its ``main`` and hands any exception to
``handle_worker_exception`` before the process exits. A chain built inside such a
``main`` installs a hook in that function's globals (once per process) and registers
itself here; on a failure the task's chains learn of it, upstream (older) first, before
PySpark reports it. Chains built elsewhere (the replay process, the driver) keep a
guard generator instead.
"""
from __future__ import annotations

import itertools
import sys
import weakref
from collections.abc import Callable
from types import FrameType
from typing import Any

_ORDER = itertools.count()
_LIVE: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def next_order() -> int:
    """A number that orders hosts and chains by when the task built them (upstream first:
    PySpark calls an upstream operator's function before the one it feeds)."""
    return next(_ORDER)


def hook_worker_main() -> bool:
    """Whether the caller runs inside PySpark's worker ``main`` (a frame named ``main``
    whose globals hold ``handle_worker_exception``); hooks it the first time."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        handler = frame.f_globals.get("handle_worker_exception")
        if frame.f_code.co_name == "main" and callable(handler):
            if not getattr(handler, "icedtea_hook", False):
                frame.f_globals["handle_worker_exception"] = _reporting(handler)
            return True
        frame = frame.f_back
    return False


def register(chain: Any) -> None:
    """A chain with no guard of its own: it learns of its task's failure here."""
    _LIVE[chain.created] = chain


def forget(chain: Any) -> None:
    _LIVE.pop(chain.created, None)


def live_chains() -> list[Any]:
    """The registered chains that have not ended, oldest first."""
    return [chain for _, chain in sorted(list(_LIVE.items()), key=lambda item: item[0])]


def task_failed(exc: BaseException, before: int | None = None) -> None:
    """``exc`` ends the task: its registered chains (those built before ``before``, when
    a host's own loop catches it first) find their culprit, upstream first. With no
    ``before``, the newest chain is blamed if no frame of any chain raised it."""
    chains = [c for c in live_chains() if before is None or c.created < before]
    for i, chain in enumerate(chains):
        try:
            chain.failed_in_task(exc, blame_last=before is None and i == len(chains) - 1)
        except Exception:  # noqa: S112 - the task's own error is what must reach Spark
            continue


def _reporting(handler: Callable) -> Callable:
    def handle_worker_exception(e: BaseException, *args: Any, **kwargs: Any) -> Any:
        task_failed(e)
        return handler(e, *args, **kwargs)

    handle_worker_exception.icedtea_hook = True  # type: ignore[attr-defined]
    return handle_worker_exception
