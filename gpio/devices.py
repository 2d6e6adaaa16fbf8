"""The box's hardware as gpiozero devices: player buttons, their LEDs, the buzzer and the host reset button.

Wiring and pin table: gpio/WIRING.md. Buttons are active low with pull-ups (the hardware debounce circuit holds
the line high at rest). Every edge reaches ``on_edge(index, ticks, pressed)`` with the pin factory's ticks, which
:mod:`gpio.pins` makes CLOCK_MONOTONIC integer nanoseconds. gpiozero's software debounce (``bounce_time``) is
never set: it would drop the first edge's timestamp in favour of a later one.
"""

from __future__ import annotations

import functools
import threading
import time
from typing import Callable

from gpiozero import LED, Buzzer, DigitalInputDevice

from appliance.errors import CaptureError


class PinsUnavailable(CaptureError, RuntimeError):
    """A pin of the box could not be opened (busy, no permission, not a GPIO)."""


class EdgeButton(DigitalInputDevice):
    """A button that reports every raw edge, with its timestamp, before gpiozero's own handling.

    Active low (closes to ground, pull-up) unless ``active_low`` is false (closes to 3.3 V, pull-down).

    ``on_edge(ticks, pressed)`` runs in the pin factory's callback thread (lgpio's callback thread, RPi.GPIO's
    event thread, or the thread that drives a mock pin).
    """

    def __init__(self, pin, *, on_edge: Callable[[int, bool], None], pin_factory=None, active_low: bool = True):
        self._on_edge = on_edge
        self._pressed_level = 0 if active_low else 1
        super().__init__(pin, pull_up=active_low, bounce_time=None, pin_factory=pin_factory)

    def _pin_changed(self, ticks, state):
        # state is the line level at the edge: 0 (low) is pressed for an active-low button.
        if state != 2:  # lgpio reports 2 for its watchdog timeouts (never enabled here): not an edge
            self._on_edge(ticks, state == self._pressed_level)
        super()._pin_changed(ticks, state)


class Beeper:
    """The buzzer: ``beep(ms)`` turns it on at once in the caller's thread; one thread of its own turns it off.

    No thread is started per beep, so a beep costs one pin write on the press path.
    """

    def __init__(self, buzzer: Buzzer):
        self._buzzer = buzzer
        self._off_at: float | None = None
        self._condition = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="capture-beeper", daemon=True)
        self._thread.start()

    def beep(self, ms: int) -> None:
        self._buzzer.on()
        with self._condition:
            self._off_at = time.monotonic() + ms / 1000
            self._condition.notify()

    def off(self) -> None:
        with self._condition:
            self._off_at = None
        self._buzzer.off()

    def _run(self) -> None:
        with self._condition:
            while not self._closed:
                if self._off_at is None:
                    self._condition.wait()
                    continue
                delay = self._off_at - time.monotonic()
                if delay > 0:
                    self._condition.wait(delay)
                    continue
                self._off_at = None
                self._buzzer.off()

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify()
        self._thread.join(1)
        self._buzzer.off()


class Hardware:
    """Every device of the box, opened on ``factory`` from the settings' pin numbers (BCM).

    ``on_player_edge(player, ticks, pressed)`` (player from 1) and ``on_reset_edge(ticks, pressed)`` receive
    the edges. :meth:`close` turns every LED and the buzzer off and releases the pins.

    ``button_lines`` (a :class:`gpio.cdev.CdevButtons`, made with the same callbacks): the buttons are read in
    one line request instead of one gpiozero device each; the factory then drives only the LEDs and buzzer.
    """

    def __init__(self, factory, *, player_buttons, player_leds, buzzer_pin: int, reset_button: int,
                 active_low: bool = True, on_player_edge: Callable[[int, int, bool], None], on_reset_edge: Callable[[int, bool], None],
                 button_lines=None):
        self.factory = factory
        self.leds: list[LED] = []
        self.buttons: list[EdgeButton] = []
        self.buzzer: Buzzer | None = None
        self.reset: EdgeButton | None = None
        self.beeper: Beeper | None = None
        self.button_lines = button_lines
        try:
            self.leds = [LED(pin, pin_factory=factory) for pin in player_leds]
            self._shown = (False,) * len(self.leds)
            self._led_pins = [led.pin for led in self.leds]
            self.buzzer = Buzzer(buzzer_pin, pin_factory=factory)
            self.beeper = Beeper(self.buzzer)
            if button_lines is None:
                for player, pin in enumerate(player_buttons, start=1):
                    self.buttons.append(EdgeButton(pin, on_edge=functools.partial(on_player_edge, player),
                                                   pin_factory=factory, active_low=active_low))
                self.reset = EdgeButton(reset_button, on_edge=on_reset_edge, pin_factory=factory,
                                        active_low=active_low)
            else:
                button_lines.start()
        except Exception as error:  # gpiozero's pin errors, lgpio.error ("GPIO busy"), OSError: all one message
            self.close()
            raise PinsUnavailable(
                f"cannot open the box's pins ({type(error).__name__}: {error}); another capture service or "
                f"hwcheck may hold them (systemctl stop the capture unit first)") from error

    def show(self, leds) -> None:
        """Set every LED to ``leds`` (a sequence of bools, player 1 first); only changed LEDs are written.

        The last written states are kept here, so the press path writes one pin and reads none.
        """
        shown = self._shown
        if leds == shown:
            return
        for pin, on, was in zip(self._led_pins, leds, shown):
            if on != was:
                # The LEDs are gpiozero LED devices (active high); on the press path we write their pins
                # directly, skipping the device layer's blink bookkeeping we never use (measured: 0.5 of the
                # 1.2 µs an LED.on() costs on mock pins, bench/bench_capture.py).
                pin.state = on
        self._shown = tuple(leds)

    def held(self) -> list[int]:
        """Players whose button reads pressed right now."""
        if self.button_lines is not None:
            return self.button_lines.held_players()
        return [player for player, button in enumerate(self.buttons, start=1) if button.is_active]

    def close(self) -> None:
        if self.button_lines is not None:
            self.button_lines.close()
            self.button_lines = None
        if self.beeper is not None:
            self.beeper.close()
        for device in [*self.leds, self.buzzer]:
            if device is not None:
                device.off()
        for device in [*self.buttons, self.reset, *self.leds, self.buzzer]:
            if device is not None:
                device.close()
