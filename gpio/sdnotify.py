"""systemd's notify protocol in a few lines: a datagram to ``$NOTIFY_SOCKET`` (sd_notify(3)), no dependency.

Outside systemd (no ``$NOTIFY_SOCKET``) every call is a no-op, so the same code runs on a laptop.

>>> Notifier(environ={}).notify("READY=1")
False
"""

from __future__ import annotations

import os
import socket
from typing import Mapping


class Notifier:
    """Sends ``READY=1``, ``WATCHDOG=1``, ``STATUS=...`` and ``STOPPING=1`` to systemd."""

    def __init__(self, environ: Mapping[str, str] | None = None):
        environ = os.environ if environ is None else environ
        address = environ.get("NOTIFY_SOCKET", "")
        # "@name" is an abstract socket: the leading @ stands for a NUL byte.
        self.address = "\0" + address[1:] if address.startswith("@") else address
        watchdog_usec = environ.get("WATCHDOG_USEC", "")
        watchdog_pid = environ.get("WATCHDOG_PID", "")
        mine = not watchdog_pid or watchdog_pid == str(os.getpid())
        self.watchdog_usec = int(watchdog_usec) if watchdog_usec.isdigit() and mine else 0

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    @property
    def watchdog_interval_s(self) -> float | None:
        """How often to send ``WATCHDOG=1``: a third of ``WatchdogSec=`` (None when no watchdog is set)."""
        return self.watchdog_usec / 3_000_000 if self.watchdog_usec else None

    def notify(self, *lines: str) -> bool:
        """Send ``lines`` (``"READY=1"``, ``"STATUS=..."``) as one datagram; False when not under systemd."""
        if not self.address:
            return False
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(self.address)
            sock.sendall("\n".join(lines).encode())
        return True
