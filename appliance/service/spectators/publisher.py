"""The web process's one connection to the spectators' nats-server: updates handed over, published in a thread.

:meth:`Publisher.publish` never waits (the session calls the board's broadcast under its lock): it puts the
message in a bounded queue and returns. A thread of its own encodes nothing (the caller hands bytes or a callable
that makes them, run here), writes NATS' text protocol (``CONNECT``, ``PUB``, ``PING``/``PONG``: the three verbs
a publisher needs, docs/spectators.md) to the loopback client port, and reconnects with a backoff when the
server is gone. While it is gone messages are dropped, oldest first, and counted: a spectator sees a gap in the
numbers and fetches a snapshot, as after any missed update.
"""

from __future__ import annotations

import collections
import json
import logging
import socket
import threading
import time
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)

QUEUE_LIMIT = 256          # messages waiting while the server is slow or gone (a few seconds of a battle)
BACKOFF_S = (0.2, 0.5, 1.0, 2.0, 5.0)
PING_EVERY_S = 5.0


class Publisher:
    """Publish to ``127.0.0.1:<locate()>`` as ``user`` with the password read from ``secret_file`` at each
    connect (``svoyak spectators`` writes a new one each time it starts the server; ``locate`` gives its client
    port, or None while there is none)."""

    def __init__(self, locate: Callable[[], int | None], secret_file: Path, user: str = "app",
                 host: str = "127.0.0.1", name: str = "svoyak-web") -> None:
        self.locate = locate
        self.host = host
        self.secret_file = Path(secret_file)
        self.user = user
        self.name = name
        self.published = 0
        self.dropped = 0
        self.connected = False
        self._queue: collections.deque = collections.deque()
        self._ready = threading.Condition()
        self._closed = False
        self._socket: socket.socket | None = None
        self._lost: socket.socket | None = None
        self._thread = threading.Thread(target=self._run, name="svoyak-spectators", daemon=True)
        self._thread.start()

    def publish(self, subject: str, payload: bytes | Callable[[], bytes]) -> None:
        """Queue one message; returns at once. ``payload`` may be a callable, run in the publisher's thread."""
        with self._ready:
            if len(self._queue) >= QUEUE_LIMIT:
                self._queue.popleft()
                self.dropped += 1
            self._queue.append((subject, payload))
            self._ready.notify()

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify()
        sock = self._socket
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)

    # ------------------------------------------------------------------ the thread
    def _run(self) -> None:
        failures = 0
        while not self._closed:
            try:
                sock = self._connect()
            except (OSError, ValueError) as error:
                self._drop_waiting()
                delay = BACKOFF_S[min(failures, len(BACKOFF_S) - 1)]
                if failures == 0:
                    log.info("spectators' nats-server not reached (%s): retrying", error)
                failures += 1
                with self._ready:
                    self._ready.wait(delay)
                continue
            failures = 0
            self._socket, self.connected = sock, True
            try:
                self._serve(sock)
            except (OSError, ValueError) as error:
                if not self._closed:
                    log.warning("spectators' nats-server link lost: %s", error)
            finally:
                self.connected = False
                self._socket = None
                sock.close()

    def _connect(self) -> socket.socket:
        port = self.locate()
        if not port:
            raise OSError("no spectators' nats-server running")
        password = self.secret_file.read_text().strip()
        sock = socket.create_connection((self.host, port), timeout=3)
        try:
            info = _read_line(sock)
            if not info.startswith(b"INFO "):
                raise ValueError(f"not a NATS server: {info[:40]!r}")
            options = {"verbose": False, "pedantic": False, "user": self.user, "pass": password,
                       "name": self.name, "lang": "python-raw", "version": "1", "protocol": 1, "echo": False}
            sock.sendall(b"CONNECT " + json.dumps(options).encode() + b"\r\nPING\r\n")
            answer = _read_line(sock)
            if not answer.startswith(b"PONG"):
                raise ValueError(f"refused: {answer[:200].decode(errors='replace')}")
        except BaseException:
            sock.close()
            raise
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=self._read, args=(sock,), name="svoyak-spectators-read", daemon=True).start()
        return sock

    def _read(self, sock: socket.socket) -> None:
        """Answer the server's PINGs and log its errors (a permission it refused), until the socket closes."""
        buffer = b""
        try:
            while True:
                data = sock.recv(4096)
                if not data:
                    break
                buffer += data
                while b"\r\n" in buffer:
                    line, buffer = buffer.split(b"\r\n", 1)
                    if line.startswith(b"PING"):
                        with self._ready:  # the writer holds this lock only to take from the queue
                            self._queue.appendleft((None, b"PONG\r\n"))
                            self._ready.notify()
                    elif line.startswith(b"-ERR"):
                        log.warning("spectators' nats-server: %s", line.decode(errors="replace"))
        except OSError:
            pass
        with self._ready:
            self._lost = sock  # the writer stops and reconnects
            self._ready.notify()

    def _serve(self, sock: socket.socket) -> None:
        last_ping = time.monotonic()
        while not self._closed:
            with self._ready:
                if not self._queue:
                    self._ready.wait(PING_EVERY_S)
                batch = list(self._queue)
                self._queue.clear()
            if self._lost is sock:
                raise OSError("closed by the server")
            chunks = []
            for subject, payload in batch:
                if subject is None:
                    chunks.append(payload)
                    continue
                try:
                    body = payload() if callable(payload) else payload
                except Exception:  # a process edge: a payload that cannot be made is logged, the others go
                    log.exception("spectators' message for %s not made", subject)
                    continue
                chunks.append(b"PUB %s %d\r\n%s\r\n" % (subject.encode(), len(body), body))
            if time.monotonic() - last_ping > PING_EVERY_S:
                chunks.append(b"PING\r\n")
                last_ping = time.monotonic()
            if chunks:
                sock.sendall(b"".join(chunks))
                self.published += sum(1 for subject, _ in batch if subject is not None)

    def _drop_waiting(self) -> None:
        with self._ready:
            self.dropped += sum(1 for subject, _ in self._queue if subject is not None)
            self._queue.clear()


def _read_line(sock: socket.socket, limit: int = 65536) -> bytes:
    data = b""
    while not data.endswith(b"\r\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise OSError("connection closed")
        data += chunk
        if len(data) > limit:
            raise ValueError("line too long")
    return data[:-2]
