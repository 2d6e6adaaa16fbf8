"""The capture socket's wire format, written once for both ends (docs/capture-protocol.md, version 1).

The capture process (``gpio/server.py``) and the appliance's link to it (``appliance/service/capture_link.py``)
speak JSON Lines over a Unix stream socket. What both ends share lives here and nowhere else: the protocol
version and the limits, the link's own messages as records (:class:`Hello`, :class:`Welcome`, :class:`Ack`,
:class:`Heartbeat`, :class:`Command`, :class:`Reply`, :class:`Error`), one line's encoding and decoding, the
cutting of a byte stream into lines (:class:`Lines`) and the wake of a selector loop (:class:`Waker`). The two
processes import this module and never each other (tests/test_layout.py): it imports only the error tree.

>>> encode(Ack(seq=42))
b'{"type":"ack","seq":42}\\n'
>>> decode(encode(Command(id="c1", op="arm", fields={"eligible": [1, 3], "round_id": "q1"})))
{'type': 'cmd', 'id': 'c1', 'op': 'arm', 'eligible': [1, 3], 'round_id': 'q1'}
>>> lines = Lines()
>>> lines.feed(b'{"type":"heartbeat"}\\n{"type":')
[b'{"type":"heartbeat"}']
>>> lines.feed(b'"ack","seq":1}\\n')
[b'{"type":"ack","seq":1}']
"""

from __future__ import annotations

import dataclasses
import json
import socket
from typing import Any

from appliance.errors import CaptureCommandError

PROTOCOL_VERSION = 1
MAX_LINE_BYTES = 64 * 1024  # a line longer than this is refused whole: "too-long", and the connection closes
MAX_ID_CHARS = 64           # a command's id and an arm's round id
MAX_BEEP_MS = 5000
MAX_HOLD_MS = 10_000
# Momentary commands make no sense late: they are not resent after a reconnect (capture-protocol.md).
MOMENTARY_OPS = frozenset({"beep", "sim_press", "sim_release"})


@dataclasses.dataclass(frozen=True)
class Hello:
    """client -> server: the first message; ``instance``/``last_seq`` resume the events after a restart."""

    client: str
    instance: str | None
    last_seq: int
    protocol: int = PROTOCOL_VERSION

    def to_wire(self) -> dict:
        return {"type": "hello", "protocol": self.protocol, "client": self.client, "instance": self.instance,
                "last_seq": self.last_seq}


@dataclasses.dataclass(frozen=True)
class Welcome:
    """server -> client: the answer to ``hello``; ``info`` adds the factory, precision and players."""

    instance: str
    next_seq: int
    resent: int
    heartbeat_ms: int
    timeout_ms: int
    dropped: int
    info: dict = dataclasses.field(default_factory=dict)
    protocol: int = PROTOCOL_VERSION

    def to_wire(self) -> dict:
        return {"type": "welcome", "protocol": self.protocol, "instance": self.instance, "next_seq": self.next_seq,
                "resent": self.resent, "heartbeat_ms": self.heartbeat_ms, "timeout_ms": self.timeout_ms,
                "dropped": self.dropped, **self.info}


@dataclasses.dataclass(frozen=True)
class Ack:
    """client -> server: every event up to ``seq`` is handled (one cumulative ack per read)."""

    seq: int

    def to_wire(self) -> dict:
        return {"type": "ack", "seq": self.seq}


@dataclasses.dataclass(frozen=True)
class Heartbeat:
    """either way: the link is alive (sent when nothing else was for ``capture_heartbeat_ms``)."""

    t_ns: int

    def to_wire(self) -> dict:
        return {"type": "heartbeat", "t_ns": self.t_ns}


@dataclasses.dataclass(frozen=True)
class Command:
    """client -> server: ``op`` with its ``fields``; idempotent by ``id`` (a resend gets the same reply)."""

    id: str
    op: str
    fields: dict = dataclasses.field(default_factory=dict)

    def to_wire(self) -> dict:
        return {"type": "cmd", "id": self.id, "op": self.op, **self.fields}


@dataclasses.dataclass(frozen=True)
class Reply:
    """server -> client: a command's ``result``, or the ``error`` (``code``, ``message``) that refused it."""

    id: Any
    ok: bool
    result: dict | None = None
    error: dict | None = None

    def to_wire(self) -> dict:
        if self.ok:
            return {"type": "reply", "id": self.id, "ok": True, "result": self.result}
        return {"type": "reply", "id": self.id, "ok": False, "error": self.error}

    @classmethod
    def refusing(cls, command_id: Any, error: CaptureCommandError) -> "Reply":
        return cls(command_id, False, error={"code": error.code, "message": error.message})

    def failure(self, op: str) -> CaptureCommandError:
        """The refusal as the error the client's future fails with."""
        error = self.error or {}
        return CaptureCommandError(str(error.get("code", "error")), str(error.get("message", "")), op=op)

    @classmethod
    def from_wire(cls, message: dict) -> "Reply":
        return cls(message.get("id"), bool(message.get("ok")), message.get("result") or {}, message.get("error"))


@dataclasses.dataclass(frozen=True)
class Error:
    """server -> client: a line or a session refused (``too-long``, ``protocol``, ``busy``, ``bad-request``)."""

    code: str
    message: str

    def to_wire(self) -> dict:
        return {"type": "error", "code": self.code, "message": self.message}


def encode(message) -> bytes:
    """One message (a record above, or an event's dict) as one line of compact JSON."""
    data = message.to_wire() if hasattr(message, "to_wire") else message
    return (json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def decode(line: bytes) -> dict:
    """One received line as a message; ``CaptureCommandError('bad-request')`` if it is not a JSON object with a
    string ``type``."""
    try:
        message = json.loads(line)
    except ValueError:
        raise CaptureCommandError("bad-request", "not a JSON line") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise CaptureCommandError("bad-request", "a message is a JSON object with a string 'type'")
    return message


class Lines:
    """A byte stream cut into lines at ``\\n``: :meth:`feed` returns the whole lines, the unfinished rest waits
    (:attr:`overflowing` once it is longer than :data:`MAX_LINE_BYTES`)."""

    def __init__(self) -> None:
        self.rest = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        *lines, self.rest = (self.rest + chunk).split(b"\n")
        return lines

    @property
    def overflowing(self) -> bool:
        return len(self.rest) > MAX_LINE_BYTES


class Waker:
    """A socket pair that wakes a selector loop from another thread: register :attr:`reader`, call
    :meth:`wake` from anywhere, :meth:`drain` when the loop sees it readable."""

    def __init__(self) -> None:
        self.reader, self._writer = socket.socketpair()
        self.reader.setblocking(False)
        self._writer.setblocking(False)

    def wake(self) -> None:
        try:
            self._writer.send(b"x")
        except OSError:  # full (a wake is pending anyway) or closed (the loop is gone)
            pass

    def drain(self) -> None:
        try:
            self.reader.recv(4096)
        except BlockingIOError:
            pass

    def close(self) -> None:
        self.reader.close()
        self._writer.close()
