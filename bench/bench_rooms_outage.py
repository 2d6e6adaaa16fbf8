"""Catch-up after a ten-minute outage of a busy station (root, about 12 minutes; issue 13's figure): a hub and one
station in network namespaces; the station's venue link is cut while its room plays a question every 50 ms
(tens of thousands of events, bounded), then mended; how soon the first event reaches the hub and how fast the
rest flow. ``SVOYAK_BENCH_OUTAGE_S`` shortens it (600 by default)."""

from __future__ import annotations

import os

from bench.bench_rooms import drive, report_catch_up


def run(report) -> None:
    outage_s = 2 if report.short else int(os.environ.get("SVOYAK_BENCH_OUTAGE_S", "600"))
    figures = drive(1, parts=["catch_up"], outage_s=outage_s, outage_question_s=0.05)
    if figures is None:
        return
    report_catch_up(report, figures["catch_up"])
    for role in ("hub", "station"):
        memory = figures["memory_idle"][role]
        report.figure(f"{role} memory after the catch-up: box processes", memory["box_mb"], "MB")
        report.figure(f"{role} memory after the catch-up: nats-server", memory["nats_mb"], "MB")
