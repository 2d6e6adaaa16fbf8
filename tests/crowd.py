"""A crowd of light spectators for tests and benches: raw WebSocket clients in asyncio, a few hundred a process.

- :func:`nats_spectator`: a NATS subscriber over nats-server's WebSocket port (the protocol's ``CONNECT``,
  ``SUB``, ``PING``/``PONG`` and ``MSG``), recording when each board update (its ``seq``) arrived: the kernel's
  receive time of its bytes (``SO_TIMESTAMPNS``, :class:`StampedWebSocket`), so a crowd process that a busy
  machine runs late does not make the box look late; when the process itself read it goes to ``reads``;
- :func:`online_viewer`: a viewer beyond the hall, stamped the same way, moving to the next node when its own
  is gone;
- :func:`socketio_spectator`: an engine.io WebSocket on ``/board`` marked as a spectator's (``?audience=1``),
  answering engine.io pings, recording updates the same way; a 503 is recorded as refused.

``python -m tests.crowd nats|socketio URL SUBJECT COUNT SECONDS OUT`` runs COUNT of them for SECONDS and writes
``{"connected", "refused", "failed", "arrivals": {seq: [monotonic ns, ...]}, "sent_ns": {seq: ns}}`` to OUT:
``sent_ns`` is the update's ``server_now_ns`` (the box's CLOCK_MONOTONIC on this machine, the timeline's offset 0
on a fresh box). Shared by ``tests/web/test_spectators.py``, ``tests/rooms/test_online_viewers.py`` and
``bench/bench_spectators.py``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import socket
import struct
import sys
import time
from urllib.parse import urlsplit

SEQ = re.compile(rb'"seq":(\d+)')
NOW = re.compile(rb'"server_now_ns":(\d+)')


class Refused(Exception):
    """The server answered the WebSocket handshake with something else than 101 (a spectator over the cap)."""


class WebSocket:
    """A client WebSocket over asyncio streams: masked frames out, unmasked frames in, no extensions."""

    def __init__(self, reader, writer) -> None:
        self.reader, self.writer = reader, writer
        self._raw = b""

    async def chunk(self) -> bytes:
        """The payload bytes of every whole data frame that has arrived (at least one), answering pings: fewer
        awaits than a frame at a time, so a process keeps up with hundreds of sockets."""
        out = []
        while not out:
            data = await self.reader.read(262144)
            if not data:
                raise ConnectionError("closed by the server")
            out, pings, self._raw = unframe(self._raw + data)
            for ping in pings:
                self.send(ping, opcode=10)
        return b"".join(out)

    @classmethod
    async def open(cls, url: str, timeout: float = 10.0) -> "WebSocket":
        parts = urlsplit(url)
        reader, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, parts.port or 80), timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        writer.write((f"GET {target} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status + b" ":
            writer.close()
            raise Refused(status.decode(errors="replace"))
        return cls(reader, writer)

    async def receive(self) -> bytes:
        message = b""
        while True:
            first, second = await self.reader.readexactly(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack("!H", await self.reader.readexactly(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", await self.reader.readexactly(8))[0]
            data = await self.reader.readexactly(length)
            opcode = first & 0x0F
            if opcode == 8:
                raise ConnectionError("closed by the server")
            if opcode == 9:  # ping
                self.send(data, opcode=10)
                continue
            message += data
            if first & 0x80:
                return message

    def send(self, data: bytes | str, opcode: int | None = None) -> None:
        self.writer.write(frame(data, opcode))

    def close(self) -> None:
        self.writer.close()


def frame(data: bytes | str, opcode: int | None = None) -> bytes:
    """One masked client frame (text for a str, else binary unless ``opcode``)."""
    if isinstance(data, str):
        data, opcode = data.encode(), opcode or 1
    opcode = opcode or 2
    mask = os.urandom(4)
    length = len(data)
    head = bytes([0x80 | opcode])
    if length < 126:
        head += bytes([0x80 | length])
    elif length < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", length)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", length)
    return head + mask + bytes(byte ^ mask[index % 4] for index, byte in enumerate(data))


def unframe(raw: bytes) -> tuple[list[bytes], list[bytes], bytes]:
    """The whole server frames at the start of ``raw``: (data payloads, ping payloads, the bytes left over);
    a close frame raises ConnectionError."""
    out, pings, at = [], [], 0
    while len(raw) - at >= 2:
        first, second = raw[at], raw[at + 1]
        length, head = second & 0x7F, 2
        if length == 126:
            if len(raw) - at < 4:
                break
            length, head = struct.unpack_from("!H", raw, at + 2)[0], 4
        elif length == 127:
            if len(raw) - at < 10:
                break
            length, head = struct.unpack_from("!Q", raw, at + 2)[0], 10
        if len(raw) - at < head + length:
            break
        payload = raw[at + head:at + head + length]
        at += head + length
        opcode = first & 0x0F
        if opcode == 8:
            raise ConnectionError("closed by the server")
        if opcode == 9:
            pings.append(payload)
        elif opcode in (0, 1, 2):
            out.append(payload)
    return out, pings, raw[at:]


# A read's stamp is its newest segment's: reading a little at a time keeps an older message from taking the stamp
# of a newer one when this process reads late (a board update is 1-3 kB)
STAMPED_READ = 2048
RECEIVE_BUFFER = 1 << 20  # bytes (the kernel doubles it): several hundred board updates
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's number (asm-generic/socket.h); Python names none
_CMSG = socket.CMSG_SPACE(struct.calcsize("qq"))
_REALTIME_TO_MONOTONIC = time.time_ns() - time.monotonic_ns()  # once a process: the stamps are CLOCK_REALTIME


class StampedWebSocket:
    """A client WebSocket on a raw non-blocking socket with ``SO_TIMESTAMPNS``, read by ``recvmsg``: each chunk
    comes with the kernel's receive time of its bytes (of the latest segment in it, so never early; reads of
    :data:`STAMPED_READ` bytes keep that within a message or two), as
    CLOCK_MONOTONIC ns. On loopback that is when nats-server's write reached this spectator: the box's fan-out
    time, whatever this process's own scheduling on a crowded machine (its receive buffer holds a whole run, so
    the TCP window stays open however late it reads, as a phone's own CPU would keep it)."""

    def __init__(self, sock: socket.socket, left: bytes) -> None:
        self.sock, self._raw = sock, left
        self._raw_stamp = time.monotonic_ns()
        self._loop = asyncio.get_running_loop()

    @classmethod
    async def open(cls, url: str, timeout: float = 10.0) -> "StampedWebSocket":
        parts = urlsplit(url)
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            # room for a whole run of updates before this process reads them: a crowded process reading late
            # would otherwise close the TCP window, hold the server's writes back and make the stamps its own
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
            await asyncio.wait_for(loop.sock_connect(sock, (parts.hostname, parts.port or 80)), timeout)
            key = base64.b64encode(os.urandom(16)).decode()
            await loop.sock_sendall(sock, (
                f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
            head = b""
            while b"\r\n\r\n" not in head:
                data = await asyncio.wait_for(loop.sock_recv(sock, 65536), timeout)
                if not data:
                    raise ConnectionError("closed during the handshake")
                head += data
            head, left = head.split(b"\r\n\r\n", 1)
            if b" 101 " not in head.split(b"\r\n", 1)[0] + b" ":
                raise Refused(head.split(b"\r\n", 1)[0].decode(errors="replace"))
        except BaseException:
            sock.close()
            raise
        return cls(sock, left)

    async def _read(self) -> tuple[bytes, int]:
        while True:
            try:
                data, ancillary, _, _ = self.sock.recvmsg(STAMPED_READ, _CMSG)
            except BlockingIOError:
                ready = self._loop.create_future()
                self._loop.add_reader(self.sock.fileno(), lambda: ready.done() or ready.set_result(None))
                try:
                    await ready
                finally:
                    self._loop.remove_reader(self.sock.fileno())
                continue
            if not data:
                raise ConnectionError("closed by the server")
            stamp = time.monotonic_ns()
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    seconds, nanoseconds = struct.unpack("qq", value[:16])
                    stamp = seconds * 1_000_000_000 + nanoseconds - _REALTIME_TO_MONOTONIC
            return data, stamp

    async def chunk(self) -> tuple[bytes, int]:
        """The payload bytes of every whole data frame that has arrived (at least one) and the kernel's receive
        time of the last of them; pings are answered."""
        out, stamp = [], self._raw_stamp
        if self._raw:
            out, pings, self._raw = unframe(self._raw)
            for ping in pings:
                self.send(ping, opcode=10)
        while not out:
            data, stamp = await self._read()
            self._raw_stamp = stamp  # frames left over for the next call arrived with this read
            out, pings, self._raw = unframe(self._raw + data)
            for ping in pings:
                self.send(ping, opcode=10)
        return b"".join(out), stamp

    async def receive(self) -> bytes:
        return (await self.chunk())[0]

    def send(self, data: bytes | str, opcode: int | None = None) -> None:
        self.sock.sendall(frame(data, opcode))  # a few bytes on loopback: the kernel takes them whole

    def close(self) -> None:
        self.sock.close()


class Record:
    def __init__(self) -> None:
        self.connected = self.refused = self.failed = 0
        self.arrivals: dict[int, list[int]] = {}
        self.reads: dict[int, list[int]] = {}    # nats spectators: when this process read it (arrivals: the kernel)
        self.sent_ns: dict[int, int] = {}
        self.errors: list[str] = []
        self.bodies: list[bytes] | None = None  # a list: every message's body is kept (tests)
        self.viewers: list[dict] = []            # online viewers' own state (seq, gaps, resyncs, moves)

    def arrived(self, body: bytes, at_ns: int, read_ns: int = 0) -> None:
        if self.bodies is not None:
            self.bodies.append(body)
        seq, now = SEQ.search(body, 0, 200), NOW.search(body, 0, 200)
        if seq is None:
            return
        number = int(seq.group(1))
        self.arrivals.setdefault(number, []).append(at_ns)
        if read_ns:
            self.reads.setdefault(number, []).append(read_ns)
        if now is not None:
            self.sent_ns[number] = int(now.group(1))

    def as_dict(self) -> dict:
        return {"connected": self.connected, "refused": self.refused, "failed": self.failed,
                "arrivals": self.arrivals, "reads": self.reads, "sent_ns": self.sent_ns, "errors": self.errors[:5],
                "viewers": self.viewers}


async def nats_spectator(url: str, subjects: list[str], record: Record, stop: asyncio.Event,
                         extra: list[bytes] = ()) -> None:
    """One NATS subscriber over WebSocket until ``stop``; ``extra`` protocol lines are sent after SUB (tests
    of permissions send a PUB there)."""
    try:
        ws = await StampedWebSocket.open(url)
    except Refused:
        record.refused += 1
        return
    except (OSError, asyncio.TimeoutError, ConnectionError) as error:
        record.failed += 1
        record.errors.append(repr(error))
        return
    buffer = b""
    try:
        buffer += await ws.receive()  # INFO
        lines = [b'CONNECT {"verbose":false,"pedantic":false,"protocol":1,"echo":false,"name":"crowd"}']
        lines += [b"SUB %s %d" % (subject.encode(), number) for number, subject in enumerate(subjects, 1)]
        ws.send(b"\r\n".join(lines + list(extra) + [b"PING"]) + b"\r\n")
        counted = False
        while not stop.is_set():
            data, at_ns = await ws.chunk()
            buffer += data
            read_ns = time.monotonic_ns()
            while True:
                end = buffer.find(b"\r\n")
                if end < 0:
                    break
                if buffer.startswith(b"MSG "):
                    size = int(buffer[buffer.rfind(b" ", 0, end) + 1:end])
                    if len(buffer) < end + 2 + size + 2:
                        break
                    record.arrived(buffer[end + 2:end + 2 + size], at_ns, read_ns)
                    buffer = buffer[end + 2 + size + 2:]
                    continue
                line, buffer = buffer[:end], buffer[end + 2:]
                if line == b"PING":
                    ws.send(b"PONG\r\n")
                elif line == b"PONG" and not counted:
                    counted = True
                    record.connected += 1
                elif line.startswith(b"-ERR"):
                    record.errors.append(line.decode(errors="replace"))
    except asyncio.CancelledError:
        pass
    except (OSError, asyncio.IncompleteReadError, ConnectionError) as error:
        record.failed += 1
        record.errors.append(repr(error))
    finally:
        ws.close()


async def socketio_spectator(url: str, record: Record, stop: asyncio.Event) -> None:
    """One engine.io WebSocket on ``/board`` as a spectator (``?audience=1``) until ``stop``."""
    target = url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket&audience=1"
    try:
        ws = await WebSocket.open(target)
    except Refused:
        record.refused += 1
        return
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
        record.failed += 1
        record.errors.append(repr(error))
        return
    try:
        await ws.receive()          # engine.io open
        ws.send("40/board,{}")      # socket.io connect to /board
        while not stop.is_set():
            data = await ws.receive()
            at_ns = time.monotonic_ns()
            if data == b"2":
                ws.send("3")
            elif data.startswith(b"40/board"):
                record.connected += 1
            elif data.startswith(b'42/board,["update"'):
                record.arrived(data[len(b'42/board,["update",'):], at_ns)
    except asyncio.CancelledError:
        pass
    except (OSError, asyncio.IncompleteReadError, ConnectionError) as error:
        record.failed += 1
        record.errors.append(repr(error))
    finally:
        ws.close()


async def online_viewer(urls: list[str], subject: str, record: Record, stop: asyncio.Event, first: int) -> None:
    """A viewer beyond the hall: subscribes to the board's updates and snapshots (``subject`` ends in ``*``) on
    node ``first``; when that node is gone, on the next. Updates apply in order only; after a gap (or a move) it
    waits for the next snapshot, as the viewer page does."""
    state = {"seq": -1, "gaps": 0, "resyncs": 0, "moves": 0, "first": first}
    record.viewers.append(state)
    attempt, counted, whole_once = 0, False, False
    while not stop.is_set():
        url = urls[(first + attempt) % len(urls)]
        try:
            ws = await StampedWebSocket.open(url, timeout=5)
        except (OSError, Refused, asyncio.TimeoutError, ConnectionError):
            attempt += 1
            await asyncio.sleep(0.2)
            continue
        try:
            await ws.receive()  # INFO
            ws.send(b'CONNECT {"verbose":false,"pedantic":false,"protocol":1,"name":"viewer"}\r\nSUB '
                    + subject.encode() + b" 1\r\nPING\r\n")
            buffer = b""
            while not stop.is_set():
                data, at_ns = await ws.chunk()  # the kernel's receive time (StampedWebSocket)
                buffer += data
                while True:
                    end = buffer.find(b"\r\n")
                    if end < 0:
                        break
                    if buffer.startswith(b"MSG "):
                        size = int(buffer[buffer.rfind(b" ", 0, end) + 1:end])
                        if len(buffer) < end + 2 + size + 2:
                            break
                        kind = buffer[4:buffer.find(b" ", 4)].rsplit(b".", 1)[1]
                        body = buffer[end + 2:end + 2 + size]
                        buffer = buffer[end + 2 + size + 2:]
                        seq = int(SEQ.search(body, 0, 200).group(1))
                        if kind == b"snapshot":
                            if state["seq"] < 0 or seq > state["seq"]:
                                if state["seq"] < 0 and whole_once:
                                    state["resyncs"] += 1
                                state["seq"], whole_once = max(seq, state["seq"]), True
                        elif state["seq"] >= 0:
                            if seq == state["seq"] + 1:
                                state["seq"] = seq
                                record.arrived(body, at_ns)
                            elif seq > state["seq"] + 1:
                                state["gaps"] += 1
                                state["seq"] = -1
                        continue
                    line, buffer = buffer[:end], buffer[end + 2:]
                    if line == b"PING":
                        ws.send(b"PONG\r\n")
                    elif line == b"PONG" and not counted:
                        counted = True
                        record.connected += 1
                    elif line.startswith(b"-ERR"):
                        record.errors.append(line.decode(errors="replace"))
        except asyncio.CancelledError:
            ws.close()
            return
        except (OSError, asyncio.IncompleteReadError, ConnectionError):
            state["moves"] += 1
            attempt += 1
        ws.close()


async def polling_spectator(url: str, record: Record, stop: asyncio.Event, every_s: float = 4.0) -> None:
    """The last path: ``GET /board/snapshot.json`` every ``every_s`` (jittered, as spectate.js does)."""
    import random

    parts = urlsplit(url)
    counted = False
    backoff = 0.0
    await asyncio.sleep(random.random() * 3.0)  # as spectate.js: the first poll within 3 s
    while not stop.is_set():
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, parts.port), 10)
            writer.write(f"GET /board/snapshot.json HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n"
                         .encode())
            body = await asyncio.wait_for(reader.read(), 10)
            writer.close()
            status = body.split(b"\r\n", 1)[0]
            if b" 503 " in status:  # too many at once: wait longer, as spectate.js does
                record.refused += 1
                backoff = min(60.0, max(1.0, backoff * 2))
                await asyncio.sleep(backoff * (0.75 + random.random() / 2))
                continue
            backoff = 0.0
            if b" 200 " not in status:
                raise ConnectionError(body[:40])
            if not counted:
                counted = True
                record.connected += 1
            record.arrived(body[body.find(b'"snapshot":') + 11:], time.monotonic_ns())
        except (OSError, asyncio.TimeoutError, ConnectionError) as error:
            record.errors.append(repr(error))
        try:
            await asyncio.wait_for(stop.wait(), every_s * (0.75 + random.random() / 2))
        except asyncio.TimeoutError:
            pass


async def crowd(kind: str, url: str, subject: str, count: int, seconds: float, ready_file: str = "") -> Record:
    record = Record()
    stop = asyncio.Event()
    tasks = []
    for _ in range(count):
        if kind == "nats":
            tasks.append(asyncio.ensure_future(nats_spectator(url, [subject], record, stop)))
        elif kind == "online":
            urls = url.split(",")
            tasks.append(asyncio.ensure_future(online_viewer(urls, subject, record, stop, len(tasks) % len(urls))))
        elif kind == "poll":
            tasks.append(asyncio.ensure_future(polling_spectator(url, record, stop)))
        else:
            tasks.append(asyncio.ensure_future(socketio_spectator(url, record, stop)))
        await asyncio.sleep(0.002)  # a hall's phones do not all connect in one millisecond
    deadline = time.monotonic() + min(seconds, 60)
    while record.connected + record.refused + record.failed < count and time.monotonic() < deadline and not (
            kind == "poll" and record.connected + len(record.errors) >= count):
        await asyncio.sleep(0.05)
    if ready_file:
        with open(ready_file, "w") as file:
            json.dump({"connected": record.connected, "refused": record.refused, "failed": record.failed}, file)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (ready_file and os.path.exists(ready_file[:-len(".ready")] + ".stop")):
        await asyncio.sleep(0.05)
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks, timeout=10)
    return record


def main(argv: list[str]) -> int:
    kind, url, subject, count, seconds, out = argv[:6]
    record = asyncio.run(crowd(kind, url, subject, int(count), float(seconds), ready_file=out + ".ready"))
    with open(out, "w") as file:
        json.dump(record.as_dict(), file)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
