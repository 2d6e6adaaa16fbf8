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
            lit = bool(hardware.leds[player - 1].is_lit)  # the "host" looks at the real LED
            return not lit if "dark" in question else lit
        return bool(hardware.buzzer.is_active)

    result = interactive_check(rig, say=say, ask=ask, timeout_s=2, rest_s=0.05, settle_s=0.05)
    assert result["ok"], result
    assert [q.split(" / ")[0] for q in questions] == [
        *(f"Is LED {n} {state}?" for n in range(1, 5) for state in ("lit", "dark now")), "Did the buzzer sound?"]
    assert result["faults"] == [] and result["button 1 at rest"] and result["reset button at rest"]


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
    result = interactive_check(rig, say=lambda line: (lines.append(line), say(line)),
                               ask=lambda q: True, timeout_s=0.2, rest_s=0.05, settle_s=0.05)
    assert not result["ok"] and result["button 3"] is False and result["button 4"] is True
    assert any("button 3: FAIL pressing button 3 arrived on button 2 (GPIO27 (header pin 13)): the two are "
               "swapped, or button 3 is wired to header pin 13 instead of 15" in line for line in lines)


def _walk(rig, press=None, answers=None, rest=None):
    """Run the walk-through with a scripted host: ``press(player)`` presses (default: one clean press and
    release), ``answers(question)`` answers (default: what a host sees on a good box), ``rest()`` runs during
    the rest check."""
    hardware = rig.hardware
    lines = []

    def clean(player):
        pin = hardware.reset.pin if player == 0 else hardware.buttons[player - 1].pin
        pin.drive_low()
        pin.drive_high()

    def say(line):
        lines.append(line)
        if line.startswith("At rest") and rest:
            rest()
        elif line.startswith("Press button"):
            (press or clean)(int(line.split()[2]))
        elif line.startswith("Press the host reset button"):
            clean(0)

    def good(question):
        if question.startswith("Is LED"):
            lit = bool(hardware.leds[int(question.split()[2].rstrip("?")) - 1].is_lit)
            return not lit if "dark" in question else lit
        return bool(hardware.buzzer.is_active)

    result = interactive_check(rig, say=say, ask=answers or good, timeout_s=0.3, rest_s=0.05, settle_s=0.05)
    return result, "\n".join(lines)


def test_a_missing_pull_up_reads_pressed_at_rest(rig):
    rig.hardware.buttons[1].pin.drive_low()  # no R1: the buffer's input, and so GPIO27, sit low
    result, printed = _walk(rig)
    assert not result["ok"] and result["button 2 at rest"] is False and result["button 1 at rest"]
    assert "button 2, GPIO27 (header pin 13): FAIL reads PRESSED at rest (the line is low): the 10 kΩ " \
           "pull-up R1 to 3.3 V is missing" in printed


def test_a_floating_input_changes_by_itself_at_rest(rig):
    pin = rig.hardware.buttons[2].pin

    def floating():
        for _ in range(3):  # an open input picks up mains hum: a few edges while nobody presses
            pin.drive_low()
            pin.drive_high()

    result, printed = _walk(rig, rest=floating)
    assert result["button 3 at rest"] is False
    assert "button 3, GPIO22 (header pin 15): FAIL changes by itself at rest (6 edges in 0.05 s): a floating input" in printed


def test_a_bouncing_button_without_its_rc_filter_is_named(rig):
    def bouncy(player):
        pin = rig.hardware.buttons[player - 1].pin
        t = time.monotonic_ns()
        for step in range(4):  # a bare contact: it makes and breaks 4 times within 1 ms
            pin.drive_low(t_ns=t + step * 250_000)
            pin.drive_high(t_ns=t + step * 250_000 + 100_000)

    result, printed = _walk(rig, press=lambda player: bouncy(player) if player == 4 else _clean(rig, player))
    assert result["button 4"] is False and result["button 1"] is True
    assert "button 4: FAIL 8 edges for one press and release (a clean channel gives 2): the button bounces: the " \
           "RC filter (R2 1 kΩ, C1 100 nF) or the Schmitt buffer is missing" in printed


def _clean(rig, player):
    pin = rig.hardware.buttons[player - 1].pin
    pin.drive_low()
    pin.drive_high()


@pytest.mark.parametrize("lit_on, dark_off, expected", [
    (False, True, "LED 2 never lights: the LED is reversed (its short leg / flat side goes to ground)"),
    (False, False, "LED 2 is lit when off and dark when on: it is wired from 3.3 V to GPIO6 (header pin 31)"),
    (True, False, "LED 2 stays lit when off: the MOSFET is shorted"),
])
def test_led_faults_are_told_apart_by_two_questions(rig, lit_on, dark_off, expected):
    def answers(question):
        if question.startswith("Is LED 2 lit"):
            return lit_on
        if question.startswith("Is LED 2 dark"):
            return dark_off
        return True

    result, printed = _walk(rig, answers=answers)
    assert result["led 2"] is False and result["led 1"] is True and result["led 3"] is True
    assert f"led 2: FAIL {expected}" in printed


def test_a_dead_channel_and_a_silent_buzzer_say_what_to_check(rig):
    result, printed = _walk(rig, press=lambda player: None if player == 1 else _clean(rig, player),
                            answers=lambda question: not question.startswith("Did the buzzer"))
    assert result["button 1"] is False and result["buzzer"] is False
    assert "button 1: FAIL no edge on GPIO17 (header pin 11) in 0.3 s: check the wire from the Schmitt buffer's " \
           "output to header pin 11" in printed
    assert "buzzer: FAIL the buzzer is silent: a passive buzzer" in printed


@pytest.mark.parametrize("figures, failures, bounces, expected", [
    ({"drive_to_edge": 130, "edge_to_arrival": 800}, [], 0, []),
    ({"drive_to_edge": 6, "edge_to_arrival": 800}, [], 0, ["no RC delay: the jumper is on GPIO17"]),
    ({"drive_to_edge": 1400, "edge_to_arrival": 800}, [], 0, ["C1 is larger than 100 nF"]),
    ({"drive_to_edge": 130, "edge_to_arrival": 9000}, [], 0, ["reach the capture core late"]),
    ({"drive_to_edge": 130, "edge_to_arrival": 800}, [], 5, ["5 extra edges on GPIO17"]),
    ({}, ["press 1: no edge seen on GPIO17 within 1 s"], 0, ["the jumper is missing"]),
])
def test_jumper_figures_are_read_as_a_diagnosis(settings, figures, failures, bounces, expected):
    from gpio.hwcheck import diagnose_jumper

    result = {"precision": "kernel", **{name: {"median_us": value} for name, value in figures.items()}}
    diagnoses = diagnose_jumper(result, failures, bounces, settings)
    assert len(diagnoses) == len(expected)
    for diagnosis, words in zip(diagnoses, expected):
        assert words in diagnosis
