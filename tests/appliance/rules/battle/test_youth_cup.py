"""youth-cup: the Youth Cup "Дружба народов" regulation, played as games."""

from __future__ import annotations

import pytest

from appliance.rules.battle import (AppealDecided, AppealLodged, BattleRuleError, QuestionWithdrawn, RulingCorrected,
                                    ThemeStarted, apply, next_run, standings)
from appliance.rules.battle.queries import can_press

PLAYERS = ("Аня", "Борис", "Вера", "Глеб")


def test_appendix_6_9_a_signal_after_the_reset_answers_next(game):
    g = game("youth-cup")
    g.theme(); g.price(); g.read(); g.finish(); g.press(1); g.point(1); g.press(0, after=0.4)
    g.wrong()
    assert g.state.answerer == 0


def test_2_6_points_without_minuses_then_the_count_of_50s_40s(game):
    # Аня 50 (one 50), Борис 50 (20 + 30), Вера 50 (10 + 40): all 50 without minuses; 50s decide, then 40s
    g = game("youth-cup")
    g.theme_of([(2, True)], [(1, True)], [(1, True)], [(2, True)], [(0, True)])
    table = standings(g.state)
    assert [line.name for line in table.lines] == ["Аня", "Вера", "Борис"]
    assert table.lines[0].indicators["count_right_by_value_desc"] == (1, 0, 0, 0, 0)
    assert table.lines[1].indicators["count_right_by_value_desc"] == (0, 1, 0, 0, 1)
    assert table.shootout is None and g.state.is_over  # 2.6: no shoot-out before the final


def test_2_6_a_tie_on_every_indicator_stays_shared_and_is_reported(game):
    g = game("youth-cup")
    g.theme_of([], [], [], [], [])
    table = standings(g.state)
    assert all(line.place == 1 and line.place_to == 3 for line in table.lines)
    assert table.unresolved == ((0, 1, 2),)  # across the cut after 2nd: the tournament must decide


def test_2_7_final_shootout_themes_until_the_spares_run_out_then_indicators_without_them(game):
    g = game("youth-cup-final", spare_themes=1)
    # Аня 30 (+10 +20), Борис 30 (+30), Вера 0
    g.theme_of([(0, True)], [(0, True)], [(1, True)], [], [])
    table = standings(g.state)
    assert table.shootout.players == (0, 1) and not g.state.is_over
    g.theme("запасная 1")
    for _ in range(5):
        g.question()  # nobody answers: still tied
    table = standings(g.state)
    assert table.shootout is None and g.state.is_over  # the only spare theme is spent
    # now the indicators, shoot-out questions left out: equal without minuses, then Борис's 30 beats two smaller
    assert [line.name for line in table.lines] == ["Борис", "Аня", "Вера"]
    assert g.refused(ThemeStarted(at_ns=g.tick())).rule == "youth-cup-final 2.7"


def test_2_7_indicators_leave_the_shootout_questions_out(game):
    g = game("youth-cup-final", spare_themes=1)
    g.theme_of([(0, True)], [(0, True)], [(1, True)], [], [])  # Аня 30 (10 + 20), Борис 30
    g.theme("запасная")
    g.question()
    g.question((0, False))  # Аня -20
    g.question((1, True))  # Борис +30
    g.question()
    g.question((0, True))  # Аня +50: 60 each, and Аня's 50 would win were it counted
    table = standings(g.state)
    assert g.state.scores == (60, 60, 0) and g.state.is_over
    assert table.lines[0].indicators["points_without_minuses"] == 30  # shoot-out left out (2.7)
    assert [line.name for line in table.lines][:2] == ["Борис", "Аня"]  # Борис's 30 beats a 20 and a 10


def test_2_4_the_second_run_plays_the_same_themes(game):
    g = game("youth-cup", themes=8, slot="1/16 #3", runs=2, theme_names=tuple(f"Т{i}" for i in range(8)))
    second = next_run(g.log[0], ("Глеб", "Дина", "Ева"), at_ns=10**12)
    state = apply(None, second)
    assert state.setup.run == 2 and state.setup.theme_names == g.state.setup.theme_names
    with pytest.raises(BattleRuleError) as info:
        next_run(second, ("A", "B", "C"), at_ns=10**13)
    assert info.value.rule == "youth-cup 2.4"


def test_3_1_an_appeal_after_the_theme_rescores_the_battle(game):
    g = game("youth-cup", themes=2)
    g.theme(); g.question((0, False), (1, True))
    error = g.refused(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="дуальный ответ"))
    assert error.rule == "youth-cup 3.1"  # only after the theme ends
    for _ in range(4):
        g.question()
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="дуальный ответ"))
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=True, correct=True))
    # 3.3: the decision changes this battle; прил. 11: the question ended with Аня's right answer, so Борис's
    # later answer counts for nobody
    assert g.state.scores == (10, 0, 0)
    ruling, later = g.state.questions[0].rulings
    assert ruling.correct is False and ruling.effective is True  # both shown
    assert later.voided_by == 0
    g.theme()
    assert g.refused(AppealLodged(at_ns=g.tick(), player=1, question=0)).rule == "youth-cup 3.1"
    assert g.refused(AppealDecided(at_ns=g.tick(), appeal=0, accepted=False)).rule == "youth-cup 3.1"


def test_3_1_an_accepted_appeal_on_an_incorrect_question_voids_it(game):
    g = game("youth-cup")
    g.theme_of([(0, False), (1, True)], [], [], [], [])
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="некорректный вопрос"))
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=True, correct=None))
    assert g.state.scores == (0, 0, 0) and g.state.questions[0].withdrawn


def test_appendix_9_a_signal_after_the_reset_is_never_late_while_the_previous_player_answers(game):
    from .conftest import ns

    g = game("youth-cup")
    g.theme(); g.price(); g.read()
    g.at(10).finish()                     # прил. 5: 7 s, to 17 s
    g.at(16.9).press(2); g.at(17).point(2)
    g.at(19).press(0)                     # прил. 9: «в любой момент после того, как ведущий сбросил сигнал»
    assert g.last_press().outcome == "queued" and can_press(g.state, 1, ns(19.5))
    g.at(20).wrong()
    assert g.state.answerer == 0 and g.state.press_window_closes_ns is None


def test_3_3_an_appeal_decision_is_not_revisited_not_even_by_undo(game):
    from appliance.rules.battle import ActionUndone

    g = game("youth-cup", themes=2)
    g.theme_of([(0, False)], [], [], [], [])
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="дуальный ответ"))
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=False))
    error = g.refused(ActionUndone(at_ns=g.tick()))
    assert error.rule == "youth-cup 3.3" and g.state.appeals[0].decided


def test_3_1_the_host_revises_a_ruling_only_at_once_or_in_the_appeal_window_after_its_theme(game):
    from appliance.rules.battle import RulingCorrected

    g = game("youth-cup", themes=2)
    g.theme(); g.question((0, False)); g.question()
    # mid-theme, question 0 is past: «в иных случаях спорные ответы не рассматриваются»
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=True)).rule == "youth-cup 3.1"
    for _ in range(3):
        g.question()
    g.do(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=True))  # the theme is over: in the window
    assert g.state.scores == (10, 0, 0)
    g.theme()  # the next theme starts: the window has closed
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=False)).rule == "youth-cup 3.1"
    from appliance.rules.battle import ActionUndone, QuestionWithdrawn
    assert g.refused(QuestionWithdrawn(at_ns=g.tick(), reason="x")).rule == "youth-cup 3.1"
    g.do(ActionUndone(at_ns=g.tick()))  # taking back the theme start changes no ruling...
    assert g.state.phase == "between_themes"
    # ...and cannot reopen the window either: a next theme was started
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=False)).rule == "youth-cup 3.1"
    assert g.refused(AppealLodged(at_ns=g.tick(), player=1, question=0)).rule == "youth-cup 3.1"
    assert g.refused(QuestionWithdrawn(at_ns=g.tick(), reason="x")).rule == "youth-cup 3.1"
    assert g.refused(ActionUndone(at_ns=g.tick())).rule == "youth-cup 3.1"  # the correction stays as made


def test_3_1_a_price_announced_by_mistake_mid_theme_is_undone_the_ruling_waits_for_the_window(game):
    from appliance.rules.battle import ActionUndone, RulingCorrected

    g = game("youth-cup", themes=2)
    g.theme(); g.question((0, False))  # Аня −10
    g.price(); g.read()  # "next" tapped once too often: outside the appeal window
    g.do(ActionUndone(at_ns=g.tick())); g.do(ActionUndone(at_ns=g.tick()))
    assert [type(u.event).__name__ for u in g.state.undone] == ["ReadingStarted", "PriceAnnounced"]
    assert g.state.phase == "question_over" and len(g.state.questions) == 1 and g.state.expected_value() == 20
    # 3.1: "at once" passed when the next question was announced; mid-theme a disputed answer is not considered,
    # and taking the price back does not make it "at once" again
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=True)).rule == "youth-cup 3.1"
    assert g.refused(ActionUndone(at_ns=g.tick())).rule == "youth-cup 3.1"  # nor is the ruling undone
    assert g.refused(AppealLodged(at_ns=g.tick(), player=0, question=0)).rule == "youth-cup 3.1"
    for _ in range(4):
        g.question()
    # the theme is over: the window opens for its every question (3.1)
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="дуальный ответ"))
    g.do(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=True))
    assert g.state.scores == (10, 0, 0)


def test_3_1_a_mistaken_next_theme_and_price_inside_the_appeal_window_are_undone_3_3_the_decision_stays(game):
    from appliance.rules.battle import ActionUndone, RulingCorrected

    g = game("youth-cup", themes=2)
    g.theme_of([(0, False)], [], [], [], [(1, True)])  # Аня −10, Борис +50
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="дуальный ответ"))  # in the window (3.1)
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=True, correct=True))  # 3.3: Аня +10
    assert g.state.scores == (10, 50, 0)
    g.theme(); g.price(); g.read()  # "next" tapped twice: the window closed with the next theme
    g.do(ActionUndone(at_ns=g.tick())); g.do(ActionUndone(at_ns=g.tick()))  # the reading and the price
    assert g.state.phase == "between_questions" and len(g.state.questions) == 5 and g.state.expected_value() == 10
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=4, player=1, correct=False)).rule == "youth-cup 3.1"
    g.do(ActionUndone(at_ns=g.tick()))  # the theme start: no ruling changes, and the window stays closed
    assert g.state.phase == "between_themes" and g.state.scores == (10, 50, 0)
    assert g.refused(AppealLodged(at_ns=g.tick(), player=1, question=4)).rule == "youth-cup 3.1"
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=4, player=1, correct=False)).rule == "youth-cup 3.1"
    error = g.refused(ActionUndone(at_ns=g.tick()))  # next in line: the appeal's decision, never undone
    assert error.rule == "youth-cup 3.3" and g.state.appeals[0].decided and g.state.scores == (10, 50, 0)
    g.theme(); g.question((2, True))  # the battle goes on
    assert g.state.scores == (10, 50, 10)


def test_3_3_a_dismissed_appeal_is_final_no_second_appeal_correction_or_withdrawal_reverses_it(game):
    # youth-cup 3.3 «Принятые решения по апелляциям не оспариваются и в дальнейшем не пересматриваются»
    g = game("youth-cup", themes=2)
    g.theme()
    for _ in range(4):
        g.question()
    g.question((0, False), (1, True))  # the last question of the theme: Аня -50, Борис +50
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=4, claim="дуальный ответ"))  # in the window (3.1)
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=False))
    scores = g.state.scores
    again = g.refused(AppealLodged(at_ns=g.tick(), player=0, question=4, claim="ещё раз"))
    assert (again.rule, again.code) == ("youth-cup 3.3", "appeal_decided_ruling_final")
    assert again.params == {"player": 0, "question": 4, "appeal": 0}
    fixed = g.refused(RulingCorrected(at_ns=g.tick(), question=4, player=0, correct=True))
    assert (fixed.rule, fixed.code) == ("youth-cup 3.3", "appeal_decided_ruling_final")
    withdrawn = g.refused(QuestionWithdrawn(at_ns=g.tick(), reason="брак"))  # would void the decided ruling
    assert (withdrawn.rule, withdrawn.code) == ("youth-cup 3.3", "appeal_decided_ruling_final")
    assert g.state.scores == scores == (-50, 50, 0) and g.state.appeals[0].accepted is False
    # another player's ruling of the same question is still open to an appeal in the window
    g.do(AppealLodged(at_ns=g.tick(), player=1, question=4, claim="незачёт"))
    assert len(g.state.appeals) == 2


def test_3_3_of_two_appeals_on_one_ruling_only_the_first_decision_counts(game):
    g = game("youth-cup", themes=2)
    g.theme(); g.question((0, False), (1, True))
    for _ in range(4):
        g.question()
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="дуальный ответ"))
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="дуальный ответ, ещё раз"))  # both pending
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=False))
    error = g.refused(AppealDecided(at_ns=g.tick(), appeal=1, accepted=True, correct=True))
    assert (error.rule, error.code, error.params) == ("youth-cup 3.3", "appeal_decided_ruling_final",
                                                      {"question": 0, "appeal": 0, "player": 0})
    g.do(AppealDecided(at_ns=g.tick(), appeal=1, accepted=False))  # dismissing it again reverses nothing
    assert g.state.scores == (-10, 10, 0)


def test_3_3_a_question_voided_by_an_appeal_stays_voided(game):
    g = game("youth-cup", themes=2)
    g.theme(); g.question((0, True))
    for _ in range(4):
        g.question()
    g.do(AppealLodged(at_ns=g.tick(), player=1, question=0, claim="некорректный вопрос"))
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=True, correct=None))
    assert g.state.questions[0].withdrawn and g.state.scores == (0, 0, 0)
    error = g.refused(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="вопрос корректен"))
    assert error.code == "appeal_decided_ruling_final"
