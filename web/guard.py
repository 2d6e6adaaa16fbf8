"""How many guesses of a secret (the host PIN, the seat codes) the whole box allows, and passes for those who
already proved they know it.

**Box-wide, not per address.** On the box's own /24 hotspot anyone can take many addresses (from 199 loopback
addresses, about 970 guesses a minute got through a per-address limit). So one :class:`PinGuard` counts every
wrong guess of its secret from anywhere, as a token bucket: ``burst`` wrong guesses at once, then one more each
``refill_ns``. While the bucket is empty a guess is refused *unchecked* (``error.pin_locked``), the right one
too: were it let through, guessing on through the lock would still find it. A right guess refunds nothing and
resets nothing, so the bound below holds whoever else logs in meanwhile.

**The budget follows from the secret's size** (:func:`budget_for`): in any 24 hours at most
``burst + 86400 s / refill`` guesses, which :data:`DAILY_SHARE` (0.5 %) of the space the guesses search keeps
under: the host PIN has 6 digits (10**6), so at most 4,999 guesses a day, 0.4999 % (10 at once, then one every
17.315 s: 217 in the first hour, 207 an hour after); the seat codes have 6 digits for up to 4 seats, so a guess
hits one of 4 codes and the space counts as 10**6 / 4: at most 1,249 a day, 0.4996 % (10 at once, then one every
69.678 s: 61 in the first hour, 51 an hour after). docs/security.md has the table.

**The host already in keeps working.** An attacker emptying the bucket locks out new logins, not the host who
logged in: every connection is given a :class:`Passes` token in its ``hello``; the page sends it back when it
reconnects, and a token that once came with a right PIN (or, on a phone, a right seat code) is admitted without
a guess. Tokens are 128-bit random; only proven ones are kept (an attacker cannot fill the store without
guessing right), the least recently used dropped beyond :data:`MAX_PASSES`.

>>> now = [0]
>>> guard = PinGuard(space=10**6, clock=lambda: now[0])
>>> [guard.check("10.42.0.9", "9", "123456") for _ in range(guard.burst)][-1]
'error.pin'
>>> guard.check("10.42.0.77", "123456", "123456")  # another address, the right PIN: the box's budget is spent
'error.pin_locked'
>>> now[0] += guard.refill_ns; guard.check("10.42.0.77", "123456", "123456") is None
True
"""

from __future__ import annotations

import collections
import hmac
import math
import secrets
import threading
import time
from typing import Callable, Hashable

DAILY_SHARE = 0.005      # of the secret's space an attacker may try in a day (the target: under 1 %)
BURST = 10               # wrong guesses allowed at once (a host mistyping, players typing codes together)
DAY_NS = 86_400 * 10**9
MAX_PASSES = 1_000       # proven passes kept: hosts, directors and phones of a day, many times over


def pin_space(secret: str) -> int:
    """How many values a guess of ``secret`` searches: ``10**n`` for n digits, else 62 letters and digits each.

    >>> pin_space("042117"), pin_space("2468")
    (1000000, 10000)
    """
    return 10 ** len(secret) if secret.isdigit() else 62 ** max(1, len(secret))


def budget_for(space: int, burst: int = BURST, share: float = DAILY_SHARE) -> int:
    """The refill period in ns so that ``burst + day / refill`` guesses stay within ``share`` of ``space``.

    >>> budget_for(10**6) / 1e9          # the 6-digit host PIN: one guess every 17.3 s after the first 10
    17.315
    >>> round(budget_for(10**6 // 4) / 1e9, 1)  # a 6-digit seat code, 4 seats
    69.7
    >>> round(budget_for(10**4) / 1e9 / 60)     # a 4-digit PIN kept from an old box: one every 36 minutes
    36
    """
    allowed = math.floor(space * share) - burst
    if allowed < 1:
        return DAY_NS  # a tiny space: the burst alone, then one guess a day
    return math.ceil(DAY_NS / allowed / 10**6) * 10**6  # whole ms, rounded up: never over the share


class PinGuard:
    """The box-wide budget of wrong guesses of one secret (one instance per secret: the host PIN, the seat codes).

    ``space``: how many values the guesses search (``10**digits``, divided by the number of valid codes when any
    of several is a hit). :meth:`check` judges a guess of a secret it is given; a secret checked elsewhere (the
    seat codes, checked by the session) uses :meth:`take` before and :meth:`refund` after a guess that was not
    wrong. ``locked_code`` is
    the string key of the refusal while the bucket is empty; ``clock`` monotonic ns.
    """

    def __init__(self, space: int = 10**6, clock: Callable[[], int] = time.monotonic_ns,
                 locked_code: str = "error.pin_locked", burst: int = BURST) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.space = space
        self.burst = burst
        self.refill_ns = budget_for(space, burst)
        self.locked_code = locked_code
        self._tokens = float(burst)
        self._since_ns = clock()
        self.wrong = 0      # figures for the docs and the tests: wrong guesses judged,
        self.refused = 0    # and guesses refused unchecked while the bucket was empty

    def per_day(self) -> int:
        """At most this many guesses are judged in any 24 hours."""
        return self.burst + DAY_NS // self.refill_ns

    def check(self, address: str, offered, expected: str) -> str | None:
        """``None`` if ``offered`` is the secret; else the refusal key (``error.pin`` or :attr:`locked_code`).
        ``address`` is not used: the budget is the box's, any address may be one of an attacker's many."""
        with self._lock:
            if self._empty():
                self.refused += 1
                return self.locked_code
            right = hmac.compare_digest(str(offered).encode(), str(expected).encode())
            if not right:
                self._spend()
            return None if right else "error.pin"

    def take(self) -> bool:
        """For a secret judged elsewhere (the seat codes, by the session): pay for one guess before judging it;
        ``False`` (and nothing judged) while the budget is spent. :meth:`refund` it if it was not a wrong guess.
        Paying first keeps the bound under concurrent guesses: many threads cannot all pass a check and then
        all spend."""
        with self._lock:
            if self._empty():
                self.refused += 1
                return False
            self._spend()
            return True

    def refund(self) -> None:
        """Give back a guess :meth:`take` paid for that was not wrong (right, or not judged at all)."""
        with self._lock:
            self._refill()
            self._tokens = min(float(self.burst), self._tokens + 1)
            self.wrong -= 1

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._since_ns) / self.refill_ns)
        self._since_ns = now

    def _empty(self) -> bool:
        self._refill()
        return self._tokens < 1

    def _spend(self) -> None:
        self._refill()
        self._tokens = max(0.0, self._tokens - 1)
        self.wrong += 1


class Passes:
    """Tokens for connections that proved a secret: given in every ``hello``, sent back by the page on reconnect.

    >>> passes = Passes()
    >>> token = passes.new()
    >>> passes.has(token, "host"), passes.prove(token, "host"), passes.has(token, "host"), passes.has("x", "host")
    (False, None, True, False)
    """

    def __init__(self, limit: int = MAX_PASSES) -> None:
        self._proofs: collections.OrderedDict[str, set] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._limit = limit

    @staticmethod
    def new() -> str:
        """A fresh token (kept only once something is proved with it)."""
        return secrets.token_urlsafe(16)

    def prove(self, token: str, proof: Hashable) -> None:
        """``token`` proved ``proof`` (``"host"``, ``("seat", player, code)``)."""
        if not isinstance(token, str) or not token:
            return
        with self._lock:
            self._proofs.setdefault(token, set()).add(proof)
            self._proofs.move_to_end(token)
            while len(self._proofs) > self._limit:
                self._proofs.popitem(last=False)

    def has(self, token, proof: Hashable) -> bool:
        """Whether ``token`` proved ``proof`` before."""
        if not isinstance(token, str):
            return False
        with self._lock:
            proofs = self._proofs.get(token)
            if proofs is None or proof not in proofs:
                return False
            self._proofs.move_to_end(token)
            return True
