"""The Wi-Fi day in network namespaces (root): :func:`run_wifi_day` plays rooms over a lossy Wi-Fi profile
(:mod:`tests.support.wifi`) driven by :mod:`tests.support.wifi_day`; :func:`long_wifi_day` is the whole youth-cup
day shared by tests/rooms/test_rooms_wifi.py and ``./dev bench rooms_wifi_day``."""

from __future__ import annotations

import json
import subprocess
import sys
import os
from pathlib import Path

from tests.support import netns
from tests.support.netns_day import ROOT, _keep, check_day
from tests.support.wifi import WifiProfile


def run_wifi_day(tmp_path: Path, stations: list[str], tournaments: list[dict], faults: dict) -> dict:
    prefix = f"svw{os.getpid() % 100000}"
    names = ["hub", "standby", *stations, "ctl"]
    venue = netns.Venue(prefix, names)
    profile = None
    try:
        for number, name in enumerate(names, start=1):
            if name in stations:
                venue.tablet_link(name, number)
        profile = WifiProfile(venue, stations, stats_dir=tmp_path)
        spec = {"prefix": prefix, "names": names, "folder": str(tmp_path), "stations": stations,
                "tournaments": tournaments, "faults": faults, "standby": True}
        (tmp_path / "spec.json").write_text(json.dumps(spec))
        done = subprocess.run(["ip", "netns", "exec", venue.namespace("ctl"), sys.executable, "-m",
                               "tests.support.wifi_day", str(tmp_path / "spec.json"), str(tmp_path / "out.json")],
                              cwd=ROOT, capture_output=True, text=True, timeout=3600)
        (tmp_path / "scenario.log").write_text(done.stdout + done.stderr)
        assert done.returncode == 0, done.stderr[-4000:]
        day = json.loads((tmp_path / "out.json").read_text())
    finally:
        if profile is not None:
            profile.close()
        venue.close()
        _keep(tmp_path)
    day["wifi"] = {"how": profile.how, "links": profile.stats}
    return day


def check_wifi_day(day: dict) -> None:
    assert "desk_to_standby" in day["faults"]
    # the profile was on every station's link (its forwarder carried the link's frames and lost some), and over
    # the day the loss is what the chain gives (2 %), within a wide margin: bursts make it uneven
    links = day["wifi"]["links"]
    if day["wifi"]["how"] != "tc netem":
        assert len(links) == len(day["box_ids"]) and all(link["passed"] > 100 and link["lost"] for link in links.values())
        frames = sum(link["passed"] + link["lost"] for link in links.values())
        assert 0.003 < sum(link["lost"] for link in links.values()) / frames < 0.1, links
    check_day(day)  # at the new desk: every event once and in order, every result the station's own
    assert day["counts"]["bad_messages"] == 0


LONG_DAY = {"stations": [f"s{n}" for n in range(1, 7)],
            "tournaments": [{"preset": "youth-cup", "players": 48, "rounds": 10}],
            "faults": {"desk_to_standby": {"round": 1}}}


def long_wifi_day(tmp_path: Path) -> dict:
    """A whole youth-cup day in six rooms (2.4): written round, 1/16 in two runs, 1/8, 1/4, 1/2, final; the desk
    moved to the standby during the 1/8."""
    day = run_wifi_day(tmp_path, LONG_DAY["stations"], LONG_DAY["tournaments"], LONG_DAY["faults"])
    check_wifi_day(day)
    assert day["tables"][day["tids"][0]]["next"]["kind"] == "done"
    return day
