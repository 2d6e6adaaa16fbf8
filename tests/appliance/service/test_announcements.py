"""The hall is told every change of a score, and why (issue 21): an undo, a withdrawal, claps, a battle set aside
or resumed are announced in the same record as a correction (view key ``announcement``)."""

from __future__ import annotations

from .conftest import setup_args


def command(session, name, **args):
    session.command_counter = getattr(session, "command_counter", 0) + 1
    return session.command(name, args, f"c{session.command_counter}")


def right_answer(session, capture, clock, player=2):
    command(session, "next")                               # a price (and the reading)
    clock.advance(500)
    capture.press(player, t_ns=clock.now_ns)
    command(session, "point")
    command(session, "right")


def told(session):
    return session.snapshot()["view"]["announcement"]


def test_an_undo_that_moves_a_score_is_announced_with_what_it_took_back(session, capture, clock):
    command(session, "setup", **setup_args())
    command(session, "next")                               # the theme
    right_answer(session, capture, clock)
    assert told(session) is None                           # a plain ruling is the board's short result line
    command(session, "undo")
    a = told(session)
    assert a["kind"] == "undone"
    assert a["action"]["type"] == "AnswerJudged" and a["action"]["correct"] is True and a["action"]["name"] == "Борис"
    assert a["scores"] == [{"player": 1, "name": "Борис", "old": 10, "new": 0}]


def test_an_undo_that_moves_no_score_says_nothing(session, capture, clock):
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    command(session, "undo")                               # the price taken back: no score moved
    assert told(session) is None


def test_a_withdrawal_that_takes_points_back_is_announced(session, capture, clock):
    command(session, "setup", **setup_args())
    command(session, "next")
    command(session, "next")
    clock.advance(500)
    capture.press(1, t_ns=clock.now_ns)
    command(session, "point")
    command(session, "wrong")                              # Аня −10, the question goes on
    command(session, "withdraw", reason="два верных ответа")
    a = told(session)
    assert a["kind"] == "withdrawn" and a["reason"] == "два верных ответа"
    assert a["question"]["price"] == 10 and a["question"]["theme_name"] == "Реки"
    assert a["scores"] == [{"player": 0, "name": "Аня", "old": -10, "new": 0}]


def test_claps_are_announced_on_and_off(session, capture, clock):
    command(session, "setup", **setup_args(profile="mubc"))
    command(session, "claps", on=True)
    assert told(session)["kind"] == "claps_on" and told(session)["section"] == "4.4"
    command(session, "claps", on=False)
    assert told(session)["kind"] == "claps_off"


def test_a_battle_set_aside_and_resumed_is_announced_with_its_scores(session, capture, clock):
    first = command(session, "setup", **setup_args())["battle_id"]
    command(session, "next")
    right_answer(session, capture, clock)
    command(session, "setup", **setup_args(players=("Дима", "Женя")), set_aside=first)
    a = told(session)
    assert a["kind"] == "set_aside"
    assert [(row["name"], row["old"], row["new"]) for row in a["scores"]] == [
        ("Аня", None, 0), ("Борис", None, 10), ("Вера", None, 0)]
    second = session.snapshot()["view"]["battle"]["id"]
    command(session, "resume", battle=first, set_aside=second)
    a = told(session)
    assert a["kind"] == "resumed" and [row["new"] for row in a["scores"]] == [0, 10, 0]
    command(session, "next")                               # the next question: old news
    assert told(session) is None


def test_after_a_resumed_battle_the_presses_are_not_counted_from_before_it_was_set_aside(session, capture, clock):
    # issue 21: «+139687 мс» after a resumed battle: the gap spanned the time the battle was set aside
    first = command(session, "setup", **setup_args())["battle_id"]
    command(session, "next")
    command(session, "next")
    clock.advance(500)
    capture.press(1, t_ns=clock.now_ns)                    # Аня answers
    command(session, "point")
    command(session, "setup", **setup_args(players=("Дима", "Женя")), set_aside=first)
    clock.advance(139_000)                                 # another battle for 139 s
    second = session.snapshot()["view"]["battle"]["id"]
    command(session, "resume", battle=first, set_aside=second)
    command(session, "wrong")
    clock.advance(300)
    capture.press(2, t_ns=clock.now_ns)
    clock.advance(40)
    capture.press(3, t_ns=clock.now_ns)
    presses = session.snapshot()["view"]["presses"]
    assert [(p["player"], round(p["gap_ms"])) for p in presses] == [(1, 0), (2, 40)]
