"""A crowd of light spectators for tests and benches: raw WebSocket clients in asyncio, a few hundred a process.

- :func:`nats_spectator`: a NATS subscriber over nats-server's WebSocket port (the protocol's ``CONNECT``,
  ``SUB``, ``PING``/``PONG`` and ``MSG``), recording when each board update (its ``seq``) arrived;
- :func:`socketio_spectator`: an engine.io WebSocket on ``/board`` marked as a spectator's (``?audience=1``),
  answering engine.io pings, recording updates the same way; a 503 is recorded as refused.

``python -m tests.support.crowd nats|socketio URL SUBJECT COUNT SECONDS OUT`` runs COUNT of them for SECONDS and writes
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
            raw = self._raw + data
            at = 0
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
                    self.send(payload, opcode=10)
                elif opcode in (0, 1, 2):
                    out.append(payload)
            self._raw = raw[at:]
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
        masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(data))
        self.writer.write(head + mask + masked)

    def close(self) -> None:
        self.writer.close()


class Record:
    def __init__(self) -> None:
        self.connected = self.refused = self.failed = 0
        self.arrivals: dict[int, list[int]] = {}
        self.sent_ns: dict[int, int] = {}
        self.errors: list[str] = []
        self.bodies: list[bytes] | None = None  # a list: every message's body is kept (tests)
        self.viewers: list[dict] = []            # online viewers' own state (seq, gaps, resyncs, moves)

    def arrived(self, body: bytes, at_ns: int) -> None:
        if self.bodies is not None:
            self.bodies.append(body)
        seq, now = SEQ.search(body, 0, 200), NOW.search(body, 0, 200)
        if seq is None:
            return
        number = int(seq.group(1))
        self.arrivals.setdefault(number, []).append(at_ns)
        if now is not None:
            self.sent_ns[number] = int(now.group(1))

    def as_dict(self) -> dict:
        return {"connected": self.connected, "refused": self.refused, "failed": self.failed,
                "arrivals": self.arrivals, "sent_ns": self.sent_ns, "errors": self.errors[:5],
                "viewers": self.viewers}


async def nats_spectator(url: str, subjects: list[str], record: Record, stop: asyncio.Event,
                         extra: list[bytes] = ()) -> None:
    """One NATS subscriber over WebSocket until ``stop``; ``extra`` protocol lines are sent after SUB (tests
    of permissions send a PUB there)."""
    try:
        ws = await WebSocket.open(url)
    except Refused:
        record.refused += 1
        return
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
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
            buffer += await ws.chunk()
            at_ns = time.monotonic_ns()
            while True:
                end = buffer.find(b"\r\n")
                if end < 0:
                    break
                if buffer.startswith(b"MSG "):
                    size = int(buffer[buffer.rfind(b" ", 0, end) + 1:end])
                    if len(buffer) < end + 2 + size + 2:
                        break
                    record.arrived(buffer[end + 2:end + 2 + size], at_ns)
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
            ws = await WebSocket.open(url, timeout=5)
        except (OSError, Refused, asyncio.TimeoutError, asyncio.IncompleteReadError):
            attempt += 1
            await asyncio.sleep(0.2)
            continue
        try:
            await ws.receive()  # INFO
            ws.send(b'CONNECT {"verbose":false,"pedantic":false,"protocol":1,"name":"viewer"}\r\nSUB '
                    + subject.encode() + b" 1\r\nPING\r\n")
            buffer = b""
            while not stop.is_set():
                buffer += await ws.chunk()
                at_ns = time.monotonic_ns()
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
