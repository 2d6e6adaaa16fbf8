"""The capture service's end of the capture link: a Unix socket server (docs/capture-protocol.md, version 1).

- :meth:`Server.publish` is called from pin callback threads: it numbers the event, keeps it until acknowledged
  and writes it to the linked appliance without blocking (a non-blocking send; what does not fit is flushed by the
  server thread).
- One thread runs the socket: hello/welcome and resend, commands (idempotent by id), acks, heartbeats, timeouts.
- One appliance at a time: a ``hello`` while another connection holds the live link is refused (``busy``).
"""

from __future__ import annotations

import collections
import logging
import os
import selectors
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Callable

from appliance.errors import CaptureCommandError, CaptureError
from appliance.capture_wire import (MAX_LINE_BYTES, PROTOCOL_VERSION, Error, Heartbeat, Lines, Reply, Waker, Welcome,
                                    decode, encode)
from gpio.commands import parse_command

log = logging.getLogger(__name__)

OUTBOX_LIMIT = 10_000
REPLY_MEMORY = 1_000


class SocketInUse(CaptureError, OSError):
    """Another capture service already listens on the socket."""


class _Connection:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.lines = Lines()
        self.wbuf = bytearray()
        self.welcomed = False
        self.last_received = time.monotonic()
        self.last_sent = time.monotonic()
        self.closed = False
        self.interest = selectors.EVENT_READ


class Server:
    """Serve the capture link on ``socket_path``.

    ``execute(op, args) -> result`` applies a validated command (may raise :class:`CaptureCommandError`);
    ``players()`` gives the number of players (for validation); ``on_link(up: bool)`` is told when an appliance
    is welcomed or lost; ``welcome_info()`` adds the factory, precision and players to ``welcome``.
    """

    def __init__(self, socket_path: str | Path, *, instance: str, heartbeat_ms: int, timeout_ms: int,
                 execute: Callable[[str, dict], dict], players: int, on_link: Callable[[bool], None],
                 welcome_info: Callable[[], dict], outbox_limit: int = OUTBOX_LIMIT,
                 announce: Callable[[dict], None] | None = None):
        self.socket_path = Path(socket_path)
        self.instance = instance
        self.heartbeat_s = heartbeat_ms / 1000
        self.timeout_s = timeout_ms / 1000
        self.heartbeat_ms, self.timeout_ms = heartbeat_ms, timeout_ms
        self._execute = execute
        self._players = players
        self._on_link = on_link
        self._welcome_info = welcome_info
        self._outbox_limit = outbox_limit
        # The server's own events (link timeout, dropped events) go out through ``announce`` (default: publish).
        self._announce = announce or self.publish
        self._lock = threading.RLock()
        self._seq = 0
        self._outbox: collections.deque[tuple[int, bytes]] = collections.deque()
        self._dropped = 0
        self._replies: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._current: _Connection | None = None
        self._connections: list[_Connection] = []
        self._listener: socket.socket | None = None
        self._selector = selectors.DefaultSelector()
        self._waker = Waker()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Link changes are reported after the lock is released: the capture core takes its own lock and then
        # publishes (which takes ours); calling it with ours held would invert the lock order.
        self._link_changes: list[bool] = []

    # ------------------------------------------------------------------ lifecycle
    def listen(self) -> None:
        """Bind the socket (mode 0660), replacing a stale socket file but never a live service."""
        path = self.socket_path
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            if not stat.S_ISSOCK(path.lstat().st_mode):
                raise SocketInUse(f"{path} exists and is not a socket")
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(path))
            except OSError:
                path.unlink()  # stale: left by a service that died
            else:
                raise SocketInUse(f"another capture service listens on {path}")
            finally:
                probe.close()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        os.chmod(path, 0o660)
        listener.listen(4)
        listener.setblocking(False)
        self._listener = listener
        self._selector.register(listener, selectors.EVENT_READ, "listen")
        self._selector.register(self._waker.reader, selectors.EVENT_READ, "wake")

    def start(self) -> None:
        if self._listener is None:
            self.listen()
        self._thread = threading.Thread(target=self._run, name="capture-server", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(2)
        with self._lock:
            for connection in list(self._connections):
                self._close(connection, notify=False)
        if self._listener is not None:
            self._listener.close()
            try:
                self.socket_path.unlink()
            except FileNotFoundError:
                pass
        self._selector.close()
        self._waker.close()

    @property
    def running(self) -> bool:
        """The socket thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def linked(self) -> bool:
        return self._current is not None

    @property
    def unacknowledged(self) -> int:
        with self._lock:
            return len(self._outbox)

    # ------------------------------------------------------------------ events
    def publish(self, event: dict) -> int:
        """Number ``event``, keep it until acknowledged, send it now if an appliance is linked. Thread-safe."""
        with self._lock:
            self._seq += 1
            seq = self._seq
            data = encode({"type": "event", "seq": seq, **event})
            self._outbox.append((seq, data))
            if len(self._outbox) > self._outbox_limit:
                self._outbox.popleft()
                self._dropped += 1
                if self._dropped == 1 or self._dropped % 1000 == 0:
                    log.warning("capture outbox full: %d events dropped", self._dropped)
            connection = self._current
            if connection is not None and connection.welcomed:
                self._write(connection, data)
        return seq

    # ------------------------------------------------------------------ socket thread
    def _wake(self) -> None:
        self._waker.wake()

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, events in self._selector.select(self.heartbeat_s / 2):
                if key.data == "listen":
                    self._accept()
                elif key.data == "wake":
                    self._waker.drain()
                else:
                    connection = key.data
                    if events & selectors.EVENT_WRITE:
                        with self._lock:
                            self._flush(connection)
                    if events & selectors.EVENT_READ and not connection.closed:
                        self._read(connection)
            self._tick()
            self._report_link_changes()

    def _report_link_changes(self) -> None:
        with self._lock:
            changes, self._link_changes = self._link_changes, []
        for up in changes:
            self._on_link(up)

    def _accept(self) -> None:
        try:
            sock, _ = self._listener.accept()
        except BlockingIOError:
            return
        sock.setblocking(False)
        connection = _Connection(sock)
        with self._lock:
            self._connections.append(connection)
            self._selector.register(sock, selectors.EVENT_READ, connection)

    def _tick(self) -> None:
        now = time.monotonic()
        with self._lock:
            for connection in list(self._connections):
                if now - connection.last_received > self.timeout_s:
                    if connection is self._current:
                        self._announce({"event": "fault", "kind": "link-timeout", "player": None,
                                      "detail": f"no message from the appliance for {self.timeout_ms} ms"})
                    self._close(connection)
                elif connection.welcomed and now - connection.last_sent >= self.heartbeat_s:
                    self._write(connection, encode(Heartbeat(time.monotonic_ns())))

    def _read(self, connection: _Connection) -> None:
        try:
            chunk = connection.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._close(connection)
            return
        # Handled without the lock held: commands call into the capture core (see _link_changes).
        connection.last_received = time.monotonic()
        for line in connection.lines.feed(chunk):
            if connection.closed:
                return
            if len(line) > MAX_LINE_BYTES:  # whole or in pieces, a line over the cap is never handled
                self._refuse_line(connection)
                return
            if line.strip():
                self._handle(connection, line)
        if connection.lines.overflowing:
            self._refuse_line(connection)

    def _refuse_line(self, connection: _Connection) -> None:
        self._write(connection, encode(Error("too-long", f"a line is at most {MAX_LINE_BYTES} bytes")))
        self._close(connection)

    def _handle(self, connection: _Connection, line: bytes) -> None:
        try:
            message = decode(line)
        except CaptureCommandError as error:
            self._write(connection, encode(Error(error.code, error.message)))
            return
        kind = message["type"]
        if kind == "hello":
            self._hello(connection, message)
        elif not connection.welcomed:
            self._write(connection, encode(Error("bad-request", "send hello first")))
            self._close(connection)
        elif kind == "ack":
            seq = message.get("seq")
            if isinstance(seq, int):
                with self._lock:
                    while self._outbox and self._outbox[0][0] <= seq:
                        self._outbox.popleft()
        elif kind == "cmd":
            self._command(connection, message)
        elif kind != "heartbeat":
            self._write(connection, encode(Error("bad-request", f"unknown message type {kind!r}")))

    def _hello(self, connection: _Connection, message: dict) -> None:
        if message.get("protocol") != PROTOCOL_VERSION:
            self._write(connection, encode(Error("protocol", f"this service speaks protocol {PROTOCOL_VERSION}")))
            self._close(connection)
            return
        info = self._welcome_info()
        with self._lock:
            previous = self._current
            if previous is not None and previous is not connection and not previous.closed:
                # A live link is never taken over: another local client must not receive (and ack away) the
                # presses. A restarted appliance finds the old link gone (the kernel closes a dead process's
                # socket; a hung one times out after timeout_ms) and its client retries until then.
                self._write(connection, encode(Error("busy", "another client holds the link")))
                self._close(connection, notify=False)
                return
            last_seq = message.get("last_seq") if message.get("instance") == self.instance else 0
            last_seq = last_seq if isinstance(last_seq, int) else 0
            resend = [data for seq, data in self._outbox if seq > last_seq]
            connection.welcomed = True
            self._current = connection
            self._write(connection, encode(Welcome(self.instance, self._seq + 1, len(resend), self.heartbeat_ms,
                                                   self.timeout_ms, self._dropped, info)))
            for data in resend:
                self._write(connection, data)
            if self._dropped:
                self._announce({"event": "fault", "kind": "events-dropped", "player": None, "count": self._dropped,
                              "detail": f"{self._dropped} events were dropped while the appliance was away"})
                self._dropped = 0
            self._link_changes.append(True)
        self._report_link_changes()

    def _command(self, connection: _Connection, message: dict) -> None:
        command_id = message.get("id")
        if isinstance(command_id, str) and command_id in self._replies:
            self._write(connection, self._replies[command_id])  # a resent command: same reply, not applied twice
            return
        try:
            command_id, op, args = parse_command(message, self._players)
            reply = Reply(command_id, True, result=self._execute(op, args))
        except CaptureCommandError as error:
            reply = Reply.refusing(command_id, error)
        data = encode(reply)
        if isinstance(command_id, str):
            with self._lock:
                self._replies[command_id] = data
                while len(self._replies) > REPLY_MEMORY:
                    self._replies.popitem(last=False)
        self._write(connection, data)

    # ------------------------------------------------------------------ writing
    def _write(self, connection: _Connection, data: bytes) -> None:
        with self._lock:
            if connection.closed:
                return
            connection.wbuf += data
            connection.last_sent = time.monotonic()
            self._flush(connection)

    def _flush(self, connection: _Connection) -> None:
        if connection.closed:
            return
        try:
            while connection.wbuf:
                sent = connection.sock.send(connection.wbuf)
                del connection.wbuf[:sent]
        except BlockingIOError:
            pass
        except OSError:
            self._close(connection)
            return
        interest = selectors.EVENT_READ | (selectors.EVENT_WRITE if connection.wbuf else 0)
        if interest != connection.interest:  # one epoll_ctl only when it changes, not per event
            connection.interest = interest
            try:
                self._selector.modify(connection.sock, interest, connection)
            except (KeyError, ValueError):
                pass
            self._wake()

    def _close(self, connection: _Connection, notify: bool = True) -> None:
        with self._lock:
            if connection.closed:
                return
            connection.closed = True
            try:
                self._selector.unregister(connection.sock)
            except (KeyError, ValueError):
                pass
            connection.sock.close()
            if connection in self._connections:
                self._connections.remove(connection)
            if connection is self._current:
                self._current = None
                if notify:
                    self._link_changes.append(False)
