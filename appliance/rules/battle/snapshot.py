"""A JSON-able picture of a battle for the web layer and ``svoyak replay``, and replay from events."""

from __future__ import annotations

from typing import Any, Iterable

from appliance.rules.battle.engine import apply
from appliance.rules.battle.events import Event, event_to_dict
from appliance.rules.battle.queries import buttons_armed, eligible_players
from appliance.rules.battle.standings import standings
from appliance.rules.battle.state import BattleState, Question


def replay(events: Iterable[Event]) -> BattleState:
    """Apply ``events`` from nothing; raises :class:`BattleRuleError` at the first refused one."""
    state = None
    for event in events:
        state = apply(state, event)
    if state is None:
        raise ValueError("no events to replay")
    return state


def question_dict(state: BattleState, question: Question) -> dict[str, Any]:
    return {
        "index": question.index, "theme": question.theme, "number": question.number,
        "value_points": question.value_points, "red": question.red, "shootout": question.shootout,
        "participants": list(question.participants), "reading": question.reading,
        "answerer": question.answerer, "pointed": question.pointed_ns is not None,
        "answer_deadline_ns": question.answer_deadline_ns, "window_closes_ns": question.window_closes_ns,
        "presses": state.press_order(question),
        "rulings": [{"player": r.player, "correct": r.correct, "effective": r.effective, "at_ns": r.at_ns,
                     "by_time": r.by_time, "voided_by": r.voided_by,
                     "corrections": [{"at_ns": c.at_ns, "correct": c.correct, "kind": c.kind, "reason": c.reason}
                                     for c in r.corrections]} for r in question.rulings],
        "outcome": question.outcome, "withdrawn": question.withdrawn, "answer_announced": question.answer_announced,
        "scores_after": list(question.scores_after),
    }


def snapshot(state: BattleState, with_questions: bool = False) -> dict[str, Any]:
    """Everything a screen shows, JSON-able. ``with_questions`` adds every past question (the protocol)."""
    setup = state.setup
    theme = state.theme
    current = state.current_question
    table = standings(state)
    out: dict[str, Any] = {
        "profile": state.profile.name,
        "profile_title": state.profile.title,
        "players": list(state.players),
        "absent": list(setup.absent),
        "scores": list(state.scores),
        "mode": state.mode,
        "phase": state.phase,
        "seq": state.seq,
        "themes_total": setup.themes,
        "themes_played": state.regular_themes_played,
        "shootout_themes_played": state.shootout_themes_played,
        "red_themes": list(setup.red_themes),
        "theme": None if theme is None else {"index": theme.index, "name": theme.name, "red": theme.red,
                                             "shootout": theme.shootout, "participants": list(theme.participants)},
        "questions_in_theme": state.questions_in_theme,
        "next_value_points": state.expected_value(),
        "question": None if current is None else question_dict(state, current),
        "last_question": None if state.last_question is None else question_dict(state, state.last_question),
        "answerer": state.answerer,
        "eligible_players": list(eligible_players(state)),
        "buttons_armed": buttons_armed(state),
        "press_window_closes_ns": state.press_window_closes_ns,
        "answer_deadline_ns": state.answer_deadline_ns,
        "is_over": state.is_over,
        "standings": table.to_dict(),
        "appeals": [{"player": a.player, "question": a.question, "claim": a.claim, "decided": a.decided,
                     "accepted": a.accepted, "correct": a.correct} for a in state.appeals],
        "undone": [{"at_ns": u.at_ns, "event": event_to_dict(u.event)} for u in state.undone],
        "slot": setup.slot, "run": setup.run, "runs": setup.runs,
    }
    if with_questions:
        out["questions"] = [question_dict(state, question) for question in state.questions]
    return out
