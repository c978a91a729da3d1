"""Artifacts that workers which do not share the run store send over the control channel
(``executor/artifacts.py``), written into the store by the coordinator.

An artifact arrives as ``artifact`` frames ``seq`` 0, 1, … (each body at most
``ARTIFACT_FRAME_BYTES``), the last one marked ``last``. Each body is appended to a temp
file beside the artifact's path (``layout.artifact_path``: built from integers only), so
the kernel never holds a whole artifact; after the last frame, when the bytes add up to
``size``, the temp file is renamed into place and the worker gets ``artifact_ack`` with
``ok: true``; any failure gets ``ok: false`` and its ``reason``, and leaves no file. The
bytes are written as they came: the coordinator never decodes them (a checkpoint is a
pickle: it is only ever loaded by the user's replay, as one written by a worker would be).
"""
from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..executor.protocol import ARTIFACT_FRAME_BYTES
from ..store import layout


@dataclass
class _Incoming:
    path: str
    tmp: str
    size: int
    seq: int = 0
    written: int = 0


class ArtifactInbox:
    """The artifacts arriving for one run store; ``received``: how many of each kind."""

    def __init__(self, store_path: str, on_full: Callable[[OSError], None]) -> None:
        self.store_path = store_path
        self.on_full = on_full
        self.received: Counter[str] = Counter()
        self._incoming: dict[tuple[int, int], _Incoming] = {}
        self._lock = threading.Lock()

    def receive(self, message: dict, body: bytes, connection: Any) -> None:
        """One frame of an artifact (from the connection's reader thread)."""
        key = (id(connection), message["id"])
        try:
            done = self._take(key, message, body)
        except Exception as exc:
            self._abandon(key)
            if isinstance(exc, OSError):
                from ..store.full import is_full

                if is_full(exc):
                    self.on_full(exc)
            connection.send({"type": "artifact_ack", "id": message["id"], "ok": False,
                             "reason": f"the coordinator could not write it: "
                                       f"{type(exc).__name__}: {exc}"})
            return
        if done:
            connection.send({"type": "artifact_ack", "id": message["id"], "ok": True})

    def _take(self, key: tuple[int, int], message: dict, body: bytes) -> bool:
        if len(body) > ARTIFACT_FRAME_BYTES:
            raise ValueError(f"a frame of {len(body)} bytes (at most {ARTIFACT_FRAME_BYTES})")
        with self._lock:
            incoming = self._incoming.get(key)
        if message["seq"] == 0:
            if incoming is not None:
                raise ValueError(f"artifact {message['id']} started twice")
            path = layout.artifact_path(self.store_path, message["kind"], message["where"])
            incoming = _Incoming(path, layout.temp_path(path, message["id"]),
                                 message["size"])
            with open(layout.with_parent(incoming.tmp), "wb"):
                pass
            with self._lock:
                self._incoming[key] = incoming
        elif incoming is None or message["seq"] != incoming.seq + 1:
            raise ValueError(f"frame {message['seq']} of artifact {message['id']} out of order")
        with open(incoming.tmp, "ab") as out:
            out.write(body)
        incoming.seq, incoming.written = message["seq"], incoming.written + len(body)
        if incoming.written > incoming.size:
            raise ValueError(f"more than the {incoming.size} bytes announced")
        if not message["last"]:
            return False
        if incoming.written != incoming.size:
            raise ValueError(f"{incoming.written} bytes of the {incoming.size} announced")
        os.replace(incoming.tmp, incoming.path)
        with self._lock:
            del self._incoming[key]
            self.received[message["kind"]] += 1
        return True

    def _abandon(self, key: tuple[int, int]) -> None:
        with self._lock:
            incoming = self._incoming.pop(key, None)
        if incoming is not None and os.path.exists(incoming.tmp):
            os.remove(incoming.tmp)

    def close(self) -> list[str]:
        """Drop the artifacts whose last frame never came (their worker died while
        sending): their temp files go; returns their paths."""
        with self._lock:
            keys = list(self._incoming)
            paths = [self._incoming[key].path for key in keys]
        for key in keys:
            self._abandon(key)
        return paths
