"""The rooms' pages over a real hub (its nats-server a child of the app): the pairing QR code and the station's
join link it holds, a hub that a pairing link cannot turn into a room, and a conflict shown again after the hub
restarts (docs/rooms.md)."""

from __future__ import annotations

import re

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

    def __init__(self, data_dir, capture, role: str = "") -> None:
        if role:
            Roles(data_dir / "rooms").set_role(role, "Стол", box_id="desk")
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

    def make(folder: str, role: str = "") -> Box:
        (tmp_path / folder).mkdir(exist_ok=True)
        box = Box(tmp_path / folder, recording_capture, role)
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


def test_the_pairing_form_starts_with_the_hub_the_cards_settings_file_named(boxes):
    """issue 23: a station's hub in svoyak-settings.txt (setting rooms_hub) fills the pairing form's address."""
    station = boxes("station")
    station.login()
    assert 'name="hub" value="10.42.0.1"' in station.client.get("/room").get_data(as_text=True)
    station.app.config["SVOYAK_SETTINGS"] = station.settings.replace(rooms_hub="192.168.1.20")
    form = station.client.get("/room").get_data(as_text=True)
    assert 'id="pair-form"' in form and 'name="hub" value="192.168.1.20"' in form
