"""Every window bound of every profile, against the regulation's words (rules version 2).

Closing bounds. Every text gives the last instant still in time: «не позднее чем через 7 секунд после окончания
чтения вопроса» (eurocup 2.5, youth-cup прил. 5), «...после более позднего из двух событий: объявления ответа
неправильным или окончания чтения вопроса» (eurocup 2.9, youth-cup прил. 9), «в течение 5 секунд после окончания
чтения вопроса» (irkutsk 3.4), «в течение 5 секунд после окончания чтения вопроса или после сообщения, что ответ
неверен» (northern-owl 3.10), «с задержкой не более 3 секунд» (eurocup 2.8, youth-cup прил. 8), «в течение 3
секунд. Если по истечении 3 секунд ответ дан не был» (northern-owl 3.7). mubc names no time and plays the
traditional 5 s the same way. So a signal stamped at the deadline is in time, one a nanosecond later is late;
the window is over, and "время" may be called, only after the deadline.

Opening bounds. «в любой момент после объявления стоимости» (eurocup 2.5, youth-cup прил. 5, northern-owl 3.5),
«после того, как ведущий сбросил сигнал» (eurocup 2.9, youth-cup прил. 9), «Сигналом к нажатию кнопки после
неправильного ответа является слово ведущего «Минус...»» (irkutsk 3.4), «ведущий произносит слово «неверно» ...
после чего ... могут нажимать» (northern-owl 3.9): the window opens with the host's word, so a signal stamped at
the very instant the word is stamped counts (the stamp is when the box took the word, never before it), and one
stamped earlier does not.
"""

from __future__ import annotations

import pytest

from appliance.rules.battle import (AnswererPointed, AnswerJudged, ButtonPressed, ModeChanged, PressWindowExpired,
                                    PriceAnnounced, ReadingFinished, ReadingStarted, ThemeStarted, TimeCalled)
from appliance.service.presets import load_profile, profile_names

MS = 1_000_000
PROFILES = profile_names()


def players_for(name: str) -> tuple:
    return ("Аня", "Борис", "Вера", "Глеб")[:max(3, load_profile(name).players_min)]


def read_out(game, name: str):
    """A game of ``name`` with question 1's reading just finished at t = 3 s."""
    g = game(name, players=players_for(name))
    g.do(ThemeStarted(at_ns=1 * 10**9))
    g.do(PriceAnnounced(at_ns=2 * 10**9 - 1, value_points=g.state.expected_value()))
    g.do(ReadingStarted(at_ns=2 * 10**9))
    g.do(ReadingFinished(at_ns=3 * 10**9))
    return g


@pytest.mark.parametrize("name", PROFILES)
def test_a_signal_at_the_deadline_after_reading_is_in_time(game, name):
    g = read_out(game, name)
    deadline = 3 * 10**9 + g.state.profile.presses_window_after_reading_ms * MS
    assert g.state.press_window_closes_ns == deadline
    assert g.refused(PressWindowExpired(at_ns=deadline)).code == "window_open"  # not over at its last instant
    g.do(ButtonPressed(at_ns=deadline + 1, player=0))
    assert g.last_press().outcome == "late"
    g.do(ButtonPressed(at_ns=deadline, player=1))  # arrived later, stamped at the deadline: in time
    assert g.last_press().outcome == "answerer" and g.state.answerer == 1


@pytest.mark.parametrize("name", PROFILES)
def test_the_window_is_over_only_after_its_deadline(game, name):
    g = read_out(game, name)
    over = g.state.press_window_over_ns
    assert over == g.state.press_window_closes_ns + 1
    g.do(PressWindowExpired(at_ns=over))
    assert g.state.last_question.outcome == "unanswered"


@pytest.mark.parametrize("name", PROFILES)
def test_a_signal_at_the_deadline_after_a_wrong_answer_is_in_time(game, name):
    g = read_out(game, name)
    g.do(ButtonPressed(at_ns=4 * 10**9, player=0))
    g.do(AnswererPointed(at_ns=4 * 10**9 + 1, player=0))
    wrong_ns = 5 * 10**9
    g.do(AnswerJudged(at_ns=wrong_ns, correct=False))
    profile = g.state.profile
    deadline = max(3 * 10**9 + profile.presses_window_after_reading_ms * MS,
                   wrong_ns + profile.presses_window_after_wrong_ms * MS)
    assert g.state.press_window_closes_ns == deadline
    g.do(ButtonPressed(at_ns=deadline + 1, player=1))
    assert g.last_press().outcome == "late"
    g.do(ButtonPressed(at_ns=deadline, player=2))
    assert g.last_press().outcome == "answerer"


@pytest.mark.parametrize("name", [n for n in PROFILES if load_profile(n).answer_limit_ms])
def test_the_answer_time_is_up_only_after_its_last_instant(game, name):
    g = read_out(game, name)
    g.do(ButtonPressed(at_ns=4 * 10**9, player=0))
    g.do(AnswererPointed(at_ns=4 * 10**9 + 1, player=0))
    deadline = 4 * 10**9 + 1 + g.state.profile.answer_limit_ms * MS
    assert g.state.answer_deadline_ns == deadline and g.state.answer_time_up_ns == deadline + 1
    error = g.refused(TimeCalled(at_ns=deadline))  # «не более 3 секунд»: an answer begun at the 3rd s is in time
    assert error.code == "answer_time_running" and error.rule == g.state.profile.cite("answer_limit")
    g.do(TimeCalled(at_ns=deadline + 1))
    ruling = g.state.last_question.rulings[-1]
    assert ruling.by_time and not ruling.correct


@pytest.mark.parametrize("name", [n for n in PROFILES if load_profile(n).corrections_fallback_without_buttons])
def test_on_claps_the_host_points_within_the_same_window_deadline_included(game, name):
    g = game(name, players=players_for(name))
    g.do(ThemeStarted(at_ns=1 * 10**9))
    g.do(ModeChanged(at_ns=1 * 10**9 + 1, mode="claps"))
    g.do(PriceAnnounced(at_ns=2 * 10**9 - 1, value_points=g.state.expected_value()))
    g.do(ReadingStarted(at_ns=2 * 10**9))
    g.do(ReadingFinished(at_ns=3 * 10**9))
    deadline = g.state.press_window_closes_ns
    late = g.refused(AnswererPointed(at_ns=deadline + 1, player=0))
    assert late.code == "press_window_closed"
    g.do(AnswererPointed(at_ns=deadline, player=0))
    assert g.state.answerer == 0


@pytest.mark.parametrize("name", PROFILES)
def test_the_window_opens_with_the_price_announced_at_its_very_instant(game, name):
    g = game(name, players=players_for(name))
    g.do(ThemeStarted(at_ns=1 * 10**9))
    g.do(PriceAnnounced(at_ns=2 * 10**9, value_points=g.state.expected_value()))
    assert g.state.profile.presses_open_at == "price_announced"  # every shipped profile: «после объявления стоимости»
    g.do(ButtonPressed(at_ns=2 * 10**9 - 1, player=0))
    assert g.last_press().outcome == "early"
    g.do(ButtonPressed(at_ns=2 * 10**9, player=1))
    assert g.last_press().outcome == "answerer"


@pytest.mark.parametrize("name", PROFILES)
def test_after_a_wrong_answer_the_window_reopens_at_the_hosts_word(game, name):
    g = read_out(game, name)
    g.do(ButtonPressed(at_ns=4 * 10**9, player=0))
    pointed_ns = 4 * 10**9 + 1
    g.do(AnswererPointed(at_ns=pointed_ns, player=0))
    queue = g.state.profile.presses_during_answer == "queue"
    # eurocup 2.9 «после того, как ведущий сбросил сигнал предыдущего отвечающего»: from the reset (the pointing)
    g.do(ButtonPressed(at_ns=pointed_ns - 1, player=1))
    assert g.last_press().outcome in ("during_answer", "blocked")
    g.do(ButtonPressed(at_ns=pointed_ns, player=1) if queue else ButtonPressed(at_ns=pointed_ns + 1, player=1))
    assert g.last_press().outcome == ("queued" if queue else "during_answer")
    wrong_ns = 5 * 10**9
    g.do(AnswerJudged(at_ns=wrong_ns, correct=False))
    if queue:
        assert g.state.answerer == 1  # the queued signal answers next (eurocup 2.10.1)
        return
    # irkutsk 3.4 «Минус», northern-owl 3.9 «неверно», mubc 4.1: from the host's word, not a nanosecond before
    g.do(ButtonPressed(at_ns=wrong_ns - 1, player=2))
    assert g.last_press().outcome in ("during_answer", "blocked")
    g.do(ButtonPressed(at_ns=wrong_ns, player=2))
    assert g.last_press().outcome == "answerer"
