"""Brackets and the public table say who went on (issue 12): a seat names its player once the battle that fills
it ended, and says where the player comes from until then; the public table names the stage and what is left;
withdrawn players are marked in standings, CSV and print; shoot-outs and tie-breaks show names, not ids."""

from __future__ import annotations

import csv
import io
import re
import types

import pytest

from web import create_app
from web.sync import Services

PIN = "4321"


class FakeSession:
    battles = None

    def subscribe(self, callback):
        self.callback = callback


@pytest.fixture
def client(settings):
    identity = types.SimpleNamespace(host_pin="8642", director_pin=PIN, hotspot_ssid="Svoyak-TEST", hotspot_password="x" * 10,
                                     box_name="svoyak-TEST")
    app = create_app(settings, Services(session=FakeSession(), identity=identity))
    app.config["TESTING"] = True
    with app.test_client() as client:
        client.post("/director/login", data={"pin": PIN})
        yield client


def desk(client):
    from web.director import desk as open_desk

    with client.application.app_context():
        return open_desk()


def card(html: str, battle_id: str) -> str:
    """The text of one battle card, tags stripped."""
    start = html.index(f'id="b-{battle_id}"')
    following = re.compile(r'<div class="battle[ "]').search(html, start + 10)
    end = following.start() if following else None
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html[start:end]))


def eurocup_81(client) -> str:
    tournaments = desk(client)
    tid = tournaments.create("eurocup", "Кубок Европы", seed=1)
    for i in range(81):
        tournaments.register(tid, f"Игрок {i + 1}", f"Команда {i % 9}")
    tournaments.close_registration(tid)
    tournaments.draw(tid, seed=1)
    return tid


def test_a_bracket_seat_names_the_winner_once_the_battle_that_fills_it_ended(client):
    tournaments = desk(client)
    tid = eurocup_81(client)
    before = client.get(f"/director/{tid}/bracket").get_data(as_text=True)
    assert "1-27:0:1" not in before  # a reference is worded, never shown raw
    assert "1-е место, бой 1 · 1/27 финала" in card(before, "1-9/01")
    players = tournaments.view(tid)["stages"][1]["battles"][0]["players"]
    tournaments.record_result(tid, "1-27/01", [{"player": p, "score": 90 - 30 * n} for n, p in enumerate(players)])
    winner = tournaments.view(tid)["names"][players[0]]
    after = client.get(f"/director/{tid}/bracket").get_data(as_text=True)
    text = card(after, "1-9/01")
    assert text.startswith('id="b-1-9/01"> Бой 1 ')
    assert f"1. {winner}" not in text and winner in text and "1-е место, бой 1 · 1/27 финала" in text
    assert "1-е место, бой 2 · 1/27 финала" in text  # still to come
    assert f"{winner} → 1/9 финала" in card(after, "1-27/01")  # who went on, and where
    table = client.get(f"/table/{tid}").get_data(as_text=True)
    assert "Играются бои" in table and "1/27 финала — осталось 26 боёв из 27" in table
    assert "Играются бои: 1-27" not in table and "1-27/02" not in re.sub(r'id="[^"]*"', "", table)
    english = client.get(f"/table/{tid}?lang=en").get_data(as_text=True)
    assert "1/27 final: 26 of 27 battles left" in english


def test_withdrawn_players_are_marked_in_standings_csv_and_print(client):
    tournaments = desk(client)
    tid = tournaments.create("northern-owl", "Сова", seed=3)
    for i in range(36):
        tournaments.register(tid, f"Игрок {i}")
    tournaments.set_seeds(tid, [f"p{i:03d}" for i in range(1, 10)])
    tournaments.draw(tid, seed=3)
    players = tournaments.view(tid)["stages"][0]["battles"][0]["players"]
    tournaments.record_result(tid, "groups/01", [{"player": p, "score": 100 - 10 * n} for n, p in enumerate(players)])
    tournaments.withdraw(tid, players[-1], "заболел")
    name = tournaments.view(tid)["names"][players[-1]]
    for page in (f"/director/{tid}/", f"/director/{tid}/print", f"/table/{tid}"):
        html = client.get(page).get_data(as_text=True)
        assert re.search(re.escape(name) + r'\s*<span class="out">\(вне турнира\)</span>', html), page
    rows = list(csv.reader(io.StringIO(client.get(f"/director/{tid}/export.csv").get_data(as_text=True)[1:])))
    header = rows[0]
    column = header.index("Вне турнира")
    marked = {row[header.index("Игрок")]: row[column] for row in rows[1:] if len(row) == len(header)}
    assert marked[name] == "да" and list(marked.values()).count("да") == 1
    english = list(csv.reader(io.StringIO(client.get(f"/director/{tid}/export.csv?lang=en").get_data(
        as_text=True)[1:])))
    assert "withdrawn" in english[0] and "yes" in [row[english[0].index("withdrawn")] for row in english[1:]
                                                    if len(row) == len(english[0])]


def test_shootouts_and_tie_breaks_show_names(client):
    from appliance.rules import tournament as t

    tournaments = desk(client)
    tid = tournaments.create("northern-owl", "Сова", seed=3)
    for i in range(36):
        tournaments.register(tid, f"Игрок {i}")
    tournaments.set_seeds(tid, [f"p{i:03d}" for i in range(1, 10)])
    tournaments.draw(tid, seed=3)
    players = tournaments.view(tid)["stages"][0]["battles"][0]["players"]
    result = t.BattleResult("groups/01", tuple(t.PlayerResult(p, 100 - 10 * n, n + 1) for n, p in enumerate(players)),
                            (t.Shootout(tuple(players[:2]), tuple(players[:2]), "theme", (30, 10), "northern-owl 3.3"),))
    tournaments.submit(tid, t.BattleResultRecorded(tournaments.clock(), result))
    names = tournaments.view(tid)["names"]
    html = client.get(f"/director/{tid}/bracket").get_data(as_text=True)
    text = card(html, "groups/01")
    assert f"Перестрелки: {names[players[0]]} › {names[players[1]]}" in text
    assert " › ".join(players[:2]) not in html


def test_a_card_says_who_went_on_never_the_stage_its_players_came_to(client):
    tournaments = desk(client)
    tid = eurocup_81(client)
    for battle in tournaments.view(tid)["stages"][1]["battles"]:
        tournaments.record_result(tid, battle["id"], [{"player": p, "score": 90 - 30 * n}
                                                      for n, p in enumerate(battle["players"])])
    ninth = tournaments.view(tid)["stages"][2]["battles"][0]
    tournaments.record_result(tid, ninth["id"], [{"player": p, "score": 90 - 30 * n}
                                                 for n, p in enumerate(ninth["players"])])
    names = tournaments.view(tid)["names"]
    text = card(client.get(f"/director/{tid}/bracket").get_data(as_text=True), ninth["id"])
    assert f"{names[ninth['players'][0]]} → 1/3 финала" in text
    assert "→ 1/9 финала" not in text  # the losers came to the 1/9 and went no further
