"""svoyak hwcheck on the mock factory: the jumper timing run and the host walk-through, scripted."""

from __future__ import annotations

import time

import pytest

from gpio.hwcheck import Rig, interactive_check, jumper_check
from gpio.pins import open_backend


@pytest.fixture
def rig(settings):
    backend = open_backend("mock")
    rig = Rig(settings.replace(capture_debounce_ms=1), backend)
    yield rig
    rig.close()
    backend.close()


def test_jumper_check_measures_every_press_through_the_real_path(rig):
    lines = []
    result = jumper_check(rig, presses=25, say=lines.append)
    assert result["ok"] and result["failures"] == []
    for name in ("drive_to_edge", "edge_to_arrival", "edge_to_decision", "edge_to_led"):
        assert result[name]["n"] == 25
        assert 0 <= result[name]["median_us"] <= result[name]["max_us"]
    # The stages follow one another: the LED is written after the decision, which follows the arrival.
    assert result["edge_to_arrival"]["median_us"] <= result["edge_to_decision"]["median_us"]
    assert result["edge_to_decision"]["median_us"] <= result["edge_to_led"]["median_us"]
    assert lines[0].startswith("jumper check, 25 presses, pin factory mock") and lines[-1] == "  OK"
    assert not any(led.is_lit for led in rig.hardware.leds)


def test_jumper_check_reports_a_missing_wire(rig, settings):
    # A wire to the wrong button terminal: player 2 wins each time, and the check says so.
    rig.backend.factory.pin(settings.hwcheck_output_pin, pin_class=__import__("gpio.pins").pins.JumperedMockPin,
                            input_pin=rig.hardware.buttons[1].pin)
    result = jumper_check(rig, presses=3, say=lambda line: None)
    assert not result["ok"]
    assert "player 2 won, LED 1 dark" in result["failures"][0]


def test_walk_through_presses_every_button_and_checks_leds_buzzer_and_reset(rig):
    hardware = rig.hardware
    script = []

    def say(line):
        script.append(line)
        if line.startswith("Press button"):
            player = int(line.split()[2])
            hardware.buttons[player - 1].pin.drive_low()
            hardware.buttons[player - 1].pin.drive_high()
        elif line.startswith("Press the host reset button"):
            hardware.reset.pin.drive_low()
            hardware.reset.pin.drive_high()

    questions = []

    def ask(question):
        questions.append(question)
        if question.startswith("Is LED"):
            player = int(question.split()[2].rstrip("?"))
            return bool(hardware.leds[player - 1].is_lit)  # the "host" looks at the real LED
        return bool(hardware.buzzer.is_active)

    result = interactive_check(rig, say=say, ask=ask, timeout_s=2)
    assert result["ok"], result
    assert [q.split(" / ")[0] for q in questions] == [
        "Is LED 1 lit?", "Is LED 2 lit?", "Is LED 3 lit?", "Is LED 4 lit?", "Did the buzzer sound?"]


def test_walk_through_names_a_dead_button(rig):
    def say(line):
        if line.startswith("Press button 3"):
            # The host presses button 3, but it is wired to input 2 (stamped past input 2's last release).
            rig.hardware.buttons[1].pin.drive_low(t_ns=time.monotonic_ns() + 100_000_000)
        elif line.startswith("Press button"):
            player = int(line.split()[2])
            rig.hardware.buttons[player - 1].pin.drive_low()
            rig.hardware.buttons[player - 1].pin.drive_high()

    lines = []
    result = interactive_check(rig, say=lambda line: (lines.append(line), say(line)), ask=lambda q: True,
                               timeout_s=0.2)
    assert not result["ok"] and result["button 3"] is False and result["button 4"] is True
    assert any("button 3: no press seen (saw button(s) [2]" in line for line in lines)
