"""Outgoing WebSocket frames written by the emitting thread when the connection is idle.

Why: in threading mode python-engineio gives every connection a queue and a writer thread. One update to 30
scoreboards woke 30 writer threads that then took turns for the GIL, each encoding its own copy of the frame:
about 150 µs a board on the test machine, so the 30th scoreboard heard of a press 4-5 ms after the first
(``bench/bench_web.py``). Here the emitting thread writes the frame itself when nothing is queued or in the
writer's hands for that connection, with a non-blocking send, and a broadcast encodes its frame once for
every connection (the frames are identical: server frames are unmasked and uncompressed). Everything else
goes through engineio's queue and writer thread as before: a busy connection, a slow phone whose socket
buffer is full, the rest of a frame the kernel took only part of, polling clients. Order per connection is
kept, and no client can block the emitter.

It plugs into engineio at the two classes its async-mode table names (``_async["queue"]`` and
``_async["websocket"]``); :func:`install` does that for one server and refuses versions it was not tested
with. ``permessage-deflate`` is not offered: a frame compressed with per-connection state cannot be shared,
and an update is a few kilobytes on a local network.
"""

from __future__ import annotations

import os
import queue
import socket

import simple_websocket
from engineio.async_drivers._websocket_wsgi import SimpleWebSocketWSGI
from socketio.packet import BINARY_EVENT, EVENT, Packet
from wsproto.frame_protocol import FrameProtocol

# engineio releases this was written against (its socket's queue/writer structure); others fall back.
TESTED_ENGINEIO = ("4.",)


def frame(message: str | bytes) -> bytes:
    """One final, unmasked, uncompressed WebSocket frame carrying ``message`` (text for str, binary for bytes),
    framed by wsproto, the WebSocket library simple-websocket already uses (a fresh framer per frame: its
    state is per message, and frames are made in many threads).

    >>> frame("4hi")
    b'\\x81\\x034hi'
    >>> frame(b"x" * 200)[:4]
    b'\\x82~\\x00\\xc8'
    """
    return bytes(FrameProtocol(client=False, extensions=[]).send_data(message, fin=True))


class JsonPacket(Packet):
    """Socket.IO packets of this protocol: JSON only, never binary attachments (docs/socketio-events.md).

    python-socketio walks every payload looking for bytes before it encodes it; for a 15 KB view that walk cost
    more than the JSON encoding itself. A payload with bytes now fails loudly in ``json.dumps`` instead.

    >>> JsonPacket(2, namespace="/board", data=["update", {"seq": 1}]).encode()
    '2/board,["update",{"seq":1}]'
    """

    @classmethod
    def data_is_binary(cls, data) -> bool:
        return False

    def decode(self, encoded_packet):
        """A client's event whose JSON does not parse (truncated, a 5,000-digit number, nesting 100,000 deep) or
        is not ``[name, ...]`` still reaches the namespace, as the event :data:`MALFORMED`: it is answered with
        a worded refusal instead of being dropped unanswered (web/sync.py)."""
        try:
            attachments = super().decode(encoded_packet)
        except (ValueError, RecursionError):
            if self.packet_type not in (EVENT, BINARY_EVENT):
                raise
            self.data, attachments = [MALFORMED], 0
        if self.packet_type in (EVENT, BINARY_EVENT) and not (isinstance(self.data, list) and self.data):
            self.data = [MALFORMED]
        return attachments


# The event name a malformed client event is decoded to: not a name any client can send (it is not JSON text).
MALFORMED = "\x00malformed"


class _Rest:
    """The unsent rest of a frame the kernel took only part of; the writer thread sends it next."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def encode(self) -> "_Rest":  # the writer calls ``packet.encode()`` on what it takes from the queue
        return self


class _FrameCache:
    """The frame of the last packet encoded: a broadcast hands the same packet object to every connection."""

    def __init__(self) -> None:
        self._last: tuple = (None, b"")

    def frame_of(self, packet) -> bytes:
        last = self._last  # one read: another thread may replace it
        if last[0] is packet:
            return last[1]
        encoded = frame(packet.encode())
        self._last = (packet, encoded)
        return encoded


_frames = _FrameCache()


class WireQueue(queue.Queue):
    """An engineio connection's outgoing queue that writes straight to the WebSocket while the writer is idle.

    ``in_hand`` counts packets the writer thread has taken but not yet written (``_get`` runs under the
    queue's mutex, so no packet can slip past one the writer holds). ``direct`` counts the packets written
    straight away: engineio's writer takes a wait of ``ping_interval + ping_timeout`` with nothing to send
    as a dead connection and closes it, so a wait only times out if nothing was written directly either.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.wire: "WireSocket | None" = None
        self.in_hand = 0
        self.direct = 0

    def get(self, block: bool = True, timeout: float | None = None):
        while True:
            direct_before = self.direct
            try:
                return super().get(block, timeout)
            except queue.Empty:
                if not block or timeout is None or self.direct == direct_before:
                    raise

    def put(self, item, block: bool = True, timeout: float | None = None) -> None:
        wire = self.wire
        if wire is None or item is None or self.maxsize:
            return super().put(item, block, timeout)
        with self.mutex:
            if not self.queue and not self.in_hand and wire.ready():
                data = _frames.frame_of(item)
                sent = wire.send_now(data)
                if sent == len(data):
                    self.direct += 1
                    return
                if sent:
                    item = _Rest(data[sent:])
            self._put(item)
            self.unfinished_tasks += 1
            self.not_empty.notify()

    def _get(self):
        item = super()._get()
        wire = self.wire
        if item is not None and wire is not None and wire.connection is not None and wire.connection.upgraded:
            self.in_hand += 1  # taken by the WebSocket writer (not by a last long-poll before the upgrade)
        return item

    def written(self) -> None:
        """The writer thread has written one packet it took."""
        with self.mutex:
            if self.in_hand:
                self.in_hand -= 1


class WireSocket(SimpleWebSocketWSGI):
    """engineio's threading WebSocket wrapper, attached to its connection's :class:`WireQueue`."""

    def __call__(self, environ, start_response):
        environ.pop("HTTP_SEC_WEBSOCKET_EXTENSIONS", None)  # no permessage-deflate: frames are shared
        self.ws = simple_websocket.Server(environ, **self.server_args)
        self.connection = getattr(self.app, "__self__", None)  # the engineio socket whose handler runs here
        outgoing = getattr(self.connection, "queue", None)
        if isinstance(outgoing, WireQueue):
            outgoing.wire = self
        try:
            result = self.app(self)
        finally:
            if isinstance(outgoing, WireQueue):
                with outgoing.mutex:
                    outgoing.wire = None
        if self.ws.mode == "gunicorn":
            raise StopIteration()
        if self.ws.mode == "werkzeug":
            raise ConnectionError()
        return result

    def ready(self) -> bool:
        connection = self.connection
        return bool(self.ws.connected and connection is not None and connection.upgraded
                    and not connection.upgrading and not connection.closed)

    def send_now(self, data: bytes) -> int:
        """Write without waiting: the bytes the kernel took (0 if none; the caller queues the rest)."""
        sock = self.ws.sock
        try:
            if sock.gettimeout() is None:
                return sock.send(data, socket.MSG_DONTWAIT)
            return os.write(sock.fileno(), data)  # a socket with a timeout has O_NONBLOCK set on its fd
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError:
            return 0  # a broken connection: the writer thread meets the error and closes it

    def send(self, message) -> None:
        """The writer thread's path: the whole frame, waiting as long as the socket needs."""
        if not self.ws.connected:
            raise OSError("the WebSocket is closed")
        data = message.data if isinstance(message, _Rest) else frame(message)
        try:
            self.ws.sock.sendall(data)
        finally:
            outgoing = getattr(self.connection, "queue", None)
            if isinstance(outgoing, WireQueue):
                outgoing.written()


def install(eio_server) -> bool:
    """Use :class:`WireQueue` and :class:`WireSocket` for ``eio_server`` (threading mode only).

    Returns False, changing nothing, for another async mode or an engineio release not tested here.
    """
    if eio_server.async_mode != "threading" or not _engineio_version().startswith(TESTED_ENGINEIO):
        return False
    eio_server._async = {**eio_server._async, "queue": WireQueue, "websocket": WireSocket}
    return True


def _engineio_version() -> str:
    from importlib.metadata import version

    return version("python-engineio")


__all__ = ["JsonPacket", "WireQueue", "WireSocket", "frame", "install"]
