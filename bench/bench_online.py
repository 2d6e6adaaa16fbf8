"""Online viewers through the organiser's cluster (root; tests/rooms/online.py): a three-node nats-server cluster
in network namespaces, the hub's spectators' nats-server leaf-connected to it publishing a battle's updates with
the box's own Publisher (one every ``SVOYAK_BENCH_ONLINE_MS``, default 250 ms; a snapshot every second), and
``SVOYAK_BENCH_VIEWERS`` (default 2,000) viewers spread over the nodes (raw WebSocket NATS subscribers, 250 a
process). The servers and the publisher run on the first core, the viewers on the other under SCHED_IDLE (the
probes at the bench's priority), each arrival the kernel's receive time of its bytes (tests/crowd.py), so the
viewers' simulator neither eats the servers' CPU nor makes them look late; the load average is printed beside
each run (the machine is shared).

Figures: a viewer's one-way time (arrival minus the update's ``server_now_ns``; the namespaces share
CLOCK_MONOTONIC) p50/p99 over every delivery; the uplink's messages and bytes per published message (the hub
server's ``out_msgs``/``out_bytes``: target 1 message per message, whatever the viewers); the nodes' memory per
1,000 viewers; the same run with the node that holds the hub's leaf SIGKILLed halfway: viewers who ended whole.
"""

from __future__ import annotations

import json
import os
import time

from bench import median, percentile
from tests.rooms import netns
from bench.spectators import load
from tests.rooms.online import NODES, OnlineVenue, stop_viewers

VIEWERS = int(os.environ.get("SVOYAK_BENCH_VIEWERS", "2000"))
EVERY_MS = int(os.environ.get("SVOYAK_BENCH_ONLINE_MS", "250"))
UPDATES = 160
PROBES = 12  # viewers in a process of their own at normal priority: a viewer's own device


def once(report, label: str, kill: bool) -> None:
    started_load = load()
    venue = OnlineVenue(pinned=True)
    print(f"  {label}: servers and publisher on core {sorted(venue.server_cpus or [])}, viewers on "
          f"{sorted(venue.viewer_cpus or [])}; {started_load} at the start", flush=True)
    try:
        viewers = venue.viewers(VIEWERS, seconds=300, probes=PROBES)
        before = {node: venue.monitor(node, "varz") for node in NODES}
        out = venue.folder / "published.json"
        publisher = venue.publish(UPDATES, EVERY_MS, out)
        killed = None
        if kill:
            time.sleep(UPDATES * EVERY_MS / 1000 / 2)
            killed = next(node for node in NODES if venue.monitor(node, "leafz").get("leafs"))
            venue.kill_node(killed)
        publisher.wait(timeout=600)
        time.sleep(1.0)
        hub = venue.monitor("hub", "varz")
        merged = stop_viewers(viewers)
        sent = json.loads(out.read_text())
    finally:
        venue.close()
    print(f"  {label}: {started_load} at the start, {load()} at the end", flush=True)
    published = sent["updates"] + sent["snapshots"]
    delays = [(at - merged["sent_ns"][seq]) / 1e6 for seq, times in merged["arrivals"].items() for at in times]
    probes = [(at - merged["sent_ns"][seq]) / 1e6 for seq, times in merged["probes"].items() for at in times]
    total = VIEWERS + PROBES
    report.figure(f"{label}: viewers connected", merged["connected"], "", target=total, better="higher")
    report.figure(f"{label}: update p50, every delivery (kernel receive time)", median(delays), "ms")
    report.figure(f"{label}: update p99, every delivery (kernel receive time)", percentile(delays, 0.99), "ms")
    report.figure(f"{label}: a viewer's update p50 (probes)", median(probes), "ms")
    report.figure(f"{label}: a viewer's update p99 (probes)", percentile(probes, 0.99), "ms", target=250)
    report.figure(f"{label}: uplink messages per published message", hub["out_msgs"] / published, "", target=1.0)
    report.figure(f"{label}: uplink bytes per published byte", hub["out_bytes"] / sent["bytes"], "")
    whole = sum(1 for viewer in merged["viewers"] if viewer["seq"] == UPDATES)
    report.figure(f"{label}: viewers whole at the end", whole, "", target=total, better="higher")
    if kill:
        report.figure(f"{label}: viewers that resynced after {killed} died", sum(
            1 for viewer in merged["viewers"] if viewer["resyncs"]), "")
    else:
        memory = sum(state.get("mem", 0) for state in before.values()) / 1024 / 1024
        report.figure(f"{label}: cluster nodes' memory (all three) per 1,000 viewers", memory / (total / 1000), "MB")


def run(report) -> None:
    why = netns.can_run()
    if why:
        print(f"  skipped: {why}")
        return
    once(report, f"{VIEWERS} viewers", kill=False)
    once(report, f"{VIEWERS} viewers, a node killed", kill=True)
