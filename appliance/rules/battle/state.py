"""The battle's state: frozen records built only by :func:`appliance.rules.battle.engine.apply`.

Everything the service needs to drive the buttons and the screens without re-implementing a rule is here:
``phase``, ``buttons_armed``, ``eligible_players``, ``answerer``, ``press_order()``, the deadlines in ns
(``press_window_closes_ns``, ``answer_deadline_ns``), ``scores``, theme/question progress and ``is_over``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from appliance.rules.battle.events import BattleSetUp, Event
from appliance.rules.battle.profile import Profile

# How a press was taken. "answerer": it won the right to answer; "queued": it counts as the next signal
# (eurocup 2.9); every other outcome is ignored and says why.
PRESS_OUTCOMES = ("answerer", "queued", "beaten", "early", "late", "during_answer", "blocked", "answered",
                  "locked", "not_playing", "claps", "no_question")

NEVER_NS = 2**63 - 1
UNDO_DEPTH = 100  # events kept for undo: the host can take back his actions among the last 100 events  # "until the end of the question" for a lockout


@dataclasses.dataclass(frozen=True)
class Press:
    """One press of the current or a past question, with the outcome the rules gave it."""

    player: int
    at_ns: int
    source: str
    outcome: str


@dataclasses.dataclass(frozen=True)
class Correction:
    """A later change of a ruling: by the host ("host") or by an accepted appeal ("appeal")."""

    at_ns: int
    correct: bool
    kind: str
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class Ruling:
    """The host's ruling on one answer, with any corrections after it (the protocol shows both)."""

    player: int
    correct: bool
    at_ns: int
    by_time: bool = False  # "время": the answer time ran out (eurocup 2.8, northern-owl 3.7)
    corrections: tuple = ()
    # void: an earlier answer was corrected to right, so the question had ended before this answer (eurocup
    # 2.11.1); it counts for nobody. ``voided_by`` is the player whose corrected ruling voided it.
    voided_by: int | None = None

    @property
    def effective(self) -> bool:
        """The ruling that counts now: the last correction, else the original."""
        return self.corrections[-1].correct if self.corrections else self.correct

    @property
    def void(self) -> bool:
        return self.voided_by is not None

    def points(self, value: int) -> int:
        """What this ruling adds to its player's score: +value, −value, or 0 if void."""
        return 0 if self.void else (value if self.effective else -value)


@dataclasses.dataclass(frozen=True)
class Question:
    """One question: its value, its reading, every press, every ruling and how it ended.

    ``outcome`` is None while it is played, then "right", "all_wrong", "unanswered" or "first_answer"
    (a sudden-death question ends at the first answer, northern-owl 3.3).
    """

    index: int
    theme: int
    number: int
    value_points: int
    red: bool
    shootout: bool
    participants: tuple
    announced_ns: int
    reading: str = "not_started"  # not_started, reading, interrupted, finished
    reading_started_ns: int | None = None
    reading_finished_ns: int | None = None
    presses: tuple = ()
    rulings: tuple = ()
    answerer: int | None = None
    answerer_press_ns: int | None = None
    pointed_ns: int | None = None
    answer_deadline_ns: int | None = None
    reopened_ns: int | None = None  # the last "wrong": presses before it were given during an answer
    queue: tuple = ()  # (at_ns, player) of signals that count as the next (eurocup 2.9)
    window_closes_ns: int | None = None
    locked: tuple = ()  # (player, until_ns)
    outcome: str | None = None
    ended_ns: int | None = None
    scores_after: tuple = ()
    answer_announced: bool = False
    withdrawn: bool = False
    withdrawn_reason: str = ""

    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    @property
    def answered(self) -> tuple:
        """Players who have answered this question (one answer each, eurocup 2.9), in order."""
        return tuple(ruling.player for ruling in self.rulings)

    def ruling_of(self, player: int) -> Ruling | None:
        for ruling in self.rulings:
            if ruling.player == player:
                return ruling
        return None


@dataclasses.dataclass(frozen=True)
class Theme:
    """A theme of the battle: regular, or a shoot-out theme among ``participants``."""

    index: int
    name: str
    red: bool
    shootout: bool
    participants: tuple
    started_ns: int
    places: tuple = ()  # a shoot-out theme: the places it decides
    closed: bool = False  # a sudden-death theme closes when the tie is broken (northern-owl 3.3)


@dataclasses.dataclass(frozen=True)
class Appeal:
    """An appeal (youth-cup 3.1, mubc 4.2) and, once decided, its decision."""

    player: int
    question: int
    claim: str
    lodged_ns: int
    decided: bool = False
    accepted: bool = False
    correct: bool | None = None
    decided_ns: int | None = None


@dataclasses.dataclass(frozen=True)
class Undone:
    """A host action taken back by ``ActionUndone`` (kept for the protocol)."""

    at_ns: int
    event: Event


@dataclasses.dataclass(frozen=True)
class BattleState:
    """The whole battle after some events. Immutable; equal states compare equal (``history`` aside).

    ``history`` holds at least the last :data:`UNDO_DEPTH` ``(state before, event)`` pairs for ``ActionUndone``;
    the states in it carry no history of their own, so memory stays bounded however long the battle.
    """

    setup: BattleSetUp
    profile: Profile
    players: tuple
    scores: tuple
    mode: str
    themes: tuple = ()
    questions: tuple = ()
    appeals: tuple = ()
    undone: tuple = ()
    seq: int = 1  # events applied, the setup included
    last_at_ns: int = 0
    # How far the battle has got: the most themes started and questions announced so far. Monotone: undoing a
    # mistaken ThemeStarted/PriceAnnounced does not lower them, so rulings closed by reaching the next question
    # or theme stay closed (irkutsk 3.7, youth-cup 3.1; engine.correction_barrier).
    themes_reached: int = 0
    questions_reached: int = 0
    # (state before, event, older node, depth): a linked list, so an event adds one node instead of copying
    # the whole undo history; trimmed to the newest UNDO_DEPTH nodes whenever it doubles (engine._remember).
    history: tuple | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def last_event(self) -> Event | None:
        """The last event applied (None right after the setup or an undo with nothing left to show)."""
        return self.history[1] if self.history else None

    # --- progress
    @property
    def theme(self) -> Theme | None:
        """The current (last started) theme."""
        return self.themes[-1] if self.themes else None

    @property
    def regular_themes_played(self) -> int:
        return sum(1 for theme in self.themes if not theme.shootout)

    @property
    def shootout_themes_played(self) -> int:
        return sum(1 for theme in self.themes if theme.shootout)

    @property
    def questions_in_theme(self) -> int:
        """How many questions of the current theme have been announced."""
        theme = self.theme
        if theme is None:
            return 0
        count = 0
        for question in reversed(self.questions):
            if question.theme != theme.index:
                break
            count += 1
        return count

    @property
    def is_theme_complete(self) -> bool:
        theme = self.theme
        if theme is None:
            return True
        question = self.questions[-1] if self.questions else None
        if question is not None and not question.is_over:
            return False
        return theme.closed or self.questions_in_theme >= len(self.profile.questions_values)

    @property
    def current_question(self) -> Question | None:
        """The question being played (None between questions)."""
        if self.questions and not self.questions[-1].is_over:
            return self.questions[-1]
        return None

    @property
    def last_question(self) -> Question | None:
        return self.questions[-1] if self.questions else None

    @property
    def present_players(self) -> tuple:
        return tuple(p for p in range(len(self.players)) if p not in self.setup.absent)

    # --- what the buttons and screens need
    @property
    def phase(self) -> str:
        """One of: "between_themes", "between_questions", "price_announced", "reading", "answering",
        "waiting_for_presses", "question_over", "over"."""
        question = self.current_question
        if question is None:
            if self.questions and self.questions[-1].theme == len(self.themes) - 1 and not self.is_theme_complete:
                return "question_over"
            if not self.is_theme_complete:
                return "between_questions"
            return "over" if self.is_over else "between_themes"
        if question.answerer is not None:
            return "answering"
        if question.reading == "not_started":
            return "price_announced"
        if question.reading == "reading":
            return "reading"
        return "waiting_for_presses"

    @property
    def answerer(self) -> int | None:
        question = self.current_question
        return question.answerer if question else None

    @property
    def answer_deadline_ns(self) -> int | None:
        """When the answer countdown ends (eurocup 2.8), if one runs."""
        question = self.current_question
        return question.answer_deadline_ns if question and question.answerer is not None else None

    @property
    def press_window_closes_ns(self) -> int | None:
        """When the press window closes (eurocup 2.5, 2.9), once the reading has ended; the service feeds
        ``PressWindowExpired`` at this time if nobody is answering."""
        question = self.current_question
        return question.window_closes_ns if question and question.answerer is None else None

    def can_press(self, player: int, at_ns: int | None = None) -> bool:
        """Would a press by ``player`` now (or at ``at_ns``) count as a signal?"""
        from appliance.rules.battle.engine import press_outcome

        question = self.current_question
        if question is None or self.mode != "buttons":
            return False
        when = self.last_at_ns if at_ns is None else at_ns
        return press_outcome(self, question, player, when) in ("answerer", "queued")

    @property
    def eligible_players(self) -> tuple:
        """Players still in play for the current question: present, taking part, not yet answered, not locked."""
        question = self.current_question
        if question is None:
            return ()
        answered = question.answered
        locked = {player for player, until in question.locked if until > self.last_at_ns}
        return tuple(p for p in question.participants if p not in answered and p not in locked
                     and p != question.answerer)

    @property
    def buttons_armed(self) -> bool:
        """Should the box accept presses now: a question is on, buttons mode, the window is open (or the
        profile queues signals during an answer after the host's reset, eurocup 2.6) and someone may press."""
        question = self.current_question
        if question is None or self.mode != "buttons" or not self.eligible_players:
            return False
        if question.answerer is not None:
            return self.profile.presses_during_answer == "queue" and question.pointed_ns is not None
        opens = self.profile.presses_open_at
        if opens == "reading_started" and question.reading == "not_started":
            return False
        if opens == "reading_finished" and question.reading != "finished":
            return False
        return True

    def press_order(self, question: Question | None = None) -> list[dict[str, Any]]:
        """Presses of a question (default: the current or last) in timestamp order, with the gap to the
        first press in ns: who pressed, when, by how much they were second."""
        question = question or self.last_question
        if question is None:
            return []
        presses = sorted(question.presses, key=lambda press: press.at_ns)
        first = presses[0].at_ns if presses else 0
        return [{"player": press.player, "at_ns": press.at_ns, "gap_ns": press.at_ns - first,
                 "source": press.source, "outcome": press.outcome} for press in presses]

    @property
    def is_over(self) -> bool:
        """The battle is over: every theme played and no shoot-out called for (the standings say)."""
        from appliance.rules.battle.standings import standings

        if self.regular_themes_played < self.setup.themes or not self.is_theme_complete:
            return False
        return standings(self).shootout is None

    def expected_value(self) -> int | None:
        """The value the next question of the current theme must be announced at, or None."""
        theme = self.theme
        values = self.profile.questions_values
        number = self.questions_in_theme
        if theme is None or self.is_theme_complete or self.current_question is not None or number >= len(values):
            return None
        if theme.shootout and self.profile.shootout_method == "shootout_question":
            return tuple(reversed(values))[number]  # dearest first (northern-owl 3.3)
        multiplier = self.profile.questions_red_theme_multiplier if theme.red else 1
        return values[number] * multiplier
