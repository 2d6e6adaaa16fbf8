"""Rooms over NATS JetStream between network namespaces (root): a hub and six stations as real boxes.

- station event -> hub's copy updated, p50/p99, as a ratio to a bare core-NATS publish -> consume between the
  same namespaces over the same leaf connection (boxes on one machine share CLOCK_MONOTONIC, so one-way times
  are measured directly: the station's commit stamp against the hub's clock at apply);
- six stations at ten times a real press rate (a question every 2 s instead of 20 s; youth-cup 2.4's six rooms);
- catch-up after an outage of a busy station (the issue asks for 10 minutes; ``SVOYAK_BENCH_OUTAGE_S``, 60 s by
  default, keeps the bench short; the rate is what matters);
- the hub's and a station's memory (box processes and their nats-server).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import median, percentile
from tests.rooms import netns

ROOT = Path(__file__).resolve().parents[1]


def run(report) -> None:
    why = netns.can_run()
    if why:
        print(f"  skipped: {why}")
        return
    stations = [f"s{n}" for n in range(1, 7)]
    names = ["hub", *stations, "ctl"]
    prefix = f"svb{os.getpid() % 100000}"
    with tempfile.TemporaryDirectory(prefix="svoyak-rooms-bench-") as folder:
        venue = netns.Venue(prefix, names)
        try:
            for number, name in enumerate(names, start=1):
                if name in stations:
                    venue.tablet_link(name, number)
            spec = {"prefix": prefix, "names": names, "folder": folder, "stations": stations, "faults": {},
                    "latency_questions": 100, "bare_messages": 200, "busy_s": 30,
                    "outage_s": int(os.environ.get("SVOYAK_BENCH_OUTAGE_S", "60"))}
            Path(folder, "spec.json").write_text(json.dumps(spec))
            done = subprocess.run(["ip", "netns", "exec", venue.namespace("ctl"), sys.executable, "-m",
                                   "bench.rooms_day", f"{folder}/spec.json", f"{folder}/out.json"], cwd=ROOT,
                                  capture_output=True, text=True, timeout=1800)
            if done.returncode != 0:
                print(done.stdout[-2000:], done.stderr[-3000:])
                raise RuntimeError("the rooms bench's driver failed")
            figures = json.loads(Path(folder, "out.json").read_text())
        finally:
            venue.close()
    ours, bare = figures["event_to_hub_ms"], figures["bare_ms"]
    report.figure("station event -> hub copy, median", median(ours), "ms", target=50)
    report.figure("station event -> hub copy, p99", percentile(ours, 0.99), "ms", target=250)
    report.figure("bare nats publish -> consume (same leaf), median", median(bare), "ms")
    report.figure("bare nats publish -> consume (same leaf), p99", percentile(bare, 0.99), "ms")
    report.ratio("event -> hub vs bare publish -> consume (median)", median(ours), median(bare))
    report.ratio("event -> hub vs bare publish -> consume (p99)", percentile(ours, 0.99), percentile(bare, 0.99))
    busy = figures["busy_lag_ms"]
    report.figure("6 stations at 10x press rate: events/s at the hub", figures["busy_events_per_s"], "/s")
    report.figure("6 stations at 10x press rate: event -> hub, median", median(busy), "ms", target=50)
    report.figure("6 stations at 10x press rate: event -> hub, p99", percentile(busy, 0.99), "ms", target=500)
    catch = figures["catch_up"]
    report.figure(f"catch-up after a {catch['outage_s']} s outage of a busy station: events", catch["events"], "")
    report.figure("catch-up: first event at the hub after the link's return", catch["resume_s"], "s", target=10)
    report.figure("catch-up: events/s into the hub's copy once flowing", catch["events_per_s"], "/s", target=100,
                  better="higher")
    report.figure("catch-up: seconds from the link's return to all caught up", catch["seconds"], "s")
    for moment in ("memory_busy", "memory_idle"):
        for role in ("hub", "station"):
            memory = figures[moment][role]
            report.figure(f"{role} memory ({moment.split('_')[1]}): box processes", memory["box_mb"], "MB")
            report.figure(f"{role} memory ({moment.split('_')[1]}): nats-server", memory["nats_mb"], "MB")
