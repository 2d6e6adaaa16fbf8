"""What the rules say about a battle state: the queries the engine and the service both ask, in one place.

The engine decides a press with :func:`press_outcome`; the service arms the buttons with :func:`buttons_armed`,
which asks the very same function, so the box never arms what the engine would refuse nor the other way round
(python-chess keeps ``is_legal``, ``outcome`` and ``push`` together for the same reason). Imports go one way:
``state`` (plain records) <- ``standings`` <- ``queries`` <- ``engine``. Pure functions of the state.

The engine stores what every screen reads (``phase``, ``is_over``, the next price) on the state it builds, from
:func:`phase`, :func:`is_over` and :func:`expected_value` here; the state records hold no rules of their own.
"""

from __future__ import annotations

from appliance.rules.battle.standings import standings
from appliance.rules.battle.state import BattleState, Question

# How a press was taken. "answerer": it won the right to answer; "queued": it counts as the next signal
# (eurocup 2.9); every other outcome is ignored and says why.
PRESS_OUTCOMES = ("answerer", "queued", "beaten", "early", "late", "during_answer", "blocked", "answered",
                  "locked", "not_playing", "claps", "no_question")
COUNTED_OUTCOMES = frozenset({"answerer", "queued"})


def press_outcome(state: BattleState, question: Question, player: int, at_ns: int) -> str:
    """How the rules take a press by ``player`` at ``at_ns`` during ``question`` (see ``PRESS_OUTCOMES``)."""
    profile = state.profile
    if player not in question.participants:
        return "not_playing"  # absent (mubc 3.5) or outside a shoot-out
    if player in question.answered or player == question.answerer:
        return "answered"  # one answer per player per question (eurocup 2.9, irkutsk 3.6)
    for locked, until in question.locked:
        if locked == player and at_ns < until:
            return "locked"
    opens = {"price_announced": question.announced_ns, "reading_started": question.reading_started_ns,
             "reading_finished": question.reading_finished_ns}[profile.presses_open_at]
    if opens is None or at_ns < opens:
        return "early"
    after_reset = question.answerer is not None and profile.presses_during_answer == "queue" \
        and question.pointed_ns is not None and at_ns >= question.pointed_ns
    if question.window_closes_ns is not None and at_ns >= question.window_closes_ns + state.rules.deadline_in_time_ns \
            and not after_reset:
        # timestamps decide, not arrival (eurocup 2.5, 2.9); «не позднее чем через 7 секунд»: a signal at the
        # deadline itself is in time (rules version 2). A signal after the host's reset during an answer is
        # never late: its deadline is 7 s after the later of "wrong" and the end of reading (eurocup 2.9,
        # youth-cup прил. 9), and "wrong" has not come yet.
        return "late"
    if question.answerer is not None:
        if question.pointed_ns is None and question.answerer_press_ns is not None \
                and at_ns < question.answerer_press_ns \
                and (question.reopened_ns is None or at_ns >= question.reopened_ns):
            return "answerer"  # it arrived later but happened first: the earliest edge wins
        if after_reset:
            return "queued"  # eurocup 2.6, 2.9: after the host's reset a signal counts as the next one
        return "blocked" if profile.presses_blocker else "during_answer"
    if question.reopened_ns is not None and at_ns < question.reopened_ns:
        # irkutsk 3.4: presses before "Минус" do not count; northern-owl 3.9: before "неверно"
        return "blocked" if profile.presses_blocker else "during_answer"
    return "answerer"


def can_press(state: BattleState, player: int, at_ns: int | None = None) -> bool:
    """Would a press by ``player`` now (at the last event, or at ``at_ns``) count as a signal?"""
    question = state.current_question
    if question is None or state.mode != "buttons":
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
    if question is None or state.mode != "buttons":
        return False
    now = state.last_at_ns
    return any(press_outcome(state, question, player, now) in COUNTED_OUTCOMES for player in question.participants)


def is_over(state: BattleState) -> bool:
    """The battle is over: every theme played and no shoot-out called for (the standings say)."""
    if state.regular_themes_played < state.setup.themes or not state.is_theme_complete:
        return False
    return standings(state).shootout is None


def phase(state: BattleState, over: bool | None = None) -> str:
    """One of: "between_themes", "between_questions", "price_announced", "reading", "answering",
    "waiting_for_presses", "question_over", "over". ``over``: :func:`is_over`, if known already."""
    question = state.current_question
    if question is None:
        if state.questions and state.questions[-1].theme == len(state.themes) - 1 and not state.is_theme_complete:
            return "question_over"
        if not state.is_theme_complete:
            return "between_questions"
        return "over" if (is_over(state) if over is None else over) else "between_themes"
    if question.answerer is not None:
        return "answering"
    if question.reading == "not_started":
        return "price_announced"
    if question.reading == "reading":
        return "reading"
    return "waiting_for_presses"


def conclusions(state: BattleState) -> tuple:
    """``(phase(state), is_over(state), expected_value(state))`` in one pass: the engine stores them on every
    state it builds, so this is on the path of every event (the same answers, the shared work done once)."""
    questions = state.questions
    last = questions[-1] if questions else None
    if last is not None and last.outcome is None:  # a question is being played: most events
        if last.answerer is not None:
            return "answering", False, None
        reading = last.reading
        return ("price_announced" if reading == "not_started" else "reading" if reading == "reading"
                else "waiting_for_presses"), False, None
    themes = state.themes
    if not themes:
        return "between_themes", False, None  # nothing started (a battle has at least one theme)
    theme = themes[-1]
    values = state.profile.questions_values
    in_theme = 0
    index = theme.index
    for question in reversed(questions):
        if question.theme != index:
            break
        in_theme += 1
    if not (theme.closed or in_theme >= len(values)):  # the theme goes on
        phase_now = "question_over" if last is not None and last.theme == len(themes) - 1 else "between_questions"
        if theme.shootout and state.profile.shootout_method == "shootout_question":
            return phase_now, False, values[len(values) - 1 - in_theme]  # dearest first (northern-owl 3.3)
        return phase_now, False, values[in_theme] * (state.profile.questions_red_theme_multiplier if theme.red else 1)
    over = len(themes) >= state.setup.themes and is_over(state)
    return ("over" if over else "between_themes"), over, None


def expected_value(state: BattleState) -> int | None:
    """The value the next question of the current theme must be announced at, or None."""
    theme = state.theme
    if theme is None or state.current_question is not None or state.is_theme_complete:
        return None
    values = state.profile.questions_values
    number = state.questions_in_theme
    if number >= len(values):
        return None
    if theme.shootout and state.profile.shootout_method == "shootout_question":
        return values[len(values) - 1 - number]  # dearest first (northern-owl 3.3)
    multiplier = state.profile.questions_red_theme_multiplier if theme.red else 1
    return values[number] * multiplier
