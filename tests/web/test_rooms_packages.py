"""Packages stay on the desk (issue 22, docs/rooms.md "Packages on the desk"), over a real hub and two real
stations (each box's nats-server a child of its app, the stations leaf nodes of the hub): a youth-cup 1/16's
themes, questions and a picture travel with the assignment in the station's own KV bucket; the room's host
plays them with no package file on the station; both runs of a 1/16 slot (youth-cup 2.4) carry the same themes
and the same spare (2.7), no other battle is given any of them, the desk counts a theme played in a room as
played; the questions reach no audience; a station claiming over NATS a battle the desk gave nobody is refused."""

from __future__ import annotations

import asyncio
import json

import pytest

from appliance.service.rooms import protocol
from appliance.service.rooms.carried import CarriedStore
from tests.appliance.packages.conftest import NS, make_zip
from tests.web.rooms_boxes import Box, pair, until

PICTURE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3000  # 768 KB: two KV chunks


def _package(themes: int = 24) -> bytes:
    rows = []
    for t in range(1, themes + 1):
        questions = []
        for q in range(1, 6):
            picture = '<atom type="image">@map.png</atom>' if (t, q) == (1, 2) else ""
            questions.append(f'<question price="{10 * q}"><scenario><atom>Вопрос {t}.{q} о теме {t}.</atom>{picture}'
                             f"</scenario><right><answer>Ответ {t}.{q}</answer></right>"
                             f"<info><comments>Комментарий {t}.{q}</comments></info></question>")
        rows.append(f'<theme name="Тема номер {t}"><questions>{"".join(questions)}</questions></theme>')
    content = (f'<?xml version="1.0" encoding="utf-8"?><package name="Кубок столов" version="4" xmlns="{NS}">'
               f'<rounds><round name="1-й раунд"><themes>{"".join(rows)}</themes></round></rounds></package>')
    return make_zip({"content.xml": content, "Images/map.png": PICTURE})


@pytest.fixture
def day(tmp_path):
    made = []

    def make(folder: str, role: str, box_id: str) -> Box:
        (tmp_path / folder).mkdir()
        made.append(Box(tmp_path / folder, role, box_id))
        return made[-1]

    hub = make("hub", "hub", "desk")
    rooms = []
    for box_id in ("room2", "room3"):
        rooms.append(make(box_id, "station", box_id))
        pair(hub, rooms[-1], f"Комната {box_id[-1]}")
    yield hub, rooms
    for box in made:
        box.close()


def _youth_cup(desk) -> str:
    """youth-cup with the written round (2.2) played and closed: the 1/16 seated, six rooms (2.4)."""
    tid = desk.create("youth-cup", "Кубок", seed=1, tournament_id="yc")
    for i in range(48):
        desk.register(tid, f"Игрок {i}")
    desk.draw(tid, seed=1)
    for i in range(48):
        desk.enter_sheet(tid, "written", f"p{i + 1:03d}", "+" * i + "0" * (60 - i))
    desk.close_stage(tid, "written")
    return tid


def _carried(room, battle: str) -> dict:
    return next((a for a in room.rooms.assignments() if a["battle"] == battle and a["carried"]), None)


def test_a_youth_cup_1_16_plays_its_package_in_two_rooms_with_no_file_there(day):
    hub, (room2, room3) = day
    package_id = hub.packages.add("кубок.siq", _package())["id"]
    desk = hub.desk()
    tid = _youth_cup(desk)
    state = desk.state(tid)
    first, second = state.battles["1-16/01"], state.battles["1-16/07"]
    assert first.theme_pack == second.theme_pack and (first.run, second.run) == (1, 2)  # youth-cup 2.4

    # the director gives run 1 to room 2 with the package, run 2 to room 3 (the same pack: nothing to choose),
    # and another 1/16 battle to room 2 with the same package
    for box, battle, package in (("room2", "1-16/01", package_id), ("room3", "1-16/07", ""),
                                 ("room2", "1-16/02", package_id)):
        given = hub.client.post("/director/rooms/assign", data={"box": box, "battle_key": f"{tid}|{battle}",
                                                                "package": package})
        assert given.status_code == 302 and "note=" not in given.headers["Location"], given.headers["Location"]
    run1 = until(lambda: _carried(room2, "1-16/01"), "room 2's run 1 carried")["package"]
    run2 = until(lambda: _carried(room3, "1-16/07"), "room 3's run 2 carried")["package"]
    other = until(lambda: _carried(room2, "1-16/02"), "room 2's other battle carried")["package"]
    assert run1["themes"] == run2["themes"] and len(run1["themes"]) == 8  # 2.4: two runs on the same themes
    assert run1["spare"] == run2["spare"] and len(run1["spare"]) == 1     # and the same spare (2.7)
    assert not set(run1["themes"] + run1["spare"]) & set(other["themes"] + other["spare"])  # never twice
    assert run1["media"] == 1
    page = room2.client.get("/room").get_data(as_text=True)
    assert "Вопросы пришли со стола" in page and "Кубок столов" in page

    # room 2's host plays it from the page: no package file on the station
    started = room2.client.post("/room/start", data={"tournament": tid, "battle": "1-16/01"},
                                headers={"Accept": "application/json"})
    assert started.status_code == 200, started.get_data(as_text=True)
    setup = room2.session.state.setup
    assert setup.questions[0][0] == ("Вопрос 1.1 о теме 1.", "Ответ 1.1")
    assert tuple(setup.sources) == tuple((package_id, n) for n in run1["themes"] + run1["spare"])
    assert setup.slot == f"tournament:{tid}:1-16/01"
    assert room2.packages.library.entries() == []  # nobody carried a file to room 2
    shown = room2.session.adapter._reading_block(room2.session.state, 0, 0, 10)
    assert shown["comment"] == "Комментарий 1.1"  # the host's reading view reads the carried comment
    picture = room2.client.get(f"/room/media/{package_id}/Images/map.png")
    try:
        assert picture.status_code == 200 and picture.data == PICTURE
    finally:
        picture.close()
    assert room2.client.get(f"/room/media/{package_id}/Images/other.png").status_code == 404

    # the desk knows the theme was played in room 2 (from its copy of the battle): never given again
    until(lambda: any(label.startswith("room2/") for label in
                       hub.packages.preview(package_id)["themes"][run1["themes"][0]]["played_in"]),
           "the desk hears room 2 played theme 1")
    tournaments = hub.packages.preview(package_id)["themes"][run1["themes"][0]]["played_in_tournaments"]
    assert tournaments == [tid]

    # the questions travel to the station only: no audience hears them
    for box in (hub, room2, room3):
        for url in ("/lobby.json", "/board/snapshot.json"):
            body = box.client.get(url).get_data(as_text=True)
            assert "Вопрос 1." not in body and "Ответ 1." not in body and "Комментарий" not in body, url
    assert "Вопрос" not in json.dumps(room2.client.get("/room.json").get_json(), ensure_ascii=False)


def test_a_station_claiming_a_battle_the_desk_gave_nobody_is_refused_and_nothing_is_assigned(day):
    """Issue 22, item 4: a hostile station's claim over NATS (not through its own page) assigned the battle."""
    hub, (room2, room3) = day
    desk = hub.desk()
    tid = desk.create("mubc", "Кубок", seed=3, tournament_id="t1")
    for number in range(1, 9):
        desk.register(tid, f"Игрок {number}")
    desk.close_registration(tid)
    desk.draw(tid)
    battle = sorted(desk.state(tid).battles)[0]

    async def claim() -> dict:
        import nats

        nc = await nats.connect(room3.rooms.server.client_url(), inbox_prefix=protocol.inbox_prefix("room3"))
        try:
            reply = await nc.request(protocol.desk_subject("room3", "claim"),
                                     protocol.encode("claim", box="room3", tournament=tid, battle=battle), timeout=5)
            return protocol.decode(reply.data, "claimed")
        finally:
            await nc.close()

    answer = until(lambda: _try(lambda: asyncio.run(claim())), "the hub answers room 3's claim")
    assert answer == {"format": "svoyak-rooms", "v": 1, "kind": "claimed", "ok": False,
                      "error": "not assigned to this box"}
    assert battle not in desk.state(tid).assignments


def _try(call):
    try:
        return call()
    except Exception:  # the leaf is still connecting: no responders yet
        return None


def test_a_carried_entry_with_a_damaged_picture_is_refused_and_nothing_is_kept(tmp_path):
    store = CarriedStore(tmp_path / "carried")
    body = protocol.encode("carried", package="p1", title="Кубок", themes={"0": {
        "name": "Реки", "questions": [{"price_points": 10, "text": "Вопрос", "answer": "Ответ"}]}},
        media=[{"path": "map.png", "sha256": "0" * 64, "bytes": 3, "chunks": ["media.x.0"]}])
    with pytest.raises(ValueError, match="damaged"):
        store.keep("carried.abc", body, {"0" * 64: b"PNG"})
    assert not store.has("carried.abc") and store.package("p1") is None
    too_long = protocol.encode("carried", package="p1", title="К" * 501, themes={}, media=[])
    with pytest.raises(ValueError):
        store.keep("carried.def", too_long, {})
    assert not store.has("carried.def")
