"""What the rules say about a battle state: the queries the engine and the service both ask, in one place.

The engine decides a press with :func:`press_outcome`; the service arms the buttons with :func:`buttons_armed`,
which asks the very same function, so the box never arms what the engine would refuse nor the other way round
(python-chess keeps ``is_legal``, ``outcome`` and ``push`` together for the same reason). Imports go one way:
``state`` (plain records) <- ``standings`` <- ``queries`` <- ``engine``. Pure functions of the state.

The engine stores what every screen reads (``phase``, ``is_over``, the next price) on the state it builds, from
:func:`phase`, :func:`is_over` and :func:`expected_value` here; the state records hold no rules of their own.
"""

from __future__ import annotations

from appliance.rules.battle.choices import (COUNTED_OUTCOMES, DuringAnswer, Mode, Phase, PressesOpenAt, PressOutcome,
                                            Reading, TieBreak)
from appliance.rules.battle.standings import standings
from appliance.rules.battle.state import BattleState, Question

PRESS_OUTCOMES = tuple(PressOutcome)  # how a press was taken: choices.PressOutcome

# The members press_outcome returns, bound once: it runs on every press, and on Python 3.11 an Enum attribute
# costs about twice a module global.
_ANSWERER, _QUEUED, _EARLY, _LATE = PressOutcome.ANSWERER, PressOutcome.QUEUED, PressOutcome.EARLY, PressOutcome.LATE
_BLOCKED, _DURING_ANSWER = PressOutcome.BLOCKED, PressOutcome.DURING_ANSWER
_OPENS_AT_PRICE, _OPENS_AT_READING = PressesOpenAt.PRICE_ANNOUNCED, PressesOpenAt.READING_STARTED
_QUEUE = DuringAnswer.QUEUE
# conclusions() while a question is played (most events), likewise
_NOT_STARTED, _READING = Reading.NOT_STARTED, Reading.READING
_ANSWERING_NOW, _NOT_STARTED_NOW = (Phase.ANSWERING, False, None), (Phase.PRICE_ANNOUNCED, False, None)
_READING_NOW, _WAITING_NOW = (Phase.READING, False, None), (Phase.WAITING_FOR_PRESSES, False, None)


def press_outcome(state: BattleState, question: Question, player: int, at_ns: int) -> PressOutcome:
    """How the rules take a press by ``player`` at ``at_ns`` during ``question`` (see ``PRESS_OUTCOMES``)."""
    profile = state.profile
    if player not in question.participants:
        return PressOutcome.NOT_PLAYING  # absent (mubc 3.5) or outside a shoot-out
    if player in question.answered or player == question.answerer:
        return PressOutcome.ANSWERED  # one answer per player per question (eurocup 2.9, irkutsk 3.6)
    for locked, until in question.locked:
        if locked == player and at_ns < until:
            return PressOutcome.LOCKED
    open_at = profile.presses_open_at
    opens = question.announced_ns if open_at == _OPENS_AT_PRICE else question.reading_started_ns \
        if open_at == _OPENS_AT_READING else question.reading_finished_ns  # PressesOpenAt
    if opens is None or at_ns < opens:
        return _EARLY
    after_reset = question.answerer is not None and profile.presses_during_answer == _QUEUE \
        and question.pointed_ns is not None and at_ns >= question.pointed_ns
    if question.window_closes_ns is not None and at_ns >= question.window_closes_ns + state.rules.deadline_in_time_ns \
            and not after_reset:
        # timestamps decide, not arrival (eurocup 2.5, 2.9); «не позднее чем через 7 секунд»: a signal at the
        # deadline itself is in time (rules version 2). A signal after the host's reset during an answer is
        # never late: its deadline is 7 s after the later of "wrong" and the end of reading (eurocup 2.9,
        # youth-cup прил. 9), and "wrong" has not come yet.
        return _LATE
    if question.answerer is not None:
        if question.pointed_ns is None and question.answerer_press_ns is not None \
                and at_ns < question.answerer_press_ns \
                and (question.reopened_ns is None or at_ns >= question.reopened_ns):
            return _ANSWERER  # it arrived later but happened first: the earliest edge wins
        if after_reset:
            return _QUEUED  # eurocup 2.6, 2.9: after the host's reset a signal counts as the next one
        return _BLOCKED if profile.presses_blocker else _DURING_ANSWER
    if question.reopened_ns is not None and at_ns < question.reopened_ns:
        # irkutsk 3.4: presses before "Минус" do not count; northern-owl 3.9: before "неверно"
        return _BLOCKED if profile.presses_blocker else _DURING_ANSWER
    return _ANSWERER


def can_press(state: BattleState, player: int, at_ns: int | None = None) -> bool:
    """Would a press by ``player`` now (at the last event, or at ``at_ns``) count as a signal?"""
    question = state.current_question
    if question is None or state.mode != Mode.BUTTONS:
        return False
    when = state.last_at_ns if at_ns is None else at_ns
    return press_outcome(state, question, player, when) in COUNTED_OUTCOMES


def eligible_players(state: BattleState) -> tuple:
    """Players still in play for the current question: present, taking part, not yet answered, not locked."""
    question = state.current_question
    if question is None:
        return ()
    answered = question.answered
    now = state.last_at_ns
    locked = {player for player, until in question.locked if until > now}
    return tuple(p for p in question.participants if p not in answered and p not in locked
                 and p != question.answerer)


def buttons_armed(state: BattleState) -> bool:
    """Should the box accept presses now: buttons mode and some player's press would count (:func:`can_press`,
    the engine's own rule: the window is open, or the profile queues signals during an answer after the host's
    reset, eurocup 2.6)."""
    question = state.current_question
    if question is None or state.mode != Mode.BUTTONS:
        return False
    now = state.last_at_ns
    return any(press_outcome(state, question, player, now) in COUNTED_OUTCOMES for player in question.participants)


def is_over(state: BattleState) -> bool:
    """The battle is over: every theme played and no shoot-out called for (the standings say)."""
    if state.regular_themes_played < state.setup.themes or not state.is_theme_complete:
        return False
    return standings(state).shootout is None


def phase(state: BattleState, over: bool | None = None) -> Phase:
    """Where the battle is (choices.Phase). ``over``: :func:`is_over`, if known already."""
    question = state.current_question
    if question is None:
        if state.questions and state.questions[-1].theme == len(state.themes) - 1 and not state.is_theme_complete:
            return Phase.QUESTION_OVER
        if not state.is_theme_complete:
            return Phase.BETWEEN_QUESTIONS
        return Phase.OVER if (is_over(state) if over is None else over) else Phase.BETWEEN_THEMES
    if question.answerer is not None:
        return Phase.ANSWERING
    if question.reading == Reading.NOT_STARTED:
        return Phase.PRICE_ANNOUNCED
    if question.reading == Reading.READING:
        return Phase.READING
    return Phase.WAITING_FOR_PRESSES


def conclusions(state: BattleState) -> tuple:
    """``(phase(state), is_over(state), expected_value(state))`` in one pass: the engine stores them on every
    state it builds, so this is on the path of every event (the same answers, the shared work done once)."""
    questions = state.questions
    last = questions[-1] if questions else None
    if last is not None and last.outcome is None:  # a question is being played: most events
        if last.answerer is not None:
            return _ANSWERING_NOW
        reading = last.reading
        return _NOT_STARTED_NOW if reading == _NOT_STARTED else _READING_NOW if reading == _READING \
            else _WAITING_NOW
    themes = state.themes
    if not themes:
        return Phase.BETWEEN_THEMES, False, None  # nothing started (a battle has at least one theme)
    theme = themes[-1]
    values = state.profile.questions_values
    in_theme = 0
    index = theme.index
    for question in reversed(questions):
        if question.theme != index:
            break
        in_theme += 1
    if not (theme.closed or in_theme >= len(values)):  # the theme goes on
        phase_now = Phase.QUESTION_OVER if last is not None and last.theme == len(themes) - 1 \
            else Phase.BETWEEN_QUESTIONS
        if theme.shootout and state.profile.shootout_method == TieBreak.SHOOTOUT_QUESTION:
            return phase_now, False, values[len(values) - 1 - in_theme]  # dearest first (northern-owl 3.3)
        return phase_now, False, values[in_theme] * (state.profile.questions_red_theme_multiplier if theme.red else 1)
    over = len(themes) >= state.setup.themes and is_over(state)
    return (Phase.OVER if over else Phase.BETWEEN_THEMES), over, None


def expected_value(state: BattleState) -> int | None:
    """The value the next question of the current theme must be announced at, or None."""
    theme = state.theme
    if theme is None or state.current_question is not None or state.is_theme_complete:
        return None
    values = state.profile.questions_values
    number = state.questions_in_theme
    if number >= len(values):
        return None
    if theme.shootout and state.profile.shootout_method == TieBreak.SHOOTOUT_QUESTION:
        return values[len(values) - 1 - number]  # dearest first (northern-owl 3.3)
    multiplier = state.profile.questions_red_theme_multiplier if theme.red else 1
    return values[number] * multiplier
