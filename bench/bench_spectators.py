"""The hall's audience never slows the game (issue 18): spectators connected against the host's figures.

On a real box (``svoyak run --simulator``: gunicorn gthread, 100 threads; the capture on mock pins; the
spectators' nats-server; bench/spectators.py), for each audience, with the host and the first board timed as
bench/spectators.py says:

- the fast path: 0, 100 and 1,000 spectators on nats-server's WebSocket port (tests/support/crowd.py, 250 a process);
  host command -> ack and press -> first board p50/p99 as ratios to 0 spectators (target <= 1.5x), the last
  spectator's update p50/p99 (its arrival minus the update's ``server_now_ns``; target p99 <= 250 ms), the box's
  memory per 100 spectators (resident memory of the box's processes, with and without the crowd);
- admission control alone, the option measured against it: 100 and 1,000 spectators trying Socket.IO (cap 40:
  40 admitted, the rest refused and polling the snapshot every 4 s as spectate.js does);
- the same fast path with 1,000 spectators on a box held to a Pi 3's 1 GB (a cgroup v1 memory limit around the
  box and a headless Chromium kiosk on /board beside it; the crowd is outside, as phones are): its peak.

``SVOYAK_BENCH_PRESSES`` (default 40) presses per run. Online viewers through a cluster: bench_online.
"""

from __future__ import annotations

import os

import socketio

from bench import median, percentile
from bench.spectators import CGROUP_V1, Box, Crowd, last_spectator_ms, one_way_ms, play

PRESSES = int(os.environ.get("SVOYAK_BENCH_PRESSES", "40"))
PROBES = 10  # spectators in a process of their own, connected last (bench/spectators.py Crowd)


def measure(box: Box, kind: str, count: int, presses: int) -> dict:
    before = box.rss_kb()
    crowd = Crowd(box, kind, count, probes=PROBES) if count else None
    during = box.rss_kb()
    cpu_before = box.cpu_s()
    played = play(box, presses)
    cpu_after = box.cpu_s()
    merged = crowd.stop() if crowd else None
    cpu = {name: cpu_after.get(name, 0.0) - cpu_before.get(name, 0.0) for name in cpu_after}
    return {"played": played, "crowd": merged, "before_kb": sum(before.values()), "during_kb": sum(during.values()),
            "during": during, "cpu": cpu}


def summary(report, label: str, result: dict, baseline: dict | None, count: int, ratio_target=1.5) -> None:
    played = result["played"]
    acks, presses = played["ack_ms"], played["press_ms"]
    report.figure(f"{label}: command -> ack p50", median(acks), "ms")
    report.figure(f"{label}: command -> ack p99", percentile(acks, 0.99), "ms")
    report.figure(f"{label}: press -> first board p50", median(presses), "ms")
    report.figure(f"{label}: press -> first board p99", percentile(presses, 0.99), "ms")
    if baseline is not None:
        base = baseline["played"]
        report.ratio(f"{label}: ack p50 / no spectators", median(acks), median(base["ack_ms"]), ratio_target)
        report.ratio(f"{label}: ack p99 / no spectators", percentile(acks, 0.99),
                     percentile(base["ack_ms"], 0.99), ratio_target)
        report.ratio(f"{label}: press p50 / no spectators", median(presses), median(base["press_ms"]), ratio_target)
        report.ratio(f"{label}: press p99 / no spectators", percentile(presses, 0.99),
                     percentile(base["press_ms"], 0.99), ratio_target)
    cpu = result.get("cpu")
    if cpu:
        actions = max(1, len(acks) + len(presses))
        web = sum(value for name, value in cpu.items() if name != "nats-server")
        report.figure(f"{label}: box's python CPU per action (command or press)", web / actions * 1000, "ms")
        report.figure(f"{label}: spectators' nats-server CPU per action", cpu.get("nats-server", 0.0) / actions * 1000,
                      "ms")
    crowd = result["crowd"]
    if crowd:
        report.figure(f"{label}: spectators connected", crowd["connected"], "", target=count, better="higher")
        last = last_spectator_ms(crowd, played["seqs"])
        if last:
            report.figure(f"{label}: last spectator's update p50 (crowd clients)", median(last), "ms")
            report.figure(f"{label}: last spectator's update p99 (crowd clients)", percentile(last, 0.99), "ms")
        probes = one_way_ms(crowd["probes"], crowd["sent_ns"], played["seqs"])
        if probes:
            report.figure(f"{label}: a spectator connected last, update p50", median(probes), "ms")
            report.figure(f"{label}: a spectator connected last, update p99", percentile(probes, 0.99), "ms",
                          target=250)
        grown_mb = (result["during_kb"] - result["before_kb"]) / 1024
        report.figure(f"{label}: box memory per 100 spectators", grown_mb / (count / 100), "MB")


def run(report, tiny: bool = False) -> dict:
    tiny = tiny or report.short
    presses = 4 if tiny else PRESSES
    counts = (0, 20) if tiny else (0, 100, 1000)
    results = {}
    box = Box()
    try:
        play(box, 3)  # warm: the first battle's setup, imports, the first frames
        for count in counts:
            results[("nats", count)] = measure(box, "nats", count, presses)
        rss = box.rss_kb()
        report.figure("box memory with no spectators (all processes)", results[("nats", 0)]["before_kb"] / 1024,
                      "MB")
        report.figure("spectators' nats-server", rss.get("nats-server", 0) / 1024, "MB")
    finally:
        box.close()
    baseline = results[("nats", 0)]
    summary(report, "no spectators", baseline, None, 0)
    for count in counts[1:]:
        summary(report, f"{count} on the fast path", results[("nats", count)], baseline, count)
    if tiny:
        return results
    # admission control alone: what spectators get when there is no fan-out
    box = Box()
    try:
        for count in (100, 1000):
            crowd_socket = Crowd(box, "socketio", count)
            polling = Crowd(box, "poll", crowd_socket.refused) if crowd_socket.refused else None
            label = f"{count} by admission alone"
            try:
                played = play(box, presses)
            except (socketio.exceptions.ConnectionError, TimeoutError) as error:
                report.figure(f"{label}: the host could not connect ({error})", 1, "", target=0)
                crowd_socket.stop()
                if polling:
                    polling.stop()
                continue
            merged = crowd_socket.stop()
            polled = polling.stop() if polling else None
            result = {"played": played, "crowd": merged, "before_kb": 0, "during_kb": 0}
            summary(report, label, {**result, "crowd": None}, baseline, count)
            report.figure(f"{label}: on Socket.IO / refused then polling", merged["connected"], "")
            report.figure(f"{label}: refused then polling", merged["refused"], "")
            last = last_spectator_ms(merged, played["seqs"])
            if last:
                report.figure(f"{label}: last Socket.IO spectator's update p99", percentile(last, 0.99), "ms")
            if polled:
                report.figure(f"{label}: polls answered 503 (bucket)", polled["refused"], "")
                report.figure(f"{label}: polling errors", len(polled["errors"]), "")
    finally:
        box.close()
    if CGROUP_V1.exists() and os.access(CGROUP_V1, os.W_OK):
        box = Box(memory_limit_mb=1024)
        try:
            limited = measure(box, "nats", 1000, presses)
            summary(report, "1,000, box held to 1 GB", limited, baseline, 1000)
            report.figure("1 GB box: peak memory (box + Chromium kiosk)", box.cgroup_peak_mb(), "MB", target=1024)
            report.figure("1 GB box: times the limit was hit", box.cgroup_failcnt(), "")
        finally:
            box.close()
    else:
        print("  (no writable cgroup v1 memory controller: the 1 GB run is skipped)")
    return results
