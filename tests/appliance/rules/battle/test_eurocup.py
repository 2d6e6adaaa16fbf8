"""eurocup: the European Students' Cup regulation, played as games. Sections cited per test."""

from __future__ import annotations

from appliance.rules.battle import (AnswerJudged, AnswererPointed, ButtonPressed, PressWindowExpired,
                                    PriceAnnounced, ReadingResumed, ShortFormGiven, ThemeStarted, TimeCalled,
                                    standings)
from appliance.rules.battle.queries import buttons_armed, eligible_players

from .conftest import ns

def test_2_3_right_adds_and_wrong_subtracts_the_value(game):
    g = game("eurocup")
    g.theme()
    g.question((0, False), (1, True))  # 10: Аня wrong, Борис right
    assert g.state.scores == (-10, 10, 0)
    g.question((2, True))  # 20
    assert g.state.scores == (-10, 10, 20)


def test_2_5_a_press_counts_from_the_price_announcement(game):
    g = game("eurocup")
    g.theme()
    g.press(0)  # between questions: means nothing
    assert g.state.current_question is None
    g.price()
    assert buttons_armed(g.state)  # 2.5: any time after the price is announced
    g.press(1)
    assert g.state.answerer == 1 and g.last_press().outcome == "answerer"


def test_2_5_the_window_closes_7_s_after_the_end_of_reading_by_timestamp(game):
    # eurocup 2.5 «может подать сигнал ... не позднее чем через 7 секунд после окончания чтения вопроса»: a
    # signal at the 7th second itself is in time; one a nanosecond later is late
    g = game("eurocup")
    g.theme(); g.price(); g.read(); g.at(10.0); g.finish()
    assert g.state.press_window_closes_ns == ns(10.001) + ns(7)
    late = ButtonPressed(at_ns=ns(10.001) + ns(7) + 1, player=0)
    g.do(late)
    assert g.last_press().outcome == "late" and g.state.answerer is None
    just_in = ButtonPressed(at_ns=ns(10.001) + ns(7), player=1)  # arrives after, stamped at the deadline: counts
    g.do(just_in)
    assert g.state.answerer == 1


def test_2_11_3_the_question_ends_when_the_window_expires_and_not_before(game):
    g = game("eurocup")
    g.theme(); g.price(); g.read(); g.finish()
    error = g.refused(PressWindowExpired(at_ns=g.state.press_window_closes_ns))  # its last instant is still in time
    assert error.rule == "eurocup 2.5"
    g.expire()
    assert g.state.last_question.outcome == "unanswered" and g.state.phase == "question_over"


def test_2_7_a_press_during_reading_stops_it_and_the_short_form_restarts_the_3_s(game):
    g = game("eurocup")
    g.theme(); g.price(); g.read()
    g.press(2, after=1.0)
    assert g.state.current_question.reading == "interrupted"
    g.point(2)
    assert g.state.answer_deadline_ns == ns(g.time) + ns(3)  # 2.8
    g.do(ShortFormGiven(at_ns=g.tick(1.0)))
    assert g.state.answer_deadline_ns == ns(g.time) + ns(3)  # 2.8: 3 s from the short form


def test_2_7_no_short_form_once_the_question_was_read_to_the_end(game):
    g = game("eurocup")
    g.theme(); g.price(); g.read(); g.finish(); g.press(0); g.point(0)
    assert g.refused(ShortFormGiven(at_ns=g.tick())).rule == "eurocup 2.7"


def test_2_8_time_is_called_only_after_3_s_and_then_the_answer_is_wrong(game):
    g = game("eurocup")
    g.theme(); g.price(); g.read(); g.finish(); g.press(0)
    assert g.refused(TimeCalled(at_ns=g.tick(5))).rule == "eurocup 2.8"  # the 3 s start when the host points
    g.point(0)
    error = g.refused(TimeCalled(at_ns=g.tick(2.5)))
    assert error.rule == "eurocup 2.8"
    g.at(g.time + 0.6).do(TimeCalled(at_ns=ns(g.time)))
    ruling = g.state.last_question.rulings[0]
    assert ruling.by_time and not ruling.correct and g.state.scores[0] == -10


def test_2_6_2_9_a_signal_after_the_reset_answers_next_at_once(game):
    g = game("eurocup")
    g.theme(); g.price(); g.read(); g.finish()
    g.press(0)
    g.press(1, after=0.05)  # before the host's reset: the lamp shows only the first
    assert g.last_press().outcome == "during_answer"
    g.point(0)
    g.press(2, after=0.5)  # after the reset: counts as the next signal (2.9)
    assert g.last_press().outcome == "queued" and buttons_armed(g.state)
    g.wrong()
    assert g.state.answerer == 2  # 2.10.1: the host points to the next signaller at once
    g.point(2); g.right()
    assert g.state.scores == (-10, 0, 10)


def test_2_9_the_window_after_wrong_is_7_s_after_the_later_of_wrong_and_end_of_reading(game):
    g = game("eurocup")
    g.theme(); g.price(); g.read(); g.finish()
    finished = ns(g.time)
    g.press(0, after=1.0); g.point(0); g.at(g.time + 2.0); g.wrong()
    assert g.state.press_window_closes_ns == ns(g.time) + ns(7)  # wrong is later than the end of reading
    g2 = game("eurocup")
    g2.theme(); g2.price(); g2.read(); g2.press(0, after=0.5); g2.point(0); g2.wrong()
    assert g2.state.press_window_closes_ns is None  # still being read: no countdown yet
    g2.do(ReadingResumed(at_ns=g2.tick()))  # 2.10.2
    g2.at(g2.time + 5).finish()
    assert g2.state.press_window_closes_ns == ns(g2.time) + ns(7)
    assert finished


def test_2_9_one_answer_per_player_per_question(game):
    g = game("eurocup")
    g.theme(); g.price(); g.read(); g.finish(); g.press(0); g.point(0); g.wrong()
    g.press(0)
    assert g.last_press().outcome == "answered" and g.state.answerer is None
    assert 0 not in eligible_players(g.state)


def test_2_11_2_the_question_ends_when_everyone_answered_wrong(game):
    g = game("eurocup")
    g.theme()
    g.question((0, False), (1, False), (2, False))
    assert g.state.last_question.outcome == "all_wrong" and g.state.scores == (-10, -10, -10)


def test_2_12_the_answer_is_announced_after_the_question(game):
    from appliance.rules.battle import AnswerAnnounced

    g = game("eurocup")
    g.theme(); g.price(); g.read()
    assert g.refused(AnswerAnnounced(at_ns=g.tick())).rule == "eurocup 2.12"
    g.finish(); g.expire(); g.do(AnswerAnnounced(at_ns=g.tick()))
    assert g.state.last_question.answer_announced


def test_2_2_questions_are_asked_in_increasing_value_and_themes_in_a_row(game):
    g = game("eurocup", themes=2)
    g.theme()
    assert g.refused(PriceAnnounced(at_ns=g.tick(), value_points=20)).rule == "eurocup 2.2"
    g.question()
    assert g.refused(ThemeStarted(at_ns=g.tick())).rule == "eurocup 2.2"


def test_3_4_red_themes_are_doubled_in_the_final_only(game):
    g = game("eurocup-final", themes=2, red_themes=(1,))
    g.theme_of(*[[(0, True)]] * 5)
    assert g.state.scores == (150, 0, 0)
    g.theme()
    assert g.state.expected_value() == 20
    g.question((1, True)); g.question((1, False))
    assert g.state.scores == (150, 20 - 40, 0)
    from appliance.rules.battle import BattleRuleError
    import pytest
    with pytest.raises(BattleRuleError) as info:
        game("eurocup", themes=2, red_themes=(1,))
    assert info.value.rule == "eurocup 3.4"


def test_2_4_a_tie_for_first_is_played_off_by_extra_themes_one_at_a_time(game):
    g = game("eurocup", themes=1)
    g.theme_of([(0, True)], [(1, True)], [(2, True)], [(1, True)], [(0, True)])  # Аня 60, Борис 60, Вера 30
    table = standings(g.state)
    assert table.shootout.players == (0, 1) and table.shootout.places == (1, 2)
    assert not g.state.is_over and g.state.phase == "between_themes"
    g.theme("Перестрелка")
    assert g.state.theme.shootout and g.state.theme.participants == (0, 1)
    g.price(); g.read(); g.finish()
    g.press(2)  # Вера is not in the shoot-out
    assert g.last_press().outcome == "not_playing"
    g.expire()
    for _ in range(4):
        g.question()
    assert standings(g.state).shootout.number == 2  # still tied after a whole theme: another one (2.4)
    g.theme(); g.question((1, True))
    for _ in range(4):
        g.question()
    assert g.state.is_over and standings(g.state).lines[0].name == "Борис"


def test_2_4_a_tie_below_first_place_is_not_played_off(game):
    tie2 = game("eurocup", themes=1)
    tie2.theme_of([(1, True)], [(1, True)], [(2, True)], [(0, True)], [(0, True)])  # Аня 90, Борис 30, Вера 30
    table = standings(tie2.state)
    assert table.shootout is None and tie2.state.is_over  # 2.4: only a tie for 1st is played off
    assert [(line.name, line.place, line.place_to) for line in table.lines] == [
        ("Аня", 1, 1), ("Борис", 2, 3), ("Вера", 2, 3)]


def test_bad_input_is_refused_with_the_rule_and_changes_nothing(game):
    g = game("eurocup")
    g.theme(); g.price()
    assert "nobody is answering" in str(g.refused(AnswerJudged(at_ns=g.tick(), correct=True)))
    assert g.refused(ButtonPressed(at_ns=g.tick(), player=7)).rule == "eurocup 2.1"
    assert g.refused(PriceAnnounced(at_ns=g.tick(), value_points=-10)).rule == "eurocup 2.2"
    assert g.refused(AnswererPointed(at_ns=g.tick(), player=1)).rule == "eurocup 2.6"  # nobody signalled
    g.press(0)
    assert g.refused(AnswererPointed(at_ns=g.tick(), player=1)).rule == "eurocup 2.6"  # Аня signalled first


def test_2_5_a_signal_right_after_the_price_is_answered_before_any_reading(game):
    from appliance.rules.battle import ReadingStarted

    g = game("eurocup")
    g.theme(); g.price(); g.press(1)
    assert g.refused(ReadingStarted(at_ns=g.tick())).rule == "eurocup 2.5"
    g.point(1); g.wrong()
    g.read()  # then the question is read for the others
    g.press(2, after=1.0)
    assert g.state.answerer == 2 and g.state.current_question.reading == "interrupted"


def test_2_4_only_the_tied_play_the_extra_theme_losing_points_in_it_never_hands_the_win_to_a_third(game):
    g = game("eurocup", themes=2)
    g.theme_of([(0, True)], [(1, True)], [(1, True)], [(0, True)], [])  # Аня 50, Борис 50
    g.theme_of([(2, True)], [], [(2, True)], [], [])                    # Вера 40
    g.theme("дополнительная")
    g.question((0, False), (1, False))  # both −10
    g.question()
    g.question((1, False))              # Борис −30
    g.question((0, False))              # Аня −40
    g.question()
    table = standings(g.state)
    assert [(line.name, line.place, line.score, line.shootout_score) for line in table.lines] == [
        ("Борис", 1, 50, -40), ("Аня", 2, 50, -50), ("Вера", 3, 40, None)]
    assert table.shootout is None and g.state.is_over


def test_2_9_a_signal_during_a_late_answer_is_not_late_it_answers_next(game):
    g = game("eurocup")
    g.theme(); g.price(); g.read()
    g.at(10).finish()                     # the window runs to 17 s (2.5)
    g.at(16).press(0); g.at(16.2).point(0)  # Аня signals in time; the host points and resets (2.6)
    g.at(17.2).press(1)                   # Борис signals during her answer, after the reading's 7 s
    assert g.last_press().outcome == "queued"
    g.at(18.2).wrong()                    # 2.9: his deadline was 7 s after "wrong" (25.2 s); he answers at once
    assert g.state.answerer == 1
    g.point(1); g.wrong()
    assert g.state.press_window_closes_ns == ns(g.time + 7)  # recomputed at the last "wrong"


def test_2_11_1_an_answer_corrected_to_right_ends_the_question_there_and_later_answers_are_void(game):
    from appliance.rules.battle import RulingCorrected
    from appliance.service.protocol_paper import protocol_rows

    g = game("eurocup")
    g.theme(); g.question((0, False), (1, True))  # Аня −10, Борис +10
    g.do(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=True, reason="ответ засчитан"))
    assert g.state.scores == (10, 0, 0)  # one right answer per question: the question ended with Аня's
    assert g.state.questions[0].rulings[1].voided_by == 0
    row = protocol_rows(g.state)[0]
    assert row.scores == (10, 0, 0) and "Борис: +10 → 0 (не в счёт" in row.corrections
    assert "Борис: +10 → 0 (void: Аня's answer was made right first)" in protocol_rows(g.state, "en")[0].corrections
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=0, player=1, correct=False)).rule == \
        "eurocup (profile: corrections)"
    # made wrong again, the answer it voided counts again; a right answer made wrong invents nothing later
    g.do(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=False))
    assert g.state.scores == (-10, 10, 0)
    g.question((2, True))
    g.do(RulingCorrected(at_ns=g.tick(), question=1, player=2, correct=False))
    assert g.state.scores == (-10, 10, -20) and g.state.questions[1].outcome == "unanswered"
