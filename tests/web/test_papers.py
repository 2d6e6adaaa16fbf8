"""The day's papers from the screens (issue 12): a battle's protocol, printable and as CSV, reached from the host's
end screen and the director's battle card; its title names the tournament, stage, battle, room, host and date;
a question answered wrong reads «неверно», not «без ответа»."""

from __future__ import annotations

import csv
import datetime
import io

import pytest

from appliance.rules import battle as engine

from .conftest import DIRECTOR_PIN


@pytest.fixture
def box(session_server):
    return session_server


def wrong_then_nobody(battles, box_id: str, start_ns: int) -> None:
    """One question: player 0 answers wrong, nobody else answers; the theme goes on."""
    clock = [start_ns]

    def at(seconds: float = 1.0) -> int:
        clock[0] += int(seconds * 1e9)
        return clock[0]

    battles.submit(box_id, engine.ThemeStarted(at_ns=at(), name="Реки"))
    battles.submit(box_id, engine.PriceAnnounced(at_ns=at(), value_points=10))
    battles.submit(box_id, engine.ReadingStarted(at_ns=at()))
    battles.submit(box_id, engine.ReadingFinished(at_ns=at()))
    battles.submit(box_id, engine.ButtonPressed(at_ns=at(0.5), player=0))
    battles.submit(box_id, engine.AnswererPointed(at_ns=at(0.2), player=0))
    battles.submit(box_id, engine.AnswerJudged(at_ns=at(), correct=False))
    battles.submit(box_id, engine.PressWindowExpired(at_ns=at(30)))


def test_a_host_battle_protocol_is_named_by_its_players_and_date_and_says_wrong(box):
    session = box.session
    session.command("setup", {"profile": "eurocup", "players": ["Аня", "Борис", "Вера"], "themes": 4,
                              "host": "Ирина Соколова"}, "c1")
    box_id = session.battle_id
    wrong_then_nobody(session.battles, box_id, session.state.last_at_ns)
    assert session.battles.state(box_id).questions[0].outcome == "unanswered"  # the engine's word
    client = box.app.test_client()
    page = client.get(f"/battles/{box_id}/protocol")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    today = datetime.date.today().strftime("%d.%m.%Y")
    assert f"<title>Аня — Борис — Вера · ведущий: Ирина Соколова · {today}</title>" in html
    assert box_id not in html.split("<body>")[1]  # no hex id on the paper
    assert "<td>неверно</td>" in html and "без ответа" not in html and "wrong" not in html  # one language
    sheet = client.get(f"/battles/{box_id}/protocol.csv")
    assert sheet.mimetype == "text/csv" and "attachment" in sheet.headers["Content-Disposition"]
    text = sheet.get_data(as_text=True)
    assert text.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(text[1:])))
    assert rows[0][:2] == ["Тема", "Вопрос"] and rows[0][7:10] == ["Аня", "Борис", "Вера"]
    assert rows[1][0] == "1 Реки" and rows[1][6] == "неверно" and rows[1][7:10] == ["-10", "0", "0"]
    english = list(csv.reader(io.StringIO(client.get(f"/battles/{box_id}/protocol.csv?lang=en").get_data(
        as_text=True)[1:])))
    assert english[0][:2] == ["Theme", "Question"] and english[1][6] == "wrong"
    page = client.get(f"/battles/{box_id}/protocol?lang=en").get_data(as_text=True)
    assert f"<title>Аня — Борис — Вера · host: Ирина Соколова · {datetime.date.today().isoformat()}</title>" in page


def test_an_unknown_battle_gets_a_worded_page(box):
    page = box.app.test_client().get("/battles/nope/protocol")
    assert page.status_code == 404 and "На этом боксе нет такого боя" in page.get_data(as_text=True)
    page = box.app.test_client().get("/battles/nope/protocol.csv?lang=en")
    assert page.status_code == 404 and "This box has no such battle" in page.get_data(as_text=True)


def test_a_tournament_battle_protocol_names_tournament_stage_battle_room_host_and_date(box, play_six_themes):
    from web.director import desk

    app = box.app
    with app.app_context():
        tid = desk().create("northern-owl", "Северная Сова 2026", seed=3)
        for i in range(36):
            desk().register(tid, f"Игрок {i}")
        desk().set_seeds(tid, [f"p{i:03d}" for i in range(1, 10)])
        desk().draw(tid, seed=3)
        desk().assign(tid, "groups/02", "Малый зал")
    client = app.test_client()
    client.post("/director/login", data={"pin": DIRECTOR_PIN})
    assert client.post(f"/director/{tid}/play/groups/02", data={"host": "Пётр Ильин"}).status_code == 302
    box_id = box.session.battle_id
    bracket = client.get(f"/director/{tid}/bracket").get_data(as_text=True)
    assert f"/battles/{box_id}/protocol" in bracket  # the battle card knows its box battle while it plays
    play_six_themes(box.session.battles, box_id, start_ns=box.session.state.last_at_ns)
    html = client.get(f"/battles/{box_id}/protocol").get_data(as_text=True)
    today = datetime.date.today().strftime("%d.%m.%Y")
    assert (f"<h1>Протокол боя: Северная Сова 2026 · Первый отборочный этап · группа A, бой 2"
            f" · зал Малый зал · ведущий: Пётр Ильин · {today}</h1>") in html
    from tests.web.test_desk_russian import visible_text
    from tests.web.test_strings import ALLOWED_LATIN, latin_words

    english = [line for line in visible_text(html) if [w for w in latin_words(line) if w not in ALLOWED_LATIN]]
    assert english == []  # a Russian paper: no «Theme», «taken», «shoot-out»
    bracket = client.get(f"/director/{tid}/bracket").get_data(as_text=True)
    assert f"/battles/{box_id}/protocol.csv" in bracket  # and after its result is in
