"""Terminal keyboard buzzers of the simulator: keys drive the mock pins through the real path."""

from __future__ import annotations

import io
import os

import pytest

from gpio.keyboard import KeyboardSimulator
from gpio.pins import Backend, TimedMockFactory
from gpio.sdnotify import Notifier
from gpio.service import CaptureService, wait_for


def test_keys_press_players_reset_and_test_mode(service, box):
    keyboard = KeyboardSimulator(service, stdout=io.StringIO(), hold_ms=5)
    assert keyboard.handle_key("x")  # player 2
    assert box.lit() == [False, True, False, False]
    assert wait_for(lambda: not service.hardware.buttons[1].is_active)  # released after hold_ms
    keyboard.handle_key("4")
    assert [e["status"] for e in box.events("press")] == ["won", "counted"]
    keyboard.handle_key(" ")  # host reset
    assert wait_for(lambda: box.events("reset_button"))
    assert box.lit() == [False] * 4
    keyboard.handle_key("t")
    assert service.capture.arbiter.button_test
    assert not keyboard.handle_key("q")


def test_run_reads_keys_from_a_pipe_and_prints_events(service, box):
    read_end, write_end = os.pipe()
    os.write(write_end, b"1q")
    os.close(write_end)
    output = io.StringIO()
    with os.fdopen(read_end) as stdin:
        KeyboardSimulator(service, stdin=stdin, stdout=output, hold_ms=5).run()
    text = output.getvalue()
    assert "player 1: won" in text and "LOCKOUT: player 1 lights" in text


def test_keyboard_needs_mock_pins(capture_settings):
    service = CaptureService(capture_settings, backend=Backend(TimedMockFactory(), "lgpio", "kernel"),
                             notifier=Notifier(environ={}))
    try:
        with pytest.raises(ValueError, match="--simulator"):
            KeyboardSimulator(service)
    finally:
        service.close()
