"""CaptureLink against a real capture service on mock pins, over a real Unix socket (docs/capture-protocol.md)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from appliance.errors import CaptureCommandError, CaptureLinkDown
from appliance.service.capture_link import CaptureLink
from gpio.pins import open_backend
from gpio.sdnotify import Notifier
from gpio.service import CaptureService, wait_for

HEARTBEAT_MS, TIMEOUT_MS = 50, 400


@pytest.fixture
def capture_settings(settings, tmp_path):
    return settings.replace(capture_socket=tmp_path / "c.sock", capture_heartbeat_ms=HEARTBEAT_MS,
                            capture_link_timeout_ms=TIMEOUT_MS)


def start_service(capture_settings) -> CaptureService:
    service = CaptureService(capture_settings, backend=open_backend("mock"), notifier=Notifier(environ={}))
    service.start()
    return service


@pytest.fixture
def service(capture_settings):
    service = start_service(capture_settings)
    yield service
    service.close()


class Recorder:
    """An on_event handler that records events; ``hook(event)`` may act on one (e.g. cut the link)."""

    def __init__(self):
        self.events: list[dict] = []
        self.lock = threading.Lock()
        self.hook = None

    def __call__(self, event: dict) -> None:
        with self.lock:
            self.events.append(event)
        if self.hook is not None:
            self.hook(event)

    def of(self, kind: str) -> list[dict]:
        with self.lock:
            return [event for event in self.events if event["event"] == kind]


@pytest.fixture
def link_factory(capture_settings):
    links = []

    def make(recorder, **options):
        link = CaptureLink(capture_settings.capture_socket, recorder, HEARTBEAT_MS, TIMEOUT_MS, **options)
        links.append(link)
        return link.start()

    yield make
    for link in links:
        link.close()


def cut(service) -> None:
    """Break the current connection from the service's side, as a crash of the socket would."""
    connection = service.server._current
    connection.sock.shutdown(socket.SHUT_RDWR)


def test_arm_press_and_events(service, link_factory):
    recorder = Recorder()
    link = link_factory(recorder)
    assert link.wait_connected(2) and link.welcome["precision"] == "mock"
    result = link.arm({1, 2, 4}, round_id="q1").result(2)
    assert result["armed_at_ns"] <= time.monotonic_ns()
    link.simulate_press(2).result(2)
    assert wait_for(lambda: recorder.of("lockout"))
    (press,) = recorder.of("press")
    assert press["player"] == 2 and press["status"] == "won" and press["round_id"] == "q1"
    assert press["t_ns"] >= result["armed_at_ns"] and press["instance"] == service.instance
    assert recorder.of("lockout")[0]["winner"] == 2
    assert [bool(led.is_lit) for led in service.hardware.leds] == [False, True, False, False]
    link.simulate_release(2).result(2)
    link.set_led(3, True).result(2)
    assert service.hardware.leds[2].is_lit
    assert link.status().result(2)["leds"] == [False, True, True, False]
    link.reset().result(2)
    assert not any(led.is_lit for led in service.hardware.leds)


def test_rejected_command_raises_with_the_protocol_code(service, link_factory):
    link = link_factory(Recorder())
    assert link.wait_connected(2)
    with pytest.raises(CaptureCommandError) as caught:
        link.set_led(7, True).result(2)
    assert caught.value.code == "bad-player"


def test_events_arrive_exactly_once_across_a_disconnect(service, link_factory):
    recorder = Recorder()
    link = link_factory(recorder)
    assert link.wait_connected(2)
    link.arm({1, 2, 3, 4}, round_id="q1").result(2)

    def cut_on_first_press(event):
        # The link drops while the first press is being handled: its ack cannot reach the service, which
        # resends it after the reconnect; the link must not deliver it twice.
        if event["event"] == "press" and recorder.hook is not None:
            recorder.hook = None
            cut(service)

    recorder.hook = cut_on_first_press
    t = time.monotonic_ns()
    service.hardware.buttons[0].pin.drive_low(t_ns=t)
    assert wait_for(lambda: link.reconnects >= 1, timeout=5)
    for player in (2, 3):  # presses during and after the outage
        service.hardware.buttons[player - 1].pin.drive_low(t_ns=t + player * 1_000_000)
    assert wait_for(lambda: len(recorder.of("press")) >= 3 and link.connected, timeout=5)
    assert wait_for(lambda: service.server.unacknowledged == 0, timeout=5)
    seqs = [event["seq"] for event in recorder.events]
    assert seqs == sorted(set(seqs)) and seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert [(e["player"], e["status"]) for e in recorder.of("press")] == [(1, "won"), (2, "counted"), (3, "counted")]
    assert len(recorder.of("lockout")) == 1


def test_commands_issued_before_the_service_is_up_are_applied_once_it_is(capture_settings, link_factory):
    recorder = Recorder()
    link = link_factory(recorder)
    armed = link.arm({1, 2}, round_id="early")
    with pytest.raises(CaptureLinkDown):
        link.beep().result(1)  # momentary: refused while down, never played late
    service = start_service(capture_settings)
    try:
        assert armed.result(5)["armed_at_ns"] > 0
        assert service.capture.arbiter.round_id == "early"
    finally:
        service.close()


def test_link_notices_the_service_going_away_and_comes_back_to_a_new_instance(capture_settings, link_factory):
    changes = []
    recorder = Recorder()
    service = start_service(capture_settings)
    link = link_factory(recorder, on_connection=changes.append)
    assert link.wait_connected(2)
    first_instance = service.instance
    service.close()
    assert wait_for(lambda: not link.connected, timeout=5)
    service = start_service(capture_settings)
    try:
        assert link.wait_connected(5)
        link.arm({1, 2}, "q9").result(2)
        link.simulate_press(1).result(2)
        assert wait_for(lambda: any(e["instance"] == service.instance for e in recorder.of("press")))
        assert service.instance != first_instance and link.position[0] == service.instance
        assert changes[:3] == [True, False, True]
        # The new instance numbers its events from 1 again; none was dropped as a "duplicate".
        new_seqs = [e["seq"] for e in recorder.events if e["instance"] == service.instance]
        assert new_seqs[0] == 1 and new_seqs == list(range(1, len(new_seqs) + 1))
    finally:
        service.close()


def test_resume_after_an_appliance_restart_skips_what_was_processed(service, link_factory):
    first = Recorder()
    link = link_factory(first)
    assert link.wait_connected(2)
    link.arm({1, 2, 3}, "q1").result(2)
    link.simulate_press(1).result(2)
    assert wait_for(lambda: first.of("lockout"))
    position = link.position
    link.close()  # the appliance stops; it persisted `position` with its event store
    service.hardware.buttons[1].pin.drive_low(t_ns=time.monotonic_ns())  # pressed while the appliance is down
    second = Recorder()
    link_factory(second, resume=position)
    assert wait_for(lambda: second.of("press"), timeout=5)
    assert [(e["player"], e["status"]) for e in second.of("press")] == [(2, "counted")]
    assert all(e["seq"] > position[1] for e in second.events)


def test_heartbeats_keep_an_idle_link_up(service, link_factory):
    link = link_factory(Recorder())
    assert link.wait_connected(2)
    time.sleep(3 * TIMEOUT_MS / 1000)  # idle for three timeouts: heartbeats must keep it alive
    assert link.connected and link.reconnects == 0 and service.server.linked


def test_closed_link_fails_new_commands(service, link_factory):
    link = link_factory(Recorder())
    assert link.wait_connected(2)
    link.close()
    with pytest.raises(CaptureLinkDown):
        link.reset().result(1)
