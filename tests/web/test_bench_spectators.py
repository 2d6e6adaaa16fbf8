"""``./dev bench spectators`` in a tiny form (20 spectators, four presses), so the benchmark cannot break silently:
every figure it prints is made, every spectator (and the 10 probes) connected and heard the host's updates. Its figures are the
bench's to judge (README: no timed asserts)."""

from __future__ import annotations

import math

import bench
from bench import bench_spectators


def test_the_audience_bench_runs():
    report = bench.Report("spectators")
    results = bench_spectators.run(report, tiny=True)
    figures = {name: value for name, value, _, _ in report.rows}
    for name in ("no spectators: command -> ack p99", "no spectators: press -> first board p99",
                 "20 on the fast path: press p99 / no spectators", "20 on the fast path: a spectator connected last, update p99",
                 "20 on the fast path: last spectator's update p99",
                 "20 on the fast path: last spectator's update p99, read by its SCHED_IDLE process",
                 "20 on the fast path: box memory per 100 spectators (round 1: a fresh nats-server)"):
        assert math.isfinite(figures[name]), name
    assert figures["20 on the fast path: spectators connected"] == 20 + bench_spectators.PROBES
    crowd = results[("nats", 20)]["crowd"]
    assert crowd["errors"] == [] and crowd["failed"] == 0
    played = results[("nats", 20)]["played"]
    assert len(played["press_ms"]) == 4
    everyone = 20 + bench_spectators.PROBES
    timed = [seq for seq in played["seqs"] if seq in crowd["arrivals"]]
    assert timed, "no timed update reached the spectators"
    assert all(len(crowd["arrivals"][seq]) == everyone for seq in timed)  # each reached every spectator
