"""The director's pages through the app factory: PIN, registration, draw, results, sheets, exports, public table."""

from __future__ import annotations

import csv
import io
import json
import types

import pytest

from web import create_app
from web.sync import Services

PIN = "4321"  # the director's
HOST_PIN = "8642"


class FakeSession:
    """Just enough of the live session for the hub: nobody plays battles in these tests."""

    battles = None

    def subscribe(self, callback):
        self.callback = callback


@pytest.fixture
def client(settings):
    identity = types.SimpleNamespace(host_pin=HOST_PIN, director_pin=PIN, hotspot_ssid="Svoyak-TEST", hotspot_password="x" * 10,
                                     box_name="svoyak-TEST")
    app = create_app(settings, Services(session=FakeSession(), identity=identity))
    app.config["TESTING"] = True
    with app.test_client() as client:
        yield client


def login(client):
    response = client.post("/director/login?next=/director/", data={"pin": PIN})
    assert response.status_code == 302


def new_tournament(client, preset: str, players: int, team=lambda i: "") -> str:
    response = client.post("/director/new", data={"preset": preset, "title": "Тест", "seed": "7"})
    tid = response.headers["Location"].split("/")[2]
    bulk = "\n".join(f"Игрок {i}; {team(i)}" for i in range(players))
    assert client.post(f"/director/{tid}/registration", data={"bulk": bulk}).status_code == 302
    return tid


def test_director_pages_need_the_pin_and_the_public_table_does_not(client):
    assert client.get("/director/").status_code == 302
    assert client.post("/director/login", data={"pin": "0000"}).status_code == 403
    login(client)
    tid = new_tournament(client, "mubc", 8)
    client.delete_cookie("session")
    assert client.get(f"/director/{tid}/bracket").status_code == 302
    assert client.get(f"/table/{tid}").status_code == 200
    assert json.loads(client.get(f"/table/{tid}.json").data)["format"] == "mubc"


def test_register_draw_enter_results_and_export(client):
    login(client)
    tid = new_tournament(client, "northern-owl", 38, team=lambda i: f"T{i % 5}")
    page = client.get(f"/director/{tid}/registration").get_data(as_text=True)
    assert "Лист ожидания" in page and "Игрок 37" in page  # northern-owl 1.1: the waiting list
    assert client.post(f"/director/{tid}/withdraw/p001").status_code == 302
    assert client.post(f"/director/{tid}/seeding", data={"seeds": " ".join(f"p{i:03d}" for i in range(2, 11))}).status_code == 302
    assert client.post(f"/director/{tid}/draw", data={"seed": "5"}).status_code == 302
    bracket = client.get(f"/director/{tid}/bracket").get_data(as_text=True)
    assert "groups/09" in bracket and "Ввести результат" in bracket
    # A result played elsewhere, typed in.
    form = client.get(f"/director/{tid}/battle/groups/01").get_data(as_text=True)
    players = sorted(set(part.split('"')[0] for part in form.split('name="score-')[1:]))
    data = {f"score-{p}": str(100 - 30 * i) for i, p in enumerate(players)}
    assert client.post(f"/director/{tid}/battle/groups/01", data=data).status_code == 302
    assert client.post(f"/director/{tid}/assign/groups/02", data={"room": "B", "box": "box-2"}).status_code == 302
    setup = client.get(f"/director/{tid}/setup/groups/02.json").get_json()
    assert setup["profile"] == "northern-owl" and setup["cuts"] == [1] and setup["slot"] == f"tournament:{tid}:groups/02"
    assert len(setup["players"]) == len(setup["names"]) == 4
    # A refused command says why and changes nothing.
    refused = client.post(f"/director/{tid}/battle/groups/01", data={f"score-{players[0]}": "x"})
    assert refused.status_code == 400
    rows = list(csv.reader(io.StringIO(client.get(f"/director/{tid}/export.csv").get_data(as_text=True).lstrip("\ufeff"))))
    assert any(row[:2] == ["Первый отборочный этап", "groups/01"] for row in rows)  # the stage by its title
    exported = json.loads(client.get(f"/director/{tid}/export.json").data)
    assert any(e["type"] == "BattleAssigned" and e["box"] == "box-2" for e in exported["events"])
    printable = client.get(f"/director/{tid}/print").get_data(as_text=True)
    assert "css/director.css" in printable and "groups/01" in printable
    with client.get("/static/css/director.css") as css:
        assert "@media print" in css.get_data(as_text=True)


def test_written_sheets_are_entered_by_number_and_marks(client):
    login(client)
    tid = new_tournament(client, "youth-cup", 60)
    client.post(f"/director/{tid}/draw", data={"seed": "1"})
    page = client.get(f"/director/{tid}/sheets/written").get_data(as_text=True)
    assert 'maxlength="60"' in page
    reply = client.post(f"/director/{tid}/sheets/written", json={"player": "3", "marks": "+" * 5 + "0" * 55},
                        headers={"Accept": "application/json"})
    assert reply.get_json() == {"ok": True, "player": "p003", "name": "Игрок 2", "score": 150, "right_points": 150}
    bad = client.post(f"/director/{tid}/sheets/written", json={"player": "4", "marks": "+++"},
                      headers={"Accept": "application/json"})
    assert bad.status_code == 400 and "expected 60" in bad.get_json()["error"]


@pytest.mark.parametrize("preset, players", [("eurocup", 90), ("irkutsk", 40), ("youth-cup", 60),
                                             ("northern-owl", 36), ("mubc", 13)])
def test_every_page_renders_a_whole_tournament_and_an_export_moves_it(client, preset, players):
    from appliance.rules import tournament as t
    from appliance.rules.tournament.simulate import play_battle_outline
    from appliance.service.presets import simulate

    login(client)
    log, state = simulate(preset, players, 3, battle_player=play_battle_outline)
    body = json.dumps({"events": [t.to_dict(e) for e in log]})
    response = client.post("/director/import", data={"file": (io.BytesIO(body.encode()), "export.json")},
                           content_type="multipart/form-data")
    assert response.status_code == 302
    tid = state.tournament_id
    pages = ["", "registration", "seeding", "bracket", "print"] + [
        f"sheets/{s.id}" for s in state.fmt.stages if s.kind == "written"]
    for page in pages:
        html = client.get(f"/director/{tid}/{page}").get_data(as_text=True)
        assert "Traceback" not in html and state.title in html, page
    table = client.get(f"/table/{tid}").get_data(as_text=True)
    winner = t.standings(state)[0].player
    assert state.entrants[winner].name in table
    again = client.post("/director/import", data=body, content_type="application/json")
    assert again.status_code == 400  # already on this box
    exported = json.loads(client.get(f"/director/{tid}/export.json").data)
    assert len(exported["events"]) == len(log)


def test_a_drawn_battle_played_on_this_box_flows_back_into_the_tournament(session_server, play_six_themes):
    # The director puts a battle on the host page; when the battle engine says it is over, the desk records it.
    from appliance.rules import tournament as t
    from tests.web.conftest import DIRECTOR_PIN, drawn_owl

    server = session_server
    app = server.app
    tid = drawn_owl(app)
    client = app.test_client()
    client.post("/director/login", data={"pin": DIRECTOR_PIN})
    response = client.post(f"/director/{tid}/play/groups/01", data={"command_id": "play-1"})
    assert response.status_code == 302 and response.headers["Location"] == "/host"
    session = server.session
    box_id = session.battle_id
    tournaments = app.extensions["svoyak.tournaments"]
    desk_names = [f"Игрок {int(p[1:]) - 1}" for p in t.battle_players(tournaments.state(tid), "groups/01")]
    assert session.state.players == tuple(desk_names)
    battles = session.battles
    play_six_themes(battles, box_id, start_ns=session.state.last_at_ns)
    state = tournaments.state(tid)
    assert tournaments.rejected == [] and battles.state(box_id).is_over
    result = state.results["groups/01"]
    assert result.source == "box" and result.log_id == box_id
    winner = min(result.lines, key=lambda line: line.place)
    assert state.entrants[winner.player].name == desk_names[0] and winner.score == 450


def test_wrong_director_pins_lock_out_like_the_host_page_with_a_count_of_their_own(client):
    from web.director import _guard

    with client.application.test_request_context():
        burst = _guard().burst
    for _ in range(burst):
        wrong = client.post("/director/login", data={"pin": "0000"})
        assert wrong.status_code == 403 and "Неверный PIN" in wrong.get_data(as_text=True)
    locked = client.post("/director/login", data={"pin": "0000"})
    assert locked.status_code == 429 and "Слишком много неверных PIN" in locked.get_data(as_text=True)
    # The next try is refused even with the right PIN: no brute force through the director's form.
    right = client.post("/director/login", data={"pin": PIN})
    assert right.status_code == 429 and client.get("/director/").status_code == 302
    # The desk's guard is its own: guessing at the desk does not lock the room's host out of the host page.
    guard = client.application.extensions["svoyak.hub"].namespaces["/host"].guard
    assert guard.check("127.0.0.1", HOST_PIN, HOST_PIN) is None


def test_the_host_pin_does_not_open_the_desk(client):
    # issue 12: a room's host cannot reach the desk; the director has a PIN of their own.
    refused = client.post("/director/login", data={"pin": HOST_PIN})
    assert refused.status_code == 403 and client.get("/director/").status_code == 302
    assert "PIN директора" in refused.get_data(as_text=True)
    login(client)
    assert client.get("/director/").status_code == 200


def test_a_box_without_a_director_pin_keeps_the_desk_shut(settings):
    identity = types.SimpleNamespace(host_pin=HOST_PIN, director_pin="", hotspot_ssid="S", hotspot_password="x" * 10,
                                     box_name="b")
    app = create_app(settings, Services(session=FakeSession(), identity=identity))
    with app.test_client() as client:
        assert client.get("/director/").status_code == 302
        for pin in ("", HOST_PIN):
            refused = client.post("/director/login", data={"pin": pin})
            assert refused.status_code == 403 and "нет PIN директора" in refused.get_data(as_text=True)
        assert client.get("/director/").status_code == 302


def test_the_director_session_is_signed_with_the_app_secret_not_made_from_the_pin(client, settings):
    login(client)
    assert client.get("/director/").status_code == 200
    cookie = client.get_cookie("session")
    assert cookie is not None and PIN not in cookie.value
    # The old scheme's cookie (an HMAC of the PIN alone) no longer opens anything.
    import hashlib
    import hmac
    client.delete_cookie("session")
    client.set_cookie("svoyak_director", hmac.new(PIN.encode(), b"svoyak director", hashlib.sha256).hexdigest())
    assert client.get("/director/").status_code == 302
    # A session cookie signed by another app (another secret) is refused.
    other = create_app(settings, Services(session=FakeSession(), identity=client.application.extensions[
        "svoyak.hub"].services.identity))
    with other.test_client() as stranger:
        login(stranger)
        client.set_cookie("session", stranger.get_cookie("session").value)
    assert client.get("/director/").status_code == 302


def test_a_refusal_shows_on_its_form_in_the_pages_language_with_the_input_kept(client):
    login(client)
    tid = client.post("/director/new", data={"preset": "irkutsk"}).headers["Location"].split("/")[2]
    # An empty name: the registration page again, the words in Russian first, the typed team kept.
    refused = client.post(f"/director/{tid}/registration", data={"name": " ", "team": "Сибиряки",
                                                                 "category": "team", "team_rank": "3"})
    page = refused.get_data(as_text=True)
    assert refused.status_code == 400
    assert 'data-code="registration.no_name"' in page
    assert "У игрока должно быть имя" in page and "A player needs a name" not in page  # one language at a time
    assert 'value="Сибиряки"' in page and 'value="3"' in page and '<option value="team" selected>' in page
    assert 'id="add-player"' in page  # the form itself, not a bare error page
    # A list that fails half-way keeps only the failing line and the rest (the lines before are in).
    bulk = "Анна; Б\n; безымянный\nВера; Г"
    refused = client.post(f"/director/{tid}/registration", data={"bulk": bulk, "category": "top-league"})
    page = refused.get_data(as_text=True)
    assert refused.status_code == 400 and "Добавлено 1 из 3" in page
    assert "; безымянный\nВера; Г</textarea>" in page
    # A draw that cannot be filled: worded, with the rule, on the overview's draw form; the seed is kept.
    client.post(f"/director/{tid}/registration", data={"bulk": "\n".join(f"И{i}; Т{i}" for i in range(17)),
                                                       "category": "top-league"})
    client.post(f"/director/{tid}/close-registration")
    refused = client.post(f"/director/{tid}/draw", data={"stage": "r1", "seed": "42"})
    page = refused.get_data(as_text=True)
    assert refused.status_code == 400 and 'id="draw"' in page
    assert "Игроков 18, а нужно не меньше 27, чтобы заполнить 9 боёв по 3 и более (irkutsk 2.1-2.2)" in page
    assert "18 players, but" not in page
    english = client.post(f"/director/{tid}/draw?lang=en", data={"stage": "r1", "seed": "42"}).get_data(as_text=True)
    assert "18 players, but 9 battles of at least 3 need 27 (irkutsk 2.1-2.2)" in english
    client.get("/director/?lang=ru")  # back to Russian (the choice is kept in a cookie)
    assert 'name="seed" step="1" value="42"' in page
    # A seed that is not a number is worded too, and the new tournament's title stays typed.
    refused = client.post("/director/new", data={"preset": "mubc", "title": "Кубок", "seed": "abc"})
    page = refused.get_data(as_text=True)
    assert refused.status_code == 400 and "Число для жеребьёвки «abc» — не целое" in page and 'value="Кубок"' in page
    # A format change that names no stage: worded, the typed changes kept.
    refused = client.post("/director/new", data={"preset": "mubc", "changes": "rounds = 7"})
    page = refused.get_data(as_text=True)
    assert refused.status_code == 400 and 'data-code="format.change"' in page and ">rounds = 7</textarea>" in page
    # A file that is no export: worded on the home page, under the «Загрузить» button's form.
    refused = client.post("/director/import", data={"file": (io.BytesIO(b"not json"), "x.json")})
    assert refused.status_code == 400 and "Это не JSON-экспорт турнира" in refused.get_data(as_text=True)
    # An unknown tournament: a plain page in both languages, with the way back.
    missing = client.post("/director/nope/close-registration")
    assert missing.status_code == 404 and "Нет турнира nope" in missing.get_data(as_text=True)


def test_the_registration_page_warns_before_the_draw_how_many_players_the_format_needs(client):
    login(client)
    tid = new_tournament(client, "irkutsk", 18, team=lambda i: f"Команда {i}")
    page = client.get(f"/director/{tid}/registration").get_data(as_text=True)
    assert 'id="field-check"' in page and 'data-code="draw.too_few"' in page
    assert "Игроков 18, а нужно не меньше 27, чтобы заполнить 9 боёв по 3 и более (irkutsk 2.1-2.2)" in page
    client.post(f"/director/{tid}/registration", data={"bulk": "\n".join(f"Ещё {i}; Клуб {i}" for i in range(9))})
    page = client.get(f"/director/{tid}/registration").get_data(as_text=True)
    assert 'id="field-check"' not in page and "Этап «Первый круг»: игроков 27, а нужно от 27 до 36" in page


def test_categories_show_their_titles_and_forms_read_like_forms(client):
    login(client)
    tid = new_tournament(client, "irkutsk", 2, team=lambda i: f"Команда {i}")
    page = client.get(f"/director/{tid}/registration").get_data(as_text=True)
    table = page[page.index("<table>"):]
    assert "Высшая лига" in table and "top-league</td>" not in table
    assert 'id="add-player"' in page and 'id="add-list"' in page  # late entry and the list are apart
    assert 'type="datetime-local" name="deadline"' in page and "2008-10-01T23:59" not in page
    assert 'id="conn"' not in page  # no socket on the desk, so no connection pill
    home = client.get("/director/").get_data(as_text=True)
    assert "Загрузить</button>" in home and "Войти" not in home
    assert "Число для жеребьёвки" in home and "Зерно" not in home and 'placeholder="seed"' not in home and "swiss.rounds = 7" in home
    # The deadline from the date-time input gets the browser's offset; the engine accepts it.
    assert client.post(f"/director/{tid}/deadline", data={"deadline": "2030-10-01T23:59",
                                                          "offset": "+08:00"}).status_code == 302
    assert json.loads(client.get(f"/director/{tid}/export.json").data)["deadline"] == "2030-10-01T23:59+08:00"
    # Pages with a socket keep their pill.
    assert 'id="conn"' in client.get("/board").get_data(as_text=True)


def test_the_director_plays_a_battle_on_this_box_with_themes_from_a_package(settings, recording_capture, tmp_path):
    """The director's «play on this box» takes the next unplayed themes of a package; the package's preview then
    marks them played in that tournament."""
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.battles import Battles
    from appliance.service.packages import QuestionPackages
    from appliance.service.session import Session
    from appliance.store import EventStore
    from tests.support.packages import sport_siq
    from tests.web.conftest import DIRECTOR_PIN, IDENTITY, drawn_owl

    battles = Battles(EventStore(tmp_path / "battles.sqlite"))
    packages = QuestionPackages.in_folder(tmp_path / "packages", battles)
    package_id = packages.add("кубок.siq", sport_siq(8))["id"]
    session = Session(battles, BattleAdapter(packages=packages), capture=recording_capture, simulator=True)
    session.start(timer_thread=False)
    app = create_app(settings, Services(session=session, identity=IDENTITY, packages=packages))
    tid = drawn_owl(app)
    client = app.test_client()
    client.post("/director/login", data={"pin": DIRECTOR_PIN})
    bracket = client.get(f"/director/{tid}/bracket").get_data(as_text=True)
    assert f'<option value="{package_id}">Кубок двора</option>' in bracket
    response = client.post(f"/director/{tid}/play/groups/01", data={"command_id": "play-1", "package": package_id})
    assert response.status_code == 302
    setup = session.state.setup
    assert setup.theme_names[:2] == ("Тема номер 1", "Тема номер 2")
    assert setup.sources[0] == (package_id, 0)
    preview = packages.preview(package_id)
    assert preview["themes"][0]["played_in_tournaments"] == [tid]
    # The themes are the battle's pack's now: the bracket names them and preselects their package.
    bracket = client.get(f"/director/{tid}/bracket").get_data(as_text=True)
    card = bracket[bracket.index('id="b-groups/01"'):bracket.index('id="b-groups/02"')]
    assert "Тема номер 1, Тема номер 2" in card and f'<option value="{package_id}" selected>' in card
    session.close()


def test_broken_imports_store_nothing_and_every_page_still_answers(client, settings):
    # Issue 10: "team_rank": null was accepted and /director/ answered 500 for every tournament, even after a
    # restart; a failed import left its first event. Each import below is validated whole and refused with its
    # code; the log holds exactly what it held before, and every page still answers.
    from appliance.rules import tournament as t
    from appliance.rules.tournament.simulate import play_battle_outline
    from appliance.service.presets import simulate

    login(client)
    kept = new_tournament(client, "mubc", 8)
    desk = client.application.extensions["svoyak.tournaments"]

    def stored(app_desk):  # what the store holds, read through the desk's own export
        return [item["id"] for item in app_desk.list()], len(json.loads(app_desk.export_json(kept))["events"])

    before = stored(desk)
    log, state = simulate("mubc", 9, 5, battle_player=play_battle_outline)
    good = [t.to_dict(e) for e in log]
    created = good[0]

    def edited(index, **fields):
        events = [dict(e) for e in good]
        events[index] = {**events[index], **fields}
        return events

    registered = next(i for i, e in enumerate(good) if e["type"] == "PlayerRegistered")
    broken = {
        "import.field": [
            edited(registered, team_rank=None),                       # the null that took /director/ down
            edited(registered, team_rank=10 ** 300),                  # past SQLite's INTEGER
            edited(registered, name=["А"]),
            edited(registered, surprise=1),
            edited(0, at_ns="1"),
            edited(0, tournament_id="../x"),
            edited(registered, name="Я" * 200_000),                   # past the form's field cap (MAX_FIELD_CHARS)
            edited(0, format_data={**created["format_data"], "title": "x" * 5_000}),
            [created, {"type": "PlayerRegistered", "v": 1, "at_ns": 2, "player_id": "p1"}],  # no name
            [created, "PlayerRegistered"],
        ],
        "import.event": [[created, {"type": "PlayerRegisteredTwice", "v": 1, "at_ns": 2}],
                         [created, {**good[1], "v": 2}]],
        "registration.no_player": [[created, {"type": "PlayerWithdrew", "v": 1, "at_ns": 2, "player_id": "p9"}]],
        "import.log": [[], [good[1]], {"events": 5}],
        "format.field": [edited(0, format_data={**created["format_data"], "surprise": 1})],
        "format.type": [edited(0, format_data={**created["format_data"], "stage": [
            {**created["format_data"]["stage"][0], "placement_points": [3, 1e30, 1, 0]},
            *created["format_data"]["stage"][1:]]})],
        "import.exists": [json.loads(desk.export_json(kept))["events"]],
    }
    for code, bodies in broken.items():
        for body in bodies:
            reply = client.post("/director/import", data=json.dumps(body), content_type="application/json",
                                headers={"Accept": "application/json"})
            # the import's body is the desk's to check whole (web/edge.py LARGE_BODIES), so each code is its own
            assert reply.status_code == 400 and reply.get_json()["code"] == code, (code, body)
    digits = json.dumps(edited(registered, team_rank=0)).replace('"team_rank": 0', '"team_rank": ' + "9" * 5000)
    points = json.dumps(good).replace('"placement_points": [3', '"placement_points": [NaN', 1)
    assert "NaN" in points  # Python's json writes and reads NaN; JSON has no such number
    for raw in (b"not json", b"[" * 100_000 + b"]" * 100_000, "[]".encode("utf-16"), digits.encode(), points.encode()):
        reply = client.post("/director/import", data=raw, content_type="application/json",
                            headers={"Accept": "application/json"})
        assert reply.status_code == 400 and reply.get_json()["code"] in ("import.json", "import.log")
    assert stored(desk) == before
    for page in ("/director/", f"/director/{kept}/", f"/director/{kept}/registration", f"/director/{kept}/bracket",
                 f"/director/{kept}/print", f"/table/{kept}", f"/table/{kept}.json"):
        assert client.get(page).status_code == 200, page
    # After a restart (a new app over the same data directory) the same, and the good log still imports.
    again = create_app(settings, Services(session=FakeSession(), identity=client.application.extensions[
        "svoyak.hub"].services.identity))
    with again.test_client() as restarted:
        login(restarted)
        reopened = restarted.application.extensions["svoyak.tournaments"]
        assert stored(reopened) == before and reopened.broken == {}
        assert restarted.get("/director/").status_code == 200
        assert restarted.post("/director/import", data=json.dumps({"events": good}),
                              content_type="application/json").status_code == 302
        assert restarted.get(f"/director/{state.tournament_id}/").status_code == 200


def test_the_composition_root_builds_one_desk_and_one_pin_guard_and_the_pages_share_them(settings, tmp_path):
    import dataclasses

    from web.sync import build_services

    services = build_services(dataclasses.replace(settings, capture_socket=str(tmp_path / "capture.sock")))
    try:
        app = create_app(settings, services)
        hub = app.extensions["svoyak.hub"]
        assert app.extensions["svoyak.tournaments"] is services.desk and services.desk is not None
        assert hub.namespaces["/host"].guard is services.pin_guard is not None
    finally:
        services.session.close()


def test_the_director_gives_a_stage_its_themes_from_a_package_beforehand(settings, recording_capture, tmp_path):
    """The stage's themes page takes every theme pack's themes from a package (the next unplayed, a pack each, in
    battle order); the battles then reach the host with the texts, and a package too short is refused, worded,
    with nothing named."""
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.battles import Battles
    from appliance.service.packages import QuestionPackages
    from appliance.service.session import Session
    from appliance.store import EventStore
    from tests.support.packages import sport_siq
    from tests.web.conftest import DIRECTOR_PIN, IDENTITY, drawn_owl
    from web.director import desk

    battles = Battles(EventStore(tmp_path / "battles.sqlite"))
    packages = QuestionPackages.in_folder(tmp_path / "packages", battles)
    short = packages.add("мало.siq", sport_siq(3, title="Короткий"))["id"]
    package_id = packages.add("кубок.siq", sport_siq(60))["id"]
    session = Session(battles, BattleAdapter(packages=packages), capture=recording_capture, simulator=True)
    session.start(timer_thread=False)
    app = create_app(settings, Services(session=session, identity=IDENTITY, packages=packages))
    tid = drawn_owl(app)
    client = app.test_client()
    client.post("/director/login", data={"pin": DIRECTOR_PIN})
    page = client.get(f"/director/{tid}/themes/groups").get_data(as_text=True)
    assert 'id="themes-package"' in page and f'<option value="{package_id}">Кубок двора</option>' in page
    refused = client.post(f"/director/{tid}/themes/groups/package", data={"package": short})
    assert refused.status_code == 400
    assert "В пакете осталось несыгранных тем: 3, а нужно" in refused.get_data(as_text=True)
    with app.app_context():
        assert not desk().state(tid).theme_sources  # nothing named
    taken = client.post(f"/director/{tid}/themes/groups/package", data={"package": package_id})
    assert taken.status_code == 302
    with app.app_context():
        packs = desk().theme_packs(tid, "groups")
        sources = desk().state(tid).theme_sources
    numbers = [n for pack in packs for _p, n in sources[pack["pack"]]]
    assert numbers == list(range(len(numbers))) and len(packs) > 1  # each pack its own, none twice
    page = client.get(f"/director/{tid}/themes/groups").get_data(as_text=True)
    assert "из пакета «Кубок двора»" in page
    # The battle reaches the host with its pack's themes and texts, and two spare themes for a shoot-out of its
    # own (the next unplayed after every pack's); a count that is not 0-20 is refused, worded, nothing set up.
    refused = client.post(f"/director/{tid}/play/groups/02", data={"package": package_id, "spares": "21"})
    assert refused.status_code == 400 and "Запасных тем — целое число от 0 до 20" in refused.get_data(as_text=True)
    assert session.battle_id is None
    assert client.post(f"/director/{tid}/play/groups/02", data={"package": package_id, "spares": "2"}).status_code == 302
    second = next(pack for pack in packs if 2 in pack["battles"])
    setup = session.state.setup
    assert setup.sources[:setup.themes] == sources[second["pack"]]
    assert setup.sources[setup.themes:] == ((package_id, len(numbers)), (package_id, len(numbers) + 1))
    assert setup.questions[0][0][0].startswith("Вопрос") and len(setup.theme_names) == setup.themes + 2
    session.close()


def test_the_written_rounds_sheet_page_links_the_packages_answer_sheets_and_key(settings, recording_capture,
                                                                               tmp_path):
    """youth-cup 2.2: the director's sheet-entry page links each package's printable sheets and the host's key,
    for as many themes as the written round has."""
    from appliance.service.battle_adapter import BattleAdapter
    from appliance.service.battles import Battles
    from appliance.service.packages import QuestionPackages
    from appliance.service.session import Session
    from appliance.store import EventStore
    from tests.support.packages import sport_siq
    from tests.web.conftest import DIRECTOR_PIN, IDENTITY
    from web.director import desk

    battles = Battles(EventStore(tmp_path / "battles.sqlite"))
    packages = QuestionPackages.in_folder(tmp_path / "packages", battles)
    package_id = packages.add("кубок.siq", sport_siq(14))["id"]
    session = Session(battles, BattleAdapter(packages=packages), capture=recording_capture, simulator=True)
    session.start(timer_thread=False)
    app = create_app(settings, Services(session=session, identity=IDENTITY, packages=packages))
    with app.app_context():
        tid = desk().create("youth-cup", "Кубок", seed=1)
        for i in range(48):
            desk().register(tid, f"Игрок {i}")
        desk().draw(tid, seed=1)
    client = app.test_client()
    client.post("/director/login", data={"pin": DIRECTOR_PIN})
    page = client.get(f"/director/{tid}/sheets/written").get_data(as_text=True)
    sheets = f"/packages/{package_id}/written/sheets?count=12"
    assert f'href="{sheets}"' in page and f'href="/packages/{package_id}/written/key?count=12"' in page
    printed = client.get(sheets).get_data(as_text=True)
    assert printed.count('<tr><th class="theme">') == 12 and "Вопрос 1.1" not in printed  # no texts on a sheet
    session.close()


def test_the_public_table_is_a_typed_record_and_names_no_theme_before_its_battles_are_played(client):
    """/table/<tid>.json is ``audience.TableView`` at every depth, and a battle's planned theme names stay off the
    table (JSON and page) until every battle on those themes has been played (audience.withhold_theme_names:
    northern-owl 3.5, youth-cup 2.4)."""
    from appliance.service.audience import TableView
    from tests.appliance.service.test_audience import undeclared
    from tests.web.conftest import drawn_owl
    from web.director import desk

    tid = drawn_owl(client.application)
    with client.application.app_context():
        battles = [b for stage in desk().view(tid)["stages"] for b in stage.get("battles", [])]
        pack = battles[0]["theme_pack"]
        on_pack = [b for b in battles if b["theme_pack"] == pack]
        names = [f"Тайная тема {n}" for n in range(1, len(battles[0]["themes"]) + 1)]
        desk().name_themes(tid, pack, names)
    login(client)
    assert names[0] in client.get(f"/director/{tid}/bracket").get_data(as_text=True)  # the director sees them
    client.delete_cookie("session")

    def table():
        data = json.loads(client.get(f"/table/{tid}.json").data)
        assert not undeclared(TableView, data), undeclared(TableView, data)
        return json.dumps(data, ensure_ascii=False), client.get(f"/table/{tid}").get_data(as_text=True)

    for number, battle in enumerate(on_pack):
        shown, page = table()
        assert "Тайная тема" not in shown and "Тайная тема" not in page, number
        assert "theme_packages" not in shown and battle["theme_pack"] in shown  # no package ids; the pack is public
        with client.application.app_context():
            desk().record_result(tid, battle["id"], [{"player": player, "score": 10 * place}
                                                     for place, player in enumerate(battle["players"])])
    shown, page = table()
    assert all(name in shown for name in names) and names[0] in page  # played: the hall may read them

