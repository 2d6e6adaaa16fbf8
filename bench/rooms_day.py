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

from tests.support.boxes import Host
from tests.support.scenario import Day, _python_in

EVENTS_PER_QUESTION = 5  # next (price + reading), press, point, judged


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory_mb(box) -> dict:
    """RSS of the box's processes (its group: run, capture, web worker) and of its nats-server."""
    group = os.getpgid(box.process.pid)
    web = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == group:
                    web += _rss_kb(int(entry.name))
            except OSError:
                continue
    nats = sum(_rss_kb(int(p.stem.rsplit("_", 1)[1])) for p in (box.folder / "rooms" / "nats").glob("*.ports"))
    return {"box_mb": web / 1024, "nats_mb": nats / 1024}


def lags(day, stages: list | None = None) -> list[float]:
    """Each event's lag (ms) since the last call; ``stages`` gets the per-stage split of those that carry it."""
    answer = day.hub.post("/director/rooms/lags.json").json()
    if stages is not None:
        stages.extend([part / 1e6 for part in row] for row in answer.get("stages_ns", []))
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
        parts = spec.get("parts") or ["latency", "busy", "catch_up"]
        if "latency" in parts:
            latency_part(day, spec, names, rng, figures)
        if "busy" in parts:
            busy_part(day, spec, names, figures)
        if "catch_up" in parts:
            catch_up_part(day, spec, names, rng, figures)
        figures["memory_idle"] = {"hub": memory_mb(day.hub), "station": memory_mb(day.stations[names[-1]])}
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
    figures["event_to_hub_ms"] = lags(day)
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
    time.sleep(spec["busy_s"] / 2)
    figures["memory_busy"] = {"hub": memory_mb(day.hub), "station": memory_mb(day.stations[names[0]])}
    figures["busy_load"] = os.getloadavg()[0]
    for thread in threads:
        thread.join()
    time.sleep(2)
    stages: list = []
    figures["busy_lag_ms"] = lags(day, stages)
    figures["busy_stages_ms"] = stages
    counts = day.hub.json("/director/rooms.json")
    figures["busy_counts"] = {key: counts.get(key) for key in ("resourced", "out_of_order", "bad_messages")}
    figures["busy_stalls"] = counts.get("stalls", [])
    slow = [row for row in stages if sum(row) > 500]
    figures["busy_slow_rows"] = slow[:50]
    figures["busy_events_per_s"] = len(figures["busy_lag_ms"]) / spec["busy_s"]
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
