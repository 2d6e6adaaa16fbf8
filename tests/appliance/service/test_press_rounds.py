"""Press gaps are counted per round of pressing (issue 21): a «Минус» reopens the question (eurocup 2.9, 2.10)
and the presses after it are a new list with gaps from its own first press; the protocol keeps every round."""

from __future__ import annotations

from appliance.service.protocol_paper import question_row
from appliance.service.battle_adapter import BattleAdapter

from ..rules.battle.conftest import Game, ns


def played_with_a_wrong_answer(profile="irkutsk") -> Game:
    g = Game(profile)
    g.theme(); g.price(); g.read(); g.finish()
    g.at(1.0).press(0, after=0)                 # Аня first
    g.at(1.040).press(1, after=0)              # Борис 40 ms behind
    g.point(0); g.wrong()
    g.at(4.0).press(1, after=0)                # after the «Минус», 3 s later: a new round
    g.at(4.120).press(2, after=0)              # Вера 120 ms behind Борис
    return g


def test_the_rules_number_each_round_and_count_its_gaps_from_its_own_first_press():
    g = played_with_a_wrong_answer()
    order = g.state.press_order()
    assert [(p["player"], p["round"], p["gap_ns"]) for p in order] == [
        (0, 0, 0), (1, 0, ns(0.040)), (1, 1, 0), (2, 1, ns(0.120))]


def test_the_view_shows_the_current_round_only_with_gaps_from_its_first_press():
    g = played_with_a_wrong_answer()
    view = BattleAdapter().view(g.state, "b1", g.state.last_at_ns)
    assert [(p["player"], p["gap_ms"], p["round"]) for p in view["presses"]] == [(1, 0.0, 1), (2, 120.0, 1)]


def test_right_after_the_minus_the_new_list_is_empty():
    g = Game("irkutsk")
    g.theme(); g.price(); g.read(); g.finish()
    g.press(0); g.point(0); g.wrong()
    assert BattleAdapter().view(g.state, "b1", g.state.last_at_ns)["presses"] == []


def test_a_queued_signal_that_answers_after_the_minus_leads_the_new_list_with_no_gap():
    # eurocup 2.9-2.10.1: Борис signalled during Аня's answer; after her «Минус» he answers at once
    g = Game("eurocup")
    g.theme(); g.price(); g.read(); g.finish()
    g.at(1.0).press(0, after=0); g.point(0)
    g.at(1.5).press(1, after=0)
    g.at(9.0).wrong()
    assert g.state.answerer == 1
    g.at(9.3).press(2, after=0)
    presses = BattleAdapter().view(g.state, "b1", g.state.last_at_ns)["presses"]
    assert [(p["player"], p["carried"], p["gap_ms"]) for p in presses] == [(1, True, None), (2, False, 0.0)]


def test_the_protocol_keeps_every_round_each_with_its_own_gaps():
    g = played_with_a_wrong_answer()
    g.point(1); g.right()
    row = question_row(g.state, g.state.questions[0], [0, 0, 0])
    rounds = row.presses.split(" | ")
    assert len(rounds) == 2
    assert rounds[0].startswith("Аня 0.000; Борис +0.040")
    assert rounds[1].startswith("Борис 0.000; Вера +0.120")
    assert "+3." not in row.presses and "+2." not in row.presses


def test_after_the_question_ends_the_board_keeps_the_last_round():
    g = played_with_a_wrong_answer()
    g.point(1); g.right()
    view = BattleAdapter().view(g.state, "b1", g.state.last_at_ns)
    assert [p["player"] for p in view["presses"]] == [1, 2]
