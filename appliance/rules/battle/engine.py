"""The battle engine: ``apply(state, event) -> state``. Pure: no clock, no I/O; time arrives in the events.

Every rule the regulations state is a branch on a profile field, cited beside it. An event the rules refuse
raises :class:`BattleRuleError` naming the rule; the state given is untouched (it is immutable).

>>> from appliance.rules.battle.profile import load_profile
>>> from appliance.rules.battle import events as e
>>> s = apply(None, e.BattleSetUp(at_ns=0, profile=load_profile("eurocup"), players=("Аня", "Борис", "Вера"), themes=4))
>>> for event in (e.ThemeStarted(at_ns=1, name="Реки"), e.PriceAnnounced(at_ns=2, value_points=10),
...               e.ReadingStarted(at_ns=3), e.ButtonPressed(at_ns=4, player=1), e.AnswererPointed(at_ns=5, player=1),
...               e.AnswerJudged(at_ns=6, correct=True)):
...     s = apply(s, event)
>>> s.scores
(0, 10, 0)
>>> apply(s, e.AnswerJudged(at_ns=7, correct=True))
Traceback (most recent call last):
...
appliance.rules.battle.errors.BattleRuleError: eurocup 2.6: nobody is answering: the host points to the answerer before ruling
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from appliance.rules.battle import events as ev
from appliance.rules.battle import queries
from appliance.rules.battle.choices import (Appeals, CorrectionKind, HostCorrections, Mode, OutsideWindow,
                                            PressOutcome, QuestionOutcome, Reading, TieBreak)
from appliance.rules.battle.errors import BattleRuleError
from appliance.rules.battle.queries import press_outcome
from appliance.rules.battle.standings import standings
from appliance.rules.battle.state import (NEVER_NS, UNDO_DEPTH, Appeal, BattleState, Correction, Press, Question, Ruling, Theme,
                                          Undone)
from appliance.rules.battle.versions import RULES_VERSIONS

# The latest timestamp taken: CLOCK_MONOTONIC after 146 years of uptime. Any deadline set from it (hours at most)
# stays a 64-bit integer, for the store, the timers and the pages.
MAX_AT_NS = 2**62
RUNS_MAX = 8  # runs of one battle slot (youth-cup 2.4 plays the 1/16 in two): the bound on BattleSetUp.runs


def replace(obj, **changes):
    """``dataclasses.replace`` for the engine's own frozen records, without re-running ``__init__`` (the
    engine validates before it builds; measured: about 5x faster, the bulk of an event's cost)."""
    new = object.__new__(type(obj))
    fields = new.__dict__
    fields.update(obj.__dict__)
    fields.update(changes)
    return new


def _refuse(state: BattleState | None, key: str, code: str, message: str, event: ev.Event, player: int | None = None,
            **params):
    """Raise the refusal ``code`` (one of ``errors.REFUSAL_CODES``) citing the profile's section ``key``.
    ``params`` are its figures (0-based player and question indexes, points, ms); ``player`` joins them."""
    rule = state.profile.cite(key) if state is not None else "battle setup"
    if player is not None:
        params["player"] = player
    raise BattleRuleError(rule, message, event=event, player=player, code=code, params=params)


# ------------------------------------------------------------------------------------------------ setup
def _is_source(source) -> bool:
    """``()`` (typed by hand) or ``(package id, theme number)``: a short id and a number of 0 or more."""
    if source == ():
        return True
    return (isinstance(source, tuple) and len(source) == 2 and isinstance(source[0], str)
            and 0 < len(source[0]) <= 64 and isinstance(source[1], int) and not isinstance(source[1], bool)
            and source[1] >= 0)


def _setup(event: ev.BattleSetUp) -> BattleState:
    profile = event.profile
    if profile is None or not hasattr(profile, "cite"):
        raise BattleRuleError("battle setup", "the setup needs a rules profile", event=event, code="no_profile")
    cite = profile.cite

    def refuse(key: str, code: str, message: str, **params):
        raise BattleRuleError(cite(key), message, event=event, code=code, params=params)

    players = event.players
    if not isinstance(players, tuple) or not all(isinstance(name, str) and name.strip() for name in players):
        refuse("players", "players_not_names", "players are a list of non-empty names")
    if not profile.players_min <= len(players) <= profile.players_max:
        refuse("players", "player_count",
               f"{len(players)} players; this regulation plays {profile.players_min}-{profile.players_max}",
               count=len(players), min=profile.players_min, max=profile.players_max)
    if len(set(players)) != len(players):
        refuse("players", "duplicate_player_name", "two players have the same name")
    if isinstance(event.themes, bool) or not isinstance(event.themes, int) or event.themes < 1:
        refuse("themes", "bad_theme_count", f"a battle needs at least one theme, not {event.themes!r}")
    if event.themes > profile.themes_max:  # the profile's bound: no number reaches the view or the store unbounded
        refuse("themes", "too_many_themes", f"{event.themes} themes; this profile sets up at most {profile.themes_max}",
               themes=event.themes, max=profile.themes_max)
    red = event.red_themes
    if any(isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < event.themes for t in red) \
            or len(set(red)) != len(red):
        refuse("red_themes", "bad_red_themes",
               f"red themes {list(red)} must be distinct theme numbers 0-{event.themes - 1}", themes=event.themes)
    if red and profile.questions_red_theme_multiplier == 1:
        refuse("red_themes", "no_red_themes", "this regulation has no red (doubled) themes")
    if any(not isinstance(name, str) for name in event.theme_names):
        refuse("themes", "bad_theme_names", "theme names are strings")
    values_count = len(profile.questions_values)
    for theme in event.questions:
        if not isinstance(theme, tuple) or len(theme) > values_count or not all(
                isinstance(q, tuple) and len(q) == 2 and all(isinstance(x, str) for x in q) for q in theme):
            refuse("values", "bad_question_texts",
                   f"questions are given per theme as up to {values_count} [text, answer] pairs", max=values_count)
    sources = event.sources
    if not isinstance(sources, tuple) or len(sources) > max(event.themes, len(event.theme_names)) + (
            event.spare_themes or 0) or not all(_is_source(source) for source in sources):
        refuse("themes", "bad_sources", "sources are per theme (package id, theme number in the package) or empty, "
               "one per theme at most", themes=max(event.themes, len(event.theme_names)) + (event.spare_themes or 0))
    authors = event.theme_authors
    if not isinstance(authors, tuple) or len(authors) > max(event.themes, len(event.theme_names)) + (
            event.spare_themes or 0) or not all(isinstance(names, tuple) and all(isinstance(name, str)
                                                                               for name in names) for names in authors):
        refuse("themes", "bad_theme_authors", "theme authors are per theme a list of names, one per theme at most",
               themes=max(event.themes, len(event.theme_names)) + (event.spare_themes or 0))
    absent = event.absent
    if any(isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < len(players) for p in absent):
        refuse("absent", "bad_absent_players", f"absent players must be player numbers 0-{len(players) - 1}",
               players=len(players))
    if len(players) - len(set(absent)) < 1:
        refuse("absent", "nobody_present", "nobody is present")
    if event.spare_themes is not None and (type(event.spare_themes) is not int
                                           or not 0 <= event.spare_themes <= profile.themes_max):
        refuse("tie_break", "bad_spare_themes", f"spare_themes is a number of themes, 0 to {profile.themes_max}",
               max=profile.themes_max)
    if event.cuts is not None and any(isinstance(c, bool) or not isinstance(c, int) or not 1 <= c < len(players)
                                      for c in event.cuts):
        refuse("tie_break", "bad_cuts", f"cuts are places 1-{len(players) - 1} after which the ranking must be strict",
               players=len(players))
    if not (type(event.run) is int and type(event.runs) is int and 1 <= event.run <= event.runs <= RUNS_MAX):
        refuse("runs", "bad_run", f"run must be between 1 and runs, and runs at most {RUNS_MAX}", max=RUNS_MAX)
    if event.mode not in ev.MODES:
        refuse("fallback", "unknown_mode", f"mode {event.mode!r} is not one of {', '.join(ev.MODES)}",
               modes=list(ev.MODES))
    if event.mode == Mode.CLAPS and not profile.corrections_fallback_without_buttons:
        refuse("fallback", "no_fallback_mode", "this regulation has no play without buttons")
    if type(event.at_ns) is not int or not 0 <= event.at_ns <= MAX_AT_NS:
        refuse("players", "bad_timestamp", "at_ns is a CLOCK_MONOTONIC timestamp in ns, 0 or more")
    rules = RULES_VERSIONS.get(event.rules_version) if type(event.rules_version) is int else None
    if rules is None:  # a log from a newer engine: say so rather than play it by other rules
        raise BattleRuleError("battle setup", f"rules version {event.rules_version!r} is not one this engine knows "
                              f"({', '.join(map(str, RULES_VERSIONS))})", event=event, code="unknown_rules_version",
                              params={"version": event.rules_version, "known": list(RULES_VERSIONS)})
    return _settled(BattleState(setup=event, profile=profile, players=players, scores=(0,) * len(players),
                                mode=Mode(event.mode), rules=rules, seq=1, last_at_ns=event.at_ns))


def _settled(state: BattleState) -> BattleState:
    """``state``, just built by this module and not yet seen by anyone, with what the rules say of it stored on
    it (queries.py): the phase, whether the battle is over, the next price. Records hold values, not rules."""
    fields = state.__dict__
    fields["phase"], fields["is_over"], fields["next_value_points"] = queries.conclusions(state)
    return state


# ------------------------------------------------------------------------------------------------ helpers
def _with_question(state: BattleState, question: Question, **changes) -> BattleState:
    new = object.__new__(BattleState)  # replace(state, questions=..., **changes), inlined: every press comes here
    fields = new.__dict__
    fields.update(state.__dict__)
    fields["questions"] = state.questions[:-1] + (question,)
    if changes:
        fields.update(changes)
    return new


def _end_question(state: BattleState, question: Question, outcome: str, at_ns: int, scores: tuple) -> BattleState:
    question = replace(question, outcome=outcome, ended_ns=at_ns, answerer=None, answer_deadline_ns=None,
                       scores_after=scores)
    state = _with_question(state, question, scores=scores)
    theme = state.theme
    if theme is not None and theme.shootout and state.profile.shootout_method == TieBreak.SHOOTOUT_QUESTION:
        # northern-owl 3.3: single questions until the first answer; the theme closes once the tie is broken.
        if standings(state).shootout is None:
            state = replace(state, themes=state.themes[:-1] + (replace(theme, closed=True),))
    return state


# ------------------------------------------------------------------------------------------------ handlers
def _theme_started(state: BattleState, event: ev.ThemeStarted) -> BattleState:
    if state.current_question is not None:
        _refuse(state, "values", "question_not_ended", "a question is still being played", event,
                question=state.current_question.index)
    if not state.is_theme_complete:
        remaining = len(state.profile.questions_values) - state.questions_in_theme
        _refuse(state, "values", "theme_not_finished",
                f"the theme has {remaining} questions left; a theme's questions are asked in a row", event,
                remaining=remaining)
    if not isinstance(event.name, str):
        _refuse(state, "values", "bad_theme_name", "a theme name is a string", event)
    index = len(state.themes)
    setup = state.setup
    if state.regular_themes_played < setup.themes:
        number = state.regular_themes_played
        name = event.name or (setup.theme_names[number] if number < len(setup.theme_names) else "")
        theme = Theme(index=index, name=name, red=number in setup.red_themes, shootout=False,
                      participants=state.present_players, started_ns=event.at_ns)
    else:
        call = standings(state).shootout
        if call is None:
            _refuse(state, "tie_break", "no_shootout_needed",
                    "every theme has been played and no shoot-out is called for", event)
        number = setup.themes + state.shootout_themes_played
        name = event.name or (setup.theme_names[number] if number < len(setup.theme_names) else "")
        theme = Theme(index=index, name=name, red=False, shootout=True, participants=call.players,
                      started_ns=event.at_ns, places=call.places)
    return replace(state, themes=state.themes + (theme,))


def _price_announced(state: BattleState, event: ev.PriceAnnounced) -> BattleState:
    value = event.value_points
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        _refuse(state, "values", "bad_price", f"a price is a positive number of points, not {value!r}", event)
    if state.current_question is not None:
        _refuse(state, "question_end", "question_not_ended", "the current question has not ended", event,
                question=state.current_question.index)
    theme = state.theme
    expected = state.expected_value()
    if theme is None or expected is None:
        _refuse(state, "values", "no_theme_started", "start the next theme first", event)
    if value != expected:
        _refuse(state, "red_themes" if theme.red else "values", "wrong_price",
                f"the next question of this theme is worth {expected}, not {value}", event, value=value,
                expected=expected)
    participants = theme.participants
    if theme.shootout and state.profile.shootout_method == TieBreak.SHOOTOUT_QUESTION:
        call = standings(state).shootout
        if call is None:
            _refuse(state, "tie_break", "tie_broken", "the tie is broken: no more shoot-out questions", event)
        participants = call.players  # the players still tied (northern-owl 3.3)
    question = Question(index=len(state.questions), theme=theme.index, number=state.questions_in_theme,
                        value_points=value, red=theme.red, shootout=theme.shootout, participants=participants,
                        announced_ns=event.at_ns)
    return replace(state, questions=state.questions + (question,))


def _open_question(state: BattleState, event: ev.Event, key: str = "question_end") -> Question:
    question = state.current_question
    if question is None:
        _refuse(state, key, "no_question_in_play", "no question is being played", event)
    return question


def _reading_started(state: BattleState, event: ev.ReadingStarted) -> BattleState:
    question = _open_question(state, event)
    if question.reading != Reading.NOT_STARTED:
        _refuse(state, "press_open", "reading_already_started", "the reading has already started", event,
                question=question.index)
    if question.answerer is not None:
        _refuse(state, "press_open", "press_before_reading",
                "someone signalled before the reading: rule on the answer first", event, question=question.index,
                answerer=question.answerer)
    return _with_question(state, replace(question, reading=Reading.READING, reading_started_ns=event.at_ns))


def _window_after(state: BattleState, question: Question) -> int | None:
    """When the press window closes: the later of the end of reading and the last "wrong" plus their windows
    (eurocup 2.5, 2.9; irkutsk 3.4; northern-owl 3.10). None while the question is still being read."""
    if question.reading != Reading.FINISHED:
        return None
    profile = state.profile
    closes = question.reading_finished_ns + profile.presses_window_after_reading_ms * 1_000_000
    if question.reopened_ns is not None:
        closes = max(closes, question.reopened_ns + profile.presses_window_after_wrong_ms * 1_000_000)
    return closes


def _reading_finished(state: BattleState, event: ev.ReadingFinished) -> BattleState:
    question = _open_question(state, event)
    if question.reading != Reading.READING:
        _refuse(state, "stop_reading",
                {Reading.INTERRUPTED: "reading_interrupted", Reading.FINISHED: "reading_already_finished"}.get(
                    question.reading, "reading_not_started"),
                f"the question is not being read (reading {question.reading})", event, question=question.index,
                reading=question.reading)
    question = replace(question, reading=Reading.FINISHED, reading_finished_ns=event.at_ns)
    return _with_question(state, replace(question, window_closes_ns=_window_after(state, question)))


def _reading_resumed(state: BattleState, event: ev.ReadingResumed) -> BattleState:
    question = _open_question(state, event)
    if question.reading != Reading.INTERRUPTED or question.answerer is not None:
        _refuse(state, "resume_reading", "resume_not_allowed",
                "reading resumes only after an interrupted question's wrong answer", event, question=question.index)
    return _with_question(state, replace(question, reading=Reading.READING))


def _check_player(state: BattleState, event: ev.Event, player: object) -> int:
    if type(player) is not int or not 0 <= player < len(state.players):  # a bool is no player
        _refuse(state, "players", "no_such_player",
                f"there is no player {player!r}; players are 0-{len(state.players) - 1}", event,
                players=len(state.players))
    return player  # type: ignore[return-value]


# The members a press meets, bound once (every press comes here; on Python 3.11 an Enum attribute costs about
# twice a module global).
_BUTTONS, _CLAPS, _READING, _INTERRUPTED = Mode.BUTTONS, PressOutcome.CLAPS, Reading.READING, Reading.INTERRUPTED
_ANSWERER, _BEATEN, _QUEUED, _EARLY, _BLOCKED = (PressOutcome.ANSWERER, PressOutcome.BEATEN, PressOutcome.QUEUED,
                                                 PressOutcome.EARLY, PressOutcome.BLOCKED)
_LOCKOUT = OutsideWindow.LOCKOUT


def _button_pressed(state: BattleState, event: ev.ButtonPressed) -> BattleState:
    player = _check_player(state, event, event.player)
    if event.source not in ev.PRESS_SOURCES:
        _refuse(state, "press_open", "bad_press_source",
                f"press source {event.source!r} is not one of {', '.join(ev.PRESS_SOURCES)}", event,
                sources=list(ev.PRESS_SOURCES))
    question = state.current_question
    if question is None:
        return state  # between questions a press means nothing (eurocup 2.5): recorded in the log only
    if state.mode != _BUTTONS:
        outcome = _CLAPS  # mubc 4.4: the host points; stray presses are kept for the protocol only
    else:
        outcome = press_outcome(state, question, player, event.at_ns)
    press = object.__new__(Press)  # Press(...) without the frozen __init__'s setattr per field (the hot path)
    press.__dict__.update(player=player, at_ns=event.at_ns, source=event.source, outcome=outcome)
    presses = question.presses + (press,)
    changes: dict = {"presses": presses}
    profile = state.profile
    if outcome == _ANSWERER:
        if question.answerer is not None:  # an earlier edge arrived late: it takes the turn back
            presses = tuple(replace(p, outcome=_BEATEN) if p.player == question.answerer
                            and p.at_ns == question.answerer_press_ns else p for p in presses)
            changes["presses"] = presses
        changes.update(answerer=player, answerer_press_ns=event.at_ns, pointed_ns=None, answer_deadline_ns=None,
                       queue=())
        if question.reading == _READING and profile.presses_stop_reading:
            changes["reading"] = _INTERRUPTED  # eurocup 2.7, irkutsk 3.3, northern-owl 3.6
    elif outcome == _QUEUED:
        if all(queued != player for _, queued in question.queue):
            changes["queue"] = tuple(sorted(question.queue + ((event.at_ns, player),)))
    elif outcome == _EARLY and profile.presses_outside_window == _LOCKOUT:
        until = event.at_ns + profile.presses_lockout_ms * 1_000_000 if profile.presses_lockout_ms else NEVER_NS
        changes["locked"] = question.locked + ((player, until),)
    elif outcome == _BLOCKED:
        changes["locked"] = question.locked + ((player, NEVER_NS),)
    return _with_question(state, replace(question, **changes))


def _answerer_pointed(state: BattleState, event: ev.AnswererPointed) -> BattleState:
    question = _open_question(state, event, "during_answer")
    if state.mode == Mode.BUTTONS and question.answerer is None:
        # «Отвечает…» while nobody has pressed (the reading still on): that is the reason, not the player
        _refuse(state, "during_answer", "nobody_signalled", "nobody has signalled", event,
                question=question.index)
    player = _check_player(state, event, event.player)
    profile = state.profile
    changes: dict = {}
    if state.mode == Mode.BUTTONS:
        if player != question.answerer:
            _refuse(state, "during_answer", "not_the_answerer",
                    f"{state.players[question.answerer]} signalled first, not {state.players[player]}", event,
                    player, first=question.answerer, question=question.index)
        if question.pointed_ns is not None:
            _refuse(state, "during_answer", "answerer_already_pointed", "the answerer has already been pointed to",
                    event, player, question=question.index)
    else:
        # mubc 4.4: "on claps" the host picks whoever he saw first among those still in play.
        if question.answerer is not None and question.pointed_ns is not None:
            _refuse(state, "during_answer", "already_answering", "someone is already answering", event, player,
                    answerer=question.answerer, question=question.index)
        if player not in question.participants or player in question.answered:
            _refuse(state, "one_answer", "already_answered", f"{state.players[player]} may not answer this question",
                    event, player, question=question.index)
        closes = question.window_closes_ns
        if question.answerer is None and closes is not None \
                and event.at_ns >= closes + state.rules.deadline_in_time_ns:
            # a clap counts within the same window as a signal: after it the question is over
            _refuse(state, "fallback", "press_window_closed",
                    f"the press window closed {(event.at_ns - closes) / 1e9:.1f} s ago; "
                    "on claps too a player is pointed to only within it", event, player,
                    late_ms=(event.at_ns - closes) // 1_000_000, question=question.index)
        changes.update(answerer=player, answerer_press_ns=event.at_ns)
        if question.reading == Reading.READING and profile.presses_stop_reading:
            changes["reading"] = Reading.INTERRUPTED
    changes.update(pointed_ns=event.at_ns, answer_deadline_ns=_answer_deadline(state, event.at_ns))
    return _with_question(state, replace(question, **changes))


def _answering(state: BattleState, event: ev.Event) -> Question:
    question = state.current_question
    if question is None or question.answerer is None:
        _refuse(state, "during_answer", "nobody_answering",
                "nobody is answering: the host points to the answerer before ruling", event)
    return question


def _answer_deadline(state: BattleState, from_ns: int) -> int | None:
    """When the answer time counted from ``from_ns`` runs out (eurocup 2.8: 3 s); None: the profile sets no limit."""
    limit = state.profile.answer_limit_ms
    return from_ns + limit * 1_000_000 if limit else None


def _short_form_given(state: BattleState, event: ev.ShortFormGiven) -> BattleState:
    if not state.profile.answer_short_form:
        _refuse(state, "short_form", "no_short_form", "this regulation gives no short form of the question", event)
    question = _answering(state, event)
    if question.reading != Reading.INTERRUPTED:
        _refuse(state, "short_form", "short_form_not_interrupted",
                "the short form is given only when the reading was interrupted", event, question=question.index)
    # eurocup 2.8: the 3 s count from the short form
    return _with_question(state, replace(question, answer_deadline_ns=_answer_deadline(state, event.at_ns)))


def _clarification_requested(state: BattleState, event: ev.ClarificationRequested) -> BattleState:
    if not state.profile.answer_clarify:
        _refuse(state, "clarify", "no_clarify", "this regulation has no \"уточните\"", event)
    question = _answering(state, event)
    return _with_question(state, replace(question, answer_deadline_ns=_answer_deadline(state, event.at_ns)))


def _answer_time_extended(state: BattleState, event: ev.AnswerTimeExtended) -> BattleState:
    if not state.profile.answer_extension:
        _refuse(state, "extension", "no_extension", "this regulation gives no extra answer time", event)
    question = _answering(state, event)
    if isinstance(event.extra_ms, bool) or not isinstance(event.extra_ms, int) or event.extra_ms <= 0:
        _refuse(state, "extension", "bad_extension",
                f"an extension is a positive number of ms, not {event.extra_ms!r}", event)
    limit_ms = state.profile.answer_extension_max_ms
    if event.extra_ms > limit_ms:  # «по своему усмотрению» (northern-owl 3.7), within the profile's bound
        _refuse(state, "extension", "extension_too_long",
                f"an extension is at most {limit_ms} ms, not {event.extra_ms}", event, max_ms=limit_ms,
                max_s=limit_ms // 1000)
    base = question.answer_deadline_ns if question.answer_deadline_ns is not None else event.at_ns
    return _with_question(state, replace(question, answer_deadline_ns=base + event.extra_ms * 1_000_000))


def _judge(state: BattleState, event: ev.Event, question: Question, correct: bool, by_time: bool) -> BattleState:
    player = question.answerer
    value = question.value_points
    ruling = Ruling(player=player, correct=correct, at_ns=event.at_ns, by_time=by_time)
    scores = list(state.scores)
    scores[player] += value if correct else -value  # eurocup 2.3, red themes at double value (3.4)
    scores = tuple(scores)
    question = replace(question, rulings=question.rulings + (ruling,))
    if correct:
        return _end_question(state, question, QuestionOutcome.RIGHT, event.at_ns, scores)
    if question.shootout and state.profile.shootout_method == TieBreak.SHOOTOUT_QUESTION:
        return _end_question(state, question, QuestionOutcome.FIRST_ANSWER, event.at_ns, scores)  # northern-owl 3.3
    answered = question.answered
    if all(p in answered for p in question.participants):
        return _end_question(state, question, QuestionOutcome.ALL_WRONG, event.at_ns, scores)  # eurocup 2.11.2
    question = replace(question, answerer=None, answerer_press_ns=None, pointed_ns=None, answer_deadline_ns=None,
                       reopened_ns=event.at_ns)
    # the window is recomputed at every "wrong": 7 s after the later of "wrong" and the end of reading (2.9)
    question = replace(question, window_closes_ns=_window_after(state, question))
    queue = [(at, p) for at, p in question.queue if p not in answered]
    if queue:
        # eurocup 2.10.1: a signal given after the reset answers next at once; later queued signals were given
        # before the next reset and no longer count (2.9).
        at, nxt = queue[0]
        question = replace(question, answerer=nxt, answerer_press_ns=at, queue=())
    else:
        question = replace(question, queue=())
    return _with_question(state, question, scores=scores)


def _answer_judged(state: BattleState, event: ev.AnswerJudged) -> BattleState:
    question = _answering(state, event)
    if not isinstance(event.correct, bool):
        _refuse(state, "scoring", "bad_ruling", "a ruling is right (true) or wrong (false)", event)
    return _judge(state, event, question, event.correct, by_time=False)


def _time_called(state: BattleState, event: ev.TimeCalled) -> BattleState:
    question = _open_question(state, event)
    if question.answerer is not None:
        deadline = question.answer_deadline_ns
        if state.profile.answer_limit_ms and question.pointed_ns is None:
            _refuse(state, "answer_limit", "answerer_not_pointed",
                    "the answer time starts when the host points to the answerer", event, answerer=question.answerer,
                    question=question.index)
        if deadline is not None and event.at_ns < deadline + state.rules.deadline_in_time_ns:
            # eurocup 2.8 «с задержкой не более 3 секунд»: an answer at the 3rd second is in time (version 2)
            _refuse(state, "answer_limit", "answer_time_running",
                    f"the answer time runs {(deadline - event.at_ns) / 1e9:.1f} s more", event,
                    remaining_ms=(deadline - event.at_ns) // 1_000_000, question=question.index)
        return _judge(state, event, question, False, by_time=True)  # eurocup 2.8, northern-owl 3.7
    return _window_over(state, event, question)


def _window_over(state: BattleState, event: ev.Event, question: Question) -> BattleState:
    closes = question.window_closes_ns
    if closes is None and question.reading == Reading.NOT_STARTED:  # «Время» before the reading: not «still read»
        _refuse(state, "window_after_reading", "reading_not_started", "the reading has not started", event,
                question=question.index, reading=question.reading)
    if closes is None:
        _refuse(state, "window_after_reading", "window_not_started",
                "the press window has not started: the reading has not ended", event, question=question.index)
    if event.at_ns < closes + state.rules.deadline_in_time_ns:
        # irkutsk 3.4, northern-owl 3.10 «в течение 5 секунд»: the window is over only after its last instant
        _refuse(state, "window_after_reading", "window_open",
                f"the press window is open {(closes - event.at_ns) / 1e9:.1f} s more", event,
                remaining_ms=(closes - event.at_ns) // 1_000_000, question=question.index)
    return _end_question(state, question, QuestionOutcome.UNANSWERED, event.at_ns, state.scores)  # eurocup 2.11.3


def _press_window_expired(state: BattleState, event: ev.PressWindowExpired) -> BattleState:
    question = _open_question(state, event)
    if question.answerer is not None:
        _refuse(state, "during_answer", "window_paused_for_answer", "someone is answering; the window is not running",
                event, answerer=question.answerer, question=question.index)
    return _window_over(state, event, question)


def _question_withdrawn(state: BattleState, event: ev.QuestionWithdrawn) -> BattleState:
    if not state.profile.corrections_withdraw:
        _refuse(state, "withdraw", "no_withdrawals", "this regulation does not withdraw questions", event)
    question = state.last_question
    if question is None or question.withdrawn:
        _refuse(state, "withdraw", "nothing_to_withdraw",
                "there is no question to withdraw (only the last one may be)", event)
    if question.is_over:
        if not state.profile.corrections_withdraw_ended:
            # irkutsk 3.7: rulings are final; a question may be withdrawn only while it is in play
            _refuse(state, "withdraw", "withdraw_in_play_only", "a question may be withdrawn only while it is in play",
                    event, question=question.index)
        barrier = correction_barrier(state, question.index)
        if barrier is not None:  # withdrawing a played question revises its rulings
            _refuse(state, "corrections", _barrier_code(state), barrier, event, question=question.index)
    _refuse_if_appeal_decided(state, event, question.index)  # in play too: mubc 4.2 disputes come during play
    old = question
    question = replace(question, withdrawn=True, withdrawn_reason=event.reason if isinstance(event.reason, str) else "")
    scores = _rescored(state.scores, old, question)
    if not question.is_over:
        return _end_question(state, question, QuestionOutcome.WITHDRAWN, event.at_ns, scores)
    return _with_question(state, question, scores=scores)


def _points(question: Question, players: int) -> list:
    """What ``question`` adds to each player's score: the sum of its rulings that count (none if withdrawn)."""
    out = [0] * players
    if not question.withdrawn:
        for ruling in question.rulings:
            out[ruling.player] += ruling.points(question.value_points)
    return out


def _rescored(scores: tuple, old: Question, new: Question) -> tuple:
    """Scores after ``old`` becomes ``new`` (withdrawn, a ruling corrected or voided): the score is always the
    sum of the rulings that count."""
    before, after = _points(old, len(scores)), _points(new, len(scores))
    return tuple(score - b + a for score, b, a in zip(scores, before, after))


def _answer_announced(state: BattleState, event: ev.AnswerAnnounced) -> BattleState:
    question = state.last_question
    if question is None or not question.is_over:
        _refuse(state, "answer_announced", "answer_before_question_end",
                "the answer is announced after the question ends", event)
    if question.answer_announced:
        _refuse(state, "answer_announced", "answer_already_announced", "the answer has already been announced", event,
                question=question.index)
    return _with_question(state, replace(question, answer_announced=True))


def _correct(state: BattleState, event: ev.Event, index: int, player: int, correct: bool, kind: str,
             reason: str) -> BattleState:
    """Change ``player``'s ruling on question ``index``. An answer made right ends the question there (eurocup
    2.11.1: the question ends with the right answer), so the rulings after it are void: they count for nobody and
    the protocol shows them voided. Made wrong again, the answers it voided count again; a right answer made
    wrong invents no later answers."""
    old = state.questions[index]
    ruling = old.ruling_of(player)
    if ruling is None:
        _refuse(state, "corrections", "no_answer_to_correct",
                f"{state.players[player]} gave no answer to question {index}", event, player, question=index)
    if ruling.void:
        _refuse(state, "corrections", "answer_voided", f"{state.players[player]}'s answer was voided: "
                                      f"{state.players[ruling.voided_by]}'s answer was made right before it",
                event, player, first=ruling.voided_by, question=index)
    if ruling.effective == correct:
        _refuse(state, "corrections", "ruling_unchanged", f"the ruling already is {'right' if correct else 'wrong'}",
                event, player, correct=correct, question=index)
    ruling = replace(ruling, corrections=ruling.corrections + (Correction(event.at_ns, correct, kind, reason),))
    position = old.answered.index(player)
    rulings = []
    for number, other in enumerate(old.rulings):
        if number == position:
            other = ruling
        elif number > position and correct and not other.void:
            other = replace(other, voided_by=player)
        elif not correct and other.voided_by == player:
            other = replace(other, voided_by=None)
        rulings.append(other)
    question = replace(old, rulings=tuple(rulings))
    scores = _rescored(state.scores, old, question)
    if not question.is_over and correct:
        # the answer was right after all: the question ends (eurocup 2.11.1)
        state = replace(state, questions=state.questions[:index] + (question,) + state.questions[index + 1:])
        return _end_question(state, question, QuestionOutcome.RIGHT, event.at_ns, scores)
    if question.is_over and question.outcome in (QuestionOutcome.RIGHT, QuestionOutcome.ALL_WRONG,
                                                 QuestionOutcome.UNANSWERED):
        if correct:
            question = replace(question, outcome=QuestionOutcome.RIGHT)
        elif not any(r.effective and not r.void for r in question.rulings):
            everyone = all(p in question.answered for p in question.participants)
            question = replace(question, outcome=QuestionOutcome.ALL_WRONG if everyone else QuestionOutcome.UNANSWERED)
    return replace(state, scores=scores,
                   questions=state.questions[:index] + (question,) + state.questions[index + 1:])


def _check_question_index(state: BattleState, event: ev.Event, index: object, key: str) -> int:
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(state.questions):
        _refuse(state, key, "no_such_question", f"there is no question {index!r}", event,
                questions=len(state.questions))
    return index  # type: ignore[return-value]


def correction_barrier(state: BattleState, index: int) -> str | None:
    """Why the host may not revise the rulings of question ``index`` now (profile ``corrections.host``), or
    None if he may. One policy for ``RulingCorrected``, ``QuestionWithdrawn`` and ``ActionUndone``.

    Reaching the next question or theme closes rulings, and what the battle has reached is measured by
    ``state.questions_reached``/``themes_reached``, which undo does not lower: taking back a mistaken
    ``PriceAnnounced`` or ``ThemeStarted`` returns the host to between questions, but what it closed stays
    closed (irkutsk 3.7 «задним числом не пересматриваются»)."""
    policy = state.profile.corrections_host
    if policy == HostCorrections.ANY_TIME:
        return None
    if policy == HostCorrections.NEVER:
        return "the host's rulings are final"
    if policy == HostCorrections.CURRENT_QUESTION:
        # irkutsk 3.7: the host may check at once; rulings are not revised afterwards. mubc 4.2: later only an
        # answer disputed before the next question (AppealLodged), decided with AppealDecided
        if index != state.questions_reached - 1:
            later = "; a dispute lodged in time is decided by AppealDecided" \
                if state.profile.corrections_appeals != Appeals.NONE else ""
            return f"a ruling may be corrected only before the next question is announced{later}"
    if policy == HostCorrections.APPEAL_WINDOW:
        # youth-cup 3.1: disputes are heard right after the theme of the question ends, before the next theme
        # starts; "in other cases disputed answers are not considered". The question in play may be fixed at once.
        question = state.questions[index]
        in_window = question.theme == state.themes_reached - 1 and (
            index == state.questions_reached - 1 or state.is_theme_complete)
        if not in_window:
            return ("a ruling may be revised only at once or after its theme ends, before the next theme starts; "
                    "in other cases disputed answers are not considered")
    return None


def _barrier_code(state: BattleState) -> str:
    """The refusal code of :func:`correction_barrier`'s reason, by the profile's ``corrections.host`` policy."""
    return {HostCorrections.NEVER: "rulings_final", HostCorrections.CURRENT_QUESTION: "correction_after_next_question",
            HostCorrections.APPEAL_WINDOW: "correction_outside_appeal_window"}[state.profile.corrections_host]


def _decided_appeal(state: BattleState, question: int, player: int | None = None) -> int | None:
    """The first decided appeal on ``player``'s ruling of ``question`` (any player's if None; a decision voiding
    the question counts for every ruling), if the rules make decided appeals final (youth-cup 3.3), else None."""
    if not state.rules.decided_appeals_final:
        return None
    for number, appeal in enumerate(state.appeals):
        if appeal.decided and appeal.question == question and (
                player is None or appeal.player == player or (appeal.accepted and appeal.correct is None)):
            return number
    return None


def _refuse_if_appeal_decided(state: BattleState, event: ev.Event, question: int, player: int | None = None) -> None:
    decided = _decided_appeal(state, question, player)
    if decided is not None:
        # youth-cup 3.3 «Принятые решения по апелляциям не оспариваются и в дальнейшем не пересматриваются»
        _refuse(state, "appeal_decisions", "appeal_decided_ruling_final",
                f"appeal {decided} on this ruling has been decided; the decision is final", event, player,
                question=question, appeal=decided)


def _ruling_corrected(state: BattleState, event: ev.RulingCorrected) -> BattleState:
    index = _check_question_index(state, event, event.question, "corrections")
    player = _check_player(state, event, event.player)
    barrier = correction_barrier(state, index)
    if barrier is not None:
        _refuse(state, "corrections", _barrier_code(state), barrier, event, player, question=index)
    _refuse_if_appeal_decided(state, event, index, player)
    if not isinstance(event.correct, bool):
        _refuse(state, "corrections", "bad_corrected_ruling", "a corrected ruling is right (true) or wrong (false)",
                event, player, question=index)
    return _correct(state, event, index, player, event.correct, CorrectionKind.HOST, event.reason)


def _appeal_lodged(state: BattleState, event: ev.AppealLodged) -> BattleState:
    policy = state.profile.corrections_appeals
    if policy == Appeals.NONE:
        _refuse(state, "appeals", "no_appeals", "this regulation has no appeals; the host's ruling is final", event)
    player = _check_player(state, event, event.player)
    index = _check_question_index(state, event, event.question, "appeals")
    question = state.questions[index]
    if policy == Appeals.AFTER_THEME:
        # youth-cup 3.1: right after the theme of the disputed question ends, before the next theme is read
        # (a next theme started, even if undone, has closed the window: themes_reached)
        if question.theme != state.themes_reached - 1 or not state.is_theme_complete:
            _refuse(state, "appeals", "appeal_after_theme",
                    "an appeal is lodged after its theme ends and before the next one starts", event, player,
                    question=index)
    elif policy == Appeals.BEFORE_NEXT_QUESTION:
        # mubc 4.2 «оспорил ответ до оглашения следующего вопроса»: before the next question is announced (even
        # if that was undone); from the moment an answer is judged (rules version 2), or once the question ended
        judged = question.is_over or (state.rules.dispute_once_judged and bool(question.rulings))
        if index != state.questions_reached - 1 or not judged:
            if state.rules.dispute_once_judged and index == state.questions_reached - 1:
                _refuse(state, "appeals", "appeal_before_ruling", "an answer is disputed once it has been judged",
                        event, player, question=index)
            _refuse(state, "appeals", "appeal_after_question",
                    "an answer is disputed after its question and before the next one", event, player, question=index)
    _refuse_if_appeal_decided(state, event, index, player)
    appeal = Appeal(player=player, question=index, claim=event.claim if isinstance(event.claim, str) else "",
                    lodged_ns=event.at_ns)
    return replace(state, appeals=state.appeals + (appeal,))


def _appeal_decided(state: BattleState, event: ev.AppealDecided) -> BattleState:
    index = event.appeal
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(state.appeals):
        _refuse(state, "appeals", "no_such_appeal", f"there is no appeal {index!r}", event, appeals=len(state.appeals))
    appeal = state.appeals[index]
    if appeal.decided:
        _refuse(state, "appeals", "appeal_already_decided",
                "this appeal has been decided; decisions are not revisited (youth-cup 3.3)", event, appeal=index,
                question=appeal.question)
    if not isinstance(event.accepted, bool) or (event.correct is not None and not isinstance(event.correct, bool)):
        _refuse(state, "appeals", "bad_appeal_decision", "a decision is accepted true/false, correct true/false/null",
                event, appeal=index)
    if event.accepted:  # a decision that would reverse an earlier one on the same ruling (youth-cup 3.3)
        _refuse_if_appeal_decided(state, event, appeal.question, None if event.correct is None else appeal.player)
    decided = replace(appeal, decided=True, accepted=event.accepted, correct=event.correct, decided_ns=event.at_ns)
    appeals = state.appeals[:index] + (decided,) + state.appeals[index + 1:]
    if not event.accepted:
        return replace(state, appeals=appeals)
    question = state.questions[appeal.question]
    if event.correct is None:  # the question itself was incorrect: it is voided
        if question.withdrawn or not question.is_over:
            _refuse(state, "appeals", "question_not_voidable", "the question is still in play or already withdrawn",
                    event, appeal=index, question=question.index)
        old = question
        question = replace(question, withdrawn=True, withdrawn_reason=f"appeal: {appeal.claim}")
        scores = _rescored(state.scores, old, question)
        return replace(state, appeals=appeals, scores=scores, questions=state.questions[:appeal.question]
                       + (question,) + state.questions[appeal.question + 1:])
    state = _correct(state, event, appeal.question, appeal.player, event.correct, CorrectionKind.APPEAL, appeal.claim)
    return replace(state, appeals=appeals)


def _mode_changed(state: BattleState, event: ev.ModeChanged) -> BattleState:
    if event.mode not in ev.MODES:
        _refuse(state, "fallback", "unknown_mode", f"mode {event.mode!r} is not one of {', '.join(ev.MODES)}", event,
                modes=list(ev.MODES))
    if event.mode == state.mode:
        _refuse(state, "fallback", "mode_already_on", f"the battle is already in {event.mode} mode", event,
                mode=event.mode)
    if event.mode == Mode.CLAPS and not state.profile.corrections_fallback_without_buttons:
        _refuse(state, "fallback", "no_fallback_mode", "this regulation has no play without buttons", event)
    question = state.current_question
    if question is not None and question.answerer is not None:
        _refuse(state, "fallback", "mode_change_while_answering", "change the mode when nobody is answering", event,
                answerer=question.answerer)
    return replace(state, mode=Mode(event.mode))


def _action_undone(state: BattleState, event: ev.ActionUndone) -> BattleState:
    node = state.history
    later: list[ev.Event] = []
    while node is not None and not node[1].is_host_action:
        later.append(node[1])
        node = node[2]
    if node is None:
        _refuse(state, "corrections", "nothing_to_undo",
                f"there is no host action to undo among the last {UNDO_DEPTH} events", event, depth=UNDO_DEPTH)
    before, undone, older, _depth = node
    # what the battle has reached stays reached: the rulings it closed stay closed (correction_barrier)
    restored = replace(before, history=older, themes_reached=state.themes_reached,
                       questions_reached=state.questions_reached)
    _check_undo(state, restored, undone, event)
    for late in reversed(later):  # presses and expiries after the undone action stand if still valid
        try:
            restored = apply(restored, late)
        except BattleRuleError:
            continue
    return replace(restored, undone=state.undone + (Undone(event.at_ns, undone),))


def _check_undo(state: BattleState, before: BattleState, undone: ev.Event, event: ev.ActionUndone) -> None:
    """Undo obeys the finality of rulings like a correction does: it may not revise a ruling the host could not
    correct now, nor reopen one; an appeal's decision is never taken back (youth-cup 3.3). ``before`` is the
    state undo returns to, with what the battle has reached carried over, so taking back an action that changes
    no ruling (a mistaken PriceAnnounced, ThemeStarted, ReadingStarted) is allowed and reopens nothing: the
    rulings the next question closed stay closed (irkutsk 3.7)."""
    if isinstance(undone, ev.AppealDecided):
        _refuse(state, "appeal_decisions", "appeal_decision_final",
                "an appeal's decision is final and is not revisited", event)
    if state.profile.corrections_host == HostCorrections.ANY_TIME:
        return
    name = type(undone).__name__
    for index, old in enumerate(before.questions[:len(state.questions)]):
        now = state.questions[index]
        barrier = correction_barrier(state, index)
        if barrier is None:
            continue
        if old.rulings != now.rulings or old.withdrawn != now.withdrawn:
            _refuse(state, "corrections", "undo_revises_final_ruling",
                    f"undoing {name} would revise question {index}: {barrier}", event, question=index, action=name)
        if correction_barrier(before, index) is None:
            _refuse(state, "corrections", "undo_reopens_final_ruling",
                    f"undoing {name} would reopen question {index}'s rulings: {barrier}", event, question=index,
                    action=name)


def _remember(state: BattleState, event: ev.Event) -> tuple:
    """The history node for ``event`` applied to ``state``; trims to the newest UNDO_DEPTH when it doubles."""
    older = state.history
    depth = older[3] + 1 if older is not None else 1
    before = object.__new__(BattleState)  # replace(state, history=None), inlined: once per event
    fields = before.__dict__
    fields.update(state.__dict__)
    fields["history"] = None
    node = (before, event, older, depth)
    if depth <= 2 * UNDO_DEPTH:
        return node
    newest = []
    while node is not None and len(newest) < UNDO_DEPTH:
        newest.append((node[0], node[1]))
        node = node[2]
    rebuilt = None
    for number, (before, past) in enumerate(reversed(newest), start=1):
        rebuilt = (before, past, rebuilt, number)
    return rebuilt


HANDLERS: dict[type, Callable[[BattleState, ev.Event], BattleState]] = {
    ev.ThemeStarted: _theme_started,
    ev.PriceAnnounced: _price_announced,
    ev.ReadingStarted: _reading_started,
    ev.ReadingFinished: _reading_finished,
    ev.ReadingResumed: _reading_resumed,
    ev.ButtonPressed: _button_pressed,
    ev.AnswererPointed: _answerer_pointed,
    ev.ShortFormGiven: _short_form_given,
    ev.ClarificationRequested: _clarification_requested,
    ev.AnswerTimeExtended: _answer_time_extended,
    ev.AnswerJudged: _answer_judged,
    ev.TimeCalled: _time_called,
    ev.PressWindowExpired: _press_window_expired,
    ev.QuestionWithdrawn: _question_withdrawn,
    ev.AnswerAnnounced: _answer_announced,
    ev.RulingCorrected: _ruling_corrected,
    ev.AppealLodged: _appeal_lodged,
    ev.AppealDecided: _appeal_decided,
    ev.ModeChanged: _mode_changed,
    ev.ActionUndone: _action_undone,
}


def apply(state: BattleState | None, event: ev.Event) -> BattleState:
    """The battle after ``event``. ``state`` None: ``event`` must be the :class:`BattleSetUp`.

    Raises :class:`BattleRuleError` (with ``.rule``, ``.code``, ``.params``, ``.event``) for an event the rules
    refuse; ``state`` is unchanged (immutable). Pure: the same state and event always give the same result.
    """
    if state is None:
        if not isinstance(event, ev.BattleSetUp):
            raise BattleRuleError("battle setup", f"a battle starts with BattleSetUp, not {type(event).__name__}",
                                  event=event, code="setup_first", params={"event_type": type(event).__name__})
        return _setup(event)
    handler = HANDLERS.get(type(event))
    if handler is None:
        if isinstance(event, ev.BattleSetUp):
            _refuse(state, "players", "already_set_up", "the battle is already set up", event)
        _refuse(state, "players", "not_a_battle_event", f"{type(event).__name__} is not a battle event", event,
                event_type=type(event).__name__)
    at_ns = event.at_ns
    if type(at_ns) is not int or not 0 <= at_ns <= MAX_AT_NS:  # a bool is no timestamp: type, not isinstance
        raise BattleRuleError("event order", f"at_ns must be a CLOCK_MONOTONIC timestamp in ns, not {at_ns!r}",
                              event=event, code="bad_timestamp")
    last_at_ns = state.last_at_ns
    if at_ns < last_at_ns and event.is_host_action and not isinstance(event, ev.ButtonPressed):
        # host commands and timers are stamped on receipt, in order; only presses may carry an earlier edge time
        raise BattleRuleError("event order", "a host action cannot be stamped earlier than the last event",
                              event=event, code="stamped_before_last_event",
                              params={"at_ns": at_ns, "last_at_ns": last_at_ns})
    new = handler(state, event)
    # what the rules say of the new state (queries.py), stored on it: it depends on the themes and questions only
    if new.questions is state.questions and new.themes is state.themes:
        phase, over, next_value = state.phase, state.is_over, state.next_value_points
    else:
        phase, over, next_value = queries.conclusions(new)
    # ``new`` is the handler's own fresh record unless nothing changed: finish it in place rather than copy it
    # once more (nobody else holds it yet); the state given is never touched
    result = replace(new) if new is state else new
    fields = result.__dict__
    if type(event) is ev.ActionUndone:
        fields.update(seq=state.seq + 1, last_at_ns=new.last_at_ns if new.last_at_ns > at_ns else at_ns,
                      phase=phase, is_over=over, next_value_points=next_value)
    else:
        themes, questions = len(new.themes), len(new.questions)
        fields.update(seq=state.seq + 1, last_at_ns=last_at_ns if last_at_ns > at_ns else at_ns,
                      history=_remember(state, event), phase=phase, is_over=over, next_value_points=next_value,
                      themes_reached=state.themes_reached if state.themes_reached > themes else themes,
                      questions_reached=state.questions_reached if state.questions_reached > questions else questions)
    return result


def replay(events) -> BattleState:
    """Apply ``events`` from nothing; raises :class:`BattleRuleError` at the first refused one (each event under
    the rules version its battle's setup names, docs/battle-log.md)."""
    state = None
    for event in events:
        state = apply(state, event)
    if state is None:
        raise ValueError("no events to replay")
    return state


def next_run(first: ev.BattleSetUp, players: tuple, at_ns: int, absent: tuple = ()) -> ev.BattleSetUp:
    """The setup of the next run of a battle slot on the same themes (youth-cup 2.4: the 1/16 is played in two
    runs on the same themes): the same profile, themes, red themes, names and questions, new players.

    Raises :class:`BattleRuleError` if the slot has no further run.
    """
    if first.run >= first.runs:
        raise BattleRuleError(first.profile.cite("runs"), f"run {first.run} of {first.runs} is the slot's last",
                              event=first, code="last_run", params={"run": first.run, "runs": first.runs})
    return dataclasses.replace(first, at_ns=at_ns, players=tuple(players), absent=tuple(absent), run=first.run + 1)
