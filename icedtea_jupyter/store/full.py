"""A run store that can no longer be written (its disk is full, its quota used up, its
filesystem read-only): the job goes on, recording stops, and the run's last word still
reaches its manifest.

At its creation a run store sets aside a small reserve file (``.reserve``). When a write
fails for want of space, the store is *full*: the run says so once (``StoreFull.warning``
names the store and how much it held), records nothing more, and releases the reserve so
that the final manifest, which says how the run ended, fits.
"""
from __future__ import annotations

import errno
import os
import threading

from .layout import file_stats

RESERVE = ".reserve"
RESERVE_BYTES = 256 << 10  # room for the final manifest of a large DAG
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


def is_full(exc: BaseException) -> bool:
    """Whether ``exc`` is a write refused for want of space (not a bug to report)."""
    return isinstance(exc, OSError) and exc.errno in FULL_ERRNOS


def reported_full(text: str) -> OSError | None:
    """The full-store error a worker's alert reports (its write failed for want of
    space, in a process of its own), or None."""
    for number in FULL_ERRNOS:
        if os.strerror(number) in text:
            return OSError(number, os.strerror(number))
    return None


def set_aside(store_path: str, size: int = RESERVE_BYTES) -> None:
    """Write the reserve (best effort: a store too small even for it starts full)."""
    try:
        with open(os.path.join(store_path, RESERVE), "wb") as out:
            out.write(b"\0" * size)
    except OSError:
        pass


def release(store_path: str) -> None:
    try:
        os.remove(os.path.join(store_path, RESERVE))
    except OSError:
        pass


def bytes_held(store_path: str) -> int:
    """The disk space of the run store's files, the reserve not counted."""
    return sum(stat.st_blocks * 512 for stat in file_stats(store_path, frozenset({RESERVE})))


class StoreFull:
    """Whether a run's store is full, and the one warning that says so."""

    def __init__(self, store_path: str) -> None:
        self.store_path = store_path
        self.warning: str | None = None
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return self.warning is not None

    def note(self, exc: OSError) -> bool:
        """Take the first full-store failure: release the reserve, word the warning.
        Returns True the first time only."""
        with self._lock:
            if self.warning is not None:
                return False
            release(self.store_path)
            held = bytes_held(self.store_path)
            self.warning = (f"recording stopped: the run store {self.store_path} could not "
                            f"be written ({exc.strerror or exc}) after it held "
                            f"{held / 1e6:,.1f} MB; the Spark job went on and its result is "
                            "the cell's, and what was recorded before stays readable (free "
                            "some space, or give --store a larger disk, and run the cell "
                            "again to record it whole)")
            return True
