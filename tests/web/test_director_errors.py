"""The desk's refusals are worded from the engine's real sentences: each case below makes the engine (or the desk)
refuse for real and checks the catalogue knows it by its code, Russian filled in, nothing left unformatted."""

from __future__ import annotations

import pytest

from appliance.errors import SvoyakError
from appliance.service.tournaments import TournamentDesk
from appliance.store import EventStore
from web.director_errors import CATALOGUE, word


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


def test_an_unknown_refusal_still_reads_russian_first_and_keeps_the_engine_sentence():
    from appliance.rules.tournament.errors import StageError

    words = word(StageError("something the catalogue has not met"))
    assert words["code"] == "StageError"
    assert words["ru"] == "Этап: отказ: something the catalogue has not met"


def test_every_catalogue_entry_formats_with_its_own_pattern_groups():
    import re

    for code, (_cls, pattern, ru, en) in CATALOGUE.items():
        groups = set(re.compile(pattern).groupindex)
        used = set(re.findall(r"{(\w+)}", ru + en))
        assert used <= groups, code
