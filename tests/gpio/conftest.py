"""Fixtures for the capture service: a real service on gpiozero's mock pins and a raw protocol client."""

from __future__ import annotations

import json
import socket

import pytest

from gpio.pins import open_backend
from gpio.sdnotify import Notifier
from gpio.service import CaptureService

MS = 1_000_000
US = 1_000


@pytest.fixture
def capture_settings(settings, tmp_path):
    """Simulator settings with a short socket path and a fast heartbeat (the link tests wait on timeouts)."""
    return settings.replace(capture_socket=tmp_path / "c.sock", capture_heartbeat_ms=50,
                            capture_link_timeout_ms=400)


@pytest.fixture
def service(capture_settings):
    """A started capture service on mock pins; every LED and the buzzer are off again after the test."""
    svc = CaptureService(capture_settings, backend=open_backend("mock"), notifier=Notifier(environ={}))
    events = []
    svc.observers.append(events.append)
    svc.events = events
    svc.start()
    yield svc
    svc.close()


class RawClient:
    """A bare protocol client over a real Unix socket: send dicts, receive parsed lines."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(str(path))
        self.sock.settimeout(2)
        self.buffer = b""

    def send(self, message: dict) -> None:
        self.sock.sendall((json.dumps(message) + "\n").encode())

    def recv(self) -> dict:
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the service")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def recv_until(self, predicate, limit: int = 200) -> dict:
        """Receive until a message matches ``predicate`` (heartbeats and other messages are skipped)."""
        for _ in range(limit):
            message = self.recv()
            if predicate(message):
                return message
        raise AssertionError("no matching message")

    def hello(self, instance=None, last_seq=0) -> dict:
        self.send({"type": "hello", "protocol": 1, "client": "test", "instance": instance, "last_seq": last_seq})
        return self.recv_until(lambda m: m["type"] in ("welcome", "error"))

    def command(self, command_id: str, op: str, **fields) -> dict:
        self.send({"type": "cmd", "id": command_id, "op": op, **fields})
        return self.recv_until(lambda m: m["type"] == "reply" and m["id"] == command_id)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def raw_client(service):
    clients = []

    def connect():
        client = RawClient(service.settings.capture_socket)
        clients.append(client)
        return client

    yield connect
    for client in clients:
        client.close()


class Box:
    """Hands on the mock box: press and release buttons at explicit timestamps, read LEDs and buzzer."""

    def __init__(self, service):
        self.service = service

    def press(self, player: int, t_ns: int) -> None:
        self.service.hardware.buttons[player - 1].pin.drive_low(t_ns=t_ns)

    def release(self, player: int, t_ns: int) -> None:
        self.service.hardware.buttons[player - 1].pin.drive_high(t_ns=t_ns)

    def reset_button(self, t_ns: int) -> None:
        pin = self.service.hardware.reset.pin
        pin.drive_low(t_ns=t_ns)
        pin.drive_high(t_ns=t_ns + 100 * MS)

    def lit(self) -> list[bool]:
        return [bool(led.is_lit) for led in self.service.hardware.leds]

    @property
    def buzzing(self) -> bool:
        return bool(self.service.hardware.buzzer.is_active)

    def events(self, kind: str) -> list[dict]:
        return [event for event in self.service.events if event["event"] == kind]


@pytest.fixture
def box(service):
    return Box(service)
