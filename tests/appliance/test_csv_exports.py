"""CSV exports open in a spreadsheet as data, never as formulas (issue 10, «Nobody in»): the battle protocol
(``svoyak protocol --format csv``) and the director's tournament export both write through one helper,
``appliance/store/csv_cells.py``, which marks text that starts with ``=``, ``+``, ``-``, ``@``, a tab or a CR."""

from __future__ import annotations

import csv
import io

from appliance.rules import battle as engine
from appliance.service import presets

HOSTILE = ("=HYPERLINK(\"http://evil\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\tTab", "\rReturn")


def cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text.lstrip("\ufeff"))) for cell in row]


def test_the_battle_protocol_marks_formula_text():
    from appliance.service.papers import protocol_csv

    state = engine.apply(None, engine.BattleSetUp(at_ns=0, profile=presets.load_profile("mubc"),
                                                  players=HOSTILE[:4], themes=1))
    state = engine.apply(state, engine.ThemeStarted(at_ns=1, name=HOSTILE[4]))
    written = cells(protocol_csv(state))
    for name in HOSTILE[:4]:
        assert "'" + name in written and name not in written
    assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for cell in written)


def test_the_director_export_marks_formula_text_and_keeps_numbers(tmp_path):
    from appliance.service.tournaments import TournamentDesk

    from appliance.rules.tournament import battle_players

    desk = TournamentDesk.open(tmp_path)
    tid = desk.create("mubc", "Кубок", seed=1)
    names = [*HOSTILE[:4], "Аня", "Борис", "Вера", "Глеб"]
    for number, name in enumerate(names):
        desk.register(tid, name, team=HOSTILE[(number + 1) % 4])
    desk.close_registration(tid)
    desk.draw(tid, seed=1)
    state = desk.state(tid)
    for battle in state.battles:
        desk.record_result(tid, battle, [{"player": player, "score": str(10 * place - 20), "place": "",
                                          "right_points": "", "right_answers": "", "absent": ""}
                                         for place, player in enumerate(battle_players(state, battle))])
    written = cells(desk.export_csv(tid))
    for text in HOSTILE[:4]:
        assert "'" + text in written and text not in written   # names and teams alike
    assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for cell in written)
    assert "Аня" in written and "-20" in written                 # plain names and negative scores as they are
