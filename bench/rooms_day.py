"""The rooms bench's driver, run inside the venue's "ctl" namespace by bench/bench_rooms.py (``python -m
bench.rooms_day SPEC.json OUT.json``): a hub and six stations as real boxes; it measures and writes figures."""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from pathlib import Path

from tests.rooms.boxes import Host
from tests.rooms.scenario import Day, _python_in

EVENTS_PER_QUESTION = 5  # next (price + reading), press, point, judged


def _status_kb(pid: int, field: str, path: str = "status") -> int:
    try:
        for line in Path(f"/proc/{pid}/{path}").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory_mb(box) -> dict:
    """The box's Python processes (its group: run, capture, web worker), RSS and PSS (each shared page counted
    once across them: what the box takes from the Pi's RAM); its rooms nats-server (RSS), and the spectators'
    nats-server the web starts in its group (issue 18), apart."""
    group = os.getpgid(box.process.pid)
    rss = pss = spectators = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                pid = int(entry.name)
                if os.getpgid(pid) != group:
                    continue
                if Path(f"/proc/{pid}/exe").resolve().name.startswith("nats-server"):
                    spectators += _status_kb(pid, "VmRSS")
                    continue
                rss += _status_kb(pid, "VmRSS")
                pss += _status_kb(pid, "Pss", "smaps_rollup")
            except OSError:
                continue
    pids = [int(p.stem.rsplit("_", 1)[1]) for p in (box.folder / "rooms" / "nats").glob("*.ports")]
    return {"box_mb": rss / 1024, "box_pss_mb": pss / 1024, "spectators_nats_mb": spectators / 1024,
            "nats_mb": sum(_status_kb(pid, "VmRSS") for pid in pids) / 1024}


def lags(day, stages: list | None = None, acks: list | None = None) -> list[float]:
    """Each event's lag (ms) since the last call; ``stages`` gets the per-stage split of those that carry it,
    ``acks`` every station's publish -> acknowledged by its own stream (ms). The first call starts the figures."""
    answer = day.hub.post("/director/rooms/lags.json").json()
    if stages is not None:
        stages.extend([part / 1e6 for part in row] for row in answer.get("stages_ns", []))
    for box in day.stations.values():
        taken = box.post("/director/rooms/lags.json").json().get("acks_ns", [])
        if acks is not None:
            acks.extend(ns / 1e6 for ns in taken)
    return [ns / 1e6 for ns in answer["lags_ns"]]


def question(host: Host, rng) -> None:
    host.command("next")
    host.press(rng.randrange(3))
    host.command("point")
    host.command("right")


def standalone_battle(host: Host, themes: int = 60) -> None:
    """A battle of many themes (the setup takes at most 64), not linked to a tournament."""
    answer = host.command("setup", profile="mubc", players=["А", "Б", "В"], themes=themes)
    if not answer["ok"] and answer["error"]["code"] == "error.battle_unfinished":
        # the previous part's battle is still open: the host sets it aside, as the host page asks
        answer = host.command("setup", profile="mubc", players=["А", "Б", "В"], themes=themes,
                              set_aside=host.view()["battle"]["id"])
    assert answer["ok"], answer


def bare_latency(day, name: str, count: int) -> list[float]:
    """A bare core-NATS publish on the station's server, consumed on the hub's: the same namespaces and leaf."""
    station = day.stations[name]
    hub_rooms = json.loads((day.hub.folder / "rooms" / "rooms.json").read_text())
    box = day.box_ids[name]
    subject = f"svoyak.desk.{box}.beat"  # a station may publish only its beats and claims: bench beats carry a stamp
    sub_code = f"""
import asyncio, json, pathlib, time, nats
async def main():
    ports = json.load(open(next(pathlib.Path({str(day.hub.folder / 'rooms' / 'nats')!r}).glob('*.ports'))))
    nc = await nats.connect(ports['nats'][0], user='app', password={hub_rooms['app_password']!r})
    got = []
    done = asyncio.Event()
    async def on(msg):
        stamp = json.loads(msg.data).get("bench_ns")
        if stamp is None:
            return  # the station's own heartbeat
        got.append((time.monotonic_ns() - stamp) / 1e6)
        if len(got) >= {count}: done.set()
    await nc.subscribe({subject!r}, cb=on)
    await nc.flush()
    print("ready", flush=True)
    try:
        await asyncio.wait_for(done.wait(), 120)
    finally:
        print(json.dumps(got), flush=True)
        await nc.close()
asyncio.run(main())
"""
    import subprocess

    subscriber = subprocess.Popen(["ip", "netns", "exec", day.hub.netns, sys.executable, "-c", sub_code],
                                  stdout=subprocess.PIPE, text=True, cwd=str(Path(__file__).resolve().parents[1]))
    assert subscriber.stdout.readline().strip() == "ready"
    time.sleep(1.0)  # the hub's interest reaches the station over the leaf
    pub_code = f"""
import asyncio, json, pathlib, time, nats
async def main():
    ports = json.load(open(next(pathlib.Path({str(station.folder / 'rooms' / 'nats')!r}).glob('*.ports'))))
    nc = await nats.connect(ports['nats'][0])
    for _ in range({count}):
        await nc.publish({subject!r}, json.dumps({{"format": "svoyak-rooms", "v": 1, "kind": "beat", "box": {box!r},
                                                   "name": {box!r}, "bench_ns": time.monotonic_ns()}}).encode())
        await nc.flush()
        await asyncio.sleep(0.02)
    await nc.close()
asyncio.run(main())
"""
    _python_in(station.netns, pub_code)
    out, _ = subscriber.communicate(timeout=150)
    return json.loads(out.strip().splitlines()[-1])


def main(spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    day = Day(spec)
    figures: dict = {}
    try:
        day.start()
        names = list(day.stations)
        rng = random.Random(3)
        parts = spec.get("parts") or ["latency", "busy", "day", "catch_up"]
        if "latency" in parts:
            latency_part(day, spec, names, rng, figures)
        if "busy" in parts:
            busy_part(day, spec, names, figures)
        if "day" in parts:
            day_part(day, spec, names, figures)
        if "catch_up" in parts:
            catch_up_part(day, spec, names, rng, figures)
        figures["memory_idle"] = {"hub": memory_mb(day.hub), "station": memory_mb(day.stations[names[-1]])}
        counts = day.hub.json("/director/rooms.json")
        figures["counts_end"] = {key: counts.get(key) for key in ("resourced", "sourced", "revived", "out_of_order",
                                                                  "bad_messages", "applied")}
    finally:
        day.stop()
        Path(out_path).write_text(json.dumps(figures))
    return 0


def latency_part(day, spec, names, rng, figures) -> None:
    """One station, one event at a time: station commit -> hub copy, against a bare publish -> consume."""
    host = Host(day.stations[names[0]])
    standalone_battle(host)
    lags(day)
    for _ in range(spec["latency_questions"]):
        question(host, rng)
        time.sleep(0.05)
    time.sleep(1)
    stages: list = []
    acks: list = []
    figures["event_to_hub_ms"] = lags(day, stages, acks)
    figures["latency_stages_ms"] = stages
    figures["latency_acks_ms"] = acks
    figures["bare_ms"] = bare_latency(day, names[0], spec["bare_messages"])
    host.close()


def busy_part(day, spec, names, figures) -> None:
    """Every station at ten times a real press rate (a question every 20 s -> every 2 s)."""
    hosts = [Host(day.stations[name]) for name in names]
    for each in hosts:
        standalone_battle(each)
    lags(day)
    stop_at = time.monotonic() + spec["busy_s"]

    def busy(each: Host, seed: int) -> None:
        local = random.Random(seed)
        while time.monotonic() < stop_at:
            started = time.monotonic()
            question(each, local)
            time.sleep(max(0.0, 2.0 - (time.monotonic() - started)))

    threads = [threading.Thread(target=busy, args=(each, n)) for n, each in enumerate(hosts)]
    for thread in threads:
        thread.start()
    # A bare publish -> consume over the same leaf, measured during the same load (the ratio's baseline).
    bare: list = []
    baseline = threading.Thread(target=lambda: bare.extend(bare_latency(day, names[-1], spec["bare_messages"])))
    time.sleep(min(5.0, spec["busy_s"] / 4))
    baseline.start()
    time.sleep(spec["busy_s"] / 2)
    figures["memory_busy"] = {"hub": memory_mb(day.hub), "station": memory_mb(day.stations[names[0]])}
    figures["busy_load"] = os.getloadavg()[0]
    for thread in threads:
        thread.join()
    baseline.join()
    figures["busy_bare_ms"] = bare
    time.sleep(2)
    stages: list = []
    acks: list = []
    figures["busy_lag_ms"] = lags(day, stages, acks)
    figures["busy_stages_ms"] = stages
    figures["busy_acks_ms"] = acks
    counts = day.hub.json("/director/rooms.json")
    figures["busy_counts"] = {key: counts.get(key) for key in ("resourced", "sourced", "revived", "out_of_order",
                                                               "bad_messages")}
    figures["busy_stalls"] = counts.get("stalls", [])
    slow = [row for row in stages if sum(row) > 500]
    figures["busy_slow_rows"] = slow[:50]
    figures["busy_events_per_s"] = len(figures["busy_lag_ms"]) / spec["busy_s"]
    for each in hosts:
        each.close()


def day_part(day, spec, names, figures) -> None:
    """A day's events on the hub, compressed: every station plays battles back to back, a question every
    ``day_question_s``, until the hub holds ``day_events`` of them (a youth-cup 2.4 day: six rooms, about eight
    hours of a question every 20 s, five events each: 43,200) or ``day_max_s`` passed; then memory, once the
    hub caught up."""
    wanted = spec.get("day_events", 43_200)
    stop_at = time.monotonic() + spec.get("day_max_s", 420)
    pace_s = spec.get("day_question_s", 0.05)
    per_station = wanted // len(names)
    started = time.monotonic()
    battles = [0] * len(names)

    def play(index: int, each: Host) -> None:
        local = random.Random(index)
        standalone_battle(each)
        battles[index] += 1
        played = 0
        while played * EVENTS_PER_QUESTION < per_station and time.monotonic() < stop_at:
            begun = time.monotonic()
            moved = each.command("next")
            if not moved.get("ok"):
                if (moved.get("error") or {}).get("code") == "question_not_ended":
                    each.command("withdraw")
                else:
                    standalone_battle(each)  # the battle is over: the room plays the next one
                    battles[index] += 1
                continue
            each.press(local.randrange(3))
            each.command("point")
            each.command("right")
            played += 1
            time.sleep(max(0.0, pace_s - (time.monotonic() - begun)))

    # A hub in use keeps no bench figures: stop them for the day (they would be the bench's own memory).
    for box in (day.hub, *day.stations.values()):
        box.post("/director/rooms/lags.json", data={"stop": "1"})
    hosts = [Host(day.stations[name]) for name in names]
    threads = [threading.Thread(target=play, args=(n, each)) for n, each in enumerate(hosts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    played_s = time.monotonic() - started
    total = sum(_store_events(day.stations[name].folder) for name in names)
    deadline = time.monotonic() + 300
    while day.hub.json("/director/rooms.json")["applied"] < total and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(5)  # caches settle as they would on a quiet evening
    figures["day"] = {"events": day.hub.json("/director/rooms.json")["applied"], "battles": sum(battles),
                      "seconds": played_s, "hub": memory_mb(day.hub),
                      "station": memory_mb(day.stations[names[0]])}
    for each in hosts:
        each.close()


def catch_up_part(day, spec, names, rng, figures) -> None:
    """A busy station cut off, then back: how fast the hub catches up. The room plays a question every
    ``outage_question_s`` (bounded: a ten-minute outage is tens of thousands of events, not a flood)."""
    name = names[0]
    box_id = day.box_ids[name]
    host = Host(day.stations[name])
    standalone_battle(host)
    day.venue.cut(name)
    pace_s = spec.get("outage_question_s", 0.05)
    stop_at = time.monotonic() + spec["outage_s"]
    while time.monotonic() < stop_at:
        started = time.monotonic()
        moved = host.command("next")
        if not moved.get("ok"):
            if (moved.get("error") or {}).get("code") == "question_not_ended":
                host.command("withdraw")  # the press came before the question was open: it ends unanswered
            else:
                standalone_battle(host)  # the battle is over: the room plays the next one
            continue
        host.press(rng.randrange(3))
        host.command("point")
        host.command("right")
        time.sleep(max(0.0, pace_s - (time.monotonic() - started)))

    def held() -> int:
        battles = day.hub.json("/director/rooms.json")["battles"]
        return sum(count for key, count in battles.items() if key.startswith(box_id + "/"))

    behind = held()
    total = _store_events(day.stations[name].folder)
    mended = time.monotonic()
    day.venue.mend(name)
    first = None
    while True:
        now_held = held()
        if first is None and now_held > behind:
            first = time.monotonic()
        if now_held >= total:
            break
        if time.monotonic() - mended > 600:
            raise AssertionError("the hub did not catch up within 600 s")
        time.sleep(0.05)
    done_at = time.monotonic()
    flowing = done_at - (first or done_at)
    figures["catch_up"] = {"events": total - behind, "seconds": done_at - mended, "outage_s": spec["outage_s"],
                           "resume_s": (first or done_at) - mended,
                           "events_per_s": (total - behind) / flowing if flowing > 0 else float(total - behind)}
    host.close()


def _store_events(folder: Path) -> int:
    import sqlite3

    connection = sqlite3.connect(folder / "events.sqlite")
    try:
        return connection.execute("SELECT COUNT(*) FROM stream_events WHERE kind='battle'").fetchone()[0]
    finally:
        connection.close()


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
