"""Online viewers (docs/spectators.md "Online viewers"): the hub's spectators' nats-server leaf-connects to a
three-node cluster the organiser runs (network namespaces, root); 2,000 viewers spread over the nodes. The box's
uplink carries each update once, whatever the number of viewers; a node killed mid-battle (the one the hub's
leaf is on, the worst one) loses no viewer's updates beyond a resync from the next snapshot."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bench import median, percentile
from tests.support import netns
from tests.support.online import NODES, OnlineVenue, stop_viewers

VIEWERS = 2000
UPDATES = 120
EVERY_MS = 100


@pytest.fixture
def online():
    why = netns.can_run()
    if why:
        pytest.skip(why)
    venue = OnlineVenue()
    yield venue
    venue.close()


def test_two_thousand_viewers_and_a_node_killed(online):
    viewers = online.viewers(VIEWERS, seconds=120)
    ready = sum(json.loads(Path(str(out) + ".ready").read_text())["connected"] for _, out in viewers)
    per_node = {node: online.monitor(node, "varz").get("connections", 0) for node in NODES}
    out = online.folder / "published.json"
    publisher = online.publish(UPDATES, EVERY_MS, out)
    time.sleep(UPDATES * EVERY_MS / 1000 / 2)  # mid-battle
    leaf_node = next(node for node in NODES if online.monitor(node, "leafz").get("leafs"))
    online.kill_node(leaf_node)
    publisher.wait(timeout=120)
    time.sleep(3.0)  # a loaded machine: the viewers' processes read the last snapshots
    hub = online.monitor("hub", "varz")
    merged = stop_viewers(viewers)
    sent = json.loads(out.read_text())

    assert ready == VIEWERS and merged["connected"] == VIEWERS, merged["errors"]
    assert all(count > 0 for count in per_node.values()), per_node  # every node served viewers
    # every viewer ends whole: at the last update, by in-order updates or a snapshot after its gap
    finals = [viewer["seq"] for viewer in merged["viewers"]]
    assert finals == [UPDATES] * VIEWERS, sorted(set(finals))
    assert all(viewer["resyncs"] >= viewer["gaps"] for viewer in merged["viewers"])
    # the uplink carried each message once: the hub's out_msgs are at most the published ones (fewer: those
    # published while its leaf moved to another node never crossed), never one per viewer
    published = sent["updates"] + sent["snapshots"]
    assert sent["published"] == published
    assert published // 2 <= hub["out_msgs"] <= published, (hub["out_msgs"], published)
    assert hub["out_bytes"] <= sent["bytes"] + 200 * published  # the bodies plus NATS' headers, once
    delays = [(at - merged["sent_ns"][seq]) / 1e6 for seq, times in merged["arrivals"].items() for at in times]
    moved = sum(1 for viewer in merged["viewers"] if viewer["moves"])
    resynced = sum(1 for viewer in merged["viewers"] if viewer["resyncs"])
    print(f"\n{VIEWERS} viewers over {per_node}; killed {leaf_node} (the hub's leaf) mid-battle: {moved} moved "
          f"node, {resynced} resynced; {len(delays)} deliveries, one-way p50 {median(delays):.1f} ms, "
          f"p99 {percentile(delays, 0.99):.1f} ms; uplink {hub['out_msgs']} messages, {hub['out_bytes']} bytes "
          f"for {published} published ({sent['bytes']} bytes of bodies)")
