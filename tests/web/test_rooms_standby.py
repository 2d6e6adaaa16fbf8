"""The standby desk (issue 22, docs/rooms.md "The standby desk"), over real nats-servers: a hub, a standby desk
and two stations. The standby mirrors the desk (DESK and DESKLOG); the stations learn its address; the hub's box
is killed for good mid-round (its nats-server SIGKILLed, its data directory gone, as a dead SD card); the
director taps «Стать столом» on the standby; the stations' leaves move to it; the battle in play finishes and its
result enters the new desk; the tournament (eurocup: three 1/3 battles, then the final) is finished there, with
the registrations, the draw, a hand-typed result and the question package all kept."""

from __future__ import annotations

import random
import shutil

import pytest

from appliance.rules import tournament as t
from appliance.service.rooms.standby import DESKLOG_MIRROR, DESKLOG_STREAM
from tests.web.rooms_boxes import Box, pair, play, until
from tests.web.test_rooms_packages import _package


@pytest.fixture
def venue(tmp_path):
    made = []

    def make(folder: str, role: str, box_id: str) -> Box:
        (tmp_path / folder).mkdir()
        made.append(Box(tmp_path / folder, role, box_id))
        return made[-1]

    hub = make("hub", "hub", "desk")
    rooms = [make(box_id, "station", box_id) for box_id in ("room2", "room3")]
    for room in rooms:
        pair(hub, room, f"Комната {room.rooms.roles.box_id[-1]}")
    spare = make("spare", "standby", "spare")
    pair(hub, spare, "Запасной стол", standby=True)
    yield hub, spare, rooms
    for box in made:
        box.close()


def _results(desk, tid: str) -> dict:
    return dict(desk.state(tid).results)


def _give(box: Box, tid: str, battle: str, station: str) -> None:
    given = box.client.post("/director/rooms/assign", data={"box": station, "battle_key": f"{tid}|{battle}"})
    assert given.status_code == 302 and "note=" not in given.headers["Location"], given.headers["Location"]


def _start(room: Box, tid: str, battle: str) -> None:
    until(lambda: any(a["battle"] == battle and a["carried"] for a in room.rooms.assignments()),
          f"{room.rooms.roles.box_id} is given {battle}")
    started = room.client.post("/room/start", data={"tournament": tid, "battle": battle},
                               headers={"Accept": "application/json"})
    assert started.status_code == 200, started.get_data(as_text=True)


def _mirror_caught_up(hub: Box, spare: Box) -> bool:
    shipped = hub.rooms.loop.call(lambda: hub.rooms.hub.js.stream_info(DESKLOG_STREAM)).state.messages
    mirror = spare.rooms.standby_status() or {}
    held = (mirror.get(DESKLOG_MIRROR) or {}).get("messages")
    return bool(shipped) and held == shipped and hub.rooms.shipper.rowid == _last_rowid(hub)


def _last_rowid(box: Box) -> int:
    import sqlite3

    connection = sqlite3.connect(f"file:{box.data_dir / 'events.sqlite'}?mode=ro", uri=True)
    try:
        return connection.execute("SELECT COALESCE(MAX(rowid), 0) FROM stream_events").fetchone()[0]
    finally:
        connection.close()


def test_the_hub_dies_mid_round_and_the_standby_finishes_the_tournament(venue):
    hub, spare, (room2, room3) = venue
    rng = random.Random(22)
    package_id = hub.packages.add("кубок.siq", _package())["id"]
    desk = hub.desk()
    tid = desk.create("eurocup", "Кубок", seed=5, tournament_id="cup")
    for i in range(9):
        desk.register(tid, f"Игрок {i + 1}")
    desk.close_registration(tid)
    desk.draw(tid)
    first_round = t.next_step(desk.state(tid)).battles
    assert len(first_round) == 3
    a, b, c = first_round
    # the stations learnt where the standby is (the hub's `desk` key): their leaves know both boxes
    for room in (room2, room3):
        until(lambda room=room: room.rooms.roles.hub.get("standby") and room.rooms.station is not None
              and room.rooms.station.ready, f"{room.rooms.roles.box_id} learns the standby's address")

    # round one: a in room 2 to its end, b in room 3 half played, c typed by hand on the desk
    _give(hub, tid, a, "room2")
    _give(hub, tid, b, "room3")
    _start(room2, tid, a)
    play(room2, rng)
    _start(room3, tid, b)
    play(room3, rng, stop_after=8)
    players = sorted(t.battle_players(desk.state(tid), c))
    desk.record_result(tid, c, [{"player": p, "score": 10 * (i + 1)} for i, p in enumerate(players)])
    until(lambda: a in _results(desk, tid), "room 2's result at the desk")
    kept = _results(desk, tid)
    until(lambda: _mirror_caught_up(hub, spare), "the standby's mirror holds everything the desk shipped")

    # the hub's box dies for good: its nats-server killed, the box gone, its card unreadable
    hub.rooms.server.process.kill()
    hub.rooms.server.process.wait(timeout=10)
    hub.close()  # (its threads live in this test's process: ended, as the box's power cut would)
    shutil.rmtree(hub.data_dir)

    # the director's one tap on the standby
    page = spare.client.get("/room").get_data(as_text=True)
    assert "Стать столом" in page and "Копия стола" in page
    unsure = spare.client.post("/room/take-over")
    assert unsure.status_code == 302 and spare.rooms.role == "standby"  # the tick box left empty: nothing
    tapped = spare.client.post("/room/take-over", data={"sure": "1"})
    assert tapped.status_code == 302 and "director/rooms" in tapped.headers["Location"], tapped.headers["Location"]
    assert spare.rooms.role == "hub" and not spare.rooms.error, spare.rooms.error
    new_desk = spare.desk()
    assert {item["id"] for item in new_desk.list()} == {tid}
    state = new_desk.state(tid)
    assert sorted(entrant.name for entrant in state.entrants.values()) == sorted(f"Игрок {i + 1}" for i in range(9))
    assert _results(new_desk, tid) == kept  # room 2's result and the hand-typed one, as they were
    assert package_id in {entry.id for entry in spare.packages.library.entries()}
    assert set(spare.rooms.roles.stations()) == {"room2", "room3"}

    # the stations follow: room 3 finishes its battle, its result enters the new desk
    until(lambda: all(spare.rooms.hub.status(box)["online"] for box in ("room2", "room3")),
          "both stations online at the standby", timeout_s=90)
    play(room3, rng)
    until(lambda: b in _results(new_desk, tid), "room 3's result at the new desk", timeout_s=90)

    # and the tournament is finished on the standby: the final, drawn and played in room 2
    step = t.next_step(new_desk.state(tid))
    if step.kind == "draw":
        new_desk.draw(tid)
        step = t.next_step(new_desk.state(tid))
    assert step.kind == "play" and len(step.battles) == 1, step
    final = step.battles[0]
    _give(spare, tid, final, "room2")
    _start(room2, tid, final)
    play(room2, rng)
    until(lambda: final in _results(new_desk, tid), "the final's result at the new desk", timeout_s=90)
    while t.next_step(new_desk.state(tid)).kind == "tie":  # eurocup 2.4 ties are played off; a hand-made order
        tie = t.next_step(new_desk.state(tid)).tie
        new_desk.break_tie(tid, tie.id, list(tie.players))
    assert t.next_step(new_desk.state(tid)).kind == "done"
    counts = spare.rooms.hub.counts()
    assert counts["bad_messages"] == 0 and counts["out_of_order"] == 0
    # every event each station logged is in the new desk's copy, once and in order
    for room in (room2, room3):
        for row in room.session.battles.list():
            assert counts["battles"][f"{room.rooms.roles.box_id}/{row['battle_id']}"] == row["seq"]
