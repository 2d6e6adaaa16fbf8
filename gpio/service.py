"""The capture service's composition root: pins, arbiter, socket server, systemd notifications, signals.

``svoyak capture`` calls :func:`main`; tests build a :class:`CaptureService` on the mock factory directly.
Process needs (user, working directory, socket, unit type) are listed in docs/capture-protocol.md.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import threading
import time
import warnings
from pathlib import Path
from typing import Callable

from appliance.config import Settings
from appliance.errors import DegradedModeWarning
from gpio.capture import Capture
from gpio.devices import Hardware
from gpio.lock import LOCK_NAME, CaptureLock
from gpio.pins import Backend, open_backend, prepare_lgpio_workdir
from gpio.sdnotify import Notifier
from gpio.server import Server

log = logging.getLogger(__name__)


def open_backend_for(settings: Settings) -> Backend:
    """Open the configured pin factory; for lgpio, first make sure the working directory is writable (lgpio
    makes its notification FIFO there when imported): $RUNTIME_DIRECTORY, $STATE_DIRECTORY, the socket's dir."""
    if settings.pin_factory == "lgpio":
        prepare_lgpio_workdir([Path(p) for p in (os.environ.get("RUNTIME_DIRECTORY", ""),
                                                 os.environ.get("STATE_DIRECTORY", "")) if p]
                              + [Path(settings.capture_socket).parent])
    return open_backend(settings.pin_factory, settings.gpio_chip)


class CaptureService:
    """Everything of one capture process, wired. :meth:`start`, then :meth:`serve` until stopped, :meth:`close`.

    ``observers`` receive every published event too (the terminal keyboard mode prints them); they run in the
    publishing thread, so they must be quick.
    """

    def __init__(self, settings: Settings, backend: Backend | None = None, notifier: Notifier | None = None):
        self.settings = settings
        self.backend = backend if backend is not None else open_backend_for(settings)
        self.notifier = notifier or Notifier()
        self.instance = secrets.token_hex(6)
        self.observers: list[Callable[[dict], None]] = []
        self.stopped = threading.Event()
        self.lock = CaptureLock(Path(settings.data_dir) / LOCK_NAME)
        players = len(settings.player_buttons)
        self.server = Server(
            settings.capture_socket, instance=self.instance, heartbeat_ms=settings.capture_heartbeat_ms,
            timeout_ms=settings.capture_link_timeout_ms, execute=self._execute, players=players,
            on_link=self._on_link, welcome_info=self._welcome_info, announce=self._publish)
        self.capture = Capture(players=players, debounce_ms=settings.capture_debounce_ms,
                               buzzer_ms=settings.buzzer_ms, backend=self.backend, instance=self.instance,
                               publish=self._publish, reset_hold_ms=settings.reset_hold_ms)
        try:
            self.hardware = Hardware(
                self.backend.factory, player_buttons=settings.player_buttons, player_leds=settings.player_leds,
                buzzer_pin=settings.buzzer_pin, reset_button=settings.reset_button,
                active_low=settings.buttons_active_low, on_player_edge=self.capture.on_player_edge,
                on_reset_edge=self.capture.on_reset_edge, button_lines=self._button_lines(settings))
        except BaseException:
            self.server.close()
            raise
        self.capture.attach(self.hardware)

    def _button_lines(self, settings: Settings):
        """With ``button_reader = "cdev"`` on real pins: every button in one line request (gpio/cdev.py), on the
        chip the pin factory found by its label. The mock factory has no chip: its own buttons, always."""
        if settings.button_reader != "cdev" or self.backend.is_mock:
            return None
        from gpio.cdev import open_buttons
        from gpio.pins import find_header_chip

        def fault(detail: str) -> None:
            log.error("buttons: %s", detail)
            self._publish({"event": "fault", "kind": "pin-error", "player": None, "detail": detail})

        from gpio.cdev import CdevUnavailable

        try:
            return open_buttons(find_header_chip(settings.gpio_chip), player_offsets=settings.player_buttons,
                                reset_offset=settings.reset_button, active_low=settings.buttons_active_low,
                                on_player_edge=self.capture.on_player_edge,
                                on_reset_edge=self.capture.on_reset_edge, on_fault=fault)
        except CdevUnavailable as error:
            # gpiozero's buttons on the pin factory stay the fallback: the box works, the status says why.
            reason = f"cdev: {error}; the buttons are read through the pin factory, one line at a time"
            warnings.warn(DegradedModeWarning(reason), stacklevel=2)
            self.backend.degraded.append(reason)
            return None

    def _publish(self, event: dict) -> None:
        self.server.publish(event)
        for observer in self.observers:
            observer(event)

    def _execute(self, op: str, args: dict) -> dict:
        return self.capture.execute(op, args)

    def _on_link(self, up: bool) -> None:
        log.info("appliance %s", "linked" if up else "unlinked: standalone lockout")
        self.capture.set_linked(up)
        self.notifier.notify(f"STATUS={self.describe()}")

    def _welcome_info(self) -> dict:
        return {"factory": self.backend.name, "precision": self.backend.precision,
                "players": len(self.settings.player_buttons), "simulator": self.backend.is_mock}

    def describe(self) -> str:
        mode = "linked" if self.server.linked else "standalone"
        reader = ", buttons in one cdev line request" if self.hardware.button_lines is not None else ""
        return (f"{mode}, {len(self.settings.player_buttons)} players, {self.backend.name} "
                f"({self.backend.precision}){reader}")

    def start(self) -> None:
        """Listen, arm the standalone round, tell systemd we are ready."""
        for reason in self.backend.degraded:
            log.warning("degraded: %s", reason)
        self.lock.acquire()  # one capture per data directory; a stale one is ended first (gpio/lock.py)
        self.server.listen()
        self.server.start()
        self.capture.start()
        self.notifier.notify("READY=1", f"STATUS={self.describe()}")
        log.info("capture service ready on %s: %s", self.settings.capture_socket, self.describe())

    def serve(self) -> None:
        """Block until :meth:`stop`, sending ``WATCHDOG=1`` on time when systemd asked for it, and only while
        the service is healthy: a dead socket thread or a capture lock held for a whole interval (a hung pin
        call) stops the pats, and systemd restarts the service."""
        interval = self.notifier.watchdog_interval_s or 1.0
        while not self.stopped.wait(interval):
            if self.notifier.watchdog_interval_s and self.healthy(timeout_s=interval):
                self.notifier.notify("WATCHDOG=1")

    def healthy(self, timeout_s: float) -> bool:
        """The socket thread runs and the capture core is not stuck (its lock can be taken within the timeout)."""
        if not self.server.running:
            log.error("watchdog: the socket thread is gone")
            return False
        if not self.capture.lock.acquire(timeout=timeout_s):
            log.error("watchdog: the capture core has been busy for %.1f s", timeout_s)
            return False
        self.capture.lock.release()
        return True

    def stop(self) -> None:
        self.stopped.set()

    def close(self) -> None:
        """Say STOPPING, close the socket, turn every LED and the buzzer off, release the pins."""
        self.notifier.notify("STOPPING=1")
        self.server.close()
        self.hardware.close()
        self.backend.close()
        self.lock.release()


def main(settings: Settings, keyboard: bool = False) -> int:
    """Run the capture service until SIGTERM or SIGINT; exit 0 after a clean shutdown (LEDs off)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s capture %(levelname)s %(message)s")
    logging.captureWarnings(True)
    with warnings.catch_warnings():
        warnings.simplefilter("always", DegradedModeWarning)
        service = CaptureService(settings)
    signal.signal(signal.SIGTERM, lambda *_: service.stop())
    signal.signal(signal.SIGINT, lambda *_: service.stop())
    try:
        service.start()
        if keyboard:
            from gpio.keyboard import KeyboardSimulator

            KeyboardSimulator(service).run_in_thread()
        service.serve()
    finally:
        service.close()
        log.info("capture service stopped")
    return 0


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds (tools and tests waiting on another thread)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True
