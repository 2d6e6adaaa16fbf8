"""The long rooms day (root, about 3 minutes): tests/rooms/test_rooms_netns.py's whole northern-owl tournament and
two mubc rounds over three stations in network namespaces, with a one-minute cut, 30% loss, a station killed,
the hub restarted in both tournaments and duplicates delivered; every check of the test, then its figures."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from tests.support import netns


def run(report) -> None:
    why = netns.can_run()
    if why:
        print(f"  skipped: {why}")
        return
    from tests.support.netns_day import check_day, long_day, run_day

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="svoyak-rooms-day-") as folder:
        if report.short:  # one station, one mubc round, no faults: the same driver and checks, briefly
            day = run_day(Path(folder), ["s1"], [{"preset": "mubc", "players": 8, "rounds": 1}], {})
            check_day(day)
        else:
            day = long_day(Path(folder))
    counts = day["counts"]
    battles = sum(len(b) for b in day["logs"].values())
    report.figure("long day: battles played in 3 rooms (all checked)", battles, "")
    report.figure("long day: events at the hub, each once and in order", counts["applied"], "")
    report.figure("long day: events ahead of a gap on arrival", counts["out_of_order"], "", target=0)
    report.figure("long day: duplicates dropped by the hub's ledger", counts["duplicates"], "")
    report.figure("long day: wall time", time.monotonic() - started, "s")
