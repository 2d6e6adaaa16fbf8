"""A rooms day in network namespaces, driven from inside the venue's "ctl" namespace (``python -m
tests.support.scenario SPEC.json OUT.json``): a hub and stations as real ``svoyak run`` processes, tournaments
played through the real session (host commands and simulator buttons), faults injected on the way. It writes
what it saw; tests/rooms/test_rooms_netns.py asserts on it.

SPEC: ``{"prefix", "folder", "stations": [names], "tournaments": [{"preset", "players", "stages"}],
"faults": {"cut_s", "loss_percent", "kill", "hub_restart", "duplicates", "stranger"}}``.
"""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.support.boxes import Box, Host, play_battle, wait_for
from tests.support.netns import SUBNET, Venue, set_loss

WEB_PORT = 8080
LEAF_PORT = 7422


class Day:
    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.folder = Path(spec["folder"])
        self.venue = Venue.__new__(Venue)  # the namespaces exist already (made by the test, outside)
        self.venue.prefix = spec["prefix"]
        self.venue.switch = f"{spec['prefix']}-lan"
        self.venue._ports = {name: f"p{number}" for number, name in enumerate(spec["names"], start=1)}
        self.venue.made = []
        number = {name: n for n, name in enumerate(spec["names"], start=1)}
        self.hub = Box("hub", self.folder / "hub", WEB_PORT, netns=f"{spec['prefix']}-hub",
                       address=f"{SUBNET}.{number['hub']}", leaf_port=LEAF_PORT)
        # The driver (every room's host tablet) reaches each station over the station's own link (netns.Venue.tablet_link).
        self.stations = {name: Box(name, self.folder / name, WEB_PORT, netns=f"{spec['prefix']}-{name}",
                                   address=f"10.78.{number[name]}.2") for name in spec["stations"]}
        self.box_ids: dict[str, str] = {}
        self.log: list[str] = []
        self.faults_done: list[str] = []
        self.rng = random.Random(7)
        self.played_any = False
        self.pages: dict = {}

    def note(self, text: str) -> None:
        self.log.append(f"{time.monotonic():.1f} {text}")
        print(text, flush=True)

    # --- set-up -------------------------------------------------------------------------------------------------
    def start(self) -> None:
        self.hub.start()
        for box in self.stations.values():
            box.start()
        self.hub.post("/director/rooms/role", data={"role": "hub", "name": "Стол"})
        for name, box in self.stations.items():
            code = self.hub.post("/director/rooms/code.json").json()["code"]
            box.post("/room/pair", data={"hub": f"{self.hub.address}:{WEB_PORT}", "code": code, "name": name})
            self.box_ids[name] = json.loads((box.folder / "rooms" / "rooms.json").read_text())["box_id"]
        wait_for(lambda: all(r["online"] for r in self.hub.json("/director/rooms.json")["rooms"])
                 and len(self.hub.json("/director/rooms.json")["rooms"]) == len(self.stations), 60, "stations online")
        self.note(f"paired {self.box_ids}")

    # --- the tournament -----------------------------------------------------------------------------------------
    def tournament(self, preset: str, players: int, rounds: int, title: str, seeds: int = 0) -> str:
        """Create, register, then draw and play until the tournament is over or ``rounds`` rounds are played."""
        response = self.hub.post("/director/new", data={"preset": preset, "title": title})
        tid = response.url.split("/director/")[1].split("/")[0]
        self.hub.post(f"/director/{tid}/registration",
                      data={"bulk": "\n".join(f"Игрок {i}" for i in range(1, players + 1))})
        self.hub.post(f"/director/{tid}/close-registration")
        if seeds:  # northern-owl 2.3-2.4: one seeded player per group
            self.hub.post(f"/director/{tid}/seeding", data={"seeds": " ".join(f"p{i:03d}" for i in range(1, seeds + 1))})
        played = 0
        for _step in range(40):
            table = self.hub.get(f"/table/{tid}.json").json()
            step = table["next"]
            if step["kind"] == "done" or played >= rounds:
                break
            if step["kind"] == "draw":
                assert self.hub.post(f"/director/{tid}/draw").status_code == 200
            elif step["kind"] == "tie":
                tie = step["tie"]
                self.hub.post(f"/director/{tid}/tie", data={"tie": tie["id"], "order": " ".join(tie["players"]),
                                                           "how": "theme", "detail": "scenario"})
            elif step["kind"] in ("play", "wait"):
                self.play_round(tid, step["battles"], played, first_tournament=not self.played_any)
                played += 1
                self.played_any = True
            else:
                raise AssertionError(f"unexpected step {step}")
        return tid

    def play_round(self, tid: str, battles: list[str], round_number: int, first_tournament: bool = True) -> None:
        names = list(self.stations)
        plan: dict[str, list[str]] = {name: [] for name in names}
        for number, battle in enumerate(battles):
            plan[names[number % len(names)]].append(battle)
        for name, mine in plan.items():
            for battle in mine:
                response = self.hub.post("/director/rooms/assign",
                                         data={"battle_key": f"{tid}|{battle}", "box": self.box_ids[name]})
                assert "note=" not in response.url, response.url
        self.note(f"round {round_number}: {plan}")
        errors: list[BaseException] = []
        faulty = first_tournament and round_number == 0
        threads = [threading.Thread(target=self._play_station, args=(name, tid, mine, faulty, errors))
                   for name, mine in plan.items() if mine]
        # The hub restarts mid-round: in the first round of the first tournament, and in the second tournament's
        # second round (mubc: "the hub restarted mid-round").
        restart = self.spec["faults"].get("hub_restart") and (
            (first_tournament and round_number == 0) or (not first_tournament and round_number == 1))
        for thread in threads:
            thread.start()
        if restart:
            time.sleep(3)
            self.note("hub restart")
            self.hub.stop()
            self.hub.start()
            self.faults_done.append("hub_restart")
        for thread in threads:
            thread.join(timeout=900)
        if errors:
            raise errors[0]
        wait_for(lambda: all(self._result(tid, b) for b in battles), 180, f"results of {battles}", step_s=0.5)

    def _result(self, tid: str, battle: str):
        for stage in self.hub.get(f"/table/{tid}.json").json()["stages"]:
            for item in stage.get("battles", []):
                if item["id"] == battle and item.get("lines"):
                    return item
        return None

    def _play_station(self, name: str, tid: str, battles: list[str], faulty: bool, errors: list) -> None:
        try:
            box = self.stations[name]
            faults = self.spec["faults"]
            for index, battle in enumerate(battles):
                wait_for(lambda: any(a["battle"] == battle for a in box.json("/room.json")["assignments"]), 60,
                         f"{name} sees {battle}")
                if not self.pages:
                    self.pages = self._look_at_pages(name, battle)
                answer = box.post("/room/start", data={"tournament": tid, "battle": battle,
                                                       "command_id": f"start-{battle}"},
                                  headers={"Accept": "application/json"}).json()
                assert answer["ok"], answer
                host = Host(box)
                rng = random.Random(f"{tid}{battle}")
                first = index == 0 and faulty
                if first and name == self._role("cut") and faults.get("cut_s"):
                    play_battle(host, rng, stop_after=4)
                    self.venue.cut(name)
                    self.note(f"{name}: link cut for {faults['cut_s']} s")
                    cut_until = time.monotonic() + faults["cut_s"]
                    play_battle(host, rng, stop_after=12)  # the room plays on while cut off
                    time.sleep(max(0.0, cut_until - time.monotonic()))
                    self.venue.mend(name)
                    self.faults_done.append("cut")
                elif first and name == self._role("loss") and faults.get("loss_percent"):
                    how = set_loss(box.netns, faults["loss_percent"])
                    self.note(f"{name}: {faults['loss_percent']}% loss ({how})")
                    self.faults_done.append("loss")
                elif first and name == self._role("kill") and faults.get("kill"):
                    play_battle(host, rng, stop_after=6)
                    host.close()
                    self.note(f"{name}: SIGKILL mid-battle")
                    box.kill()
                    box.start()
                    host = Host(box)
                    self.faults_done.append("kill")
                play_battle(host, rng)
                host.close()
                if first and name == self._role("loss") and faults.get("loss_percent"):
                    set_loss(box.netns, 0)
        except BaseException as error:  # handed to the main thread, which raises it
            errors.append(error)

    def _look_at_pages(self, name: str, battle: str) -> dict:
        """What the people see: the station's page offers the assigned battle with its players and «Начать»;
        the hub's rooms view and the lobby name every station."""
        box = self.stations[name]
        assignment = next(a for a in box.json("/room.json")["assignments"] if a["battle"] == battle)
        room = box.get("/room").text
        rooms_view = self.hub.get("/director/rooms").text
        lobby = self.hub.get("/lobby").text
        return {"room_offers_start": "Начать" in room and all(p in room for p in assignment["players"]),
                "rooms_view_names_stations": all(n in rooms_view for n in self.stations),
                "lobby_names_stations": all(n in lobby for n in self.stations),
                "rooms_view_online": "на связи" in rooms_view}

    def _role(self, fault: str) -> str:
        names = list(self.stations)
        return {"cut": names[0], "loss": names[1 % len(names)], "kill": names[-1]}[fault]

    # --- duplicates and strangers --------------------------------------------------------------------------------
    def duplicates(self) -> dict:
        """Deliver duplicates: in station 1's namespace, the first event of its first battle again, once with
        its own message id (the stream drops it) and once with a new one (it reaches the hub, whose ledger
        drops it)."""
        name = list(self.stations)[0]
        box = self.stations[name]
        code = f"""
import asyncio, json, sqlite3, nats
from appliance.service.rooms import wire
async def main():
    row = sqlite3.connect({str(box.folder / 'events.sqlite')!r}).execute(
        "SELECT stream_id, seq, body FROM stream_events WHERE kind='battle' ORDER BY rowid LIMIT 1").fetchone()
    ports = json.load(open(next(__import__('pathlib').Path({str(box.folder / 'rooms' / 'nats')!r}).glob('*.ports'))))
    nc = await nats.connect(ports['nats'][0]); js = nc.jetstream()
    body = wire.encode_event({self.box_ids[name]!r}, row[0], row[1], json.loads(row[2]))
    subject = wire.event_subject({self.box_ids[name]!r}, row[0])
    same = await js.publish(subject, body, headers={{"Nats-Msg-Id": wire.message_id(row[0], row[1])}})
    fresh = await js.publish(subject, body, headers={{"Nats-Msg-Id": "resend-" + wire.message_id(row[0], row[1])}})
    print(json.dumps({{"same_duplicate": same.duplicate, "fresh_duplicate": bool(fresh.duplicate)}}))
    await nc.close()
asyncio.run(main())
"""
        before = self.hub.json("/director/rooms.json")["duplicates"]
        out = _python_in(box.netns, code)
        wait_for(lambda: self.hub.json("/director/rooms.json")["duplicates"] > before, 30, "hub drops a duplicate")
        self.faults_done.append("duplicates")
        return {**json.loads(out.strip().splitlines()[-1]), "hub_dropped": self.hub.json("/director/rooms.json")["duplicates"] - before}

    def strangers(self) -> dict:
        """A box that was never paired, and a paired station reaching beyond its own subjects, are refused."""
        results = {}
        stranger_ns = f"{self.spec['prefix']}-stranger"
        folder = self.folder / "stranger"
        folder.mkdir(parents=True, exist_ok=True)
        # 1. a stranger's nats-server tries to join the hub as a leaf, with no password and with a guessed one
        for label, credentials in (("no_password", ""), ("guessed", f"{self.box_ids[list(self.stations)[0]]}:guess@")):
            conf = folder / f"{label}.conf"
            conf.write_text(f'listen: "127.0.0.1:-1"\nports_file_dir: "{folder}"\n'
                            f'jetstream {{ store_dir: "{folder}/{label}", domain: "stranger" }}\n'
                            f'leafnodes {{ remotes: [ {{ url: "nats-leaf://{credentials}{self.hub.address}:{LEAF_PORT}" }} ] }}\n')
            for old in folder.glob("*.ports"):
                old.unlink()
            server = subprocess.Popen(["ip", "netns", "exec", stranger_ns, _nats_binary(), "-c", str(conf)],
                                      stdout=subprocess.DEVNULL, stderr=open(folder / f"{label}.log", "w"))
            try:
                time.sleep(2)
                # Through its own server, the stranger asks the hub's JetStream for its assignments.
                probe = f"""
import asyncio, json, pathlib, nats
async def main():
    ports = json.load(open(next(pathlib.Path({str(folder)!r}).glob('*.ports'))))
    nc = await nats.connect(ports['nats'][0])
    try:
        kv = await nc.jetstream(domain="hub", timeout=3).key_value("ROOM_{self.box_ids[list(self.stations)[0]]}")
        await kv.get("assignments")
        print("read")
    except Exception as error:
        print("refused: " + type(error).__name__)
    await nc.close()
asyncio.run(main())
"""
                reached = _python_in(stranger_ns, probe).strip().splitlines()[-1]
            finally:
                server.terminate()
                server.wait(timeout=10)
            text = (folder / f"{label}.log").read_text()
            results[label] = {"refused": "Authorization Violation" in text, "assignments": reached}
        # 2. a paired station may not read another station's assignments nor claim as another
        first, second = list(self.stations)[0], list(self.stations)[1 % len(self.stations)]
        box = self.stations[first]
        code = f"""
import asyncio, json, nats
from appliance.service.rooms import wire
async def main():
    ports = json.load(open(next(__import__('pathlib').Path({str(box.folder / 'rooms' / 'nats')!r}).glob('*.ports'))))
    nc = await nats.connect(ports['nats'][0], inbox_prefix=wire.inbox_prefix({self.box_ids[first]!r}))
    hub = nc.jetstream(domain="hub", timeout=3)
    out = {{}}
    for who in ({self.box_ids[first]!r}, {self.box_ids[second]!r}):
        try:
            kv = await hub.key_value(wire.room_bucket(who)); await kv.get("assignments"); out[who] = "read"
        except Exception as error:
            out[who] = "refused: " + type(error).__name__
    try:
        await nc.request(wire.desk_subject({self.box_ids[second]!r}, "claim"), b"{{}}", timeout=3)
        out["claim_as_other"] = "answered"
    except Exception as error:
        out["claim_as_other"] = "refused: " + type(error).__name__
    print(json.dumps(out)); await nc.close()
asyncio.run(main())
"""
        out = json.loads(_python_in(box.netns, code).strip().splitlines()[-1])
        results["own_bucket"] = out[self.box_ids[first]]
        results["other_bucket"] = out[self.box_ids[second]]
        results["claim_as_other"] = out["claim_as_other"]
        self.faults_done.append("stranger")
        return results

    # --- what each box's own log says ----------------------------------------------------------------------------
    def store_counts(self) -> dict[str, int]:
        """``{"box/battle": events}`` of every station's own log, read from its file as it runs."""
        out = {}
        for name, box in self.stations.items():
            connection = sqlite3.connect(box.folder / "events.sqlite")
            try:
                for battle_id, count in connection.execute("SELECT stream_id, COUNT(*) FROM stream_events WHERE kind='battle' "
                                                             "GROUP BY stream_id"):
                    out[f"{self.box_ids[name]}/{battle_id}"] = count
            finally:
                connection.close()
        return out

    def collect(self, tids: list[str]) -> dict:
        # A hub that just restarted is still reading DESK from its first message: wait until it holds every
        # event of every station's log (bounded), then look.
        wanted = self.store_counts()
        wait_for(lambda: all(self.hub.json("/director/rooms.json")["battles"].get(key) == count
                             for key, count in wanted.items()), 180, "the hub to hold every station's events",
                 step_s=0.5)
        counts = self.hub.json("/director/rooms.json")
        tables = {tid: self.hub.get(f"/table/{tid}.json").json() for tid in tids}
        exports = {tid: self.hub.get(f"/director/{tid}/export.json").json() for tid in tids}
        for box in self.stations.values():
            box.stop()
        self.hub.stop()
        logs = {}
        for name, box in self.stations.items():
            connection = sqlite3.connect(box.folder / "events.sqlite")
            rows = connection.execute("SELECT stream_id, seq, body FROM stream_events WHERE kind='battle' "
                                      "ORDER BY stream_id, seq").fetchall()
            battles: dict[str, list] = {}
            for battle_id, seq, body in rows:
                battles.setdefault(battle_id, []).append([seq, json.loads(body)])
            logs[self.box_ids[name]] = battles
        return {"pages": self.pages, "counts": counts, "tables": tables, "exports": exports, "logs": logs, "box_ids": self.box_ids,
                "faults": self.faults_done, "log": self.log}

    def stop(self) -> None:
        for box in [*self.stations.values(), self.hub]:
            try:
                box.stop()
            except Exception as error:  # cleaning up: go on with the others
                print(f"stopping {box.name}: {error}", file=sys.stderr)


def _nats_binary() -> str:
    from appliance.service.rooms.server import find_binary

    return find_binary("")


def _python_in(netns: str, code: str) -> str:
    done = subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=str(Path(__file__).resolve().parents[2]))
    if done.returncode != 0:
        raise AssertionError(f"helper in {netns} failed: {done.stderr[-2000:]}")
    return done.stdout


def main(spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    day = Day(spec)
    result: dict = {}
    try:
        day.start()
        if spec["faults"].get("stranger"):
            result["strangers"] = day.strangers()
        tids = []
        for number, item in enumerate(spec["tournaments"]):
            tids.append(day.tournament(item["preset"], item["players"], item["rounds"], f"Турнир {number + 1}",
                                       item.get("seeds", 0)))
            if number == 0 and spec["faults"].get("duplicates"):
                result["duplicates"] = day.duplicates()
        result.update(day.collect(tids))
        result["tids"] = tids
    finally:
        day.stop()
        Path(out_path).write_text(json.dumps({**result, "log": day.log}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
