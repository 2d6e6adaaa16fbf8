"""The capture service on gpiozero's mock pins: the whole path pin -> arbiter -> LED/buzzer -> event."""

from __future__ import annotations

import threading
import time

import pytest

from gpio.pins import Backend, TimedMockFactory, open_backend
from appliance.errors import CaptureCommandError
from gpio.sdnotify import Notifier
from gpio.service import CaptureService, wait_for

MS = 1_000_000
US = 1_000


def arm(service, eligible, round_id="q1"):
    return service.capture.execute("arm", {"eligible": sorted(eligible), "round_id": round_id})


def test_standalone_box_is_a_plain_lockout_reset_by_the_host_button(service, box):
    # No appliance connected: every player eligible; first press lights and sounds; the reset button re-arms.
    assert service.capture.arbiter.mode == "standalone" and service.capture.arbiter.armed
    t = time.monotonic_ns()
    box.press(3, t)
    assert box.lit() == [False, False, True, False] and box.buzzing
    box.press(1, t + 5 * MS)
    assert box.lit() == [False, False, True, False]
    box.release(3, t + 100 * MS)
    box.release(1, t + 100 * MS)
    box.reset_button(t + 200 * MS)
    assert box.lit() == [False] * 4
    (reset,) = box.events("reset_button")
    assert reset["round_id"].startswith("local-")
    box.press(1, t + 400 * MS)
    assert box.lit() == [True, False, False, False]
    statuses = [(e["player"], e["status"], e["mode"]) for e in box.events("press")]
    assert statuses == [(3, "won", "standalone"), (1, "counted", "standalone"), (1, "won", "standalone")]


def test_presses_one_microsecond_apart_delivered_in_reverse_order_light_the_earlier(service, box):
    arm(service, {1, 2, 3, 4})
    t = time.monotonic_ns()
    box.press(4, t + 1 * US)  # callback first, stamped later
    box.press(2, t)  # callback second, stamped 1 µs earlier
    assert box.lit() == [False, True, False, False]
    final = box.events("lockout")[-1]
    assert final["winner"] == 2 and final["corrects"] == 4
    assert [(o["player"], o["gap_ns"]) for o in final["order"]] == [(2, 0), (4, 1000)]


def test_every_press_is_reported_with_its_timestamp_and_status(service, box):
    arm(service, {1, 2}, "q7")
    t = time.monotonic_ns()
    box.press(3, t + 1 * MS)  # not eligible
    box.press(1, t + 2 * MS)
    box.press(2, t + 36 * MS)
    reported = [(e["player"], e["t_ns"], e["status"], e["rank"], e["gap_ns"], e["round_id"], e["precision"])
                for e in box.events("press")]
    assert reported == [
        (3, t + 1 * MS, "ineligible", None, None, "q7", "mock"),
        (1, t + 2 * MS, "won", 1, 0, "q7", "mock"),
        (2, t + 36 * MS, "counted", 2, 34 * MS, "q7", "mock"),
    ]
    assert box.lit() == [True, False, False, False]


def test_presses_while_disarmed_never_win(service, box):
    service.capture.execute("disarm", {})
    box.press(2, time.monotonic_ns())
    assert [e["status"] for e in box.events("press")] == ["disarmed"]
    assert box.lit() == [False] * 4 and not box.events("lockout")


def test_button_held_down_when_armed_is_stuck_until_released(service, box):
    service.capture.execute("reset", {})
    t = time.monotonic_ns()
    box.press(1, t)  # held from before the round
    result = arm(service, {1, 2})
    assert result["stuck"] == [1]
    assert [(e["kind"], e["player"]) for e in box.events("fault")] == [("stuck", 1)]
    box.press(2, time.monotonic_ns())
    assert box.lit() == [False, True, False, False]
    box.release(1, time.monotonic_ns())
    assert [(e["kind"], e["player"]) for e in box.events("fault")][-1] == ("stuck-cleared", 1)


def test_bouncing_input_counts_only_its_first_edge(service, box):
    arm(service, {1, 2})
    t = time.monotonic_ns()
    box.press(1, t)
    for k in range(1, 9):  # 8 edges of chatter, 250 µs apart
        (box.release if k % 2 else box.press)(1, t + k * 250 * US)
    assert [(e["player"], e["status"], e["t_ns"]) for e in box.events("press")] == [(1, "won", t)]
    assert service.capture.status()["bounces"] == [4, 0, 0, 0]
    assert box.lit() == [True, False, False, False]


def test_button_test_mode_lights_each_led_as_its_button_is_pressed(service, box):
    service.capture.execute("button_test", {"on": True})
    t = time.monotonic_ns()
    for player in (1, 2, 3, 4):
        box.press(player, t + player * 50 * MS)
        assert box.lit() == [p == player for p in (1, 2, 3, 4)]
        box.release(player, t + player * 50 * MS + 30 * MS)
    assert [e["status"] for e in box.events("press")] == ["test"] * 4
    service.capture.execute("button_test", {"on": False})
    assert box.lit() == [False] * 4


def test_buzzer_sounds_for_buzzer_ms_then_stops(service, box):
    arm(service, {1, 2, 3, 4})
    box.press(2, time.monotonic_ns())
    assert box.buzzing
    assert wait_for(lambda: not box.buzzing, timeout=5)


def test_simulated_press_drives_the_mock_pin_through_the_real_path(service, box):
    arm(service, {1, 2, 3, 4})
    service.capture.execute("sim_press", {"player": 4})
    assert box.lit() == [False, False, False, True]
    assert service.hardware.buttons[3].is_active
    service.capture.execute("sim_release", {"player": 4})
    assert not service.hardware.buttons[3].is_active
    (press,) = box.events("press")
    assert press["status"] == "won" and press["precision"] == "mock"


def test_simulated_press_is_refused_on_real_pins(capture_settings):
    # A backend that says "lgpio" (pins are mock underneath, so the test runs anywhere): sim_press is refused.
    backend = Backend(TimedMockFactory(), "lgpio", "kernel")
    service = CaptureService(capture_settings, backend=backend, notifier=Notifier(environ={}))
    try:
        with pytest.raises(CaptureCommandError, match="not-simulator"):
            service.capture.execute("sim_press", {"player": 1})
    finally:
        service.close()


def test_close_turns_every_led_and_the_buzzer_off(capture_settings):
    service = CaptureService(capture_settings, backend=open_backend("mock"), notifier=Notifier(environ={}))
    service.start()
    service.hardware.buttons[0].pin.drive_low(t_ns=time.monotonic_ns())
    leds = [led.pin for led in service.hardware.leds]
    buzzer = service.hardware.buzzer.pin
    assert leds[0].state and buzzer.state
    service.close()
    assert not any(pin.state for pin in leds) and not buzzer.state
    assert not capture_settings.capture_socket.exists()


def test_reset_button_round_starts_at_the_reset_press_timestamp(service, box):
    # The host's reset press is stamped t; a player's press stamped 10 µs later has its callback delivered
    # after the reset's: it belongs to the new round and wins, instead of being "disarmed".
    t = time.monotonic_ns()
    reset_pin = service.hardware.reset.pin
    reset_pin.drive_low(t_ns=t)
    box.press(2, t + 10 * US)
    reset_pin.drive_high(t_ns=t + 100 * MS)
    (reset,) = box.events("reset_button")
    (press,) = box.events("press")
    assert press["round_id"] == reset["round_id"] and press["status"] == "won"
    assert service.capture.arbiter.armed_at_ns == t


def test_eligible_command_narrows_the_current_round(service, box):
    arm(service, {1, 2, 3})
    result = service.capture.execute("eligible", {"eligible": [1, 3]})
    assert result == {"eligible": [1, 3], "armed": True}
    box.press(2, time.monotonic_ns())
    assert [e["status"] for e in box.events("press")] == ["ineligible"]


def test_simulated_press_with_hold_releases_itself(service, box):
    service.capture.execute("sim_press", {"player": 1, "hold_ms": 20})
    assert service.hardware.buttons[0].is_active
    assert wait_for(lambda: not service.hardware.buttons[0].is_active)


def test_buttons_wired_to_3v3_press_on_the_rising_edge(capture_settings):
    # buttons_active_low = false: pull-downs, a press drives the line high (the QEMU virt board's PL061 line).
    settings = capture_settings.replace(buttons_active_low=False)
    service = CaptureService(settings, backend=open_backend("mock"), notifier=Notifier(environ={}))
    events = []
    service.observers.append(events.append)
    service.start()
    try:
        pin = service.hardware.buttons[1].pin
        assert pin.pull == "down" and not service.hardware.held()
        t = time.monotonic_ns()
        pin.drive_high(t_ns=t)
        assert [led.pin.state for led in service.hardware.leds] == [False, True, False, False]
        assert service.hardware.held() == [2]
        (press,) = [e for e in events if e["event"] == "press"]
        assert press["player"] == 2 and press["t_ns"] == t
        pin.drive_low(t_ns=t + 100 * MS)
        assert service.hardware.held() == []
    finally:
        service.close()


def test_the_reset_button_held_asks_for_the_pin_once_and_a_tap_does_not(capture_settings):
    """A host who lost the PIN holds the reset button for reset_hold_ms: reset_button_held is published once,
    while the button is still down (the appliance then shows the PIN on the HDMI board); a tap asks nothing."""
    settings = capture_settings.replace(reset_hold_ms=50)
    svc = CaptureService(settings, backend=open_backend("mock"), notifier=Notifier(environ={}))
    held = threading.Event()
    events = []
    svc.observers.append(lambda event: (events.append(event), event["event"] == "reset_button_held" and held.set()))
    svc.start()
    try:
        pin = svc.hardware.reset.pin
        t = time.monotonic_ns()
        pin.drive_low(t_ns=t)
        pin.drive_high(t_ns=t + 10 * MS)                   # a tap: released before the hold time
        assert not held.wait(0.3)                           # (waited well past 50 ms: nothing came)
        pin.drive_low(t_ns=t + 500 * MS)                    # held down
        assert held.wait(5)
        pin.drive_high(t_ns=t + 900 * MS)
        asked = [event for event in events if event["event"] == "reset_button_held"]
        assert asked == [{"event": "reset_button_held", "t_ns": t + 500 * MS, "held_ms": 50}]
        assert len([event for event in events if event["event"] == "reset_button"]) == 2  # each press resets too
    finally:
        svc.close()


def test_the_simulator_drives_the_host_reset_button_too(service, box):
    from gpio.commands import parse_command

    assert parse_command({"type": "cmd", "id": "x", "op": "sim_press", "button": "reset"}, 4)[2] == \
        {"player": 0, "hold_ms": None}
    with pytest.raises(CaptureCommandError):
        parse_command({"type": "cmd", "id": "x", "op": "sim_press", "button": "led"}, 4)
    service.capture.execute("sim_press", {"player": 0, "hold_ms": None})
    service.capture.execute("sim_release", {"player": 0})
    assert len(box.events("reset_button")) == 1
