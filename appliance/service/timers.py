"""Deadlines on the monotonic clock: the press window and answer countdown expiries the engine is fed.

The engine never reads a clock (design.md, principle 3): it is told "the press window closed" as an event
stamped with the deadline it set itself, not with the moment a thread woke up. :class:`Deadlines` only decides
*when* to feed that event. One thread serves every deadline; :meth:`Deadlines.run_due` also runs them by hand,
so tests drive a fake clock with no sleeps.

>>> now = [0]
>>> fired = []
>>> deadlines = Deadlines(clock=lambda: now[0])
>>> deadlines.set("press_window", 7_000_000_000, lambda key, at_ns: fired.append((key, at_ns)))
>>> deadlines.run_due()
0
>>> now[0] = 7_000_000_000
>>> deadlines.run_due(), fired
(1, [('press_window', 7000000000)])
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

log = logging.getLogger(__name__)

Callback = Callable[[str, int], None]
# The longest the thread sleeps at once: a deadline further away (or one no clock can reach) is looked at again
# after this, so no value given to ``set`` can make ``Condition.wait`` overflow and kill the thread.
MAX_WAIT_S = 60.0


class Deadlines:
    """Named one-shot deadlines in monotonic nanoseconds; setting a name again replaces its deadline."""

    def __init__(self, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self._clock = clock
        self._due: dict[str, tuple[int, Callback]] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def set(self, key: str, at_ns: int, callback: Callback) -> None:
        """Run ``callback(key, at_ns)`` once the clock reaches ``at_ns`` (at once if already past).

        ``at_ns`` is a whole number of ns (a bool or a float is a bug of the caller: TypeError); however far
        away, it never stops the thread (it just never comes)."""
        if type(at_ns) is not int:
            raise TypeError(f"a deadline is a whole number of ns, not {at_ns!r}")
        with self._changed:
            self._due[key] = (at_ns, callback)
            self._changed.notify()

    def cancel(self, key: str) -> None:
        with self._changed:
            self._due.pop(key, None)
            self._changed.notify()

    def keep_only(self, keys) -> None:
        """Cancel every deadline not named in ``keys``."""
        with self._changed:
            for key in set(self._due) - set(keys):
                del self._due[key]
            self._changed.notify()

    def pending(self) -> dict[str, int]:
        with self._changed:
            return {key: at_ns for key, (at_ns, _) in self._due.items()}

    def run_due(self) -> int:
        """Run every callback whose deadline has passed; return how many ran."""
        now = self._clock()
        with self._changed:
            due = sorted((at_ns, key, callback) for key, (at_ns, callback) in self._due.items() if at_ns <= now)
            for _, key, _ in due:
                del self._due[key]
        for at_ns, key, callback in due:
            try:
                callback(key, at_ns)
            except Exception:  # a process edge: one failed expiry must not stop every later deadline
                log.exception("deadline %s failed", key)
        return len(due)

    def start(self) -> "Deadlines":
        """Serve deadlines from a daemon thread until :meth:`close`."""
        self._thread = threading.Thread(target=self._serve, name="svoyak-deadlines", daemon=True)
        self._thread.start()
        return self

    def alive(self) -> bool:
        """Whether the deadlines' thread runs (started and not dead): the watchdog asks (a dead one would let
        press windows never expire)."""
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _serve(self) -> None:
        # No deadline can stop this loop: every wait is capped (MAX_WAIT_S), ``set`` takes whole ns only, and a
        # failing callback is logged by run_due. A bug of the loop itself (its clock) is left to end the thread:
        # the watchdog then stops pinging and systemd restarts the service (appliance/service/notify.py).
        while True:
            with self._changed:
                if self._closed:
                    return
                next_ns = min((at_ns for at_ns, _ in self._due.values()), default=None)
                # in whole ns first, then capped: a deadline 10**30 ns away is one wait() accepts
                wait_s = None if next_ns is None else min(MAX_WAIT_S, max(0, next_ns - self._clock()) / 1e9)
                if wait_s is None or wait_s > 0:
                    self._changed.wait(timeout=MAX_WAIT_S if wait_s is None else wait_s)
                    continue
            self.run_due()
