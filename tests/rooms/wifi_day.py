"""A youth-cup day over Wi-Fi, the desk moved to the standby mid-day (issue 22), driven from inside the venue's "ctl"
namespace (``python -m tests.rooms.wifi_day SPEC.json OUT.json``) like tests/rooms/scenario.py, whose day it
extends: a standby desk paired beside the hub, the written round (youth-cup 2.2) typed on the desk, the 1/16's
two runs (2.4) and the rest played in the rooms, and, mid-round, the hub's box killed for good and «Стать столом»
tapped on the standby, which then finishes the day. SPEC as scenario.py's, plus ``"standby": true`` and
``faults.desk_to_standby: {"round": n}`` (the first room's first battle of that round is halfway when the desk goes), and per tournament ``"battles"`` (play only the first so
many of each round: the short day)."""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from pathlib import Path

from tests.rooms.boxes import Box, Host, play_battle, wait_for
from tests.rooms.netns import SUBNET
from tests.rooms.scenario import LEAF_PORT, WEB_PORT, Day

WRITTEN_MARKS = 60  # youth-cup 2.2: 12 themes of 5 questions, one mark each
MID_QUESTIONS = 10  # the first room's battle is this far when the desk goes


class WifiDay(Day):
    def __init__(self, spec: dict) -> None:
        super().__init__(spec)
        number = {name: n for n, name in enumerate(spec["names"], start=1)}
        self.standby = Box("standby", self.folder / "standby", WEB_PORT, netns=f"{spec['prefix']}-standby",
                           address=f"{SUBNET}.{number['standby']}", leaf_port=LEAF_PORT)
        self.old_hub = None
        self.switch: dict = {}
        self.rounds_played = 0

    def start(self) -> None:
        super().start()
        self.standby.start()
        code = self.hub.post("/director/rooms/code.json").json()["code"]
        self.standby.post("/room/pair", data={"hub": f"{self.hub.address}:{WEB_PORT}", "code": code,
                                              "name": "Запасной стол", "standby": "1"})
        wait_for(lambda: self.standby.json("/room.json").get("role") == "standby"
                 and (self.standby.json("/room.json").get("mirror") or {}).get("DESKLOG_STANDBY"), 60,
                 "the standby mirrors the desk")

        def learnt(box) -> bool:
            return bool(json.loads((box.folder / "rooms" / "rooms.json").read_text())["hub"].get("standby"))

        wait_for(lambda: all(learnt(box) for box in self.stations.values()), 60, "stations learn the standby")
        wait_for(lambda: all(r["online"] for r in self.hub.json("/director/rooms.json")["rooms"]), 60,
                 "stations online again")
        self.note("standby paired; every station's leaf knows it")

    # --- the tournament, with the written round and a battle limit per round -----------------------------------
    def tournament(self, preset: str, players: int, rounds: int, title: str, seeds: int = 0,
                   battles: int = 0) -> str:
        response = self.hub.post("/director/new", data={"preset": preset, "title": title})
        tid = response.url.split("/director/")[1].split("/")[0]
        self.hub.post(f"/director/{tid}/registration",
                      data={"bulk": "\n".join(f"Игрок {i}" for i in range(1, players + 1))})
        self.hub.post(f"/director/{tid}/close-registration")
        played = 0
        for _step in range(60):
            step = self.hub.get(f"/table/{tid}.json").json()["next"]
            if step["kind"] == "done" or played >= rounds:
                break
            if step["kind"] == "draw":
                assert self.hub.post(f"/director/{tid}/draw").status_code == 200
            elif step["kind"] == "sheets":  # youth-cup 2.2: the director types every sheet on the desk
                for number in range(1, players + 1):
                    marks = ("+" * number).ljust(WRITTEN_MARKS, "0")  # all different: no tie at the cut
                    answer = self.hub.post(f"/director/{tid}/sheets/{step['stage']}",
                                           json={"player": number, "marks": marks, "command_id": f"sheet-{number}"})
                    assert answer.json()["ok"], answer.text
                self.note(f"{players} written sheets typed")
            elif step["kind"] == "close":
                self.hub.post(f"/director/{tid}/close/{step['stage']}")
            elif step["kind"] == "tie":
                tie = step["tie"]
                self.hub.post(f"/director/{tid}/tie", data={"tie": tie["id"], "order": " ".join(tie["players"]),
                                                           "how": "theme", "detail": "scenario"})
            elif step["kind"] in ("play", "wait"):
                chosen = step["battles"][:battles] if battles else step["battles"]
                self.play_round(tid, chosen, played, first_tournament=False)
                played += 1
                if battles:
                    break  # the short day: one round, part of it
            else:
                raise AssertionError(f"unexpected step {step}")
        return tid

    def play_round(self, tid: str, battles: list[str], round_number: int, first_tournament: bool = True) -> None:
        move = self.spec["faults"].get("desk_to_standby")
        if not move or self.switch or round_number != move.get("round", 0):
            return super().play_round(tid, battles, round_number, first_tournament)
        # The first room plays its first battle of the round halfway, then the desk is moved while it plays on.
        self._mid, self._killed = threading.Event(), threading.Event()
        failed: list[BaseException] = []

        def mover() -> None:
            try:
                if not self._mid.wait(600):
                    raise AssertionError("the first room never got halfway")
                self.move_desk()
            except BaseException as error:  # handed to the round, which raises it
                failed.append(error)
                self._killed.set()

        thread = threading.Thread(target=mover, name="move-desk")
        thread.start()
        try:
            super().play_round(tid, battles, round_number, first_tournament)
        finally:
            self._mid.set()
            thread.join(timeout=600)
            self._mid = None
        if failed:
            raise failed[0]
        assert self.switch, "the desk was not moved during the round"

    def _play_station(self, name: str, tid: str, battles: list[str], faulty: bool, errors: list) -> None:
        if getattr(self, "_mid", None) is None or name != list(self.stations)[0]:
            return super()._play_station(name, tid, battles, faulty, errors)
        try:
            box = self.stations[name]
            for index, battle in enumerate(battles):
                wait_for(lambda: any(a["battle"] == battle for a in box.json("/room.json")["assignments"]), 120,
                         f"{name} sees {battle}")
                answer = box.post("/room/start", data={"tournament": tid, "battle": battle,
                                                       "command_id": f"start-{battle}"},
                                  headers={"Accept": "application/json"}).json()
                assert answer["ok"], answer
                host = Host(box)
                rng = random.Random(f"{tid}{battle}")
                if index == 0:
                    play_battle(host, rng, stop_after=MID_QUESTIONS)
                    self.note(f"{name}: {battle} halfway; the desk goes now")
                    self._mid.set()
                    if not self._killed.wait(300):
                        raise AssertionError("the hub was not killed")
                    play_battle(host, rng, stop_after=2 * MID_QUESTIONS)  # the room plays on, the desk away
                play_battle(host, rng)
                host.close()
        except BaseException as error:  # handed to the main thread, which raises it
            errors.append(error)

    # --- the desk dies; the standby takes over -----------------------------------------------------------------
    def move_desk(self) -> None:
        """Mid-round: wait until the standby's copy has everything the desk holds (what the director sees on the
        standby's page), kill the hub's box for good, tap «Стать столом» on the standby."""
        started = time.monotonic()

        def caught_up() -> bool:
            mirror = self.standby.json("/room.json").get("mirror") or {}
            log = mirror.get("DESKLOG_STANDBY") or {}
            return log.get("lag") == 0 and log.get("messages", 0) > 0

        wait_for(caught_up, 60, "the standby's copy caught up", step_s=0.2)
        self.note("hub killed for good")
        self.hub.kill()
        self.old_hub, killed_at = self.hub, time.monotonic()
        self._killed.set()
        answer = self.standby.post("/room/take-over", data={"sure": "1"}, allow_redirects=False)
        assert answer.status_code == 302 and "director/rooms" in answer.headers["Location"], answer.headers
        self.hub = self.standby
        assert self.hub.json("/director/rooms.json")["role"] == "hub"
        wait_for(lambda: all(r["online"] for r in self.hub.json("/director/rooms.json")["rooms"]), 120,
                 "every station online at the new desk")
        self.switch = {"waited_for_copy_s": killed_at - started, "tap_to_all_online_s": time.monotonic() - killed_at}
        self.faults_done.append("desk_to_standby")
        self.note(f"the standby is the desk: {self.switch}")

    def stop(self) -> None:
        super().stop()
        for box in (self.old_hub, self.standby):
            if box is not None and box is not self.hub:
                try:
                    box.stop()
                except Exception as error:  # cleaning up: go on
                    print(f"stopping {box.name}: {error}", file=sys.stderr)


def main(spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    day = WifiDay(spec)
    result: dict = {}
    try:
        day.start()
        tids = [day.tournament(item["preset"], item["players"], item["rounds"], f"Турнир {number + 1}",
                               item.get("seeds", 0), item.get("battles", 0))
                for number, item in enumerate(spec["tournaments"])]
        result.update(day.collect(tids))
        result["tids"] = tids
        result["switch"] = day.switch
    finally:
        day.stop()
        Path(out_path).write_text(json.dumps({**result, "log": day.log}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
