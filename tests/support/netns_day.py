"""A rooms day in network namespaces (root): :func:`run_day` starts a hub and stations as real ``svoyak run``
processes (:mod:`tests.support.scenario` drives them from a namespace of its own) and returns what it saw;
:func:`check_day` holds every check of that day; :func:`long_day` is the whole northern-owl tournament shared by
tests/rooms/test_rooms_netns.py and ``./dev bench rooms_day``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import netns

ROOT = Path(__file__).resolve().parents[2]


def run_day(tmp_path: Path, stations: list[str], tournaments: list[dict], faults: dict) -> dict:
    prefix = f"svk{os.getpid() % 100000}"
    names = ["hub", *stations, "stranger", "ctl"]
    venue = netns.Venue(prefix, names)
    try:
        for number, name in enumerate(names, start=1):
            if name in stations:
                venue.tablet_link(name, number)
        spec = {"prefix": prefix, "names": names, "folder": str(tmp_path), "stations": stations,
                "tournaments": tournaments, "faults": faults}
        (tmp_path / "spec.json").write_text(json.dumps(spec))
        done = subprocess.run(["ip", "netns", "exec", venue.namespace("ctl"), sys.executable, "-m",
                               "tests.support.scenario", str(tmp_path / "spec.json"), str(tmp_path / "out.json")],
                              cwd=ROOT, capture_output=True, text=True, timeout=1500)
        (tmp_path / "scenario.log").write_text(done.stdout + done.stderr)
        assert done.returncode == 0, done.stderr[-4000:]
        return json.loads((tmp_path / "out.json").read_text())
    finally:
        venue.close()
        _keep(tmp_path)


def _keep(tmp_path: Path) -> None:
    """The day's logs, for a look after a failure: artifacts/rooms/<test>/ (the data directories are dropped)."""
    import shutil

    keep = ROOT / "artifacts" / "rooms" / tmp_path.name
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir(parents=True)
    for path in tmp_path.rglob("*"):
        if path.is_file() and (path.suffix in (".log", ".json") or path.name == "nats.conf"):
            target = keep / path.relative_to(tmp_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)


def check_day(day: dict) -> None:
    from appliance.rules.battle import event_from_dict, replay
    from appliance.rules.tournament.battle_driver import result_from_battle

    counts = day["counts"]
    assert counts["bad_messages"] == 0
    assert counts["out_of_order"] == 0, "JetStream sourcing keeps each station's order"
    # Every event of every battle of every station's own log is at the hub, once, in order (the ledger applies
    # seq n only after n-1 and drops a repeat).
    for box, battles in day["logs"].items():
        for battle, rows in battles.items():
            assert [seq for seq, _ in rows] == list(range(1, len(rows) + 1))
            assert counts["battles"].get(f"{box}/{battle}") == len(rows), f"{box}/{battle}"
    assert counts["applied"] == sum(len(rows) for battles in day["logs"].values() for rows in battles.values())
    # The desk's results are those recomputed from each box's own log.
    names = {}
    for tid in day["tids"]:
        export = day["exports"][tid]
        names[tid] = export["names"]
        desk = {b["id"]: b for s in day["tables"][tid]["stages"] for b in s.get("battles", []) if b.get("lines")}
        checked = 0
        for box, battles in day["logs"].items():
            for battle, rows in battles.items():
                state = replay([event_from_dict(body) for _seq, body in rows])
                slot = state.setup.slot
                if not slot.startswith(f"tournament:{tid}:"):
                    continue
                battle_id = slot.split(":", 2)[2]
                by_name = {}
                for player, name in names[tid].items():
                    by_name.setdefault(name, player)
                expected = result_from_battle(state, battle_id, source="box", log_id=f"{box}/{battle}",
                                              ids=by_name)
                lines = {line["player"]: (line["score"], line["place"]) for line in desk[battle_id]["lines"]}
                assert lines == {line.player: (line.score, line.place) for line in expected.lines}, battle_id
                checked += 1
        assert checked == len(desk), f"{tid}: every result on the desk came from a station's log"


LONG_DAY = {
    "stations": ["s1", "s2", "s3"],
    "tournaments": [{"preset": "northern-owl", "players": 36, "rounds": 10, "seeds": 9},
                    {"preset": "mubc", "players": 12, "rounds": 2}],
    "faults": {"cut_s": 60, "loss_percent": 30, "kill": True, "hub_restart": True, "duplicates": True},
}


def long_day(tmp_path: Path) -> dict:
    """A whole northern-owl tournament (3 bushes in 3 rooms: groups, third-finals, final) and two mubc rounds
    over 3 stations, with a link cut for a minute, 30% loss, a station SIGKILLed, the hub restarted mid-round
    (in both tournaments) and duplicates delivered; checked like the quick day."""
    day = run_day(tmp_path, LONG_DAY["stations"], LONG_DAY["tournaments"], LONG_DAY["faults"])
    assert set(day["faults"]) >= {"cut", "loss", "kill", "hub_restart", "duplicates"}
    check_day(day)
    owl = day["tables"][day["tids"][0]]
    assert owl["next"]["kind"] == "done"
    assert owl["standings"]
    return day
