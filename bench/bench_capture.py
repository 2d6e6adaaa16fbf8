"""Capture service speed, side by side in one run, on gpiozero's mock pins (``./dev bench capture``).

1. Press to LED: a press driven on a mock pin until the winner's LED pin is written, through the whole capture
   path (EdgeButton -> Capture lock -> Arbiter -> Hardware.show), against a bare gpiozero pin callback that
   calls ``LED.on()``, on spare pins of the same mock factory, interleaved round by round. Target: our median
   at most 2x the bare callback's. Also shown: the floor, a bare callback writing the LED's pin directly
   (as our Hardware.show does), for an honest view of what the arbiter itself costs.
2. Press to engine: the pin driven until the appliance's ``CaptureLink.on_event`` receives the press, over the
   real Unix socket. Target: median under 1 ms.
3. Sustained presses: presses on all four buttons as fast as one thread can drive them, while linked; every
   press must reach the appliance exactly once. Target: none lost; rate printed.
4. Correction: a press that arrives after the winner but is stamped earlier, until the LEDs switch (the cost of
   "commit at once, correct" instead of a settle window; docs/capture-protocol.md *Ordering*).
"""

from __future__ import annotations

import gc
import tempfile
import threading
import time
from pathlib import Path

from gpiozero import LED, DigitalInputDevice

from appliance import config
from appliance.service.capture_link import CaptureLink
from bench import median, percentile
from gpio.pins import open_backend
from gpio.sdnotify import Notifier
from gpio.service import CaptureService, wait_for

MS = 1_000_000
ROUNDS = 3000


def _settings(directory: Path):
    return config.load(overrides={"data_dir": directory, "simulator": True, "capture_socket": directory / "c.sock",
                                  "capture_heartbeat_ms": 200, "capture_link_timeout_ms": 2000},
                       environ={}, config_path=None)


def press_to_led(service: CaptureService, rounds: int) -> tuple[list[int], list[int]]:
    """Press to LED, interleaved round by round so both paths see the same machine state:

    - bare: gpiozero alone, a pin callback that lights an LED, on spare mock pins of the same factory;
    - ours: the capture path (EdgeButton -> Capture -> Arbiter -> Hardware.show), armed before each press.
    """
    factory = service.backend.factory
    led = LED(20, pin_factory=factory)
    # A DigitalInputDevice sets up the pin exactly as our EdgeButton does (pull-up, edge detection).
    button = DigitalInputDevice(21, pull_up=True, pin_factory=factory)
    bare_pin = button.pin
    led_at = [0]

    def on_changed(ticks, state):
        if not state:
            led.on()
            led_at[0] = time.monotonic_ns()

    floor_led = LED(16, pin_factory=factory)
    floor_led_pin = floor_led.pin
    floor_button = DigitalInputDevice(12, pull_up=True, pin_factory=factory)
    floor_pin = floor_button.pin

    def on_changed_floor(ticks, state):
        if not state:
            floor_led_pin.state = True
            led_at[0] = time.monotonic_ns()

    bare_pin.when_changed = on_changed
    floor_pin.when_changed = on_changed_floor
    capture = service.capture
    pin = service.hardware.buttons[0].pin
    bare, ours, floor = [], [], []
    base = time.monotonic_ns()
    for index in range(rounds):
        stamp = base + index * 50 * MS  # past each release by more than the debounce window
        led.off()
        start = time.monotonic_ns()
        bare_pin.drive_low(t_ns=stamp)
        bare.append(led_at[0] - start)
        bare_pin.drive_high(t_ns=stamp + 25 * MS)

        floor_led_pin.state = False
        start = time.monotonic_ns()
        floor_pin.drive_low(t_ns=stamp)
        floor.append(led_at[0] - start)
        floor_pin.drive_high(t_ns=stamp + 25 * MS)

        capture.execute("arm", {"eligible": [1, 2, 3, 4], "round_id": f"b{index}"})
        start = time.monotonic_ns()
        pin.drive_low(t_ns=max(start, stamp))
        ours.append(capture.last_decision["led_ns"] - start)
        pin.drive_high(t_ns=max(start, stamp) + 25 * MS)
    for device in (button, led, floor_button, floor_led):
        device.close()
    return bare, ours, floor


def correction_to_led(service: CaptureService, rounds: int) -> list[int]:
    capture = service.capture
    first, second = service.hardware.buttons[2].pin, service.hardware.buttons[3].pin
    samples = []
    base = time.monotonic_ns()
    for index in range(rounds):
        capture.execute("arm", {"eligible": [1, 2, 3, 4], "round_id": f"c{index}"})
        t = max(time.monotonic_ns(), base + index * 50 * MS)  # stamps move forward past each release
        first.drive_low(t_ns=t + 1000)  # arrives first, stamped 1 µs later
        start = time.monotonic_ns()
        second.drive_low(t_ns=t)
        samples.append(capture.last_decision["led_ns"] - start)
        assert capture.arbiter.winner == 4
        first.drive_high(t_ns=t + 25 * MS)
        second.drive_high(t_ns=t + 25 * MS)
    return samples


class Appliance:
    """The appliance's side for the whole run: one CaptureLink, events handed to the current ``handler``.

    Linked from the start, as on the box, so every event is acknowledged as it comes (nothing piles up)."""

    def __init__(self, socket_path):
        self.handler = None
        self.link = CaptureLink(socket_path, self._on_event, 200, 2000).start()
        self.link.wait_connected(5)

    def _on_event(self, event):
        if self.handler is not None:
            self.handler(event)

    def close(self):
        self.link.close()


def press_to_engine(service: CaptureService, appliance: Appliance, rounds: int) -> list[int]:
    """From driving the pin to ``on_event`` running in the appliance process's link thread."""
    received = {}
    arrived = threading.Condition()

    def on_event(event):
        if event["event"] == "press":
            with arrived:
                received[event["t_ns"]] = time.monotonic_ns()
                arrived.notify()

    appliance.handler = on_event
    samples = []
    pin = service.hardware.buttons[1].pin
    base = time.monotonic_ns()
    for index in range(rounds):
        start = time.monotonic_ns()
        stamp = max(start, base + index * 50 * MS)  # past the last release: never taken for a bounce
        pin.drive_low(t_ns=stamp)
        with arrived:
            if not arrived.wait_for(lambda: stamp in received, timeout=5):
                raise RuntimeError(f"press {index} never reached the appliance (linked: {appliance.link.connected}, "
                                   f"reconnects {appliance.link.reconnects}, position {appliance.link.position}, "
                                   f"unacked {service.server.unacknowledged})")
        samples.append(received[stamp] - start)
        pin.drive_high(t_ns=stamp + 25 * MS)
        time.sleep(0.0002)  # let the ack go: one press at a time, not a queue
    appliance.handler = None
    return samples


def sustained(service: CaptureService, appliance: Appliance, presses: int) -> tuple[float, int, int]:
    """Drive ``presses`` presses round-robin on all buttons as fast as one thread can; return
    (presses per second until the last is received, presses sent, presses received exactly once)."""
    seqs = []
    done = threading.Event()

    def on_event(event):
        if event["event"] == "press":
            seqs.append(event["seq"])
            if len(seqs) == presses:
                done.set()

    appliance.handler = on_event
    pins = [button.pin for button in service.hardware.buttons]
    # Stamps must move forward past every earlier stage's presses, or they would be taken for chatter.
    t = max(time.monotonic_ns(), *(state.last_edge_ns or 0 for state in service.capture.arbiter.inputs)) + 10**9
    start = time.perf_counter()
    for index in range(presses):
        pin = pins[index % len(pins)]
        stamp = t + index * 30 * MS  # each button quiet for > debounce between its presses
        pin.drive_low(t_ns=stamp)
        pin.drive_high(t_ns=stamp + 10 * MS)
    done.wait(60)
    elapsed = time.perf_counter() - start
    wait_for(lambda: service.server.unacknowledged == 0, 5)
    appliance.handler = None
    unique = len(set(seqs)) if len(seqs) == len(set(seqs)) else -1
    return presses / elapsed, presses, unique


def run(report) -> None:
    rounds, presses, burst = (30, 20, 200) if report.short else (ROUNDS, 1000, 20_000)
    gc.disable()  # measure the code, not the collector's pauses
    try:
        with tempfile.TemporaryDirectory(prefix="svoyak-bench-") as directory:
            service = CaptureService(_settings(Path(directory)), backend=open_backend("mock"),
                                     notifier=Notifier(environ={}))
            service.start()
            appliance = Appliance(service.settings.capture_socket)
            try:
                bare, ours, floor = press_to_led(service, rounds)
                report.figure("press to LED, bare gpiozero callback + LED.on(), median", median(bare) / 1000, "µs")
                report.figure("press to LED, bare callback writing the pin (floor), median", median(floor) / 1000,
                              "µs")
                report.figure("press to LED, capture path, median", median(ours) / 1000, "µs")
                report.figure("press to LED, capture path, p99", percentile(ours, 0.99) / 1000, "µs")
                report.ratio("press to LED overhead vs bare callback (median)", median(ours), median(bare),
                             target=2.0)
                report.ratio("press to LED vs the floor (no target: information)", median(ours), median(floor))
                correction = correction_to_led(service, rounds // 3)
                report.figure("earlier-stamped late press to LED switch, median", median(correction) / 1000, "µs")
                engine = press_to_engine(service, appliance, presses)
                report.figure("press to engine over the socket, median", median(engine) / 1e6, "ms", target=1.0)
                report.figure("press to engine over the socket, p99", percentile(engine, 0.99) / 1e6, "ms")
                rate, sent, received = sustained(service, appliance, burst)
                report.figure("sustained presses per second (linked, all reported)", rate, "/s")
                report.figure(f"presses lost or doubled of {burst}", sent - received, "", target=0)
            finally:
                appliance.close()
                service.close()
    finally:
        gc.enable()
