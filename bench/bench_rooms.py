"""Rooms over NATS JetStream between network namespaces (root): a hub and six stations as real boxes.

- station event -> hub's copy updated, p50/p99, as a ratio to a bare core-NATS publish -> consume between the
  same namespaces over the same leaf connection (boxes on one machine share CLOCK_MONOTONIC, so one-way times
  are measured directly: the station's commit stamp against the hub's clock at apply);
- six stations at ten times a real press rate (a question every 2 s instead of 20 s; youth-cup 2.4's six rooms);
- catch-up after a 60 s outage of a busy station (``SVOYAK_BENCH_OUTAGE_S``; the issue's ten minutes are
  ``./dev bench rooms_outage``);
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


def drive(station_count: int, **spec_extra) -> dict | None:
    """A hub and ``station_count`` stations in namespaces; bench/rooms_day.py drives them from "ctl"."""
    why = netns.can_run()
    if why:
        print(f"  skipped: {why}")
        return None
    stations = [f"s{n}" for n in range(1, station_count + 1)]
    names = ["hub", *stations, "ctl"]
    prefix = f"svb{os.getpid() % 100000}"
    with tempfile.TemporaryDirectory(prefix="svoyak-rooms-bench-") as folder:
        venue = netns.Venue(prefix, names)
        try:
            for number, name in enumerate(names, start=1):
                if name in stations:
                    venue.tablet_link(name, number)
            spec = {"prefix": prefix, "names": names, "folder": folder, "stations": stations, "faults": {},
                    "latency_questions": 100, "bare_messages": 200,
                    "busy_s": int(os.environ.get("SVOYAK_BENCH_BUSY_S", "30")),
                    "outage_s": int(os.environ.get("SVOYAK_BENCH_OUTAGE_S", "60")), **spec_extra}
            Path(folder, "spec.json").write_text(json.dumps(spec))
            done = subprocess.run(["ip", "netns", "exec", venue.namespace("ctl"), sys.executable, "-m",
                                   "bench.rooms_day", f"{folder}/spec.json", f"{folder}/out.json"], cwd=ROOT,
                                  capture_output=True, text=True, timeout=3600)
            if done.returncode != 0:
                print(done.stdout[-2000:], done.stderr[-3000:])
                raise RuntimeError("the rooms bench's driver failed")
            return json.loads(Path(folder, "out.json").read_text())
        finally:
            keep = os.environ.get("SVOYAK_BENCH_KEEP_LOGS")  # a folder: every box's nats-server log is copied there
            if keep:
                for log in Path(folder).glob("*/rooms/nats/nats.log"):
                    target = Path(keep) / f"{log.parts[-4]}-nats.log"
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(log.read_bytes())
            venue.close()


def report_catch_up(report, catch: dict) -> None:
    report.figure(f"catch-up after a {catch['outage_s']} s outage of a busy station: events", catch["events"], "")
    report.figure("catch-up: first event at the hub after the link's return", catch["resume_s"], "s", target=10)
    report.figure("catch-up: events/s into the hub's copy once flowing", catch["events_per_s"], "/s", target=100,
                  better="higher")
    report.figure("catch-up: seconds from the link's return to all caught up", catch["seconds"], "s")


STAGES = ("stamp -> committed (session, SQLite commit)", "committed -> publisher awake",
          "awake -> published (encode)", "published -> in DESK (station stream, source, leaf, DESK)",
          "in DESK -> hub read (DESK's push)", "hub read -> applied")


def report_stages(report, label: str, stages: list, acks: list) -> None:
    """Where an event's time goes: each stage's median, p99 and share of the total, the share in the slowest 1%;
    and the station's own stream's acknowledgement (its part of "published -> in DESK")."""
    rows = [row for row in stages if len(row) == len(STAGES)]
    if not rows:
        return
    total = sum(sum(row) for row in rows) or 1.0
    slow = sorted(rows, key=sum)[-max(1, len(rows) // 100):]
    slow_total = sum(sum(row) for row in slow) or 1.0
    for index, name in enumerate(STAGES):
        values = [row[index] for row in rows]
        report.figure(f"{label}, {name}: median", median(values), "ms")
        report.figure(f"{label}, {name}: p99", percentile(values, 0.99), "ms")
        report.figure(f"{label}, {name}: share", 100 * sum(values) / total, "%")
        report.figure(f"{label}, {name}: share in the slowest 1%",
                      100 * sum(row[index] for row in slow) / slow_total, "%")
    if acks:
        report.figure(f"{label}, station publish -> its stream's ack: median", median(acks), "ms")
        report.figure(f"{label}, station publish -> its stream's ack: p99", percentile(acks, 0.99), "ms")


def report_transport(report, label: str, stages: list, bare: list) -> None:
    """Committed -> applied (the rooms' own path, without the session and the SQLite commit that any box does
    before anyone hears of an event) against a bare core-NATS publish -> consume over the same leaf."""
    rows = [row for row in stages if len(row) == len(STAGES)]
    if not rows or not bare:
        return
    ours = [sum(row[1:]) for row in rows]
    report.figure(f"{label}: committed -> hub copy, median", median(ours), "ms")
    report.figure(f"{label}: committed -> hub copy, p99", percentile(ours, 0.99), "ms", target=50)
    report.ratio(f"{label}: committed -> hub vs bare NATS (median)", median(ours), median(bare), target=3)
    report.ratio(f"{label}: committed -> hub vs bare NATS (p99)", percentile(ours, 0.99), percentile(bare, 0.99),
                 target=3)


def report_memory(report, label: str, memory: dict) -> None:
    for role in ("hub", "station"):
        if role not in memory:
            continue
        each = memory[role]
        report.figure(f"{role} memory ({label}): web + capture, RSS", each["box_mb"], "MB")
        if "box_pss_mb" in each:
            report.figure(f"{role} memory ({label}): web + capture, PSS", each["box_pss_mb"], "MB", target=100)
        report.figure(f"{role} memory ({label}): nats-server (rooms), RSS", each["nats_mb"], "MB", target=40)
        if each.get("spectators_nats_mb"):
            report.figure(f"{role} memory ({label}): nats-server (spectators), RSS", each["spectators_nats_mb"], "MB")


def run(report) -> None:
    print(f"  load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    figures = drive(6, parts=[p for p in os.environ.get("SVOYAK_BENCH_PARTS", "").split(",") if p],
                    day_events=int(os.environ.get("SVOYAK_BENCH_DAY_EVENTS", "43200")))
    if figures is None:
        return
    if "event_to_hub_ms" in figures:
        report_latency(report, figures)
    if "busy_lag_ms" in figures:
        report_busy(report, figures)
    if "day" in figures:
        day = figures["day"]
        report.figure("a day on the hub: events from six stations", day["events"], "")
        report.figure("a day on the hub: battles", day["battles"], "")
        report.figure("a day on the hub: seconds to play it", day["seconds"], "s")
        report_memory(report, "after a day", day)
    if "catch_up" in figures:
        report_catch_up(report, figures["catch_up"])
    for moment in ("memory_busy", "memory_idle"):
        if moment in figures:
            report_memory(report, moment.split("_")[1], figures[moment])
    counts = figures.get("counts_end", {})
    if counts:
        report.figure("whole run: stall detector firings (sources re-added for a live station)",
                      counts.get("resourced") or 0, "", target=0)
        report.figure("whole run: sources added on a station's first beat", counts.get("sourced") or 0, "")
        report.figure("whole run: silent sources added again on a station's return", counts.get("revived") or 0, "")
    print(f"  load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def report_latency(report, figures: dict) -> None:
    ours, bare = figures["event_to_hub_ms"], figures["bare_ms"]
    report.figure("station event -> hub copy, median", median(ours), "ms", target=50)
    report.figure("station event -> hub copy, p99", percentile(ours, 0.99), "ms", target=50)
    report.figure("bare nats publish -> consume (same leaf), median", median(bare), "ms")
    report.figure("bare nats publish -> consume (same leaf), p99", percentile(bare, 0.99), "ms")
    report.ratio("event -> hub vs bare publish -> consume (median)", median(ours), median(bare))
    report.ratio("event -> hub vs bare publish -> consume (p99)", percentile(ours, 0.99), percentile(bare, 0.99))
    report_transport(report, "one station", figures.get("latency_stages_ms", []), bare)
    report_stages(report, "one station", figures.get("latency_stages_ms", []), figures.get("latency_acks_ms", []))


def report_busy(report, figures: dict) -> None:
    busy = figures["busy_lag_ms"]
    report.figure("6 stations at 10x press rate: events/s at the hub", figures["busy_events_per_s"], "/s")
    report.figure("6 stations at 10x press rate: event -> hub, median", median(busy), "ms", target=50)
    report.figure("6 stations at 10x press rate: event -> hub, p99", percentile(busy, 0.99), "ms", target=50)
    bare = figures.get("busy_bare_ms") or figures.get("bare_ms", [])
    if figures.get("busy_bare_ms"):
        report.figure("6 stations at 10x: bare nats publish -> consume meanwhile, median", median(bare), "ms")
        report.figure("6 stations at 10x: bare nats publish -> consume meanwhile, p99", percentile(bare, 0.99), "ms")
    report_transport(report, "6 stations at 10x", figures.get("busy_stages_ms", []), bare)
    report_stages(report, "busy", figures.get("busy_stages_ms", []), figures.get("busy_acks_ms", []))
    report.figure("6 stations at 10x press rate: load average (1 min) mid-run", figures.get("busy_load", 0), "")
    for stall in figures.get("busy_stalls", []):
        print(f"  stalled source: {stall}")
    for row in figures.get("busy_slow_rows", [])[:10]:
        print("  slow event stages (ms): " + ", ".join(f"{part:.1f}" for part in row))
    for key, value in figures.get("busy_counts", {}).items():
        report.figure(f"6 stations at 10x press rate: hub's {key}", value or 0, "")
