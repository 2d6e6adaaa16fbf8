"""northern-owl: the "Северная Сова 2008" regulation, played as games."""

from __future__ import annotations

from appliance.rules.battle import (AnswerTimeExtended, ClarificationRequested, PriceAnnounced, ShortFormGiven,
                                    TimeCalled, standings)

from .conftest import ns

PLAYERS = ("Аня", "Борис", "Вера", "Глеб")


def test_3_6_an_early_press_stops_reading_and_there_is_no_short_form(game):
    g = game("northern-owl")
    g.theme(); g.price(); g.read(); g.press(1, after=0.4); g.point(1)
    assert g.state.current_question.reading == "interrupted"
    assert g.refused(ShortFormGiven(at_ns=g.tick())).rule == "northern-owl 3.6"


def test_3_7_three_seconds_then_time_extension_and_clarify(game):
    g = game("northern-owl")
    g.theme(); g.price(); g.read(); g.finish(); g.press(0); g.point(0)
    pointed = ns(g.time)
    assert g.state.answer_deadline_ns == pointed + ns(3)
    g.do(AnswerTimeExtended(at_ns=g.tick(1), extra_ms=5000))  # a long answer (3.7)
    assert g.state.answer_deadline_ns == pointed + ns(8)
    g.do(ClarificationRequested(at_ns=g.tick(1)))  # "уточните" (3.7): the countdown restarts
    assert g.state.answer_deadline_ns == ns(g.time) + ns(3)
    assert g.refused(TimeCalled(at_ns=g.tick(1))).rule == "northern-owl 3.7"
    g.at(g.time + 3).time_up()  # "время": the answer is wrong
    assert g.state.scores[0] == -10


def test_3_9_3_10_after_neverno_5_s_for_those_who_have_not_answered_then_vremya(game):
    g = game("northern-owl")
    g.theme(); g.price(); g.read(); g.finish(); g.press(0); g.point(0)
    g.press(2, after=0.2)
    assert g.last_press().outcome == "during_answer"  # the system is reset only at "неверно" (3.9)
    g.at(g.time + 4).wrong()
    assert g.state.press_window_closes_ns == ns(g.time) + ns(5)
    assert g.refused(TimeCalled(at_ns=g.tick(4))).rule == "northern-owl 3.10"
    g.at(g.time + 1).time_up()
    assert g.state.last_question.outcome == "unanswered"
    g.press(2)  # after "время": nothing
    assert g.state.last_question.presses[-1].outcome != "answerer" and g.state.answerer is None


def test_3_3_qualifying_ties_single_questions_dearest_first_until_the_first_answer(game):
    g = game("northern-owl", players=PLAYERS)
    g.theme_of([(0, True)], [(1, True)], [(0, True)], [(1, True)], [(2, True)])  # 40, 60, 50, 0
    g = game("northern-owl", players=PLAYERS)
    g.theme_of([(0, True)], [(0, True)], [(1, True)], [(2, True)], [(3, True)])  # 30, 30, 40, 50
    assert standings(g.state).shootout is None
    g = game("northern-owl", players=PLAYERS)
    g.theme_of([(0, True)], [(1, True)], [(2, True)], [(0, True)], [(1, False), (2, False), (3, True)])
    # Аня 50, Борис -30, Вера -20, Глеб 50: tied for the 1st place, which advances (2.4)
    call = standings(g.state).shootout
    assert call.players == (0, 3) and call.method == "shootout_question"
    g.theme("дополнительная")
    assert g.state.expected_value() == 50  # dearest first (3.3)
    assert g.refused(PriceAnnounced(at_ns=g.tick(), value_points=10)).rule == "northern-owl 3.2"
    g.question()  # nobody answers: the next question
    assert g.state.expected_value() == 40
    g.question((3, False))  # the first answer decides, even a wrong one: Глеб falls behind
    assert g.state.last_question.outcome == "first_answer"
    table = standings(g.state)
    assert table.shootout is None and g.state.is_over and table.lines[0].name == "Аня"
    assert g.state.theme.closed


def test_3_3_final_prize_places_extra_themes_until_a_theme_ends_untied(game):
    g = game("northern-owl-final")
    g.theme_of([(0, True)], [(1, True)], [(2, True)], [], [])  # 10, 20, 30: no tie
    assert g.state.is_over
    g = game("northern-owl-final")
    g.theme_of([(0, True)], [(1, True)], [(2, True)], [(0, True)], [(1, True), ])  # 50, 70, 30
    assert g.state.is_over
    g = game("northern-owl-final")
    g.theme_of([(0, True)], [(0, True)], [(1, True)], [(2, True)], [(2, False)])  # 30, 30, -10: tie for 1st-2nd
    assert standings(g.state).shootout.places == (1, 2)
    g.theme()
    g.question((0, True))
    assert standings(g.state).shootout is not None  # the theme must end first (3.3)
    for _ in range(4):
        g.question()
    assert g.state.is_over and standings(g.state).lines[0].name == "Аня"
