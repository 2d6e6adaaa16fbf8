"""Hardware self-check: ``svoyak hwcheck``. Run it with the capture service stopped (it needs the pins).

- ``--jumper``: a wire from the spare output pin (``hwcheck_output_pin``, default GPIO25, header pin 22) to
  player 1's **button terminal** (the RC input, not the GPIO side of the Schmitt buffer: see gpio/WIRING.md).
  The check drives the pin low and high many times and measures, for every press, the time from the drive to
  the edge's timestamp (RC + Schmitt + kernel), from the timestamp to the arbiter receiving it (delivery),
  to its decision and to the LED being written. It prints median, p90, p99 and max of each.
- Without a jumper: a walk-through for the host: press every button (its LED is then lit for the host to
  confirm), listen to the buzzer, press the host reset button.

On the mock factory both run as tests (tests/gpio/test_hwcheck.py): the jumper is a
:class:`gpio.pins.JumperedMockPin`, and the host's answers and presses are scripted.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

from gpiozero import DigitalOutputDevice

from appliance.config import Settings
from gpio.capture import Capture
from gpio.devices import Hardware
from gpio.pins import Backend, JumperedMockPin


class Rig:
    """The capture core on the box's pins without the socket: what hwcheck and the benchmarks drive."""

    def __init__(self, settings: Settings, backend: Backend):
        self.settings = settings
        self.backend = backend
        self.events: list[dict] = []
        self.capture = Capture(players=len(settings.player_buttons), debounce_ms=settings.capture_debounce_ms,
                               buzzer_ms=settings.buzzer_ms, backend=backend, instance="hwcheck",
                               publish=self.events.append)
        self.hardware = Hardware(
            backend.factory, player_buttons=settings.player_buttons, player_leds=settings.player_leds,
            buzzer_pin=settings.buzzer_pin, reset_button=settings.reset_button,
            on_player_edge=self.capture.on_player_edge, on_reset_edge=self.capture.on_reset_edge)
        self.capture.attach(self.hardware)
        self.capture.start()

    def close(self) -> None:
        self.hardware.close()


def _wait(predicate: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.0002)
    return True


def summarize(samples_ns: list[int]) -> dict:
    """Median, p90, p99 and max of ``samples_ns``, in microseconds.

    >>> summarize([1_000, 2_000, 3_000, 4_000])
    {'median_us': 2.5, 'p90_us': 4.0, 'p99_us': 4.0, 'max_us': 4.0, 'n': 4}
    """
    ordered = sorted(samples_ns)

    def rank(fraction):
        return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] / 1000

    return {"median_us": statistics.median(ordered) / 1000, "p90_us": rank(0.9), "p99_us": rank(0.99),
            "max_us": ordered[-1] / 1000, "n": len(ordered)}


def jumper_check(rig: Rig, presses: int = 200, say: Callable[[str], None] = print) -> dict:
    """Drive the jumper ``presses`` times; return (and print) the latency figures. ``ok`` is False if any
    press was missed, judged wrong or did not light LED 1."""
    settings, factory = rig.settings, rig.backend.factory
    button_pin = settings.player_buttons[0]
    if rig.backend.is_mock:
        # The mock stand-in for the wire: an output pin that drives player 1's input.
        factory.pin(settings.hwcheck_output_pin, pin_class=JumperedMockPin,
                    input_pin=rig.hardware.buttons[0].pin)
    jumper = DigitalOutputDevice(settings.hwcheck_output_pin, initial_value=True, pin_factory=factory)
    figures = {"drive_to_edge": [], "edge_to_arrival": [], "edge_to_decision": [], "edge_to_led": []}
    failures = []
    quiet_s = (settings.capture_debounce_ms + 2) / 1000
    try:
        for index in range(presses):
            rig.capture.last_decision = None
            rig.capture.execute("arm", {"eligible": list(range(1, len(settings.player_buttons) + 1)),
                                        "round_id": f"hwcheck-{index}"})
            drive_ns = time.monotonic_ns()
            jumper.off()  # low: pressed
            if not _wait(lambda: rig.capture.last_decision is not None, 1.0):
                failures.append(f"press {index + 1}: no edge seen on GPIO{button_pin} within 1 s")
            else:
                decision = rig.capture.last_decision
                if decision["player"] != 1 or not rig.hardware.leds[0].is_lit:
                    failures.append(f"press {index + 1}: player {decision['player']} won, LED 1 "
                                    f"{'lit' if rig.hardware.leds[0].is_lit else 'dark'}")
                edge = decision["t_ns"]
                figures["drive_to_edge"].append(edge - drive_ns)
                figures["edge_to_arrival"].append(decision["arrival_ns"] - edge)
                figures["edge_to_decision"].append(decision["decided_ns"] - edge)
                figures["edge_to_led"].append(decision["led_ns"] - edge)
            jumper.on()
            time.sleep(quiet_s)  # let the RC recharge and the debounce window pass before the next press
    finally:
        jumper.close()
        rig.capture.execute("reset", {})
    result = {name: summarize(samples) for name, samples in figures.items() if samples}
    result["ok"] = not failures
    result["failures"] = failures
    result["precision"] = rig.backend.precision
    say(f"jumper check, {presses} presses, pin factory {rig.backend.name} (precision {rig.backend.precision})")
    for name, stats in result.items():
        if isinstance(stats, dict):
            say(f"  {name:18} median {stats['median_us']:9.1f} µs   p90 {stats['p90_us']:9.1f}   "
                f"p99 {stats['p99_us']:9.1f}   max {stats['max_us']:9.1f}")
    for failure in failures:
        say(f"  FAIL {failure}")
    say("  OK" if not failures else f"  {len(failures)} of {presses} presses failed")
    return result


def interactive_check(rig: Rig, say: Callable[[str], None], ask: Callable[[str], bool],
                      timeout_s: float = 60.0) -> dict:
    """Walk the host through every button, LED, the buzzer and the reset button. ``say`` prints an instruction
    (a test's ``say`` may press the mock button it names); ``ask`` puts a yes/no question. Returns per-item
    results and ``ok``.

    The box is disarmed meanwhile, so presses light nothing by themselves: after each press the check lights
    that player's LED itself and keeps it lit while the host answers (no need to hold the button).
    """
    players = len(rig.settings.player_buttons)
    results: dict[str, bool] = {}
    rig.capture.execute("reset", {})
    try:
        for player in range(1, players + 1):
            seen = len(rig.events)
            say(f"Press button {player} / Нажмите кнопку {player}")

            def pressed(player=player):
                return any(e["event"] == "press" and e["player"] == player for e in rig.events[seen:])

            if not _wait(pressed, timeout_s):
                others = sorted({e["player"] for e in rig.events[seen:] if e["event"] == "press"})
                say(f"  button {player}: no press seen" + (f" (saw button(s) {others}: check the wiring order)"
                                                            if others else ""))
                results[f"button {player}"] = False
                continue
            results[f"button {player}"] = True
            rig.capture.execute("led", {"player": player, "on": True})
            results[f"led {player}"] = ask(f"Is LED {player} lit? / Горит лампа {player}?")
            rig.capture.execute("led", {"player": player, "on": False})
        rig.hardware.beeper.beep(rig.settings.buzzer_ms)
        results["buzzer"] = ask("Did the buzzer sound? / Прозвучал сигнал?")
        seen = len(rig.events)
        say("Press the host reset button / Нажмите кнопку сброса ведущего")
        results["reset button"] = _wait(lambda: any(e["event"] == "reset_button" for e in rig.events[seen:]),
                                        timeout_s)
    finally:
        rig.capture.execute("reset", {})
    for item, good in results.items():
        say(f"  {item:14} {'OK' if good else 'FAIL'}")
    return {"ok": all(results.values()), **results}
