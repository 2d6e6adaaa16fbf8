"""systemd's notify protocol (sd_notify) with the standard library: READY=1 once serving, WATCHDOG=1 while healthy.

The serving process (the gunicorn worker that holds the session) sends these, not gunicorn's arbiter, so
"ready" means "the app is built and the session runs"; the unit needs ``NotifyAccess=all`` and may set
``WatchdogSec=``. With no ``NOTIFY_SOCKET`` (a laptop, tests) every call is a no-op.

>>> Notifier(None).send("READY=1")
False
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Callable

log = logging.getLogger(__name__)


def systemd_environment(environ=os.environ, pop: bool = False) -> tuple[str | None, int | None]:
    """``(NOTIFY_SOCKET, WATCHDOG_USEC)`` as systemd set them for this service (protocol variables, not settings).

    ``pop=True`` removes them, so a child (gunicorn's arbiter) does not report "ready" before the worker is.
    """
    get = environ.pop if pop else environ.get
    path = get("NOTIFY_SOCKET", None)
    usec = get("WATCHDOG_USEC", None)
    get("WATCHDOG_PID", None)
    return path, (int(usec) if usec and usec.isdigit() else None)


class Notifier:
    """Sends datagrams to systemd's notify socket (``@name`` is the abstract namespace)."""

    def __init__(self, socket_path: str | None) -> None:
        self.socket_path = socket_path
        self._watchdog: threading.Thread | None = None
        self._stop = threading.Event()

    def send(self, message: str) -> bool:
        if not self.socket_path:
            return False
        address = "\0" + self.socket_path[1:] if self.socket_path.startswith("@") else self.socket_path
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(address)
                sock.sendall(message.encode())
            return True
        except OSError as error:
            log.warning("sd_notify %r failed: %s", message, error)
            return False

    def start_watchdog(self, interval_us: int | None, is_healthy: Callable[[], bool]) -> None:
        """Send WATCHDOG=1 every half ``interval_us`` while ``is_healthy()``; stop pinging when it is not,
        so systemd restarts a wedged service."""
        if not self.socket_path or not interval_us:
            return
        period_s = interval_us / 2e6

        def ping() -> None:
            while not self._stop.wait(period_s):
                if is_healthy():
                    self.send("WATCHDOG=1")
                else:
                    log.error("session unhealthy: withholding WATCHDOG=1")

        self._watchdog = threading.Thread(target=ping, name="svoyak-watchdog", daemon=True)
        self._watchdog.start()

    def stop(self) -> None:
        self._stop.set()
