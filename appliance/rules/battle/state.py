"""The battle's state: frozen records built only by :func:`appliance.rules.battle.engine.apply`.

Plain records: what happened (themes, questions, presses, rulings, appeals) and what the engine concluded when
it built the state (``phase``, ``is_over``, the next price). The rules' queries, which the engine and the
service both ask (``press_outcome``, ``can_press``, ``buttons_armed``, ``eligible_players``), are in
:mod:`appliance.rules.battle.queries`; this module imports no rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from appliance.rules.battle.choices import CorrectionKind, Mode, Phase, PressOutcome, QuestionOutcome, Reading
from appliance.rules.battle.events import BattleSetUp, Event
from appliance.rules.battle.profile import Profile
from appliance.rules.battle.versions import RULES_VERSION, RULES_VERSIONS, RulesVersion

NEVER_NS = 2**63 - 1  # "until the end of the question" for a lockout
UNDO_DEPTH = 100  # events kept for undo: the host can take back his actions among the last 100 events


@dataclasses.dataclass(frozen=True)
class Press:
    """One press of the current or a past question, with the outcome the rules gave it."""

    player: int
    at_ns: int
    source: str  # a choices.PressSource word
    outcome: PressOutcome


@dataclasses.dataclass(frozen=True)
class Correction:
    """A later change of a ruling: by the host or by an accepted appeal (``kind``: choices.CorrectionKind)."""

    at_ns: int
    correct: bool
    kind: CorrectionKind
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

    ``outcome`` is None while it is played, then a :class:`QuestionOutcome` (a sudden-death question ends at
    the first answer, northern-owl 3.3).
    """

    index: int
    theme: int
    number: int
    value_points: int
    red: bool
    shootout: bool
    participants: tuple
    announced_ns: int
    reading: Reading = Reading.NOT_STARTED
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
    outcome: QuestionOutcome | None = None
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
    mode: Mode
    rules: RulesVersion = RULES_VERSIONS[RULES_VERSION]  # the version the setup names (versions.py)
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
    # What the rules say of this state, stored by the engine from queries.py when it builds the state (records
    # hold values, not rules): the phase, whether the battle is over, the next question's price.
    phase: Phase = Phase.BETWEEN_THEMES  # see queries.phase
    is_over: bool = False
    next_value_points: int | None = None
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

    # --- what the buttons and screens need (the rules' verdicts are in queries.py; the engine stores some here)
    def expected_value(self) -> int | None:
        """The value the next question of the current theme must be announced at, or None (stored by the
        engine from ``queries.expected_value``)."""
        return self.next_value_points

    @property
    def answerer(self) -> int | None:
        question = self.current_question
        return question.answerer if question else None

    @property
    def answer_deadline_ns(self) -> int | None:
        """When the answer countdown ends (eurocup 2.8), if one runs: the last instant of the answer time."""
        question = self.current_question
        return question.answer_deadline_ns if question and question.answerer is not None else None

    @property
    def answer_time_up_ns(self) -> int | None:
        """The first instant the answer time is up ("время" may be called), by the battle's rules version."""
        deadline = self.answer_deadline_ns
        return None if deadline is None else deadline + self.rules.deadline_in_time_ns

    @property
    def press_window_closes_ns(self) -> int | None:
        """When the press window closes (eurocup 2.5, 2.9), once the reading has ended: the deadline itself."""
        question = self.current_question
        return question.window_closes_ns if question and question.answerer is None else None

    @property
    def press_window_over_ns(self) -> int | None:
        """The first instant the press window is over, by the battle's rules version (a signal at the deadline
        itself is in time from version 2): the service feeds ``PressWindowExpired`` at this time."""
        closes = self.press_window_closes_ns
        return None if closes is None else closes + self.rules.deadline_in_time_ns

    def press_order(self, question: Question | None = None) -> list[dict[str, Any]]:
        """Presses of a question (default: the current or last) in timestamp order, each with its ``round`` of
        pressing and the gap in ns to the first press of that round: who pressed, when, by how much they were
        second. See :func:`press_rounds`."""
        question = question or self.last_question
        if question is None:
            return []
        return press_rounds(question)


def press_rounds(question: Question) -> list[dict[str, Any]]:
    """The presses of ``question`` by time, each in its round of pressing: round 0 until the first ruling, round
    ``k`` from the k-th ruling on (a «Минус» reopens the question: eurocup 2.9, 2.10; the presses after it are a
    new list). ``gap_ns`` is counted from the first press of the same round, never across a ruling (nor across
    a battle set aside and resumed in between): a press after a «Минус» is not «+23 s» behind the first press
    of the question."""
    boundaries = sorted(ruling.at_ns for ruling in question.rulings)
    out, firsts = [], {}
    for press in sorted(question.presses, key=lambda press: press.at_ns):
        number = sum(1 for at in boundaries if at <= press.at_ns)
        first = firsts.setdefault(number, press.at_ns)
        out.append({"player": press.player, "at_ns": press.at_ns, "gap_ns": press.at_ns - first, "round": number,
                    "source": press.source, "outcome": press.outcome})
    return out
