"""Terminal keyboard buzzers for the simulator: ``svoyak capture --simulator --keyboard``.

Keys (two sets, so four people can share one laptop keyboard):

====================  =========================================
``1`` or ``z``        player 1
``2`` or ``x``        player 2
``3`` or ``n``        player 3
``4`` or ``m``        player 4
``r`` or space        host reset button (new round, LEDs off)
``t``                 button-test mode on/off
``q`` or Ctrl-C       quit
====================  =========================================

A terminal reports key presses but not releases, so a key is a press followed by a release ``hold_ms`` later.
Each key drives the player's **mock pin** inside the capture process, so the whole real path runs
(pin -> arbiter -> LED -> buzzer -> event); the events are printed as they happen.

>>> describe({"event": "press", "player": 2, "status": "counted", "rank": 2, "gap_ns": 34_000_000, "tie": False})
'player 2: counted #2 +0.034000 s'
"""

from __future__ import annotations

import os
import queue
import select
import sys
import threading

KEYS = {"1": 1, "z": 1, "2": 2, "x": 2, "3": 3, "n": 3, "4": 4, "m": 4}
RESET_KEYS = frozenset({"r", " "})
TEST_KEY = "t"
QUIT_KEYS = frozenset({"q", "\x03", "\x04"})


def describe(event: dict) -> str:
    """One event as one line for the terminal."""
    kind = event["event"]
    if kind == "press":
        text = f"player {event['player']}: {event['status']}"
        if event.get("rank"):
            text += f" #{event['rank']}"
        if event.get("gap_ns") is not None and event.get("rank", 1) != 1:
            text += f" +{event['gap_ns'] / 1e9:.6f} s"
        return text + (" (tie)" if event.get("tie") else "")
    if kind == "lockout":
        corrected = f", corrects player {event['corrects']}" if event.get("corrects") else ""
        return f"LOCKOUT: player {event['winner']} lights{corrected}"
    if kind == "reset_button":
        return "reset: new round, every player eligible"
    if kind == "fault":
        return f"fault: {event['kind']} {event.get('player') or ''} {event.get('detail', '')}".strip()
    if kind == "status":
        return f"status: {event['mode']}, {'armed' if event['armed'] else 'disarmed'}, leds {event['leds']}"
    return f"{kind}: {event}"


class KeyboardSimulator:
    """Reads single keys from a terminal and presses the mock buttons of ``service`` (a started
    :class:`gpio.service.CaptureService` on the mock factory)."""

    def __init__(self, service, stdin=None, stdout=None, hold_ms: int = 120):
        if not service.backend.is_mock:
            raise ValueError("keyboard buzzers need the mock pin factory: run with --simulator")
        self.service = service
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.hold_s = hold_ms / 1000
        self.printed: queue.Queue = queue.Queue()
        service.observers.append(self.printed.put)

    def handle_key(self, key: str) -> bool:
        """Act on one key; False when it asks to quit."""
        key = key.lower()
        if key in QUIT_KEYS:
            return False
        hardware = self.service.hardware
        if key in KEYS and KEYS[key] <= len(hardware.buttons):
            self._tap(hardware.buttons[KEYS[key] - 1].pin)
        elif key in RESET_KEYS:
            self._tap(hardware.reset.pin)
        elif key == TEST_KEY:
            on = not self.service.capture.arbiter.button_test
            self.service.capture.execute("button_test", {"on": on})
            self._say(f"button test {'on' if on else 'off'}")
        return True

    def _tap(self, pin) -> None:
        pin.drive_low()
        timer = threading.Timer(self.hold_s, pin.drive_high)
        timer.daemon = True
        timer.start()

    def _say(self, text: str) -> None:
        self.stdout.write(text + "\r\n")
        self.stdout.flush()

    def _drain(self) -> None:
        while True:
            try:
                self._say(describe(self.printed.get_nowait()))
            except queue.Empty:
                return

    def run(self) -> None:
        """Read keys until a quit key (or end of input); the terminal is put in cbreak mode meanwhile."""
        fd = self.stdin.fileno()
        restore = None
        if os.isatty(fd):
            import termios
            import tty

            restore = termios.tcgetattr(fd)
            tty.setcbreak(fd)  # before the banner: a key typed as soon as it shows is read at once
        self._say("keys: 1-4 or z x n m = players, r/space = reset, t = button test, q = quit")
        try:
            while not self.service.stopped.is_set():
                self._drain()
                ready, _, _ = select.select([fd], [], [], 0.05)
                if not ready:
                    continue
                data = os.read(fd, 32).decode(errors="ignore")
                if not data or not all(self.handle_key(key) for key in data):
                    break
            self._drain()
        finally:
            if restore is not None:
                import termios

                termios.tcsetattr(fd, termios.TCSADRAIN, restore)

    def run_in_thread(self) -> threading.Thread:
        """Run the keyboard in a thread; quitting stops the service."""

        def target():
            try:
                self.run()
            finally:
                self.service.stop()

        thread = threading.Thread(target=target, name="capture-keyboard", daemon=True)
        thread.start()
        return thread
