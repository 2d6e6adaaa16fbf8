"""Benchmarks: speed and memory targets live here, not in timed unit tests (shared, noisy machines).

Each ``bench/bench_*.py`` module defines ``run(report)``; it measures and calls
``report.figure(name, value, unit, target=..., better="lower"|"higher")`` or ``report.ratio(...)``.
``python -m bench`` (``./dev bench``) runs them all, or those named: ``./dev bench engine capture``.

``./dev bench --short`` runs each in its short form (``report.short``: tiny counts, targets not judged), as
``./dev test`` does (tests/test_benches.py), so that a benchmark cannot break without a red test.
"""

from __future__ import annotations

import dataclasses
import statistics


@dataclasses.dataclass
class Report:
    """Collects and prints one benchmark module's figures."""

    section: str
    short: bool = False  # the short form: tiny counts, so no figure is judged against its target
    rows: list = dataclasses.field(default_factory=list)

    def figure(self, name: str, value: float, unit: str, target: float | None = None, better: str = "lower") -> None:
        """One measured figure; with a target, say whether it is met (not in the short form)."""
        verdict = ""
        if target is not None and self.short:
            verdict = "short form: not judged"
        elif target is not None:
            met = value <= target if better == "lower" else value >= target
            verdict = f"target {'<=' if better == 'lower' else '>='} {target:g} {unit}: {'met' if met else 'MISSED'}"
        self.rows.append((name, value, unit, verdict))
        print(f"  {name:58} {value:14.4g} {unit:8} {verdict}", flush=True)

    def ratio(self, name: str, ours: float, baseline: float, target: float | None = None) -> None:
        """ours / baseline, with a target the ratio must stay at or under."""
        self.figure(name, ours / baseline if baseline else float("inf"), "x", target=target)


def percentile(samples: list[float], fraction: float) -> float:
    """The ``fraction`` percentile (0-1) by nearest rank; ``percentile(xs, 0.99)`` is the p99."""
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def median(samples: list[float]) -> float:
    return statistics.median(samples)
