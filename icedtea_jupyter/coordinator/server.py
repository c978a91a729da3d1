"""The coordinator's socket: accepts workers, authenticates them, reads their messages.

Binds to loopback unless told otherwise. A peer that fails the challenge, speaks
another protocol version, or sends an oversized frame is logged in ``rejections``,
disconnected, and changes nothing. On an authenticated connection, a frame whose header
is not JSON, a malformed message, or one the run's handler cannot take gets an ``error``
reply, and the stream goes on at the next frame.
"""
from __future__ import annotations

import logging
import secrets
import socket
import threading
from collections.abc import Callable

from ..executor import protocol

log = logging.getLogger(__name__)
Handler = Callable[[dict, bytes, "Connection"], None]


class Connection:
    """One authenticated worker process."""

    def __init__(self, sock: socket.socket, peer: tuple, pid: int) -> None:
        self.sock, self.peer, self.pid = sock, peer, pid
        self.host = str(peer[0])  # as the worker names its host in its hello
        self._lock = threading.Lock()

    def send(self, message: dict) -> None:
        frame = protocol.encode(message)
        with self._lock:
            self.sock.sendall(frame)


class ControlServer:
    def __init__(self, run_id: str, secret: bytes, on_message: Handler,
                 welcome: Callable[[], dict], host: str = "127.0.0.1", port: int = 0) -> None:
        self.run_id, self.secret = run_id, secret
        self.on_message, self.welcome = on_message, welcome
        self._listener = socket.create_server((host, port))
        self.address: tuple[str, int] = self._listener.getsockname()[:2]
        self.connections: list[Connection] = []
        self.rejections: list[str] = []
        # each worker host's evidence check of the run store: "shared", or why not
        self.hosts: dict[str, str] = {}
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept_loop, name="icedtea-accept", daemon=True).start()

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                sock, peer = self._listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(sock, peer), daemon=True).start()

    def _reject(self, sock: socket.socket, peer: tuple, reason: str) -> None:
        with self._lock:
            self.rejections.append(f"{peer[0]}:{peer[1]}: {reason}")
        log.warning("icedtea: rejected a control connection from %s: %s", peer, reason)
        try:
            sock.sendall(protocol.encode({"type": "error", "reason": reason}))
        except OSError:
            pass
        sock.close()

    def _authenticate(self, sock: socket.socket, peer: tuple) -> Connection | None:
        nonce = secrets.token_hex(16)
        sock.settimeout(10)
        try:
            sock.sendall(protocol.encode({"type": "challenge", "v": protocol.PROTOCOL_VERSION,
                                          "nonce": nonce}))
            hello, _ = protocol.read_frame(sock)
            protocol.validate(hello, {"hello": protocol.WORKER_MESSAGES["hello"]})
        except (OSError, ConnectionError, protocol.ProtocolError) as exc:
            self._reject(sock, peer, f"bad handshake: {exc}")
            return None
        if hello["v"] != protocol.PROTOCOL_VERSION:
            self._reject(sock, peer, f"protocol version {hello['v']} is not "
                                     f"{protocol.PROTOCOL_VERSION}")
            return None
        if hello["run"] != self.run_id or not protocol.verify(self.secret, nonce, hello["mac"]):
            self._reject(sock, peer, "authentication failed")
            return None
        sock.settimeout(None)
        connection = Connection(sock, peer, hello["pid"])
        connection.host = str(hello.get("host") or peer[0])
        with self._lock:
            self.hosts[connection.host] = str(hello.get("store", "not checked"))
        connection.send({"type": "welcome", "v": protocol.PROTOCOL_VERSION, **self.welcome()})
        return connection

    def _serve(self, sock: socket.socket, peer: tuple) -> None:
        connection = self._authenticate(sock, peer)
        if connection is None:
            return
        with self._lock:
            self.connections.append(connection)
        try:
            self._read_messages(connection)
        finally:
            with self._lock:
                if connection in self.connections:
                    self.connections.remove(connection)
            sock.close()

    def _read_messages(self, connection: Connection) -> None:
        while True:
            try:
                message, body = protocol.read_frame(connection.sock)
            except (OSError, ConnectionError):
                return
            except protocol.FrameTooLarge as exc:
                self._reject(connection.sock, connection.peer, str(exc))
                return  # left unread: the stream cannot be resynchronised
            except protocol.BadHeader as exc:  # read whole: the next frame is intact
                if not self._refuse(connection, str(exc)):
                    return
                continue
            try:
                protocol.validate(message, protocol.WORKER_MESSAGES)
            except protocol.ProtocolError as exc:
                if not self._refuse(connection, str(exc)):
                    return
                continue
            try:
                self.on_message(message, body, connection)
            except Exception as exc:  # a bug or a message it cannot take: the peer is told
                log.exception("icedtea: failed to handle %s", message.get("type"))
                if not self._refuse(connection, f"could not handle a {message['type']!r} "
                                                f"message: {type(exc).__name__}: {exc}"):
                    return

    def _refuse(self, connection: Connection, reason: str) -> bool:
        """Log a message the run cannot take and tell its sender; False if the
        connection is gone."""
        log.warning("icedtea: refused a message from %s: %s", connection.peer, reason)
        with self._lock:
            self.rejections.append(f"{connection.peer[0]}:{connection.peer[1]}: {reason}")
        try:
            connection.send({"type": "error", "reason": reason})
        except OSError:
            return False
        return True

    def broadcast(self, message: dict) -> int:
        """Send to every connected worker process; returns how many got it."""
        with self._lock:
            connections = list(self.connections)
        sent = 0
        for connection in connections:
            try:
                connection.send(message)
                sent += 1
            except OSError:
                pass
        return sent

    def close(self) -> None:
        self._closed = True
        try:
            self._listener.close()
        except OSError:
            pass
        with self._lock:
            connections, self.connections = list(self.connections), []
        for connection in connections:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
                connection.sock.close()
            except OSError:
                pass
