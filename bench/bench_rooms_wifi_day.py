"""The youth-cup day over Wi-Fi (root, many minutes): tests/rooms/test_rooms_wifi.py's whole day, six rooms (youth-cup
2.4) with delay 5-40 ms, 2 % loss in bursts on every station's link, the desk moved to the standby during the
1/8; every check of the test, then its figures."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from tests.rooms import netns


def run(report) -> None:
    why = netns.can_run()
    if why:
        print(f"  skipped: {why}")
        return
    from tests.rooms.test_rooms_wifi import long_wifi_day

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="svoyak-rooms-wifi-") as folder:
        day = long_wifi_day(Path(folder))
    counts = day["counts"]
    links = day["wifi"]["links"]
    frames = sum(link["passed"] + link["lost"] for link in links.values())
    report.figure("wifi day: battles played in 6 rooms (all checked)", sum(len(b) for b in day["logs"].values()), "")
    report.figure("wifi day: events at the new desk, each once and in order", counts["applied"], "")
    report.figure("wifi day: events ahead of a gap on arrival", counts["out_of_order"], "", target=0)
    report.figure("wifi day: the link's frames lost (at random and in bursts)",
                  100 * sum(link["lost"] for link in links.values()) / max(frames, 1), "%")
    report.figure("wifi day: the tap to every station online at the standby", day["switch"]["tap_to_all_online_s"], "s")
    report.figure("wifi day: the source re-started by the hub's detector", counts["resourced"], "", target=0)
    report.figure("wifi day: wall time", time.monotonic() - started, "s")
    print(f"  link profile: {day['wifi']['how']}")
