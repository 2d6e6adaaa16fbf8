"""The box's guard against guessed secrets: wrong PINs (host page, director login) and seat codes.

One :class:`PinGuard` for the host PIN is made by the composition root (:func:`web.sync.build_services`) and
shared by every form that checks that PIN (``/host`` and ``/director/login``), so their wrong guesses count
together; the phones' seat codes have a guard of their own.
"""

from __future__ import annotations

import hmac
import threading
import time

MAX_PIN_FAILURES = 5          # wrong PINs from one address before it must wait
PIN_LOCKOUT_NS = 60 * 10**9   # how long it waits (a 4-digit PIN must not be guessable over Wi-Fi)


class PinGuard:
    """Counts wrong PINs per address; after :data:`MAX_PIN_FAILURES` the address waits :data:`PIN_LOCKOUT_NS`.

    The host's PIN uses :meth:`check`; a secret checked elsewhere (the seat codes, checked by the session) uses
    :meth:`locked` before and :meth:`record` after. ``locked_code`` words the wait.

    >>> now = [0]
    >>> guard = PinGuard(clock=lambda: now[0], locked_code="error.seat_code_locked")
    >>> [guard.record("10.42.0.9", False) for _ in range(MAX_PIN_FAILURES)][-1], guard.locked("10.42.0.9")
    (None, 'error.seat_code_locked')
    >>> guard.locked("10.42.0.10") is None
    True
    >>> now[0] = PIN_LOCKOUT_NS; guard.locked("10.42.0.9") is None
    True
    """

    def __init__(self, clock=time.monotonic_ns, locked_code: str = "error.pin_locked") -> None:
        self._clock = clock
        self._failures: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()
        self.locked_code = locked_code

    def check(self, address: str, offered: str, expected: str) -> str | None:
        """``None`` if the PIN is right; else the string key of the refusal."""
        with self._lock:
            refusal = self._locked(address)
            if refusal:
                return refusal
            right = hmac.compare_digest(str(offered).encode(), expected.encode())
            self._record(address, right)
            return None if right else "error.pin"

    def locked(self, address: str) -> str | None:
        """The refusal key while ``address`` must wait, else ``None``."""
        with self._lock:
            return self._locked(address)

    def record(self, address: str, right: bool) -> None:
        """Count one attempt from ``address``: a right one clears its failures, a wrong one adds to them."""
        with self._lock:
            self._record(address, right)

    def _locked(self, address: str) -> str | None:
        count, since = self._failures.get(address, (0, 0))
        if count >= MAX_PIN_FAILURES and self._clock() - since < PIN_LOCKOUT_NS:
            return self.locked_code
        return None

    def _record(self, address: str, right: bool) -> None:
        if right:
            self._failures.pop(address, None)
            return
        count, _ = self._failures.get(address, (0, 0))
        count = 0 if count >= MAX_PIN_FAILURES else count
        self._failures[address] = (count + 1, self._clock())
