"""A small seeded pseudo-random generator, so the pure engine needs no ``random`` module and no clock.

SplitMix64 (Steele, Lea, Flood 2014): 64-bit state, passes BigCrush, and is the same on every Python version,
so a draw's recorded seed replays the same draw on any box forever (``random.Random``'s algorithms for
``shuffle``/``randrange`` are not promised stable across versions). Any object with the same methods
(``random.Random`` included) may be passed to the draw functions instead.

>>> rng = Rng(2026)
>>> [rng.randrange(10) for _ in range(5)]
[1, 1, 4, 6, 1]
>>> deck = list(range(6)); Rng(1).shuffle(deck); deck
[0, 1, 3, 2, 4, 5]
>>> derive_seed(7, "stage", "1/27") == derive_seed(7, "stage", "1/27") != derive_seed(7, "stage", "1/9")
True
"""

from __future__ import annotations

import hashlib
from typing import MutableSequence, Sequence, TypeVar

T = TypeVar("T")
_MASK = (1 << 64) - 1


class Rng:
    """SplitMix64: ``randrange``, ``random``, ``shuffle``, ``choice``, ``sample`` like ``random.Random``."""

    def __init__(self, seed: int) -> None:
        self._state = int(seed) & _MASK

    def next64(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def randrange(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (rejection sampling: no modulo bias)."""
        if n <= 0:
            raise ValueError(f"randrange needs n > 0, got {n}")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            value = self.next64()
            if value < limit:
                return value % n

    def random(self) -> float:
        """A uniform float in ``[0, 1)`` with 53 random bits."""
        return (self.next64() >> 11) / float(1 << 53)

    def shuffle(self, items: MutableSequence) -> None:
        """Fisher-Yates, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randrange(i + 1)
            items[i], items[j] = items[j], items[i]

    def choice(self, items: Sequence[T]) -> T:
        return items[self.randrange(len(items))]

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        pool = list(items)
        self.shuffle(pool)
        return pool[:k]


def derive_seed(seed: int, *labels: str) -> int:
    """A 63-bit seed for one draw, derived from the tournament seed and labels (stage, round)."""
    digest = hashlib.sha256("\x1f".join([str(seed), *labels]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1
