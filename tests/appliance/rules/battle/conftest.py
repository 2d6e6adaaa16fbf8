"""A battle driven like a game: a fake clock in seconds, one method per host word or press."""

from __future__ import annotations

import pytest

from appliance.rules.battle import (AnswererPointed, AnswerJudged, BattleRuleError, BattleSetUp, ButtonPressed,
                                    PressWindowExpired, PriceAnnounced, ReadingFinished, ReadingStarted, ThemeStarted,
                                    TimeCalled, apply)
from appliance.service.presets import load_profile

NS = 1_000_000_000


def ns(seconds: float) -> int:
    return round(seconds * NS)


class Game:
    """Events at explicit times (seconds). Every accepted event is kept in ``log`` for replay checks."""

    def __init__(self, profile: str, players=("Аня", "Борис", "Вера"), themes: int = 1, **setup) -> None:
        self.time = 0.0
        profile_object = setup.pop("profile_object", None) or load_profile(profile)
        first = BattleSetUp(at_ns=0, profile=profile_object, players=tuple(players), themes=themes, **setup)
        self.state = apply(None, first)
        self.log = [first]

    def at(self, seconds: float) -> "Game":
        self.time = seconds
        return self

    def tick(self, seconds: float = 0.001) -> int:
        self.time += seconds
        return ns(self.time)

    def do(self, event):
        self.state = apply(self.state, event)
        self.log.append(event)
        return self.state

    def refused(self, event) -> BattleRuleError:
        before = self.state
        with pytest.raises(BattleRuleError) as info:
            apply(self.state, event)
        assert self.state is before
        return info.value

    # host words
    def theme(self, name: str = ""):
        return self.do(ThemeStarted(at_ns=self.tick(), name=name))

    def price(self, value: int | None = None):
        value = self.state.expected_value() if value is None else value
        return self.do(PriceAnnounced(at_ns=self.tick(), value_points=value))

    def read(self):
        return self.do(ReadingStarted(at_ns=self.tick()))

    def finish(self):
        return self.do(ReadingFinished(at_ns=self.tick()))

    def point(self, player: int | None = None):
        player = self.state.answerer if player is None else player
        return self.do(AnswererPointed(at_ns=self.tick(), player=player))

    def right(self):
        return self.do(AnswerJudged(at_ns=self.tick(), correct=True))

    def wrong(self):
        return self.do(AnswerJudged(at_ns=self.tick(), correct=False))

    def time_up(self):
        return self.do(TimeCalled(at_ns=self.tick()))

    def expire(self):
        over = self.state.press_window_over_ns  # the first instant after the deadline (eurocup 2.5)
        self.time = max(self.time, over / NS)
        return self.do(PressWindowExpired(at_ns=over))

    def press(self, player: int, after: float = 0.001, source: str = "button"):
        return self.do(ButtonPressed(at_ns=self.tick(after), player=player, source=source))

    def last_press(self):
        return self.state.last_question.presses[-1]

    # whole questions
    def question(self, *answers: tuple[int, bool]):
        """Price, reading, and each (player, right?) in turn; unanswered ends by the window expiring."""
        self.price()
        self.read()
        self.finish()
        for player, correct in answers:
            self.press(player)
            self.point(player)
            self.right() if correct else self.wrong()
        if self.state.current_question is not None:
            self.expire()
        return self.state

    def theme_of(self, *questions):
        """A whole theme: one tuple of (player, right?) answers per question, 5 questions."""
        self.theme()
        for answers in questions:
            self.question(*answers)
        return self.state


@pytest.fixture
def game():
    return Game
