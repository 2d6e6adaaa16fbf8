"""The desk's refusals are worded by their stable code: each case below makes the engine (or the desk) refuse for
real and checks the one catalogue words it by that code, Russian filled in from the params, nothing unformatted."""

from __future__ import annotations

import re

import pytest

from appliance.errors import SvoyakError
from appliance.rules.tournament.errors import REFUSAL_CODES
import appliance.words as words
from appliance.service.tournament_refusals import DESK_CODES, word

REFUSALS = words.pairs("refusal.tournament.")  # code -> (ru, en): the catalogue's lines
from appliance.service.tournaments import TournamentDesk
from appliance.store import EventStore


@pytest.fixture
def desk(tmp_path):
    return TournamentDesk(EventStore(tmp_path / "t.sqlite"), seed_source=lambda: 1)


def refusal(call) -> SvoyakError:
    with pytest.raises(SvoyakError) as caught:
        call()
    return caught.value


def irkutsk(desk, players: int) -> str:
    tid = desk.create("irkutsk", "Кубок")
    for i in range(players):
        desk.register(tid, f"Игрок {i}", f"Команда {i}", "top-league")
    return tid


CASES = {
    "registration.no_name": lambda d: d.register(irkutsk(d, 0), "  "),
    "registration.needs_team": lambda d: d.register(irkutsk(d, 0), "Анна", "", "team"),
    "registration.team_full": lambda d: [d.register(tid := irkutsk(d, 0), "А", "Т", "team"),
                                         d.register(tid, "Б", "Т", "team")],
    "registration.no_player": lambda d: d.withdraw(irkutsk(d, 0), "p999"),
    "registration.withdrawn": lambda d: [d.withdraw(tid := irkutsk(d, 1), "p001"), d.withdraw(tid, "p001")],
    "registration.already_closed": lambda d: [d.close_registration(tid := irkutsk(d, 1)), d.close_registration(tid)],
    "registration.deadline": lambda d: d.set_deadline(irkutsk(d, 0), "завтра"),
    "draw.too_few": lambda d: [d.close_registration(tid := irkutsk(d, 18)), d.draw(tid)],
    "draw.no_split": lambda d: [tid := d.create("mubc"), d.register(tid, "А"), d.close_registration(tid), d.draw(tid)],
    "rooms.none": lambda d: d.assign_rooms(irkutsk(d, 0), [" "]),
    "battle.unknown": lambda d: d.battle_setup(irkutsk(d, 0), "r1/99"),
    "result.scores": lambda d: d.record_result(irkutsk(d, 0), "r1/01", [{"player": "p001", "score": "x"}]),
    "format.change": lambda d: d.create("mubc", changes={"rounds": 7}),
    "format.unknown": lambda d: d.create("nowhere"),
    "import.log": lambda d: d.import_events([]),
    "tournament.unknown": lambda d: d.state("t0"),
}


@pytest.mark.parametrize("code", sorted(CASES))
def test_real_refusals_are_worded_by_their_code(desk, code):
    words = word(refusal(lambda: CASES[code](desk)))
    assert words["code"] == code
    assert words["ru"] and words["en"] and "{" not in words["ru"] + words["en"]
    assert any("а" <= ch <= "я" for ch in words["ru"].lower())  # Russian, not the engine's English


def test_the_irkutsk_shortfall_reads_with_its_numbers_and_rule(desk):
    words = word(refusal(lambda: CASES["draw.too_few"](desk)))
    assert words["ru"] == "Игроков 18, а нужно не меньше 27, чтобы заполнить 9 боёв по 3 и более (irkutsk 2.1-2.2)"


def test_a_refusal_whose_params_lack_a_figure_still_reads_russian_first_and_keeps_the_engine_sentence():
    from appliance.rules.tournament.errors import StageError

    words = word(StageError("something the catalogue has not met", code="battle.unknown"))
    assert words["code"] == "battle.unknown"
    assert words["ru"] == "Команда не выполнена: something the catalogue has not met"


def test_every_catalogue_line_formats_with_the_params_its_code_documents():
    for code, (ru, en) in REFUSALS.items():
        meaning = REFUSAL_CODES.get(code) or DESK_CODES[code]
        documented = set(re.findall(r"\w+", meaning.partition("params:")[2]))
        used = set(re.findall(r"{(\w+)[}:]", ru + en))  # figures and the counts worded by appliance.words
        assert used <= documented, code


def test_a_huge_field_is_refused_by_code_without_repeating_it(desk):
    from appliance.service.tournaments import DeskInputError

    words = word(DeskInputError("x", code="input.seed", params={"seed": "9" * 200_000 + "x"}))
    assert words["code"] == "input.seed" and len(words["ru"]) < 400


def test_junk_numbers_on_the_desk_forms_are_worded_refusals(tmp_path, settings):
    import types

    from tests.web.test_director import PIN, FakeSession
    from web import create_app
    from web.sync import Services

    identity = types.SimpleNamespace(host_pin=PIN, director_pin=PIN, hotspot_ssid="S", hotspot_password="p" * 10,
                                     box_name="b")
    with create_app(settings, Services(session=FakeSession(), identity=identity)).test_client() as client:
        client.post("/director/login", data={"pin": PIN})
        tid = client.post("/director/new", data={"preset": "irkutsk"}).headers["Location"].split("/")[2]
        huge = "9" * 5000
        for path, data, code in (
                ("/director/new", {"preset": "mubc", "seed": huge + "x"}, "input.seed"),
                ("/director/new", {"preset": "mubc", "changes": f"swiss.rounds = {huge}"}, "format.type"),
                (f"/director/{tid}/registration", {"name": "А", "team": "Т", "category": "team", "team_rank": huge},
                 "input.team_rank")):
            reply = client.post(path, data=data)
            # Worded either by the desk or, for a field past the edge's caps, by web/edge.py (guard): never a 500.
            text = reply.get_data(as_text=True)
            assert reply.status_code == 400 and (f'data-code="{code}"' in text or 'data-code="http.' in text), path


def test_junk_json_on_the_sheet_entry_is_a_worded_refusal(settings):
    import types

    from tests.web.test_director import PIN, FakeSession
    from web import create_app
    from web.sync import Services

    identity = types.SimpleNamespace(host_pin=PIN, director_pin=PIN, hotspot_ssid="S", hotspot_password="p" * 10,
                                     box_name="b")
    with create_app(settings, Services(session=FakeSession(), identity=identity)).test_client() as client:
        client.post("/director/login", data={"pin": PIN})
        tid = client.post("/director/new", data={"preset": "youth-cup"}).headers["Location"].split("/")[2]
        client.post(f"/director/{tid}/registration", data={"bulk": "\n".join(f"Игрок {i}" for i in range(40))})
        client.post(f"/director/{tid}/draw", data={"stage": "written", "seed": "1"})
        headers = {"Accept": "application/json"}
        for body in ([1, 2], "marks", {"player": "1", "marks": "+" * 60, "command_id": {"x": 1}},
                     {"player": ["1"], "marks": None}):
            reply = client.post(f"/director/{tid}/sheets/written", json=body, headers=headers)
            assert reply.status_code in (200, 400), body
            data = reply.get_json()
            assert data["ok"] or (data["code"] and data["ru"]), body


def test_counts_in_refusals_take_the_one_plural_rule():
    from appliance.rules.tournament.errors import DrawError

    def too_few(battles):
        return word(DrawError("x", code="draw.too_few", params={"players": 2, "battles": battles, "size": 3,
                                                                "needed": 3 * battles, "rule": ""}))

    assert [too_few(n)["ru"].split("заполнить ")[1] for n in (1, 2, 5, 21)] == [
        "1 бой по 3 и более", "2 боя по 3 и более", "5 боёв по 3 и более", "21 бой по 3 и более"]
    assert too_few(1)["en"] == "2 players, but 1 battle of at least 3 need 3"
