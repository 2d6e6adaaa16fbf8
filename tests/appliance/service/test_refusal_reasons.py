"""Refusals that name the true reason (issue 20): the engine is asked every host command in every phase of a
eurocup battle, and each refusal's code is the one the situation calls for, never a fallback. Two were wrong:
«Отвечает…» during the reading said «Нет такого игрока (2.1)» (nobody has pressed), and «Время» after an undo
said «Вопрос ещё читается» when the reading had not started."""

from __future__ import annotations

import pytest

import appliance.words as words
from appliance.rules import battle as engine
from appliance.rules.battle import events as ev
from appliance.rules.battle.errors import REFUSAL_CODES
from appliance.service.battle_adapter import HOST_COMMANDS, BattleAdapter

ARGS = {"player": 0, "question": 0, "correct": True, "extra_ms": 5000, "appeal": 0, "accept": True, "reason": "x",
        "claim": "x"}
PHASES = {
    "set up": [], "theme": ["next"], "reading": ["next", "next"], "undone reading": ["next", "next", "undo"],
    "window": ["next", "next", "reading_done"], "pressed": ["next", "next", "reading_done", "press"],
    "answering": ["next", "next", "reading_done", "press", "point"],
    "over": ["next", "next", "reading_done", "press", "point", "right"],
}
# phase -> command -> the refusal's code (None: the command is taken). eurocup has no appeals, no «Уточните»,
# no extra time; the rest is the regulation's order of a question (2.5-2.11).
EXPECTED = {
    "set up": {"announce": "answer_before_question_end", "correct": "no_such_question", "next": None,
               "pick": "no_question_in_play", "point": "no_question_in_play", "reading_done": "no_question_in_play",
               "resume_reading": "no_question_in_play", "time": "no_question_in_play", "undo": "nothing_to_undo",
               "withdraw": "nothing_to_withdraw"},
    "theme": {"announce": "answer_before_question_end", "correct": "no_such_question", "next": None,
              "pick": "no_question_in_play", "point": "no_question_in_play", "reading_done": "no_question_in_play",
              "resume_reading": "no_question_in_play", "time": "no_question_in_play", "undo": None,
              "withdraw": "nothing_to_withdraw"},
    "reading": {"announce": "answer_before_question_end", "correct": "no_answer_to_correct",
                "next": "question_not_ended", "pick": "nobody_signalled",
                "point": "nobody_signalled",  # was «Нет такого игрока (2.1)»
                "reading_done": None, "resume_reading": "resume_not_allowed", "time": "window_not_started",
                "undo": None, "withdraw": None},
    "undone reading": {"announce": "answer_before_question_end", "correct": "no_answer_to_correct",
                       "next": "question_not_ended", "pick": "nobody_signalled", "point": "nobody_signalled",
                       "reading_done": "reading_not_started", "resume_reading": "resume_not_allowed",
                       "time": "reading_not_started",  # was «Вопрос ещё читается»
                       "undo": None, "withdraw": None},
    "window": {"announce": "answer_before_question_end", "correct": "no_answer_to_correct",
               "next": "question_not_ended", "pick": "nobody_signalled", "point": "nobody_signalled",
               "reading_done": "reading_already_finished", "resume_reading": "resume_not_allowed",
               "time": "window_open", "undo": None, "withdraw": None},
    "pressed": {"announce": "answer_before_question_end", "claps": "mode_change_while_answering",
                "correct": "no_answer_to_correct", "next": "question_not_ended", "pick": None, "point": None,
                "reading_done": "reading_already_finished", "resume_reading": "resume_not_allowed", "right": None,
                "short_form": "short_form_not_interrupted", "time": "answerer_not_pointed", "undo": None,
                "withdraw": None, "wrong": None},
    "answering": {"announce": "answer_before_question_end", "claps": "mode_change_while_answering",
                  "correct": "no_answer_to_correct", "next": "question_not_ended", "pick": "answerer_already_pointed",
                  "point": "answerer_already_pointed", "reading_done": "reading_already_finished",
                  "resume_reading": "resume_not_allowed", "right": None, "short_form": "short_form_not_interrupted",
                  "time": "answer_time_running", "undo": None, "withdraw": None, "wrong": None},
    "over": {"announce": None, "correct": "ruling_unchanged", "next": None, "pick": "no_question_in_play",
             "point": "no_question_in_play", "reading_done": "no_question_in_play",
             "resume_reading": "no_question_in_play", "time": "no_question_in_play", "undo": None, "withdraw": None},
}
# the same in every phase of a eurocup battle: what its regulation does not have, and a ruling with nobody answering
EVERYWHERE = {"appeal": "no_appeals", "appeal_decide": "no_such_appeal", "clarify": "no_clarify",
              "extend": "no_extension", "claps": None, "right": "nobody_answering", "wrong": "nobody_answering",
              "short_form": "nobody_answering"}


def act(adapter, state, step, at_ns):
    if step == "press":
        return engine.apply(state, ev.ButtonPressed(at_ns=at_ns, player=0, source="button"))
    for event in adapter.command_events(step, state, ARGS, at_ns):
        state = engine.apply(state, event)
    return state


@pytest.mark.parametrize("phase", sorted(PHASES))
def test_every_host_command_in_every_phase_is_refused_for_its_true_reason(phase):
    adapter = BattleAdapter()
    state = engine.apply(None, adapter.setup_event(
        {"profile": "eurocup", "players": ["Анна", "Борис", "Вера"], "themes": 4}, at_ns=1))
    at_ns = 10
    for step in PHASES[phase]:
        at_ns += 10**9
        state = act(adapter, state, step, at_ns)
    got = {}
    for command in sorted(HOST_COMMANDS):
        try:
            act(adapter, state, command, at_ns + 10**8)
            got[command] = None
        except engine.BattleRuleError as refused:
            got[command] = refused.code
            assert refused.code in REFUSAL_CODES and words.has(f"refusal.battle.{refused.code}"), refused.code
            said = adapter.word_rule_error(refused, state.players)
            assert said["code"] == refused.code and not said["ru"].startswith("Правила боя не позволяют")
    assert got == {**EVERYWHERE, **EXPECTED[phase]}
    assert "no_such_player" not in got.values()  # every command here names a real player, or none


def test_the_two_reasons_read_as_the_host_sees_them():
    adapter = BattleAdapter()
    state = engine.apply(None, adapter.setup_event(
        {"profile": "eurocup", "players": ["Анна", "Борис"], "themes": 4}, at_ns=1))
    for at_ns, step in enumerate(["next", "next"], start=2):
        state = act(adapter, state, step, at_ns * 10**9)
    with pytest.raises(engine.BattleRuleError) as refused:
        act(adapter, state, "point", 5 * 10**9)
    assert adapter.word_rule_error(refused.value, state.players)["ru"].startswith("Никто не нажал")
    state = act(adapter, state, "undo", 6 * 10**9)
    with pytest.raises(engine.BattleRuleError) as refused:
        act(adapter, state, "time", 7 * 10**9)
    assert adapter.word_rule_error(refused.value, state.players)["ru"] == "Чтение ещё не началось (2.5)"
