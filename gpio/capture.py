"""The capture core: edges and commands in, LEDs and buzzer driven at once, events published.

One lock serialises the arbiter; the winner's LED is lit and the buzzer started **in the thread that delivered
the edge**, before any event is published, so the lockout never waits on the socket or the appliance.
With no appliance linked the box is a plain lockout system (*standalone*): every player eligible, the host reset
button re-arms.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from gpio.arbiter import Arbiter, Outcome
from appliance.errors import CaptureCommandError

log = logging.getLogger(__name__)


class Capture:
    """Ties the :class:`Arbiter` to the hardware and to ``publish(event: dict)``.

    ``hardware`` offers ``show(leds)``, ``held()``, ``beeper.beep(ms)``/``beeper.off()`` and, on the mock factory,
    ``buttons[i].pin`` (:class:`gpio.pins.TimedMockPin`). Construct it, then call :meth:`start`.
    """

    def __init__(self, *, players: int, debounce_ms: int, buzzer_ms: int, backend, instance: str,
                 publish: Callable[[dict], None], reset_hold_ms: int = 3000):
        self.backend = backend
        self.instance = instance
        self.buzzer_ms = buzzer_ms
        self.publish = publish
        self.arbiter = Arbiter(players, debounce_ms * 1_000_000, backend.precision)
        self.hardware = None
        self.lock = threading.RLock()
        self._local_rounds = 0
        self._reset_last_edge_ns: int | None = None
        self._debounce_ns = debounce_ms * 1_000_000
        # The reset button held this long asks for the host PIN (a host who lost it gets it back at the box)
        self.reset_hold_ms = reset_hold_ms
        self._hold_timer: threading.Timer | None = None
        # When the last winning press was decided and its LED written (hwcheck and the benchmarks read it).
        self.last_decision: dict | None = None

    def attach(self, hardware) -> None:
        self.hardware = hardware

    def start(self) -> None:
        """Publish the first status and arm a standalone round: the box works before any appliance connects."""
        with self.lock:
            self._arm_local()
            self._publish_status()

    # ------------------------------------------------------------------ edges (pin callback threads)
    def on_player_edge(self, player: int, ticks: int, pressed: bool) -> None:
        """An edge from a pin callback thread. ``ticks`` is already CLOCK_MONOTONIC integer ns (gpio.pins)."""
        arrival_ns = time.monotonic_ns()
        with self.lock:
            self._apply(self.arbiter.edge(player, ticks, pressed, arrival_ns), arrival_ns)

    def on_reset_edge(self, ticks: int, pressed: bool) -> None:
        """The host reset button always acts locally: LEDs off, a new round with every player eligible."""
        with self.lock:
            quiet = self._reset_last_edge_ns is None or ticks - self._reset_last_edge_ns >= self._debounce_ns
            self._reset_last_edge_ns = int(ticks)
            if not quiet:
                return
            if not pressed:
                self._cancel_hold()
                return
            # The round starts at the reset press's own timestamp, not when its callback ran: a player who
            # pressed just after the host, whose edge is delivered after the reset's, counts.
            round_id = self._arm_local(int(ticks))
            self.publish({"event": "reset_button", "t_ns": int(ticks), "round_id": round_id})
            self._start_hold(int(ticks))

    def _start_hold(self, pressed_ns: int) -> None:
        """Held for ``reset_hold_ms`` (no release edge meanwhile): ``reset_button_held`` is published."""
        self._cancel_hold()
        if self.reset_hold_ms <= 0:
            return
        timer = threading.Timer(self.reset_hold_ms / 1000, self._on_hold, args=(pressed_ns,))
        timer.daemon = True
        self._hold_timer = timer
        timer.start()

    def _cancel_hold(self) -> None:
        if self._hold_timer is not None:
            self._hold_timer.cancel()
            self._hold_timer = None

    def _on_hold(self, pressed_ns: int) -> None:
        with self.lock:
            if self._hold_timer is None or self._reset_last_edge_ns != pressed_ns:
                return  # released (or pressed again) meanwhile
            self._hold_timer = None
            self.publish({"event": "reset_button_held", "t_ns": pressed_ns, "held_ms": self.reset_hold_ms})

    def _arm_local(self, at_ns: int | None = None) -> str:
        self._local_rounds += 1
        round_id = f"local-{self.instance}-{self._local_rounds}"
        held = self.hardware.held() if self.hardware is not None else None
        players = range(1, self.arbiter.players + 1)
        at_ns = time.monotonic_ns() if at_ns is None else at_ns
        self._apply(self.arbiter.arm(players, round_id, at_ns, self.arbiter.mode, held), None)
        return round_id

    def _apply(self, outcome: Outcome, arrival_ns: int | None) -> None:
        # Order matters: LED first, then the buzzer, then the events (built only now: Outcome.defer).
        decided_ns = time.monotonic_ns()
        if outcome.leds is not None and self.hardware is not None:
            try:
                self.hardware.show(outcome.leds)
            except Exception as error:  # a pin call failed: report it, keep judging (process edge)
                log.exception("LED write failed")
                self.publish({"event": "fault", "kind": "pin-error", "player": None, "detail": f"LEDs: {error}"})
        led_ns = time.monotonic_ns()
        if outcome.beep and self.hardware is not None:
            try:
                self.hardware.beeper.beep(self.buzzer_ms)
            except Exception as error:  # same: the lockout must not die with the buzzer
                log.exception("buzzer failed")
                self.publish({"event": "fault", "kind": "pin-error", "player": None, "detail": f"buzzer: {error}"})
        for event in outcome.events:
            if event["event"] == "lockout" and arrival_ns is not None:
                self.last_decision = {"player": event["winner"], "t_ns": event["t_ns"], "arrival_ns": arrival_ns,
                                      "decided_ns": decided_ns, "led_ns": led_ns}
            self.publish(event)

    # ------------------------------------------------------------------ link state
    def set_linked(self, linked: bool) -> None:
        """An appliance was welcomed (or lost): record the mode and publish a status snapshot."""
        with self.lock:
            self.arbiter.set_mode("linked" if linked else "standalone")
            self._publish_status()

    def status(self) -> dict:
        with self.lock:
            return {**self.arbiter.snapshot(), "factory": self.backend.name, "precision": self.backend.precision,
                    "degraded": list(self.backend.degraded), "simulator": self.backend.is_mock,
                    "instance": self.instance}

    def _publish_status(self) -> None:
        self.publish({"event": "status", **self.status()})

    # ------------------------------------------------------------------ commands (server thread)
    def execute(self, op: str, args: dict) -> dict:
        """Apply one validated command; return the reply's ``result``. Raises :class:`CaptureCommandError`."""
        if op in ("sim_press", "sim_release"):
            return self._simulate(op, args["player"], args.get("hold_ms"))
        with self.lock:
            arbiter = self.arbiter
            if op == "arm":
                same = (arbiter.armed and arbiter.round_id == args["round_id"] and arbiter.winner is None
                        and sorted(arbiter.eligible) == args["eligible"])
                if not same:
                    mode = "linked" if arbiter.mode == "linked" else "standalone"
                    held = self.hardware.held() if self.hardware is not None else None
                    self._apply(arbiter.arm(args["eligible"], args["round_id"], time.monotonic_ns(), mode, held), None)
                return {"armed_at_ns": arbiter.armed_at_ns, "held": arbiter.held(), "stuck": sorted(arbiter.stuck)}
            if op == "eligible":
                self._apply(arbiter.set_eligible(args["eligible"]), None)
                return {"eligible": sorted(arbiter.eligible), "armed": arbiter.armed}
            if op == "disarm":
                self._apply(arbiter.disarm(), None)
                return {}
            if op == "reset":
                self._apply(arbiter.reset(), None)
                if self.hardware is not None:
                    self.hardware.beeper.off()
                return {}
            if op == "led":
                self._apply(arbiter.set_led(args["player"], args["on"]), None)
                return {"leds": list(arbiter.leds)}
            if op == "beep":
                ms = args["ms"] or self.buzzer_ms
                if self.hardware is not None:
                    self.hardware.beeper.beep(ms)
                return {"ms": ms}
            if op == "button_test":
                before = arbiter.button_test
                self._apply(arbiter.set_button_test(args["on"]), None)
                if before != arbiter.button_test:
                    self._publish_status()
                return {}
            if op == "status":
                return self.status()
        raise CaptureCommandError("bad-op", f"unknown op {op!r}")

    def _simulate(self, op: str, player: int, hold_ms: int | None = None) -> dict:
        if not self.backend.is_mock or self.hardware is None:
            raise CaptureCommandError("not-simulator", f"{op}: the service runs on real pins ({self.backend.name})")
        pin = self.hardware.reset.pin if player == 0 else self.hardware.buttons[player - 1].pin
        # Outside the lock: the mock pin calls back into on_player_edge in this thread, as lgpio's thread would.
        if op == "sim_press":
            pin.drive_low()
            if hold_ms:
                # A page that may never send the release (closed tab, lost key-up) asks for one in advance.
                release = threading.Timer(hold_ms / 1000, pin.drive_high)
                release.daemon = True
                release.start()
        else:
            pin.drive_high()
        return {}
