"""irkutsk: the BGUEP Cup regulation, played as games."""

from __future__ import annotations

from appliance.rules.battle import AppealLodged, RulingCorrected, standings
from appliance.rules.battle.queries import buttons_armed

PLAYERS = ("Аня", "Борис", "Вера", "Глеб")


def test_3_3_a_press_during_reading_stops_it_and_the_form_may_be_asked(game):
    g = game("irkutsk", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.press(3, after=0.8)
    assert g.state.current_question.reading == "interrupted" and g.state.answerer == 3
    g.point(3)
    assert g.state.answer_deadline_ns is None  # no answer time limit is stated


def test_3_4_presses_during_an_answer_do_not_count_until_minus(game):
    g = game("irkutsk", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.press(0); g.point(0)
    g.press(1, after=0.3)  # during Аня's answer: does not count (3.4)
    assert g.last_press().outcome == "during_answer" and g.state.answerer == 0
    assert not buttons_armed(g.state)
    g.wrong()  # "Минус..."
    assert g.state.answerer is None and g.state.current_question.reading == "interrupted"
    from appliance.rules.battle import ReadingResumed
    g.do(ReadingResumed(at_ns=g.tick()))  # 3.4: the question is read on for the others
    assert g.state.phase == "reading" and buttons_armed(g.state)
    g.press(1, after=0.2)
    assert g.state.answerer == 1


def test_3_4_5_s_after_the_end_of_reading(game):
    g = game("irkutsk", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.finish()
    assert g.state.press_window_closes_ns - g.state.current_question.reading_finished_ns == 5_000_000_000


def test_3_6_ties_points_without_minuses_then_right_answers_then_a_shootout_theme(game):
    # Аня: +50 -40 +30 = 40 (without minuses 80); Борис: +40 = 40 (without minuses 40)
    g = game("irkutsk", players=PLAYERS[:3])
    g.theme_of([], [], [(0, True)], [(0, False), (1, True)], [(0, True)])
    assert g.state.scores == (40, 40, 0)
    table = standings(g.state)
    assert [line.name for line in table.lines] == ["Аня", "Борис", "Вера"]
    assert table.lines[0].indicators == {"points_without_minuses": 80, "right_answers_count": 2}
    assert table.shootout is None and g.state.is_over

    # equal without minuses too: the number of right answers decides
    g6 = game("irkutsk", players=PLAYERS[:3], themes=2)
    g6.theme_of([(0, True)], [(0, True)], [(0, True)], [(2, True)], [(1, True)])  # Аня 60/3, Борис 50/1, Вера 40
    g6.theme_of([(1, True)], [], [], [], [])  # Борис 60 in 2 answers
    table = standings(g6.state)
    assert [(line.name, line.score) for line in table.lines][:2] == [("Аня", 60), ("Борис", 60)]
    assert table.lines[0].indicators["right_answers_count"] == 3 and table.lines[0].place == 1
    assert table.shootout is None


def test_3_6_equal_on_every_indicator_plays_a_shootout_theme_then_checks_again(game):
    g = game("irkutsk", players=PLAYERS[:3])
    g.theme_of([(0, True)], [(2, True)], [(1, True)], [(2, True)], [(0, True)])  # Аня 60/2, Борис 30/1, Вера 60/2
    table = standings(g.state)
    assert table.shootout.players == (0, 2) and table.shootout.method == "shootout_theme"
    g.theme("перестрелка")
    g.question((2, True))  # Вера +10 in the shoot-out
    for _ in range(4):
        g.question()
    table = standings(g.state)
    assert table.shootout is None and g.state.is_over
    assert [line.name for line in table.lines] == ["Вера", "Аня", "Борис"]


def test_3_7_no_appeals_and_a_ruling_is_corrected_only_before_the_next_question(game):
    g = game("irkutsk", players=PLAYERS[:3])
    g.theme(); g.question((0, False), (1, True))
    assert g.refused(AppealLodged(at_ns=g.tick(), player=0, question=0)).rule == "irkutsk 3.7"
    g.do(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=True, reason="checked the source"))
    assert g.state.scores == (10, 0, 0)  # 3.1: Аня answered right first; Борис's answer counts for nobody
    g.question()
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=0, player=1, correct=False)).rule == "irkutsk 3.7"


def test_timestamps_decide_an_earlier_edge_that_arrives_late_takes_the_turn_back(game):
    from appliance.rules.battle import ButtonPressed

    g = game("irkutsk", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.finish()
    g.do(ButtonPressed(at_ns=5_000_000_000, player=2))
    g.do(ButtonPressed(at_ns=4_999_000_000, player=1))  # happened 1 ms earlier, arrived later
    assert g.state.answerer == 1
    assert [(p["player"], p["outcome"]) for p in g.state.press_order()] == [(1, "answerer"), (2, "beaten")]


def test_3_4_a_press_given_during_an_answer_that_arrives_after_minus_still_does_not_count(game):
    from appliance.rules.battle import ButtonPressed

    g = game("irkutsk", players=PLAYERS)
    g.theme(); g.price(); g.read(); g.finish()
    g.at(1).press(0); g.point(0)
    during = ns_of(g.time + 0.5)
    g.at(g.time + 1).wrong()  # "Минус"
    g.press(2, after=0.3)  # Вера after "Минус": she answers
    g.do(ButtonPressed(at_ns=during, player=1))  # Борис pressed during Аня's answer; it arrives only now
    assert g.state.answerer == 2 and g.last_press().outcome == "during_answer"


def ns_of(seconds):
    return round(seconds * 1_000_000_000)


def test_3_6_a_shootout_orders_only_the_tied_a_player_who_loses_it_keeps_his_place_above_the_others(game):
    # Аня and Борис tie for 1st at 50 on every indicator; Вера is 3rd with 40
    g = game("irkutsk", players=PLAYERS, themes=2)
    g.theme_of([(0, True)], [(1, True)], [(1, True)], [(0, True)], [])
    g.theme_of([(2, True)], [], [(2, True)], [], [])
    assert standings(g.state).shootout.players == (0, 1)
    g.theme("перестрелка")
    g.question((0, True))   # Аня +10
    g.question((1, False))  # Борис −20: below Вера on the running total, but she never played the shoot-out
    for _ in range(3):
        g.question()
    table = standings(g.state)
    assert [(line.name, line.place, line.score, line.shootout_score) for line in table.lines] == [
        ("Аня", 1, 50, 10), ("Борис", 2, 50, -20), ("Вера", 3, 40, None), ("Глеб", 4, 0, None)]
    assert g.state.scores == (60, 30, 40, 0)  # the scoreboard's running total includes the shoot-out


def test_3_6_after_the_shootout_the_indicators_are_checked_again_over_its_questions(game):
    g = game("irkutsk", players=PLAYERS[:3], themes=1)
    g.theme_of([(0, True)], [(1, True)], [(1, True)], [(0, True)], [])  # Аня 50, Борис 50, alike
    g.theme("перестрелка")
    g.question((0, True))   # Аня +10
    g.question((1, True))   # Борис +20
    g.question((0, False))  # Аня −30: −20
    g.question((1, False))  # Борис −40: −20, equal again
    g.question()
    table = standings(g.state)
    # «повторно проверяются перечисленные показатели»: without minuses Борис took 20 in the shoot-out, Аня 10
    assert [(line.name, line.place, line.shootout_score) for line in table.lines] == [
        ("Борис", 1, -20), ("Аня", 2, -20), ("Вера", 3, None)]
    assert table.shootout is None and g.state.is_over


def test_3_7_next_tapped_twice_the_mistaken_price_is_undone_but_the_earlier_ruling_stays_final(game):
    from appliance.rules.battle import ActionUndone, QuestionWithdrawn

    g = game("irkutsk", players=PLAYERS[:3])
    g.theme(); g.question((0, False))  # Аня −10
    over = g.state
    assert over.phase == "question_over"
    g.price(); g.read()                # "next" tapped once too often: the price and the reading (one gesture)
    g.do(ActionUndone(at_ns=g.tick()))  # the reading is taken back: no ruling is touched
    g.do(ActionUndone(at_ns=g.tick()))  # so is the price: a slip of the host, nothing is revisited
    assert [type(u.event).__name__ for u in g.state.undone] == ["ReadingStarted", "PriceAnnounced"]
    assert g.state.phase == "question_over" and g.state.questions == over.questions
    assert g.state.scores == (-10, 0, 0) and g.state.expected_value() == 20
    # 3.7: the next question was announced, so Аня's ruling is final; taking the price back does not reopen it
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=0, player=0, correct=True)).rule == "irkutsk 3.7"
    error = g.refused(ActionUndone(at_ns=g.tick()))  # the next undo would take back the ruling itself
    assert error.rule == "irkutsk 3.7" and "AnswerJudged" in error.message
    assert g.refused(QuestionWithdrawn(at_ns=g.tick(), reason="опечатка")).rule == "irkutsk 3.7"
    # the host announces the question again and plays on; the question in play is his to correct
    g.price(); g.read(); g.finish(); g.press(1); g.point(1); g.wrong()
    assert g.state.last_question.value_points == 20
    g.do(ActionUndone(at_ns=g.tick()))  # the current question's own ruling may be taken back
    assert g.state.scores == (-10, 0, 0) and g.state.answerer == 1


def test_3_7_next_theme_tapped_twice_is_undone_back_to_between_themes_the_last_ruling_stays_final(game):
    from appliance.rules.battle import ActionUndone

    g = game("irkutsk", players=PLAYERS[:3], themes=2)
    g.theme_of([], [], [], [], [(2, True)])  # Вера +50 on the theme's last question
    ended = g.state
    g.theme()         # "next": the next theme starts
    g.price(); g.read()  # "next" again by mistake: its first question is announced and read
    for _ in range(3):
        g.do(ActionUndone(at_ns=g.tick()))
    assert [type(u.event).__name__ for u in g.state.undone] == ["ReadingStarted", "PriceAnnounced", "ThemeStarted"]
    assert g.state.phase == "between_themes" and g.state.themes == ended.themes
    assert g.state.questions == ended.questions and g.state.scores == (0, 0, 50)
    # 3.7: a question of the next theme was announced: Вера's ruling stays final
    assert g.refused(RulingCorrected(at_ns=g.tick(), question=4, player=2, correct=False)).rule == "irkutsk 3.7"
    assert g.refused(ActionUndone(at_ns=g.tick())).rule == "irkutsk 3.7"  # nor undone
    g.theme(); g.question((1, True))  # the battle goes on as if the slip had not happened
    assert g.state.scores == (0, 10, 50) and g.state.last_question.theme == 1


def test_3_7_a_question_is_withdrawn_only_while_it_is_in_play(game):
    from appliance.rules.battle import QuestionWithdrawn

    g = game("irkutsk", players=PLAYERS[:3])
    g.theme(); g.question((0, True))
    assert g.refused(QuestionWithdrawn(at_ns=g.tick(), reason="опечатка")).rule == "irkutsk 3.7"
    assert g.state.scores == (10, 0, 0)
    g.price(); g.read()
    g.do(QuestionWithdrawn(at_ns=g.tick(), reason="опечатка"))  # in play: withdrawn, it scores nothing
    assert g.state.last_question.outcome == "withdrawn"
