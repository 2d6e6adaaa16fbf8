"""The rooms' pages over a real hub (its nats-server a child of the app): the pairing QR code and the station's
join link it holds, a hub that a pairing link cannot turn into a room, and a conflict shown again after the hub
restarts (docs/rooms.md)."""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from appliance import config
from appliance.rules import tournament as t
from appliance.service.battle_adapter import BattleAdapter
from appliance.service.battles import Battles
from appliance.service.rooms.roles import Roles
from appliance.service.session import Session
from appliance.store import EventStore
from tests.web.conftest import DIRECTOR_PIN, IDENTITY, PressingCapture
from web import create_app
from web.sync import Services


class Box:
    """One box's app over a real battle store in ``data_dir`` (a restart is another Box on the same folder)."""

    def __init__(self, data_dir, capture, role: str = "", box_id: str = "desk") -> None:
        if role:
            Roles(data_dir / "rooms").set_role(role, "Стол", box_id=box_id)
        # leaf port 0: a free one, kept (never a fixed port in tests)
        self.settings = config.load(overrides={"data_dir": data_dir, "simulator": True, "rooms_leaf_port": 0},
                                    environ={}, config_path=None)
        self.store = EventStore(data_dir / "events.sqlite")
        self.session = Session(Battles(self.store), BattleAdapter(), capture=PressingCapture(capture),
                               simulator=True)
        capture.session = self.session
        self.session.start()
        self.app = create_app(self.settings, Services(session=self.session, identity=IDENTITY))
        self.client = self.app.test_client()
        self.rooms = self.app.extensions.get("svoyak.rooms")

    def login(self) -> None:
        self.client.post("/director/login", data={"pin": DIRECTOR_PIN})

    def desk(self):
        from web import director

        with self.app.app_context():
            return director.desk()

    def close(self) -> None:
        if self.rooms is not None:
            self.rooms.stop()
        self.session.close()


@pytest.fixture
def boxes(tmp_path, recording_capture):
    made = []

    def make(folder: str, role: str = "", box_id: str = "desk") -> Box:
        (tmp_path / folder).mkdir(exist_ok=True)
        box = Box(tmp_path / folder, recording_capture, role, box_id)
        made.append(box)
        return box

    yield make
    for box in made:
        box.close()


def test_the_desk_shows_its_pairing_code_as_a_qr_code_of_the_stations_join_link(boxes):
    from web.board import svg_qr
    from web.rooms import pairing_link

    hub = boxes("hub", role="hub")
    hub.login()
    assert hub.client.get("/director/rooms/pair.svg").status_code == 404  # no code yet: no picture
    hub.client.post("/director/rooms/code")
    page = hub.client.get("/director/rooms").get_data(as_text=True)
    code = re.search(r'id="pair-code">(\d{6})<', page).group(1)
    pairing = page[page.index('id="pair-code"'):]
    pairing = pairing[:pairing.index("</section>")]
    assert 'id="pair-qr"' in pairing and "<script" not in pairing  # an image of the box's own: no script
    lan = hub.app.test_client()  # the director's tablet reaching the desk at its LAN address
    lan.post("/director/login", data={"pin": DIRECTOR_PIN}, base_url="http://192.168.1.20:8080")
    picture = lan.get("/director/rooms/pair.svg", base_url="http://192.168.1.20:8080")
    assert picture.status_code == 200 and picture.mimetype == "image/svg+xml"
    assert picture.headers["Cache-Control"] == "no-store"
    # what the camera reads: the station's own page (on its hotspot) with the desk's address and the code
    link = pairing_link(hub.settings.hotspot_address, "192.168.1.20:8080", code)
    assert link == f"http://10.42.0.1/director/rooms/join/192.168.1.20:8080/{code}"
    assert picture.get_data(as_text=True) == svg_qr(link)
    assert "<script" not in picture.get_data(as_text=True)


def test_the_join_link_opens_the_stations_pairing_form_filled_in_through_the_login(boxes):
    station = boxes("station")  # a standalone box that is about to become a room
    path = "/director/rooms/join/192.168.1.20:8080/012345"
    first = station.client.get(path)
    assert first.status_code == 302 and "/director/login" in first.headers["Location"]
    after = station.client.post(first.headers["Location"], data={"pin": DIRECTOR_PIN})
    assert after.status_code == 302 and after.headers["Location"] == path  # the login keeps the link's path
    form = station.client.get(path).get_data(as_text=True)
    assert 'id="pair-form"' in form and 'action="/room/pair"' in form
    assert 'value="192.168.1.20:8080"' in form and 'value="012345"' in form
    assert 'http-equiv="refresh"' not in form  # the filled-in form waits for its one tap
    damaged = station.client.get("/director/rooms/join/192.168.1.20:8080/12ab")
    assert damaged.status_code == 400 and "испорчена" in damaged.get_data(as_text=True)


def test_a_pairing_link_opened_on_the_desk_does_not_turn_it_into_a_room(boxes):
    hub = boxes("hub", role="hub")
    hub.login()
    page = hub.client.get("/director/rooms/join/10.42.0.1/012345")
    assert page.status_code == 409 and 'id="pair-form"' not in page.get_data(as_text=True)
    assert 'id="pair-form"' not in hub.client.get("/room").get_data(as_text=True)
    refused = hub.client.post("/room/pair", data={"hub": "10.42.0.1", "code": "012345"})
    assert refused.status_code == 302 and "note=" in refused.headers["Location"]
    # said in Russian by its code, not the English message inside a Russian sentence («Не получилось: this box…»)
    note = hub.client.get(refused.headers["Location"]).get_data(as_text=True)
    assert "Этот бокс — стол турнира: сначала смените его роль на странице комнат" in note
    assert "this box is the desk" not in note and "Не получилось" not in note
    assert hub.rooms.role == "hub" and Roles(hub.settings.data_dir / "rooms").role == "hub"


def test_a_conflict_is_shown_again_after_the_hub_restarts(boxes):
    hub = boxes("hub", role="hub")
    desk = hub.desk()
    tid = desk.create("mubc", "Кубок", seed=3, tournament_id="t1")
    for number in range(1, 9):
        desk.register(tid, f"Игрок {number}")
    desk.close_registration(tid)
    desk.draw(tid)
    battle = sorted(desk.state(tid).battles)[0]
    players = sorted(t.battle_players(desk.state(tid), battle))
    desk.record_result(tid, battle, [{"player": p, "score": 10 * i} for i, p in enumerate(players)])
    typed = desk.state(tid).results[battle]
    played = t.BattleResult(battle, tuple(dataclass_line(line, 50 - 10 * i) for i, line in enumerate(typed.lines)),
                            source="box", log_id="room2/b9")
    hub.rooms.results.book.hold(desk.clock(), tid, battle, "room2", "b9", played, typed)
    hub.close()
    again = boxes("hub")  # the same data directory: the box restarted
    again.login()
    page = again.client.get("/director/rooms").get_data(as_text=True)
    assert "Два результата одного боя" in page and battle in page
    assert "Игрок" in page and "room2" in page  # the players by name, the station that played it
    again.client.post("/director/rooms/settle", data={"tournament": tid, "battle": battle, "take": "desk"})
    page = again.client.get("/director/rooms").get_data(as_text=True)
    assert "Два результата одного боя" not in page
    answered = again.client.post("/director/rooms/settle", data={"tournament": tid, "battle": battle, "take": "desk"})
    assert answered.status_code == 302 and "note=" in answered.headers["Location"]  # answered already: said


def dataclass_line(line, score: int):
    import dataclasses

    return dataclasses.replace(line, score=score)


# --- pairing names a new box only (issue 19) ----------------------------------------------------------------------
async def _beats(hub_url: str, app_password: str, station_url: str, seconds: float) -> int:
    """How many beats a client of the station's nats-server gets through to the hub within ``seconds`` (0: the
    station's leaf is cut or refused)."""
    import nats

    from appliance.service.rooms import natsconf, protocol

    hub = await nats.connect(hub_url, user=natsconf.APP_USER, password=app_password)
    got: list[bytes] = []

    async def heard(message):
        got.append(message.data)

    await hub.subscribe(protocol.desk_subject("room2", "beat"), cb=heard)
    await hub.flush()
    station = await nats.connect(station_url, inbox_prefix=protocol.inbox_prefix("room2"))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not got:
        await station.publish(protocol.desk_subject("room2", "beat"), b"beat")
        await station.flush()
        await asyncio.sleep(0.2)
    await station.close()
    await hub.close()
    return len(got)


def test_pairing_names_a_new_box_only_and_a_re_pair_cuts_the_old_credential(boxes, tmp_path):
    from appliance.service.rooms import natsconf
    from appliance.service.rooms.server import NatsServer

    hub = boxes("hub", role="hub")
    hub.login()
    servers = []

    def code() -> str:
        return hub.client.post("/director/rooms/code.json").get_json()["code"]

    def pair(given: str, box_id: str, name: str):
        return hub.client.post("/rooms/pair", json={"code": given, "box_id": box_id, "name": name})

    def station(folder: str, leaf_url: str, password: str) -> str:
        """room2's nats-server as the station writes it, with ``password``: its client URL."""
        server = NatsServer(tmp_path / folder)
        server.write(natsconf.station_config("room2", str(tmp_path / folder / "js"), 0,
                                             leaf_url.replace("localhost", "127.0.0.1"), "room2", password,
                                             ports_dir=str(tmp_path / folder)))
        servers.append(server)
        return server.start()["nats"][0]

    def beats(station_url: str, seconds: float) -> int:
        return asyncio.run(_beats(hub.rooms.server.client_url(), hub.rooms.roles.data["app_password"], station_url,
                                  seconds))

    try:
        first = code()
        honest = pair(first, "room2", "Комната 2").get_json()
        assert honest["ok"] and honest["user"] == "room2"
        room2 = station("room2", honest["leaf_url"], honest["password"])
        assert beats(room2, 20) > 0  # paired: its leaf carries its beats

        # a used code pairs nothing more; a live code names room2 (public on /lobby.json): refused in words
        used = pair(first, "room4", "Комната 4")
        assert used.status_code == 403 and "stale" in used.get_json()["error"]
        assert used.get_json()["code"] == "bad_code"  # the station words the code in its own language
        attack = pair(code(), "room2", "Чужой")
        assert attack.status_code == 403 and "password" not in attack.get_json()
        assert attack.get_json()["code"] == "already_paired" and attack.get_json()["params"]["box"] == "room2"
        assert "already paired" in attack.get_json()["error"]
        assert hub.rooms.roles.stations()["room2"].name == "Комната 2"  # not renamed
        assert beats(room2, 10) > 0

        # the director re-pairs room2 on the desk: its old password is cut, connected or new
        page = hub.client.get("/director/rooms").get_data(as_text=True)
        assert "Подключить заново" in page
        unsure = hub.client.post("/director/rooms/repair", data={"box": "room2"})  # the tick box left empty
        assert unsure.status_code == 302 and "note=" in unsure.headers["Location"]
        assert not hub.rooms.roles.is_repairing("room2") and beats(room2, 10) > 0  # nothing cut
        done = hub.client.post("/director/rooms/repair", data={"box": "room2", "sure": "1"})
        assert done.status_code == 302 and "note=" in done.headers["Location"]
        assert "ждёт подключения заново" in hub.client.get("/director/rooms").get_data(as_text=True)
        assert beats(room2, 5) == 0  # the leaf connected with the old password: cut (a reload alone keeps it)
        thief = station("thief", honest["leaf_url"], honest["password"])
        assert beats(thief, 5) == 0
        assert "Authorization Violation" in (tmp_path / "thief" / "nats.log").read_text()

        # the honest re-pair: one code, a new credential that connects
        again = pair(code(), "room2", "Комната 2").get_json()
        assert again["ok"] and again["password"] != honest["password"]
        renewed = station("renewed", again["leaf_url"], again["password"])
        assert beats(renewed, 20) > 0
        assert pair(code(), "room2", "Комната 2").status_code == 403  # paired again: refused again
    finally:
        for server in servers:
            server.stop()


def test_a_station_asked_for_a_battle_not_given_to_it_refuses_in_words_and_the_desk_is_unchanged(boxes):
    """Issue 22: the refusal said «Этот бой уже у другого бокса: ?» and had claimed the battle at the desk."""
    hub = boxes("hub", role="hub")
    desk = hub.desk()
    tid = desk.create("mubc", "Кубок", seed=3, tournament_id="t1")
    for number in range(1, 9):
        desk.register(tid, f"Игрок {number}")
    desk.close_registration(tid)
    desk.draw(tid)
    given, other = sorted(desk.state(tid).battles)[:2]
    room = boxes("room2", role="station", box_id="room2")
    answer = hub.rooms.pair_station(hub.rooms.roles.new_code(), "room2", "Комната 2", "127.0.0.1")
    room.rooms.stop()
    room.rooms.roles.paired(answer["leaf_url"], answer["user"],
                            answer["password"], "127.0.0.1")
    room.rooms.start()
    hub.login()
    room.login()
    assert hub.client.post("/director/rooms/assign", data={"box": "room2", "battle_key": f"{tid}|{given}"}
                           ).status_code == 302
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not room.rooms.assignments():
        time.sleep(0.2)
    assert [a["battle"] for a in room.rooms.assignments()] == [given]
    before = dict(desk.state(tid).assignments)

    refused = room.client.post("/room/start", data={"tournament": tid, "battle": other},
                               headers={"Accept": "application/json"})
    assert refused.status_code == 409
    words = refused.get_json()["error"]
    assert "не дан этой комнате" in words and "?" not in words and "другого бокса" not in words
    assert dict(desk.state(tid).assignments) == before  # nothing claimed at the desk
    assert other not in desk.state(tid).assignments or desk.state(tid).assignments[other][1] != "room2"

def test_the_pairing_form_starts_with_the_hub_the_cards_settings_file_named(boxes):
    """issue 23: a station's hub in svoyak-settings.txt (setting rooms_hub) fills the pairing form's address."""
    station = boxes("station")
    station.login()
    assert 'name="hub" value="10.42.0.1"' in station.client.get("/room").get_data(as_text=True)
    station.app.config["SVOYAK_SETTINGS"] = station.settings.replace(rooms_hub="192.168.1.20")
    form = station.client.get("/room").get_data(as_text=True)
    assert 'id="pair-form"' in form and 'name="hub" value="192.168.1.20"' in form
