"""Never lose a battle, desk side (issue 12): the director's «Играть на этом боксе» never replaces a battle in
progress without the director seeing it and choosing to set it aside, and a tournament slot knows which battle on
this box is its own (playing it again goes back to that battle, never a second one)."""

from __future__ import annotations

import re

import pytest

from .conftest import DIRECTOR_PIN, drawn_owl


@pytest.fixture
def box(session_server):
    return session_server


def director(app):
    client = app.test_client()
    client.post("/director/login", data={"pin": DIRECTOR_PIN})
    return client


def test_play_on_this_box_never_replaces_a_battle_in_progress(box):
    session = box.session
    tid = drawn_owl(box.app)
    session.command("setup", {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"], "themes": 4}, "h1")
    session.command("next", {}, "n1")
    live = session.battle_id
    client = director(box.app)
    refused = client.post(f"/director/{tid}/play/groups/01", data={"host": "Пётр"})
    assert refused.status_code == 409 and session.battle_id == live  # nothing replaced
    html = refused.get_data(as_text=True)
    assert 'id="box-busy"' in html and "На этом боксе идёт другой бой" in html
    assert re.search(r"Аня\s*<b>0</b>", html) and f'name="set_aside" value="{live}"' in html
    assert len(session.battles.list()) == 1
    # The director saw it and chose: set it aside (it stays on the box), play the tournament battle.
    played = client.post(f"/director/{tid}/play/groups/01", data={"host": "Пётр", "set_aside": live})
    assert played.status_code == 302 and played.headers["Location"] == "/host"
    assert session.battle_id != live and len(session.battles.list()) == 2
    assert not session.battles.state(live).is_over  # kept as it was, to be resumed


def test_a_slot_knows_its_own_battle_and_playing_it_again_creates_no_second_one(box):
    session = box.session
    tid = drawn_owl(box.app)
    client = director(box.app)
    assert client.post(f"/director/{tid}/play/groups/01", data={}).status_code == 302
    own = session.battle_id
    session.command("next", {}, "n1")
    again = client.post(f"/director/{tid}/play/groups/01", data={})
    assert again.status_code == 302 and session.battle_id == own and len(session.battles.list()) == 1
    bracket = client.get(f"/director/{tid}/bracket").get_data(as_text=True)
    card = bracket[bracket.index('id="b-groups/01"'):bracket.index('id="b-groups/02"')]
    assert "играется на этом боксе" in card and f"/battles/{own}/protocol" in card
    # Another slot while this one plays: refused until the director sets it aside.
    assert client.post(f"/director/{tid}/play/groups/02", data={}).status_code == 409
    assert session.battle_id == own


def test_tournament_battles_arrive_with_the_theme_names_the_director_typed(box):
    # issue 12: theme names typed by the director per stage, never "1"-"4" on the host page and the board.
    session = box.session
    tid = drawn_owl(box.app)
    client = director(box.app)
    page = client.get(f"/director/{tid}/themes/groups").get_data(as_text=True)
    assert 'name="names-groups:1"' in page and "Бой 1 · 6 тем" in page
    names = ["Реки", "Кино", "Химия", "Спорт", "Поэзия", "Города"]
    saved = client.post(f"/director/{tid}/themes/groups", data={"names-groups:1": "\n".join(names) + "\n\n"})
    assert saved.status_code == 302
    bracket = client.get(f"/director/{tid}/bracket").get_data(as_text=True)
    assert "6 тем: Реки, Кино, Химия, Спорт, Поэзия, Города" in bracket
    assert client.get(f"/director/{tid}/setup/groups/01.json").get_json()["theme_names"] == names
    too_many = client.post(f"/director/{tid}/themes/groups", data={"names-groups:2": "\n".join(names + ["Ещё"])})
    assert too_many.status_code == 400 and 'id="desk-error"' in too_many.get_data(as_text=True)
    assert client.post(f"/director/{tid}/play/groups/01", data={}).status_code == 302
    session.command("next", {}, "t1")
    assert session.snapshot()["view"]["theme"]["name"] == "Реки"
    assert session.state.setup.theme_names == tuple(names)  # in the battle's log: its papers name them too


def test_a_slot_set_aside_on_the_box_comes_back_when_the_director_plays_it_again(box):
    session = box.session
    tid = drawn_owl(box.app)
    client = director(box.app)
    client.post(f"/director/{tid}/play/groups/01", data={})
    own = session.battle_id
    session.command("next", {}, "t1")
    # The host sets the tournament battle aside for a battle of their own.
    session.command("setup", {"profile": "eurocup", "players": ["Аня", "Борис"], "themes": 1, "set_aside": own},
                    "h1")
    other = session.battle_id
    assert other != own
    assert client.post(f"/director/{tid}/play/groups/01", data={}).status_code == 409  # the host's is on
    back = client.post(f"/director/{tid}/play/groups/01", data={"set_aside": other})
    assert back.status_code == 302 and session.battle_id == own  # the slot's own battle, as it was left
    assert len(session.battles.list()) == 2 and session.state.themes  # no third battle; its theme still started


def test_a_battle_the_host_starts_meanwhile_gets_the_same_choice(box, monkeypatch):
    """The host starts a battle between the desk's look at the box and its command: the session refuses
    (error.battle_unfinished) and the director is shown that battle with «Отложить», not a bare refusal."""
    session = box.session
    tid = drawn_owl(box.app)
    command = session.command

    def host_first(name, args, command_id):
        if name == "setup" and command_id != "host":
            monkeypatch.setattr(session, "command", command)
            command("setup", {"profile": "eurocup", "players": ["Аня", "Борис"], "themes": 1}, "host")
            command("next", {}, "host-next")
        return command(name, args, command_id)

    monkeypatch.setattr(session, "command", host_first)
    client = director(box.app)
    refused = client.post(f"/director/{tid}/play/groups/01", data={"host": "Пётр"})
    live = session.battle_id
    html = refused.get_data(as_text=True)
    assert refused.status_code == 409 and 'id="box-busy"' in html and f'name="set_aside" value="{live}"' in html
    assert "Отложить его и играть этот бой" in html and re.search(r"Аня\s*<b>0</b>", html)
    played = client.post(f"/director/{tid}/play/groups/01", data={"host": "Пётр", "set_aside": live})
    assert played.status_code == 302 and session.battle_id != live and not session.battles.state(live).is_over
    rows = {row["id"]: row for row in session.snapshot()["view"]["battles"]}  # the host's list names it
    assert rows[session.battle_id]["named"].startswith("Сова · Первый отборочный этап · ") and rows[live]["named"] == ""


def test_themes_named_after_the_battle_is_on_the_box_reach_it_as_each_theme_starts(box):
    session = box.session
    tid = drawn_owl(box.app)
    client = director(box.app)
    assert client.post(f"/director/{tid}/play/groups/01", data={}).status_code == 302
    battle = session.battle_id
    session.command("next", {}, "t1")  # theme 1 starts before the director typed anything
    assert session.snapshot()["view"]["theme"]["name"] == ""  # the pages say «Тема 1»
    for price in range(5):  # the first theme's questions, withdrawn one by one (quickest to the theme's end)
        session.command("next", {}, f"q{price}")
        session.command("withdraw", {}, f"w{price}")
    names = ["Реки", "Кино", "Химия", "Спорт", "Поэзия", "Города"]
    assert client.post(f"/director/{tid}/themes/groups",
                       data={"names-groups:1": "\n".join(names)}).status_code == 302
    session.command("next", {}, "t2")  # theme 2 starts with the name typed meanwhile
    assert session.snapshot()["view"]["theme"]["name"] == "Кино"
    assert session.state.setup.theme_names == ("",) * 6  # the setup stays as stored; the name is in ThemeStarted
    assert session.battles.state(battle).themes[1].name == "Кино" and session.battles.state(battle).themes[0].name == ""
