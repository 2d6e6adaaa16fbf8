"""The hall's audience never slows the game (issue 18): spectators connected against the host's figures.

On a real box (``svoyak run --simulator``: gunicorn gthread, 100 threads; the capture on mock pins; the
spectators' nats-server; bench/spectators.py), for each audience, with the host and the first board timed as
bench/spectators.py says:

- the fast path: 0, 100 and 1,000 spectators on nats-server's WebSocket port (tests/crowd.py, 250 a process),
  in ``SVOYAK_BENCH_ROUNDS`` (3) rounds of the three on one box: host command -> ack and press -> first board
  p50/p99 as ratios to the same round's 0 spectators (target <= 1.5x), the last spectator's update p50/p99 (the
  kernel's receive time of its bytes minus the update's ``server_now_ns``; target p99 <= 250 ms), the box's
  memory per 100 spectators (resident memory of the box's processes, with and without the crowd). Each figure
  is the median of the rounds; each round's own figures are printed with the load average beside them;
- admission control alone, the option measured against it (once; ``SVOYAK_BENCH_ADMISSION=0``: skipped): 100 and
  1,000 spectators trying Socket.IO (cap 40: 40 admitted, the rest refused and polling the snapshot every 4 s as
  spectate.js does);
- the same fast path with 1,000 spectators on a box held to a Pi 3's 1 GB (a cgroup v1 memory limit around the
  box and a headless Chromium kiosk on /board beside it; the crowd is outside, as phones are): its peak
  (``SVOYAK_BENCH_PI3=0``: skipped).

The box is pinned to one core and every client to the other (bench/spectators.py ``placement``): the client
simulator must not starve the box it measures. The machine is shared: the load average is printed beside every
figure. ``SVOYAK_BENCH_PRESSES`` (default 40) presses per run. Online viewers through a cluster: bench_online.
"""

from __future__ import annotations

import os

import socketio

from bench import median, percentile
from bench.spectators import CGROUP_V1, MEASURE_CPUS, Box, Crowd, last_spectator_ms, load, one_way_ms, placement, play

PRESSES = int(os.environ.get("SVOYAK_BENCH_PRESSES", "40"))
PROBES = 10  # spectators in a process of their own, connected last (bench/spectators.py Crowd)


ROUNDS = int(os.environ.get("SVOYAK_BENCH_ROUNDS", "3"))


def measure(box: Box, kind: str, count: int, presses: int) -> dict:
    load_before = load()
    before = box.rss_kb()
    crowd = Crowd(box, kind, count, probes=PROBES) if count else None
    during = box.rss_kb()
    cpu_before = box.cpu_s()
    played = play(box, presses)
    cpu_after = box.cpu_s()
    load_after = load()
    merged = crowd.stop() if crowd else None
    cpu = {name: cpu_after.get(name, 0.0) - cpu_before.get(name, 0.0) for name in cpu_after}
    return {"played": played, "crowd": merged, "before_kb": sum(before.values()), "during_kb": sum(during.values()),
            "during": during, "cpu": cpu, "load": f"{load_before} -> {load_after}"}


def figures(result: dict, baseline: dict | None, count: int) -> dict:
    """Every figure of one run by name (ms, x, MB), ratios to ``baseline`` (the same round's 0 spectators)."""
    played = result["played"]
    acks, presses = played["ack_ms"], played["press_ms"]
    out = {"command -> ack p50": median(acks), "command -> ack p99": percentile(acks, 0.99),
           "press -> first board p50": median(presses), "press -> first board p99": percentile(presses, 0.99)}
    if baseline is not None:
        base = figures(baseline, None, 0)
        for mine, theirs in (("ack p50", "command -> ack p50"), ("ack p99", "command -> ack p99"),
                             ("press p50", "press -> first board p50"), ("press p99", "press -> first board p99")):
            out[f"{mine} / no spectators"] = out[theirs] / base[theirs] if base[theirs] else float("inf")
    cpu = result.get("cpu")
    if cpu:
        actions = max(1, len(acks) + len(presses))
        game = [name for name in cpu if "nats-server" not in name and not name.endswith(" waiting")]
        out["box's python CPU per action"] = sum(cpu[name] for name in game) / actions * 1e3
        out["box's python: waited for a CPU, per action"] = sum(cpu.get(name + " waiting", 0.0)
                                                               for name in game) / actions * 1e3
        out["spectators' nats-server CPU per action"] = cpu.get("nats-server", 0.0) / actions * 1000
        out["spectators' nats-server: waited for a CPU, per action"] = cpu.get("nats-server waiting", 0.0) / actions * 1e3
    crowd = result["crowd"]
    if crowd:
        out["spectators connected"] = crowd["connected"]
        last = last_spectator_ms(crowd, played["seqs"])
        if last:
            out["last spectator's update p50"] = median(last)
            out["last spectator's update p99"] = percentile(last, 0.99)
        read = last_spectator_ms(crowd, played["seqs"], key="reads")
        if read:
            out["last spectator's update p99, read by its SCHED_IDLE process"] = percentile(read, 0.99)
        probes = one_way_ms(crowd["probes"], crowd["sent_ns"], played["seqs"])
        if probes:
            out["a spectator connected last, update p50"] = median(probes)
            out["a spectator connected last, update p99"] = percentile(probes, 0.99)
        if result["during_kb"]:
            out["box memory per 100 spectators"] = (result["during_kb"] - result["before_kb"]) / 1024 / (count / 100)
    return out


UNITS = {"x": " / no spectators", "": "spectators connected", "MB": "memory per 100"}
TARGETS = {"ack p50 / no spectators": 1.5, "ack p99 / no spectators": 1.5, "press p50 / no spectators": 1.5,
           "press p99 / no spectators": 1.5, "last spectator's update p99": 250,
           "a spectator connected last, update p99": 250}


def unit(name: str) -> str:
    return next((symbol for symbol, marker in UNITS.items() if marker in name), "ms")


def summary(report, label: str, runs: list[dict], count: int) -> None:
    """The median over ``runs`` (one figures dict and its load each) of every figure, with each run's value and
    load average beside it."""
    for name in runs[0]["figures"]:
        values = [run["figures"][name] for run in runs if name in run["figures"]]
        if name == "box memory per 100 spectators":  # later rounds reuse what nats-server grew in the first
            report.figure(f"{label}: {name} (round 1: a fresh nats-server)", values[0], "MB")
            print(f"      each run: {values[0]:.3g} ({runs[0]['load']})", flush=True)
            continue
        each = ", ".join(f"{value:.3g} ({run['load']})" for value, run in zip(values, runs))
        target = TARGETS.get(name)
        if name == "spectators connected":
            target = count + PROBES
            report.figure(f"{label}: {name}", min(values), "", target=target, better="higher")
        else:
            report.figure(f"{label}: {name}" + (f" (median of {len(values)})" if len(values) > 1 else ""),
                          median(values), unit(name), target=target)
        if len(values) > 1 or runs[0]["load"]:
            print(f"      each run: {each}", flush=True)


def run(report, tiny: bool = False) -> dict:
    presses = 4 if tiny else PRESSES
    counts = (0, 20) if tiny else (0, 100, 1000)
    rounds = 1 if tiny else max(1, ROUNDS)
    print(f"  {placement()}; {presses} presses a run, {rounds} round(s); {load()} at the start", flush=True)
    results, runs = {}, {count: [] for count in counts}
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, MEASURE_CPUS)  # the host's and the first board's clients: beside the game
    try:
        box = Box()
        try:
            play(box, 3)  # warm: the first battle's setup, imports, the first frames
            for number in range(rounds):
                baseline = None
                for count in counts:
                    result = measure(box, "nats", count, presses)
                    results[("nats", count)] = result
                    baseline = baseline or result
                    runs[count].append({"figures": figures(result, None if count == 0 else baseline, count),
                                        "load": result["load"]})
                    print(f"    round {number + 1}, {count} spectators: {result['load']}", flush=True)
            rss = box.rss_kb()
            report.figure("box memory with no spectators (all processes)", results[("nats", 0)]["before_kb"] / 1024,
                          "MB")
            report.figure("spectators' nats-server after the rounds", rss.get("nats-server", 0) / 1024, "MB")
        finally:
            box.close()
        summary(report, "no spectators", runs[0], 0)
        for count in counts[1:]:
            summary(report, f"{count} on the fast path", runs[count], count)
        if tiny:
            return results
        baseline = results[("nats", 0)]
        if os.environ.get("SVOYAK_BENCH_ADMISSION", "1") != "0":
            admission(report, presses, baseline)
        if os.environ.get("SVOYAK_BENCH_PI3", "1") == "0":
            print("  (SVOYAK_BENCH_PI3=0: the 1 GB run is skipped)")
        elif CGROUP_V1.exists() and os.access(CGROUP_V1, os.W_OK):
            box = Box(memory_limit_mb=1024)
            try:
                play(box, 3)
                zero = measure(box, "nats", 0, presses)
                limited = measure(box, "nats", 1000, presses)
                summary(report, "1 GB box, no spectators", [{"figures": figures(zero, None, 0), "load": zero["load"]}],
                        0)
                summary(report, "1 GB box, 1,000 spectators",
                        [{"figures": figures(limited, zero, 1000), "load": limited["load"]}], 1000)
                report.figure("1 GB box: peak memory (box + Chromium kiosk)", box.cgroup_peak_mb(), "MB", target=1024)
                report.figure("1 GB box: times the limit was hit", box.cgroup_failcnt(), "")
            finally:
                box.close()
        else:
            print("  (no writable cgroup v1 memory controller: the 1 GB run is skipped)")
    finally:
        os.sched_setaffinity(0, mine)
    return results


def admission(report, presses: int, baseline: dict) -> None:
    """Admission control alone: what spectators get when there is no fan-out (the option not chosen)."""
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
            result = {"played": played, "crowd": None, "before_kb": 0, "during_kb": 0}
            summary(report, label, [{"figures": figures(result, baseline, count), "load": load()}], count)
            report.figure(f"{label}: on Socket.IO", merged["connected"], "")
            report.figure(f"{label}: refused then polling", merged["refused"], "")
            last = last_spectator_ms(merged, played["seqs"])
            if last:
                report.figure(f"{label}: last Socket.IO spectator's update p99", percentile(last, 0.99), "ms")
            if polled:
                report.figure(f"{label}: polls answered 503 (bucket)", polled["refused"], "")
                report.figure(f"{label}: polling errors", len(polled["errors"]), "")
    finally:
        box.close()
