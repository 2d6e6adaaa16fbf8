"""gpio/cdev.py: every button in one GPIO character-device line request, the kernel's order across buttons.

A fake line request stands in for the kernel (no gpio-sim here): it hands out edge events with the
timestamps and sequence numbers a v2 line request gives, in batches, as the kernel's queue would.
"""

from __future__ import annotations

import collections
import threading
import time

import pytest

from appliance import config
from gpio.capture import Capture
from gpio.cdev import CdevButtons, Edge, order
from gpio.devices import Hardware
from gpio.pins import Backend, TimedMockFactory, open_backend
from gpio.sdnotify import Notifier
from gpio.service import CaptureService, wait_for

US = 1_000
MS = 1_000_000
PLAYERS = (17, 27, 22, 23)
RESET = 24


class FakeRequest:
    """A v2 line request's event queue: ``push`` edges (the kernel numbers them), the reader takes batches."""

    def __init__(self, offsets, active_low=True):
        self.queue = collections.deque()
        self.ready = threading.Condition()
        self.seqno = 0
        self.line_seqno = collections.Counter()
        self.level = {offset: 1 if active_low else 0 for offset in offsets}
        self.released = False

    def edge(self, offset, rising, t_ns, seqno=None):
        self.seqno = self.seqno + 1 if seqno is None else seqno
        self.line_seqno[offset] += 1
        self.level[offset] = 1 if rising else 0
        return Edge(offset, rising, t_ns, self.seqno, self.line_seqno[offset])

    def push(self, *edges):
        with self.ready:
            self.queue.extend(edges)
            self.ready.notify_all()

    def wait(self, timeout_s):
        with self.ready:
            return self.ready.wait_for(lambda: bool(self.queue), timeout_s)

    def read(self, max_events):
        with self.ready:
            return [self.queue.popleft() for _ in range(min(max_events, len(self.queue)))]

    def levels(self):
        return dict(self.level)

    def release(self):
        self.released = True


def recorder():
    seen = []
    return seen, (lambda player, t, pressed: seen.append(("player", player, t, pressed))), \
        (lambda t, pressed: seen.append(("reset", t, pressed)))


def test_one_batch_is_handed_on_in_the_kernels_order_across_buttons():
    request = FakeRequest([*PLAYERS, RESET])
    seen, on_player, on_reset = recorder()
    buttons = CdevButtons(request, player_offsets=PLAYERS, reset_offset=RESET, active_low=True,
                          on_player_edge=on_player, on_reset_edge=on_reset)
    # player 3's edge reached the queue first, player 1's was stamped 3 µs earlier (a nested interrupt)
    late = request.edge(22, False, 1_000_003 * US)
    early = request.edge(17, False, 1_000_000 * US)
    reset = request.edge(RESET, False, 999_000 * US)
    buttons.dispatch([late, early, reset])
    assert seen == [("reset", 999_000 * US, True), ("player", 1, 1_000_000 * US, True),
                    ("player", 3, 1_000_003 * US, True)]


def test_equal_timestamps_keep_the_kernels_sequence():
    a, b = Edge(27, False, 5 * MS, 8, 1), Edge(17, False, 5 * MS, 7, 1)
    assert order([a, b]) == [b, a]


def test_active_high_buttons_press_on_the_rising_edge():
    request = FakeRequest([*PLAYERS, RESET], active_low=False)
    seen, on_player, on_reset = recorder()
    buttons = CdevButtons(request, player_offsets=PLAYERS, reset_offset=RESET, active_low=False,
                          on_player_edge=on_player, on_reset_edge=on_reset)
    buttons.dispatch([request.edge(27, True, 10), request.edge(27, False, 20)])
    assert seen == [("player", 2, 10, True), ("player", 2, 20, False)]
    request.level[27] = 1
    assert buttons.held_players() == [2]


def test_lost_edges_are_a_fault_never_hidden():
    request = FakeRequest([*PLAYERS, RESET])
    faults = []
    seen, on_player, on_reset = recorder()
    buttons = CdevButtons(request, player_offsets=PLAYERS, reset_offset=RESET, active_low=True,
                          on_player_edge=on_player, on_reset_edge=on_reset, on_fault=faults.append)
    buttons.dispatch([request.edge(17, False, 10, seqno=1)])
    buttons.dispatch([request.edge(27, False, 20, seqno=5)])          # 2, 3, 4 overflowed the kernel's queue
    assert buttons.lost == 3 and faults == ["the kernel's edge queue overflowed: 3 edge(s) lost before #5 (line 27)"]
    assert [entry[1] for entry in seen] == [1, 2]                     # what did come is still judged


def test_held_buttons_are_read_from_the_request():
    request = FakeRequest([*PLAYERS, RESET])
    request.level[23] = 0                                              # active low: held down
    buttons = CdevButtons(request, player_offsets=PLAYERS, reset_offset=RESET, active_low=True,
                          on_player_edge=lambda *a: None, on_reset_edge=lambda *a: None)
    assert buttons.held_players() == [4]


def box_on_lines(settings):
    """The capture core and the hardware with the buttons on a fake line request, the LEDs on mock pins."""
    backend = Backend(TimedMockFactory(), "lgpio", "kernel")
    events = []
    capture = Capture(players=4, debounce_ms=settings.capture_debounce_ms, buzzer_ms=settings.buzzer_ms,
                      backend=backend, instance="t", publish=events.append)
    request = FakeRequest([*PLAYERS, RESET])
    lines = CdevButtons(request, player_offsets=PLAYERS, reset_offset=RESET, active_low=True,
                        on_player_edge=capture.on_player_edge, on_reset_edge=capture.on_reset_edge)
    hardware = Hardware(backend.factory, player_buttons=PLAYERS, player_leds=settings.player_leds,
                        buzzer_pin=settings.buzzer_pin, reset_button=RESET, on_player_edge=capture.on_player_edge,
                        on_reset_edge=capture.on_reset_edge, button_lines=lines)
    capture.attach(hardware)
    capture.start()
    return capture, hardware, request, events


def test_presses_microseconds_apart_win_in_the_kernels_order_with_no_correction(settings):
    """With lgpio's one-line-at-a-time delivery the later-stamped press could arrive first, light, and be
    corrected (``lockout`` with ``corrects``); in one request the reader hands them on stamped-first."""
    capture, hardware, request, events = box_on_lines(settings)
    try:
        assert hardware.buttons == [] and hardware.reset is None      # no gpiozero button on any line
        t = time.monotonic_ns()
        request.push(request.edge(22, False, t + 3 * US), request.edge(17, False, t))
        assert wait_for(lambda: any(e["event"] == "lockout" for e in events), 2)
        assert wait_for(lambda: len([e for e in events if e["event"] == "press"]) == 2, 2)
        (lockout,) = [e for e in events if e["event"] == "lockout"]
        assert lockout["winner"] == 1 and lockout.get("corrects") is None
        presses = [(e["player"], e["status"]) for e in events if e["event"] == "press"]
        assert presses == [(1, "won"), (3, "counted")]
        assert [pin.state for pin in hardware._led_pins] == [True, False, False, False]
        # the host's reset button on the same request re-arms the standalone round
        request.push(request.edge(17, True, t + 50 * MS), request.edge(22, True, t + 50 * MS + 1),
                     request.edge(RESET, False, t + 100 * MS))
        assert wait_for(lambda: any(e["event"] == "reset_button" for e in events), 2)
        assert wait_for(lambda: [pin.state for pin in hardware._led_pins] == [False] * 4, 2)
    finally:
        hardware.close()
    assert request.released


def test_capture_on_mock_pins_keeps_its_own_buttons_whatever_the_reader(settings, tmp_path):
    """The simulator has no GPIO chip: button_reader = cdev changes nothing there (its presses stay mock)."""
    chosen = settings.replace(button_reader="cdev", capture_socket=tmp_path / "c.sock")
    service = CaptureService(chosen, backend=open_backend("mock"), notifier=Notifier(environ={}))
    try:
        assert service.hardware.button_lines is None and len(service.hardware.buttons) == 4
    finally:
        service.close()


def test_without_the_gpiod_package_the_buttons_fall_back_to_the_pin_factory(settings, tmp_path, monkeypatch):
    import gpio.cdev
    import gpio.pins

    def no_gpiod(*args, **kwargs):
        raise gpio.cdev.CdevUnavailable("the gpiod package (libgpiod v2 bindings) is not installed")

    monkeypatch.setattr(gpio.cdev, "open_buttons", no_gpiod)
    monkeypatch.setattr(gpio.pins, "find_header_chip", lambda label="": 0)
    backend = Backend(TimedMockFactory(), "lgpio", "kernel")              # a real factory's name, mock pins
    chosen = settings.replace(button_reader="cdev", capture_socket=tmp_path / "c.sock")
    with pytest.warns(Warning, match="cdev: the gpiod package"):
        service = CaptureService(chosen, backend=backend, notifier=Notifier(environ={}))
    try:
        assert service.hardware.button_lines is None and len(service.hardware.buttons) == 4
        assert any(reason.startswith("cdev: ") for reason in service.capture.status()["degraded"])
    finally:
        service.close()


def test_the_reader_setting_is_checked():
    with pytest.raises(config.ConfigError, match="button_reader 'lines' must be one of factory, cdev"):
        config.load(overrides={"button_reader": "lines"}, environ={}, config_path=None)
