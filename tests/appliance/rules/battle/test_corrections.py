"""Corrections, undo and rejected events: new events, never edits; the protocol keeps both."""

from __future__ import annotations

import pytest

from appliance.rules.battle import (ActionUndone, BattleRuleError, BattleSetUp, ButtonPressed, RulingCorrected,
                                    ThemeStarted, apply, load_profile, replay)


def test_the_host_undoes_his_last_ruling(game):
    g = game("eurocup")
    g.theme(); g.price(); g.read(); g.finish(); g.press(0); g.point(0)
    before = g.state
    g.wrong()
    g.do(ActionUndone(at_ns=g.tick()))
    assert g.state.scores == before.scores and g.state.answerer == 0
    assert g.state.current_question == before.current_question
    assert [type(u.event).__name__ for u in g.state.undone] == ["AnswerJudged"]
    g.right()
    assert g.state.scores == (10, 0, 0)


def test_undo_keeps_the_presses_that_came_after_the_undone_action(game):
    g = game("eurocup")
    g.theme(); g.price(); g.read()
    g.finish()  # the host pressed "reading done" by mistake...
    g.press(1, after=0.2)
    g.do(ActionUndone(at_ns=g.tick()))  # ...and takes it back: Борис's press stands
    assert g.state.current_question.reading == "interrupted" and g.state.answerer == 1


def test_undo_twice_goes_back_two_host_actions_and_nothing_before_the_setup(game):
    g = game("eurocup")
    g.theme(); g.price()
    g.do(ActionUndone(at_ns=g.tick()))
    g.do(ActionUndone(at_ns=g.tick()))
    assert g.state.themes == () and len(g.state.undone) == 2
    error = g.refused(ActionUndone(at_ns=g.tick()))
    assert "nothing" in str(error) or "no host action" in str(error)


def test_one_undo_tap_of_a_command_of_two_events_is_one_protocol_line(game):
    """«Следующий вопрос» stores a price and a reading's start; its undo is one ActionUndone per event, both
    stamped with the tap's one instant: the protocol says one undo (as the host tapped), by the command's first
    action; a later tap is a line of its own."""
    from appliance.rules.battle.protocol import protocol_notes

    g = game("eurocup")
    g.theme(); g.price(); g.read()
    tap = g.tick()
    g.do(ActionUndone(at_ns=tap)); g.do(ActionUndone(at_ns=tap))
    assert [type(u.event).__name__ for u in g.state.undone] == ["ReadingStarted", "PriceAnnounced"]
    g.price(); g.read(); g.finish(); g.press(0); g.point(0); g.wrong()
    g.do(ActionUndone(at_ns=g.tick()))
    undone = [note for note in protocol_notes(g.state) if note.startswith("Отменено ведущим")]
    assert undone == ["Отменено ведущим: объявление цены", "Отменено ведущим: оценка ответа"]
    assert [note for note in protocol_notes(g.state, "en") if note.startswith("Undone")] == [
        "Undone by the host: a price", "Undone by the host: a ruling"]


def test_a_reversed_ruling_rescores_and_shows_both(game):
    g = game("eurocup", themes=1)
    g.theme_of([(0, False), (1, True)], [(2, True)], [], [], [])
    g.do(RulingCorrected(at_ns=g.tick(), question=0, player=1, correct=False, reason="ответ неточен"))
    assert g.state.scores == (-10, -10, 20)
    ruling = g.state.questions[0].ruling_of(1)
    assert ruling.correct and not ruling.effective and ruling.corrections[0].reason == "ответ неточен"
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=0, player=1, correct=False)).rule.startswith("eurocup")
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=3, player=1, correct=True)).rule.startswith("eurocup")


def test_a_correction_can_call_for_a_shootout_after_the_battle_ended(game):
    from appliance.rules.battle import standings

    g = game("eurocup", themes=1)
    g.theme_of([(1, False)], [(1, True)], [(0, True)], [], [])  # Аня 30, Борис -10 + 20 = 10
    assert g.state.is_over
    g.do(RulingCorrected(at_ns=g.tick(), question=0, player=1, correct=True))  # Борис 30: tied for 1st
    assert g.state.scores == (30, 30, 0) and not g.state.is_over
    assert standings(g.state).shootout.players == (0, 1)  # eurocup 2.4


def test_a_host_action_stamped_before_the_last_event_is_refused(game):
    g = game("eurocup")
    g.theme()
    assert "earlier" in str(g.refused(ThemeStarted(at_ns=0)))


@pytest.mark.parametrize("players, rule", [(("A",), "eurocup 2.1"), (("A", "B", "C", "D"), "eurocup 2.1"),
                                           (("A", "A"), "eurocup 2.1"), (("A", ""), "eurocup 2.1")])
def test_setup_refuses_a_wrong_number_of_players(players, rule):
    with pytest.raises(BattleRuleError) as info:
        apply(None, BattleSetUp(at_ns=0, profile=load_profile("eurocup"), players=players, themes=4))
    assert info.value.rule == rule


def test_a_battle_starts_with_its_setup_and_only_once():
    with pytest.raises(BattleRuleError):
        apply(None, ButtonPressed(at_ns=0, player=0))
    setup = BattleSetUp(at_ns=0, profile=load_profile("eurocup"), players=("A", "B"), themes=1)
    with pytest.raises(BattleRuleError):
        replay([setup, setup])


def test_undo_reaches_back_at_least_100_events_and_memory_stays_bounded(game):
    from appliance.rules.battle.state import UNDO_DEPTH

    g = game("eurocup")
    g.theme(); g.price(); g.read(); g.press(0); g.point(0)
    for _ in range(UNDO_DEPTH - 5):  # presses during the answer: not host actions
        g.press(1, after=0.001)
    g.do(ActionUndone(at_ns=g.tick()))  # the pointing, 96 events back, is undone; the presses stay
    assert g.state.current_question.pointed_ns is None and len(g.state.current_question.presses) == UNDO_DEPTH - 4
    for _ in range(3 * UNDO_DEPTH):
        g.press(2, after=0.001)
    depth, node = 0, g.state.history
    while node is not None:
        depth, node = depth + 1, node[2]
    assert UNDO_DEPTH <= depth <= 2 * UNDO_DEPTH  # trimmed, never the whole battle
    assert "no host action" in str(g.refused(ActionUndone(at_ns=g.tick())))
