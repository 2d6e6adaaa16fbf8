"""Every benchmark of ``./dev bench`` run once in its short form (``report.short``: tiny counts, no target
judged), so that a benchmark cannot break without a red test (issue 24: ``bench web`` had failed silently). The
figures are the benchmarks' to judge, on a quiet machine (README: no timed asserts); here each must be made."""

from __future__ import annotations

import importlib
import math
import os

import pytest

import bench
from bench.__main__ import bench_names
from tests.support.serving import ROOT

# Run in their short form by a test of their own, which also checks what they measured.
SHORT_ELSEWHERE = {"spectators": "tests/web/test_bench_spectators.py"}
# Those that take more than a few seconds even when short (boxes as processes, Chromium, network namespaces).
SLOW = {"chaos", "guesses", "online", "rooms", "rooms_day", "rooms_outage", "rooms_wifi_day", "web"}
# The start of a figure's name that must not be 0 even in the short form: it was, silently (bench guesses posted the director's login
# with a box that had no director PIN, so nothing was judged and the target was "met").
NOT_ZERO = {"guesses": "PIN guesses judged in", "web": "press -> board DOM, median",
            "capture": "sustained presses per second"}
ROOT_ONLY = {"online", "rooms", "rooms_day", "rooms_outage", "rooms_wifi_day"}  # network namespaces: they say "skipped" otherwise


def test_the_lists_here_name_real_benchmarks_and_tests():
    assert set(SHORT_ELSEWHERE) | SLOW | ROOT_ONLY | set(NOT_ZERO) <= set(bench_names())
    assert all((ROOT / path).is_file() for path in SHORT_ELSEWHERE.values())


def test_a_short_report_judges_no_target():
    report = bench.Report("x", short=True)
    report.figure("a figure far over its target", 1e9, "ms", target=1)
    assert report.rows == [("a figure far over its target", 1e9, "ms", "short form: not judged")]


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=[pytest.mark.slow] if name in SLOW else [])
    for name in bench_names() if name not in SHORT_ELSEWHERE])
def test_the_benchmark_runs_in_its_short_form(name, capsys):
    if name in ROOT_ONLY and os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    report = bench.Report(name, short=True)
    importlib.import_module(f"bench.bench_{name}").run(report)
    assert report.rows, f"bench {name} printed no figure:\n{capsys.readouterr().out[-2000:]}"
    for figure, value, _unit, _verdict in report.rows:
        assert isinstance(value, (int, float)) and not math.isnan(value), figure
    if name in NOT_ZERO:
        made = [value for figure, value, _unit, _verdict in report.rows if figure.startswith(NOT_ZERO[name])]
        assert made and all(value > 0 for value in made), NOT_ZERO[name]
