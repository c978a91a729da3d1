"""Frames between the kernel and the replay processes: length-prefixed JSON, never pickle.

Each frame is 4 bytes of big-endian length and a UTF-8 JSON object. Values that are
records or states travel in the tagged-JSON encoding (``executor.state.encode``). A
frame may carry file descriptors (``SCM_RIGHTS``): a parked fork hands the kernel its
new child's end of a socket pair that way, so no process ever listens on an address.
"""
from __future__ import annotations

import json
import socket
import struct
from collections import deque

MAX_FRAME = 256 * 1024 * 1024
_HEADER = struct.Struct(">I")


class WireError(ConnectionError):
    """The peer closed the connection or sent something that is not a frame."""


def send_frame(sock: socket.socket, message: dict, fds: list[int] | None = None) -> None:
    data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
    if len(data) > MAX_FRAME:
        raise WireError(f"a frame of {len(data):,} bytes is over the {MAX_FRAME:,}-byte limit")
    payload = _HEADER.pack(len(data)) + data
    if fds:
        sent = socket.send_fds(sock, [payload[:1]], fds)  # the descriptors ride on byte one
        sock.sendall(payload[sent:])
    else:
        sock.sendall(payload)


class FrameReader:
    """Reads whole frames from one socket; descriptors received are queued in order and
    handed to the frames that announce them (``"fds": n``)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = bytearray()
        self._fds: deque[int] = deque()

    def read(self) -> tuple[dict, list[int]]:
        """The next frame and its descriptors; blocks; raises WireError at the end."""
        while True:
            frame = self._take()
            if frame is not None:
                return frame
            self._receive()

    def pending(self) -> bool:
        """Whether a whole frame is buffered already."""
        return self._complete() is not None

    def _receive(self) -> None:
        data, fds, _, _ = socket.recv_fds(self.sock, 1 << 16, 16)
        if not data:
            raise WireError("the replay connection closed")
        self._buffer += data
        self._fds.extend(fds)

    def _complete(self) -> int | None:
        if len(self._buffer) < _HEADER.size:
            return None
        (length,) = _HEADER.unpack_from(self._buffer)
        if length > MAX_FRAME:
            raise WireError(f"a frame announced {length:,} bytes, over the limit")
        end = _HEADER.size + length
        return end if len(self._buffer) >= end else None

    def _take(self) -> tuple[dict, list[int]] | None:
        end = self._complete()
        if end is None:
            return None
        data = bytes(self._buffer[_HEADER.size:end])
        del self._buffer[:end]
        try:
            message = json.loads(data)
        except ValueError as exc:
            raise WireError(f"a frame that is not JSON: {exc}") from None
        if not isinstance(message, dict):
            raise WireError("a frame that is not a JSON object")
        fds = [self._fds.popleft() for _ in range(int(message.get("fds", 0)))
               if self._fds]
        return message, fds


def error_of(exc: BaseException) -> dict:
    """An exception as a reply's ``error``: its class name and message."""
    return {"type": type(exc).__name__, "message": str(exc)}

