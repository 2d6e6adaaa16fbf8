"""The appliance's end of the capture link: a client of the ``svoyak-capture`` protocol (docs/capture-protocol.md).

:class:`CaptureLink` keeps one connection to the capture service's Unix socket, reconnects when it drops, sends
heartbeats, resends unanswered commands and delivers every event to ``on_event`` **exactly once, in order**,
across reconnects (sequence numbers, cumulative acks sent after the handler returns).

Use::

    link = CaptureLink(settings.capture_socket, on_event=handle, heartbeat_ms=settings.capture_heartbeat_ms,
                       timeout_ms=settings.capture_link_timeout_ms)
    link.start()
    link.arm({1, 2, 3}, round_id="q12-a1")       # returns a Future; .result(timeout) gives the reply's result
    ...
    link.close()

``on_event(event: dict)`` runs on the link's own thread; keep it short (hand off to the engine's queue).
Each event dict is the protocol's event with ``"event"`` (press, lockout, fault, reset_button, status), ``"seq"``
and ``"instance"``. A ``welcome`` from a new ``instance`` (see :attr:`welcome`, ``on_connection``) means the
capture process restarted in standalone mode: re-send the current ``arm``/``disarm``.
Commands never block: each returns a :class:`concurrent.futures.Future` that resolves to the reply's ``result``
dict or fails with :class:`CaptureCommandError` (the service refused it, nothing changed) or
:class:`CaptureLinkDown` (a momentary command while the link is down, or the link was closed).
The wire format is ``appliance/capture_wire.py``, shared with the capture process's end (``gpio/server.py``): the
capture process is reached over its socket, never by import; the round-trip tests keep both ends honest.
"""

from __future__ import annotations

import collections
import itertools
import json
import logging
import os
import selectors
import socket
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Iterable

from appliance.capture_wire import (MOMENTARY_OPS, PROTOCOL_VERSION, Ack, Command, Heartbeat, Hello, Lines, Reply,
                                    Waker, encode)
from appliance.errors import CaptureLinkDown

log = logging.getLogger(__name__)


class _Command:
    __slots__ = ("id", "message", "future", "op")

    def __init__(self, command_id: str, message: dict, future: Future):
        self.id, self.message, self.future, self.op = command_id, message, future, message["op"]


class CaptureLink:
    """A resilient client of the capture service. Thread-safe; one I/O thread of its own.

    ``resume=(instance, last_seq)`` continues after an appliance restart without double counting, when the
    appliance persisted :attr:`position` with what it derived from the events.
    ``on_connection(connected: bool)`` (optional) is called on the I/O thread when the link goes up or down.
    """

    def __init__(
        self,
        socket_path: str | Path,
        on_event: Callable[[dict], None],
        heartbeat_ms: int = 500,
        timeout_ms: int = 2000,
        *,
        resume: tuple[str, int] | None = None,
        on_connection: Callable[[bool], None] | None = None,
        reconnect_max_ms: int = 1000,
        client_name: str = "appliance",
    ):
        if heartbeat_ms <= 0 or timeout_ms <= heartbeat_ms:
            raise ValueError("timeout_ms must exceed heartbeat_ms, both positive")
        self.socket_path = str(socket_path)
        self._on_event = on_event
        self._on_connection = on_connection
        self._heartbeat_s = heartbeat_ms / 1000
        self._timeout_s = timeout_ms / 1000
        self._reconnect_max_s = reconnect_max_ms / 1000
        self._client_name = client_name
        self._instance, self._last_seq = resume if resume else (None, 0)
        self._lock = threading.RLock()
        self._pending: collections.OrderedDict[str, _Command] = collections.OrderedDict()
        self._ids = itertools.count(1)
        self._id_prefix = f"{os.getpid():x}-{int(time.time() * 1000) & 0xFFFFFFF:x}"
        self._sock: socket.socket | None = None
        self._connected = False
        self._closing = threading.Event()
        self._waker = Waker()
        self._thread: threading.Thread | None = None
        self._last_sent = 0.0
        self._acked_through: int | None = None
        self.welcome: dict | None = None  # the last ``welcome`` message: factory, precision, players...
        self.reconnects = 0

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> "CaptureLink":
        """Start the I/O thread; it connects (and keeps reconnecting) in the background. Returns self."""
        if self._thread is not None:
            raise RuntimeError("CaptureLink already started")
        self._thread = threading.Thread(target=self._run, name="capture-link", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 2.0) -> None:
        """Stop the I/O thread and close the socket; pending commands fail with :class:`CaptureLinkDown`."""
        self._closing.set()
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)  # (called from on_event itself, the thread ends when the handler returns)
        with self._lock:
            self._drop_socket()
            for command in self._pending.values():
                command.future.set_exception(CaptureLinkDown("the capture link was closed"))
            self._pending.clear()
        self._waker.close()

    def __enter__(self) -> "CaptureLink":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        """True while a welcomed connection to the capture service is up."""
        return self._connected

    @property
    def position(self) -> tuple[str | None, int]:
        """``(instance, last_seq)`` of the last event handled: persist it to resume after a restart."""
        with self._lock:
            return self._instance, self._last_seq

    def alive(self) -> bool:
        """Whether the link's thread runs (it connects, reconnects and delivers events): the watchdog asks."""
        return self._thread is not None and self._thread.is_alive()

    def wait_connected(self, timeout: float) -> bool:
        """Block until connected or ``timeout`` seconds pass; True if connected (for tools and tests)."""
        deadline = time.monotonic() + timeout
        while not self._connected:
            if time.monotonic() >= deadline or self._closing.is_set():
                return False
            time.sleep(0.005)
        return True

    # ----------------------------------------------------------------- commands
    def arm(self, eligible: Iterable[int], round_id: str) -> Future:
        """Start a round now: LEDs off; the earliest press among ``eligible`` players wins."""
        players = sorted({int(player) for player in eligible})
        return self._command("arm", eligible=players, round_id=str(round_id))

    def set_eligible(self, eligible: Iterable[int]) -> Future:
        """Change who may win the current round without restarting it (LEDs and ranked presses stay)."""
        return self._command("eligible", eligible=sorted({int(player) for player in eligible}))

    def disarm(self) -> Future:
        """Stop judging presses (they are reported as ``disarmed``); LEDs stay as they are."""
        return self._command("disarm")

    def reset(self) -> Future:
        """LEDs and buzzer off, disarmed."""
        return self._command("reset")

    def set_led(self, player: int, on: bool) -> Future:
        return self._command("led", player=int(player), on=bool(on))

    def beep(self, ms: int | None = None) -> Future:
        """Sound the buzzer for ``ms`` (default: the service's ``buzzer_ms``). Momentary: not resent."""
        return self._command("beep", **({} if ms is None else {"ms": int(ms)}))

    def button_test(self, on: bool) -> Future:
        """Button-test mode: each press lights its own LED while held; presses come as ``test``."""
        return self._command("button_test", on=bool(on))

    def simulate_press(self, player: int, hold_ms: int | None = None) -> Future:
        """Simulator only: press ``player``'s mock button inside the capture process (the whole real path).
        With ``hold_ms`` the service releases it by itself after that long."""
        return self._command("sim_press", player=int(player), **({} if hold_ms is None else {"hold_ms": int(hold_ms)}))

    def simulate_release(self, player: int) -> Future:
        return self._command("sim_release", player=int(player))

    def simulate_reset_button(self, pressed: bool) -> Future:
        """Simulator only: press (or release) the host's reset button inside the capture process; held for
        ``reset_hold_ms`` it asks for the host PIN (``reset_button_held``)."""
        return self._command("sim_press" if pressed else "sim_release", button="reset")

    def status(self) -> Future:
        """The service's status snapshot (resolves to the same dict a ``status`` event carries)."""
        return self._command("status")

    def _command(self, op: str, **fields: Any) -> Future:
        future: Future = Future()
        command_id = f"{self._id_prefix}-{next(self._ids)}"
        command = _Command(command_id, Command(command_id, op, fields).to_wire(), future)
        with self._lock:
            if self._closing.is_set():
                future.set_exception(CaptureLinkDown("the capture link was closed"))
                return future
            if op in MOMENTARY_OPS and not self._connected:
                future.set_exception(CaptureLinkDown(f"{op}: the capture service is not connected"))
                return future
            self._pending[command_id] = command
            if self._connected:
                self._send_locked(command.message)
        return future

    # ----------------------------------------------------------------- I/O thread
    def _wake(self) -> None:
        self._waker.wake()

    def _run(self) -> None:
        backoff = 0.0
        while not self._closing.is_set():
            try:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(self.socket_path)
            except OSError:
                sock.close()
                backoff = min(self._reconnect_max_s, backoff * 2 or 0.05)
                self._closing.wait(backoff)
                continue
            backoff = 0.0
            try:
                self._serve(sock)
            except (OSError, ValueError) as error:
                log.info("capture link lost: %s", error)
            finally:
                self._link_down()

    def _link_down(self) -> None:
        was_connected = self._connected
        with self._lock:
            self._connected = False
            self._drop_socket()
            for command_id in [cid for cid, c in self._pending.items() if c.op in MOMENTARY_OPS]:
                self._pending.pop(command_id).future.set_exception(
                    CaptureLinkDown("the capture link dropped before the reply"))
        if was_connected:
            self.reconnects += 1
            self._notify_connection(False)

    def _drop_socket(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None

    def _notify_connection(self, up: bool) -> None:
        if self._on_connection is not None:
            try:
                self._on_connection(up)
            except Exception:  # the I/O thread is a process edge: log, keep serving
                log.exception("on_connection handler failed")

    def _send_locked(self, message) -> None:  # a record of appliance.capture_wire, or a command's dict
        if self._sock is None:
            return
        data = encode(message)
        try:
            self._sock.sendall(data)
            self._last_sent = time.monotonic()
        except OSError as error:
            log.info("capture link send failed: %s", error)
            self._drop_socket()
            self._wake()

    def _serve(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock
            self._send_locked(Hello(self._client_name, self._instance, self._last_seq))
        selector = selectors.DefaultSelector()
        selector.register(sock, selectors.EVENT_READ, "sock")
        selector.register(self._waker.reader, selectors.EVENT_READ, "wake")
        lines = Lines()
        last_received = time.monotonic()
        try:
            while not self._closing.is_set():
                with self._lock:
                    if self._sock is None:
                        raise OSError("socket closed after a failed send")
                now = time.monotonic()
                if now - last_received > self._timeout_s:
                    raise OSError(f"no message from the capture service for {self._timeout_s:g} s")
                if self._connected and now - self._last_sent >= self._heartbeat_s:
                    with self._lock:
                        self._send_locked(Heartbeat(time.monotonic_ns()))
                for key, _ in selector.select(self._heartbeat_s / 2):
                    if key.data == "wake":
                        self._waker.drain()
                        continue
                    chunk = sock.recv(65536)
                    if not chunk:
                        raise OSError("the capture service closed the connection")
                    last_received = time.monotonic()
                    self._acked_through = None
                    for line in lines.feed(chunk):
                        if line.strip():
                            self._handle(json.loads(line))
                    if self._acked_through is not None:
                        # One cumulative ack for every event handled from this read (capture-protocol.md).
                        with self._lock:
                            self._send_locked(Ack(self._acked_through))
                    if lines.overflowing:
                        raise ValueError("line too long from the capture service")
        finally:
            selector.close()

    def _handle(self, message: dict) -> None:
        kind = message.get("type")
        if kind == "welcome":
            self._on_welcome(message)
        elif kind == "event":
            self._on_event_message(message)
        elif kind == "reply":
            with self._lock:
                command = self._pending.pop(str(message.get("id")), None)
            if command is not None and not command.future.done():
                reply = Reply.from_wire(message)
                if reply.ok:
                    command.future.set_result(reply.result)
                else:
                    command.future.set_exception(reply.failure(command.op))
        elif kind == "error":
            raise ValueError(f"capture service error: {message.get('code')}: {message.get('message')}")
        # heartbeats only refresh last_received; unknown types are ignored (forward compatibility)

    def _on_welcome(self, message: dict) -> None:
        if message.get("protocol") != PROTOCOL_VERSION:
            raise ValueError(f"capture service speaks protocol {message.get('protocol')}, not {PROTOCOL_VERSION}")
        with self._lock:
            if message.get("instance") != self._instance:
                # A new run of the capture service: its sequence numbers start again at 1.
                self._instance, self._last_seq = message.get("instance"), 0
            self.welcome = message
            # Resend what got no reply, in order; the service answers a known id without applying it twice.
            for command in self._pending.values():
                self._send_locked(command.message)
            self._connected = True
            self._last_sent = time.monotonic()
        self._notify_connection(True)

    def _on_event_message(self, message: dict) -> None:
        seq = message.get("seq")
        if not isinstance(seq, int):
            raise ValueError(f"event without a sequence number: {message!r}")
        with self._lock:
            duplicate = seq <= self._last_seq
            if seq > self._last_seq + 1 and self._last_seq:
                log.warning("capture events %d-%d missing (dropped by the service)", self._last_seq + 1, seq - 1)
        if not duplicate:
            event = {key: value for key, value in message.items() if key != "type"}
            event["instance"] = self._instance
            try:
                self._on_event(event)
            except Exception:  # the I/O thread is a process edge: log, keep serving
                log.exception("capture event handler failed on %r", event)
            with self._lock:
                self._last_seq = seq
        self._acked_through = self._last_seq
