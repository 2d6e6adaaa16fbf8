"""Hardware self-check: ``svoyak hwcheck``. Run it with the capture service stopped (it needs the pins).

- ``--jumper``: a wire from the spare output pin (``hwcheck_output_pin``, default GPIO25, header pin 22) to
  player 1's **button terminal** (the RC input, not the GPIO side of the Schmitt buffer: see gpio/WIRING.md).
  The check drives the pin low and high many times and measures, for every press, the time from the drive to
  the edge's timestamp (RC + Schmitt + kernel), from the timestamp to the arbiter receiving it (delivery),
  to its decision and to the LED being written. It prints median, p90, p99 and max of each.
- Without a jumper: a walk-through for the host: first the lines at rest (nothing pressed: every input must
  read released and stay still), then press every button (its LED is then lit, and put out, for the host to
  confirm), listen to the buzzer, press the host reset button.

Every check names the pin (BCM and header pin) and, on a fault, its likely cause in the build: a button on the
wrong pin, an LED reversed, a missing pull-up, a bouncing button without its RC filter (gpio/WIRING.md,
"First power-on", lists what each prints).

On the mock factory both run as tests (tests/gpio/test_hwcheck.py): the jumper is a
:class:`gpio.pins.JumperedMockPin`, and the host's answers and presses are scripted.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Callable

from gpiozero import DigitalOutputDevice

from appliance.config import Settings
from gpio.capture import Capture
from gpio.devices import Hardware
from gpio.pins import Backend, JumperedMockPin


# BCM GPIO -> physical pin of the 40-pin header (every Pi since the B+).
HEADER_PIN = {2: 3, 3: 5, 4: 7, 14: 8, 15: 10, 17: 11, 18: 12, 27: 13, 22: 15, 23: 16, 24: 18, 10: 19, 9: 21,
              25: 22, 11: 23, 8: 24, 7: 26, 0: 27, 1: 28, 5: 29, 6: 31, 12: 32, 13: 33, 19: 35, 16: 36, 26: 37,
              20: 38, 21: 40}


def where(bcm: int) -> str:
    """``GPIO17 (header pin 11)``."""
    return f"GPIO{bcm} (header pin {HEADER_PIN[bcm]})" if bcm in HEADER_PIN else f"GPIO{bcm}"


class Rig:
    """The capture core on the box's pins without the socket: what hwcheck and the benchmarks drive.

    Every raw edge is also kept in :attr:`edges` as ``(channel, t_ns, pressed)``: channel 1-4 for the players,
    0 for the host reset button.
    """

    def __init__(self, settings: Settings, backend: Backend):
        self.settings = settings
        self.backend = backend
        self.events: list[dict] = []
        self.edges: list[tuple[int, int, bool]] = []
        self._edges_lock = threading.Lock()
        self.capture = Capture(players=len(settings.player_buttons), debounce_ms=settings.capture_debounce_ms,
                               buzzer_ms=settings.buzzer_ms, backend=backend, instance="hwcheck",
                               publish=self.events.append)
        self.hardware = Hardware(
            backend.factory, player_buttons=settings.player_buttons, player_leds=settings.player_leds,
            buzzer_pin=settings.buzzer_pin, reset_button=settings.reset_button,
            active_low=settings.buttons_active_low,
            on_player_edge=self._player_edge, on_reset_edge=self._reset_edge)
        self.capture.attach(self.hardware)
        self.capture.start()

    def _player_edge(self, player: int, ticks: int, pressed: bool) -> None:
        with self._edges_lock:
            self.edges.append((player, ticks, pressed))
        self.capture.on_player_edge(player, ticks, pressed)

    def _reset_edge(self, ticks: int, pressed: bool) -> None:
        with self._edges_lock:
            self.edges.append((0, ticks, pressed))
        self.capture.on_reset_edge(ticks, pressed)

    def edges_since(self, index: int, channel: int | None = None) -> list[tuple[int, int, bool]]:
        with self._edges_lock:
            return [edge for edge in self.edges[index:] if channel is None or edge[0] == channel]

    def channels(self) -> list[tuple[int, str, int]]:
        """(channel, name, BCM pin) of every input: the players' buttons, then the reset button."""
        settings = self.settings
        return [*((player, f"button {player}", pin) for player, pin in enumerate(settings.player_buttons, 1)),
                (0, "reset button", settings.reset_button)]

    def reads_pressed(self, channel: int) -> bool:
        device = self.hardware.reset if channel == 0 else self.hardware.buttons[channel - 1]
        return bool(device.is_active)

    def close(self) -> None:
        self.hardware.close()


# What a fault looks like and what causes it in the build (gpio/WIRING.md, "First power-on").
STUCK_AT_REST = ("reads PRESSED at rest (the line is low): the 10 kΩ pull-up R1 to 3.3 V is missing or open, "
                 "the button's NO/NC contacts are swapped, or the podium cable is shorted")
FLOATING = ("changes by itself at rest ({edges} edges in {seconds:g} s): a floating input: the 10 kΩ pull-up R1 "
            "is missing, the Schmitt buffer has no 3.3 V or ground, or the wire to the header is loose")
BOUNCING = ("{edges} edges for one press and release (a clean channel gives 2): the button bounces: the RC "
            "filter (R2 1 kΩ, C1 100 nF) or the Schmitt buffer is missing or bypassed; the software keeps the "
            "first edge, but fit the filter")
NO_EDGE = ("no edge on {where} in {seconds:g} s: check the wire from the Schmitt buffer's output to header pin "
           "{header}, the buffer's 3.3 V and ground, and the podium cable (with the box open, touch the button "
           "terminal to ground: the line must go low)")
WRONG_PIN = ("pressing {name} arrived on {other} ({other_where}): the two are swapped, or {name} is wired to "
             "header pin {other_header} instead of {header}")
LED_REVERSED = ("LED {player} never lights: the LED is reversed (its short leg / flat side goes to ground), its "
                "resistor is open, or (podium lamp) the MOSFET's source is not on ground")
LED_INVERTED = ("LED {player} is lit when off and dark when on: it is wired from 3.3 V to {where} (active low); "
                "wire it {where} → resistor → LED → ground, or use the MOSFET driver")
LED_ALWAYS_ON = ("LED {player} stays lit when off: the MOSFET is shorted (drain to source) or the lamp is wired "
                 "to 5 V and ground, bypassing {where}")
BUZZER_SILENT = ("the buzzer is silent: a passive buzzer (it needs a tone: fit an active one), the NPN's emitter "
                 "and collector swapped, or no 5 V at the buzzer")


def rest_check(rig: Rig, seconds: float = 2.0, say: Callable[[str], None] = print) -> dict:
    """Nothing pressed: every input must read released and stay still for ``seconds``."""
    start = len(rig.edges)
    pressed_at_start = {channel: rig.reads_pressed(channel) for channel, _, _ in rig.channels()}
    say(f"At rest, {seconds:g} s, nothing pressed / В покое, ничего не нажато:")
    time.sleep(seconds)
    results, faults = {}, []
    for channel, name, pin in rig.channels():
        edges = len(rig.edges_since(start, channel))
        stuck = pressed_at_start[channel] or rig.reads_pressed(channel)
        if stuck:
            fault = STUCK_AT_REST
        elif edges:
            fault = FLOATING.format(edges=edges, seconds=seconds)
        else:
            fault = None
        results[f"{name} at rest"] = fault is None
        say(f"  {name}, {where(pin)}: " + ("released, still  OK" if fault is None else f"FAIL {fault}"))
        if fault:
            faults.append(f"{name} {where(pin)}: {fault}")
    return {"ok": not faults, "faults": faults, **results}


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
    bounces_before = rig.capture.arbiter.inputs[0].bounces
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
    bounces = rig.capture.arbiter.inputs[0].bounces - bounces_before
    result["precision"] = rig.backend.precision
    result["diagnoses"] = diagnose_jumper(result, failures, bounces, settings)
    result["ok"] = not failures and not result["diagnoses"]
    result["failures"] = failures
    say(f"jumper check, {presses} presses, pin factory {rig.backend.name} (precision {rig.backend.precision})")
    for name, stats in result.items():
        if isinstance(stats, dict):
            say(f"  {name:18} median {stats['median_us']:9.1f} µs   p90 {stats['p90_us']:9.1f}   "
                f"p99 {stats['p99_us']:9.1f}   max {stats['max_us']:9.1f}")
    for failure in failures:
        say(f"  FAIL {failure}")
    for diagnosis in result["diagnoses"]:
        say(f"  FAIL {diagnosis}")
    if rig.backend.precision == "kernel":
        say("  a good box (design and lgpio): drive_to_edge 80-250 µs (the RC), edge_to_arrival 0.5-2 ms "
            "(lgpio holds each edge 0.5 ms), edge_to_led within 0.1 ms of the arrival")
    say("  OK" if result["ok"] else f"  {len(failures)} of {presses} presses failed, {len(result['diagnoses'])} "
        f"diagnoses")
    return result


# The jumper drives player 1's button terminal through 330 Ω: the edge comes when C1 (100 nF) has discharged
# through R2 (1 kΩ) + 330 Ω below the buffer's lower threshold: τ = 133 µs, ~1 τ to go from 3.3 V to ~1.2 V.
RC_FASTEST_US = 30      # no RC at all (the jumper on the GPIO itself, or C1 missing): a few µs plus the kernel
RC_SLOWEST_US = 1000    # 1 µF instead of 100 nF, or 10 kΩ instead of 1 kΩ: ten times τ
SLOW_DELIVERY_US = 3000


def diagnose_jumper(result: dict, failures: list[str], bounces: int, settings: Settings) -> list[str]:
    """What the jumper run's figures say about the build, beyond missed presses (those are ``failures``)."""
    button = where(settings.player_buttons[0])
    diagnoses = []
    if failures and all("no edge" in failure for failure in failures):
        diagnoses.append(f"no edge on {button}: the jumper is missing, or not on button 1's terminal (the top of "
                         f"R1/R2), or the channel's buffer is unpowered")
    elif any("won" in failure for failure in failures):
        diagnoses.append("the jumper drives another player's channel: it goes to button 1's terminal")
    if bounces:
        diagnoses.append(f"{bounces} extra edges on {button} while the jumper switched cleanly: the RC filter or "
                         f"the Schmitt buffer is missing")
    if result.get("precision") == "kernel" and "drive_to_edge" in result:
        median = result["drive_to_edge"]["median_us"]
        if median < RC_FASTEST_US:
            diagnoses.append(f"the edge comes {median:.0f} µs after the drive, no RC delay: the jumper is on "
                             f"{button} itself (fighting the buffer) or C1 (100 nF) is missing")
        elif median > RC_SLOWEST_US:
            diagnoses.append(f"the edge comes {median:.0f} µs after the drive, slower than the RC's ~130 µs: "
                             f"C1 is larger than 100 nF or R2 larger than 1 kΩ")
        if result["edge_to_arrival"]["median_us"] > SLOW_DELIVERY_US:
            diagnoses.append("edges reach the capture core late (median over 3 ms): another process keeps the "
                             "CPU busy, or the service is not real-time")
    return diagnoses


def _press_check(rig: Rig, start: int, channel: int, name: str, pin: int, say, timeout_s: float,
                 settle_s: float, faults: list) -> bool:
    """Wait for ``channel``'s press (edges from index ``start`` on); then count its edges for ``settle_s``
    (the press and its release)."""
    if not _wait(lambda: any(edge[2] for edge in rig.edges_since(start, channel)), timeout_s):
        others = sorted({edge[0] for edge in rig.edges_since(start) if edge[2] and edge[0] != channel})
        if others:
            other = others[0]
            other_name, other_pin = next((n, p) for c, n, p in rig.channels() if c == other)
            fault = WRONG_PIN.format(name=name, other=other_name, other_where=where(other_pin),
                                     other_header=HEADER_PIN.get(other_pin, "?"), header=HEADER_PIN.get(pin, "?"))
        else:
            fault = NO_EDGE.format(where=where(pin), seconds=timeout_s, header=HEADER_PIN.get(pin, "?"))
        say(f"  {name}: FAIL {fault}")
        faults.append(f"{name}: {fault}")
        return False
    first = next(edge for edge in rig.edges_since(start, channel) if edge[2])
    time.sleep(settle_s)
    edges = [edge for edge in rig.edges_since(start, channel) if edge[1] >= first[1]]
    if len(edges) > 2:
        fault = BOUNCING.format(edges=len(edges))
        say(f"  {name}: FAIL {fault}")
        faults.append(f"{name}: {fault}")
        return False
    say(f"  {name}: {where(pin)} pressed and released cleanly ({len(edges)} edges)  OK")
    return True


def interactive_check(rig: Rig, say: Callable[[str], None], ask: Callable[[str], bool],
                      timeout_s: float = 60.0, rest_s: float = 2.0, settle_s: float = 0.5) -> dict:
    """Walk the host through the lines at rest, every button, LED, the buzzer and the reset button. ``say``
    prints an instruction (a test's ``say`` may press the mock button it names); ``ask`` puts a yes/no
    question. Returns per-item results, ``faults`` (each with its likely cause) and ``ok``.

    The box is disarmed meanwhile, so presses light nothing by themselves: after each press the check lights
    that player's LED itself and keeps it lit while the host answers (no need to hold the button), then puts it
    out and asks again.
    """
    settings = rig.settings
    results: dict[str, bool] = {}
    rig.capture.execute("reset", {})
    faults: list[str] = []
    try:
        rest = rest_check(rig, rest_s, say)
        faults += rest.pop("faults")
        rest.pop("ok")
        results.update(rest)
        for channel, name, pin in rig.channels()[:-1]:
            start = len(rig.edges)
            say(f"Press button {channel} once / Нажмите кнопку {channel} один раз")
            results[name] = _press_check(rig, start, channel, name, pin, say, timeout_s, settle_s, faults)
            if not results[name]:
                continue
            led_pin = settings.player_leds[channel - 1]
            rig.capture.execute("led", {"player": channel, "on": True})
            lit_when_on = ask(f"Is LED {channel} lit? / Горит лампа {channel}?")
            rig.capture.execute("led", {"player": channel, "on": False})
            lit_when_off = not ask(f"Is LED {channel} dark now? / Лампа {channel} погасла?")
            fault = None
            if not lit_when_on:
                fault = (LED_INVERTED if lit_when_off else LED_REVERSED).format(player=channel, where=where(led_pin))
            elif lit_when_off:
                fault = LED_ALWAYS_ON.format(player=channel, where=where(led_pin))
            results[f"led {channel}"] = fault is None
            if fault:
                say(f"  led {channel}: FAIL {fault}")
                faults.append(f"led {channel}: {fault}")
        rig.hardware.beeper.beep(settings.buzzer_ms)
        results["buzzer"] = ask("Did the buzzer sound? / Прозвучал сигнал?")
        if not results["buzzer"]:
            say(f"  buzzer: FAIL {BUZZER_SILENT} ({where(settings.buzzer_pin)})")
            faults.append(f"buzzer: {BUZZER_SILENT}")
        start = len(rig.edges)
        say("Press the host reset button once / Нажмите кнопку сброса ведущего один раз")
        results["reset button"] = _press_check(rig, start, 0, "reset button", settings.reset_button, say,
                                               timeout_s, settle_s, faults)
    finally:
        rig.capture.execute("reset", {})
    for item, good in results.items():
        say(f"  {item:20} {'OK' if good else 'FAIL'}")
    if faults:
        say(f"Faults found / Найдено неисправностей: {len(faults)}")
        for fault in faults:
            say(f"  - {fault}")
    return {"ok": all(results.values()), "faults": faults, **results}
