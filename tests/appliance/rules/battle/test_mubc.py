"""mubc: the MUBC spring 2015 regulation, played as games."""

from __future__ import annotations

import dataclasses

from appliance.rules.battle import (AnswererPointed, AppealDecided, AppealLodged, ButtonPressed, ModeChanged,
                                    QuestionWithdrawn, ShortFormGiven, standings)
from appliance.service.presets import load_profile
from appliance.rules.battle.queries import buttons_armed, eligible_players

PLAYERS = ("Аня", "Борис", "Вера", "Глеб")


def test_3_3_placement_points_and_shared_places_averaged(game):
    g = game("mubc", players=PLAYERS)
    g.theme_of([(0, True)], [(1, True)], [(2, True)], [(0, True)], [])  # 50, 20, 30, 0
    assert [line.placement_points for line in standings(g.state).lines] == [3, 2, 1, 0]
    g = game("mubc", players=PLAYERS)
    g.theme_of([(0, True)], [(0, True)], [(1, True)], [], [])  # 30, 30, 0, 0
    table = standings(g.state)
    assert [(line.place, line.place_to, line.placement_points) for line in table.lines] == [
        (1, 2, 2.5), (1, 2, 2.5), (3, 4, 0.5), (3, 4, 0.5)]
    assert table.shootout is None and g.state.is_over  # 3.3: no play-off


def test_3_4_the_final_doubles_the_placement_points(game):
    g = game("mubc-final", players=PLAYERS)
    g.theme_of([(0, True)], [(1, True)], [(2, True)], [(0, True)], [])
    assert [line.placement_points for line in standings(g.state).lines] == [6, 4, 2, 0]


def test_3_5_an_absent_player_scores_0_cannot_press_and_still_gets_a_place(game):
    g = game("mubc", players=PLAYERS, absent=(3,))
    g.theme(); g.price(); g.read()
    g.press(3)
    assert g.last_press().outcome == "not_playing" and 3 not in eligible_players(g.state)
    g.finish(); g.expire()
    for answers in ([(0, False), (1, False), (2, False)], [], [], []):
        g.question(*answers)  # the question ends once the three present players answered wrong
    assert g.state.questions[1].outcome == "all_wrong"
    table = standings(g.state)
    assert table.lines[0].name == "Глеб" and table.lines[0].absent and table.lines[0].placement_points == 3


def test_4_1_no_blocker_a_player_signals_again_after_another_wrong_answer(game):
    g = game("mubc", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.finish()
    g.press(0); g.press(1, after=0.01)  # Борис lost the race
    g.point(0); g.wrong()
    g.press(1, after=0.3)  # and may signal again (4.1: no blocker rule)
    assert g.state.answerer == 1


def test_4_1_with_a_blocker_a_press_during_an_answer_blocks_for_the_question(game):
    profile = dataclasses.replace(load_profile("mubc"), name="club-blocker", presses_blocker=True)
    g = game("mubc", players=PLAYERS, profile_object=profile)
    g.theme(); g.price(); g.read(); g.finish(); g.press(0); g.point(0)
    g.press(1, after=0.3)
    assert g.last_press().outcome == "blocked"
    g.wrong(); g.press(1, after=0.3)
    assert g.last_press().outcome == "locked" and g.state.answerer is None
    assert 1 not in eligible_players(g.state)


def test_false_start_lockout_where_a_profile_penalises_early_presses(game):
    profile = dataclasses.replace(load_profile("mubc"), name="club-false-starts", presses_open_at="reading_finished",
                                  presses_outside_window="lockout", presses_lockout_ms=1000)
    g = game("mubc", players=PLAYERS, profile_object=profile)
    g.theme(); g.price(); g.read()
    assert not buttons_armed(g.state)  # presses only after reading here
    g.press(2, after=0.5)
    assert g.last_press().outcome == "early"
    g.finish(); g.press(2, after=0.2)
    assert g.last_press().outcome == "locked"  # still within the 1 s lockout
    g.press(2, after=1.0)
    assert g.state.answerer == 2


def test_4_1_no_form_clarification(game):
    g = game("mubc", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.press(0); g.point(0)
    assert g.refused(ShortFormGiven(at_ns=g.tick())).rule == "mubc 4.1"


def test_4_3_a_withdrawn_question_scores_nothing(game):
    g = game("mubc", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.press(0); g.point(0); g.wrong()
    g.do(QuestionWithdrawn(at_ns=g.tick(), reason="подсказка из зала"))
    assert g.state.scores == (0, 0, 0, 0) and g.state.last_question.outcome == "withdrawn"
    g.question((1, True))
    assert g.state.last_question.value_points == 20  # the theme goes on in order


def test_4_2_disputed_before_the_next_question_reviewed_after_the_battle(game):
    g = game("mubc", players=PLAYERS)
    g.theme(); g.question((0, False), (1, True))
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="ответ засчитать"))
    g.question()
    assert g.refused(AppealLodged(at_ns=g.tick(), player=2, question=0)).rule == "mubc 4.2"
    for _ in range(3):
        g.question()
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=True, correct=True))  # after the battle
    assert g.state.scores == (10, 0, 0, 0)  # Аня took it first: Борис's later answer counts for nobody


def test_4_4_on_claps_the_host_points_to_whoever_he_saw_first(game):
    g = game("mubc", players=PLAYERS)
    g.theme(); g.do(ModeChanged(at_ns=g.tick(), mode="claps"))
    g.price(); g.read()
    assert not buttons_armed(g.state)
    g.press(1)
    assert g.last_press().outcome == "claps" and g.state.answerer is None
    g.do(AnswererPointed(at_ns=g.tick(), player=2))
    assert g.state.answerer == 2 and g.state.current_question.reading == "interrupted"
    g.wrong()
    assert g.refused(AnswererPointed(at_ns=g.tick(), player=2)).rule == "mubc (profile: one_answer)"
    g.do(AnswererPointed(at_ns=g.tick(), player=0)); g.right()
    assert g.state.scores == (10, 0, -10, 0)
    g.do(ModeChanged(at_ns=g.tick(), mode="buttons"))
    g.price(); g.do(ButtonPressed(at_ns=g.tick(), player=3))
    assert g.state.answerer == 3


def test_4_2_an_answer_nobody_disputed_before_the_next_question_stands(game):
    from appliance.rules.battle import RulingCorrected

    g = game("mubc", players=PLAYERS)
    g.theme(); g.question((0, False))
    g.do(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=True))  # at once: the host rules
    g.do(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=False))
    g.question()  # the next question is announced with no dispute lodged
    error = g.refused(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=True))
    assert error.rule == "mubc 4.2" and "AppealDecided" in error.message
    assert g.state.scores == (-10, 0, 0, 0)


def test_4_4_on_claps_the_host_cannot_point_to_a_player_after_the_window_has_closed(game):
    g = game("mubc", players=PLAYERS, mode="claps")
    g.theme(); g.price(); g.read(); g.finish()
    closes = g.state.press_window_closes_ns
    error = g.refused(AnswererPointed(at_ns=closes + 15 * 1_000_000_000, player=0))
    assert error.rule == "mubc 4.4" and "window" in error.message
    g.at(closes / 1_000_000_000 - 0.01).point(0)  # a clap within the window counts
    g.wrong()
    g.expire()  # the window after "wrong" runs out with nobody clapping: the question ends
    assert g.state.last_question.outcome == "unanswered" and g.state.scores == (-10, 0, 0, 0)


def test_4_2_a_price_announced_by_mistake_is_undone_but_the_time_to_dispute_has_passed(game):
    from appliance.rules.battle import ActionUndone

    g = game("mubc", players=PLAYERS)
    g.theme(); g.question((0, False))
    g.price(); g.read()  # "next" tapped too early: the next question is announced
    g.do(ActionUndone(at_ns=g.tick())); g.do(ActionUndone(at_ns=g.tick()))  # a slip: allowed, rules nothing
    assert g.state.phase == "question_over" and g.state.expected_value() == 20
    # 4.2: the next question was announced with no dispute lodged; taking the price back does not revive one
    assert g.refused(AppealLodged(at_ns=g.tick(), player=0, question=0)).rule == "mubc 4.2"
    assert g.refused(ActionUndone(at_ns=g.tick())).rule == "mubc 4.2"
    assert g.state.scores == (-10, 0, 0, 0)


def test_4_2_an_answer_is_disputed_from_the_moment_it_is_judged_while_the_question_is_still_played(game):
    # mubc 4.2 «Спорные ответы могут быть рассмотрены после боя ..., однако лишь в том случае, когда кто-либо из
    # участников боя оспорил ответ до оглашения следующего вопроса»: from the ruling on, until the next question
    g = game("mubc", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.finish()
    early = g.refused(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="ещё не отвечал"))
    assert (early.rule, early.code) == ("mubc 4.2", "appeal_before_ruling")
    g.press(0); g.point(0); g.wrong()  # Аня -10, and the question goes on for the others
    assert g.state.current_question is not None
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="дуальный ответ"))  # at once, during play
    g.press(1); g.point(1); g.right()
    g.question()  # the host moves on: the dispute lodged in time is not lost
    assert g.state.appeals[0].question == 0 and not g.state.appeals[0].decided
    late = g.refused(AppealLodged(at_ns=g.tick(), player=1, question=0, claim="поздно"))
    assert (late.rule, late.code) == ("mubc 4.2", "appeal_after_question")
    for _ in range(3):
        g.question()
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=True, correct=True))  # decided after the battle
    assert g.state.scores == (10, 0, 0, 0)  # Аня's answer came first: Борис's later one counts for nobody


def test_4_2_a_dispute_upheld_while_the_question_is_played_ends_it_with_that_answer(game):
    g = game("mubc", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.finish()
    g.press(0); g.point(0); g.wrong()
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="дуальный ответ"))
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=True, correct=True))  # decided at once
    assert g.state.last_question.outcome == "right" and g.state.scores == (10, 0, 0, 0)
    assert g.state.current_question is None  # the right answer ended the question (traditional rules)


def test_4_2_a_dispute_decided_while_the_question_is_played_stands_the_question_is_not_withdrawn_over_it(game):
    from appliance.rules.battle import QuestionWithdrawn

    g = game("mubc", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.finish()
    g.press(0); g.point(0); g.wrong()
    g.do(AppealLodged(at_ns=g.tick(), player=0, question=0, claim="дуальный ответ"))
    g.do(AppealDecided(at_ns=g.tick(), appeal=0, accepted=False))  # dismissed at once; the question goes on
    error = g.refused(QuestionWithdrawn(at_ns=g.tick(), reason="подсказка"))
    assert (error.rule, error.code) == ("mubc 4.2", "appeal_decided_ruling_final")
    assert g.state.current_question is not None and g.state.scores == (-10, 0, 0, 0)
