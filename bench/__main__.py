"""Run every benchmark module in bench/ (or those named on the command line) and print their figures."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import bench


def bench_names() -> list[str]:
    """The names ``./dev bench`` knows: ``bench/bench_NAME.py``."""
    return sorted(info.name.removeprefix("bench_") for info in pkgutil.iter_modules(bench.__path__)
                  if info.name.startswith("bench_"))


def main(argv: list[str]) -> int:
    short = "--short" in argv
    argv = [arg for arg in argv if arg != "--short"]
    names = [f"bench_{name}" for name in bench_names()]
    wanted = [f"bench_{name.removeprefix('bench_')}" for name in argv]
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        print(f"unknown benchmarks: {', '.join(unknown)}; have: {', '.join(n[6:] for n in names)}")
        return 2
    missed = 0
    for name in wanted or names:
        print(f"== {name[6:]}", flush=True)
        started = time.perf_counter()
        report = bench.Report(name[6:], short=short)
        importlib.import_module(f"bench.{name}").run(report)
        missed += sum("MISSED" in row[3] for row in report.rows)
        print(f"  ({time.perf_counter() - started:.1f} s)")
    print(f"\n{missed} target(s) missed" if missed else "\nall targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
