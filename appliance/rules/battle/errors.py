"""The battle engine's errors: an event the rules refuse, a profile that is not a valid regulation."""

from __future__ import annotations

from typing import Any

from appliance.errors import RulesError


# Every refusal the battle engine raises, by its stable code: (the profile section key it cites, or the fixed
# citation outside a profile; what it means). Codes never change meaning; a new refusal gets a new code here, a
# line in docs/battle-engine.md and a worded line in appliance/service/battle_adapter.py REFUSALS (tests check
# all three). ``params`` count from 0 (player and question indexes), points are points, times are ms.
REFUSAL_CODES: dict[str, tuple[str, str]] = {
    # setup (BattleSetUp)
    "no_profile": ("battle setup", "the setup carries no rules profile"),
    "setup_first": ("battle setup", "a battle starts with BattleSetUp; params: event_type"),
    "players_not_names": ("players", "players are not a list of non-empty names"),
    "player_count": ("players", "the number of players is outside the regulation's range; params: count, min, max"),
    "duplicate_player_name": ("players", "two players have the same name"),
    "bad_theme_count": ("themes", "the number of themes is not a whole number of 1 or more"),
    "too_many_themes": ("themes", "more themes than the profile sets up at most ([themes] max); params: themes, max"),
    "bad_theme_names": ("themes", "theme names are not strings"),
    "bad_red_themes": ("red_themes", "red themes are not distinct theme numbers; params: themes"),
    "no_red_themes": ("red_themes", "the regulation has no red (doubled) themes"),
    "bad_question_texts": ("values", "questions are not per-theme [text, answer] pairs; params: max (per theme)"),
    "bad_sources": ("themes", "sources are not per-theme (package id, theme number) pairs or empty, at most one "
                    "per theme; params: themes (count)"),
    "bad_theme_authors": ("themes", "theme authors are not per-theme lists of names, at most one per theme; "
                          "params: themes (count)"),
    "bad_absent_players": ("absent", "absent players are not player numbers; params: players (count)"),
    "nobody_present": ("absent", "every player is absent"),
    "bad_spare_themes": ("tie_break", "spare_themes is not a number of themes, 0 to [themes] max; params: max"),
    "bad_cuts": ("tie_break", "cuts are not places 1..players-1; params: players (count)"),
    "bad_run": ("runs", "run is not between 1 and runs, or runs is over the bound; params: max (runs)"),
    "last_run": ("runs", "next_run: the slot has no further run; params: run, runs"),
    "unknown_mode": ("fallback", "the mode is not buttons or claps; params: modes"),
    "no_fallback_mode": ("fallback", "the regulation has no play without buttons"),
    "unknown_rules_version": ("battle setup", "the setup names a rules version this engine does not know (a log "
                              "from a newer engine); params: version, known"),
    "bad_timestamp": ("players / event order", "at_ns is not a CLOCK_MONOTONIC timestamp in ns, 0 to 2**62"),
    # event order
    "stamped_before_last_event": ("event order", "a host action is stamped earlier than the last event; "
                                  "params: at_ns, last_at_ns"),
    "already_set_up": ("players", "a second BattleSetUp"),
    "not_a_battle_event": ("players", "the object is not a battle event; params: event_type"),
    # themes and prices
    "question_not_ended": ("values / question_end", "a question is still in play; params: question"),
    "theme_not_finished": ("values", "the theme has questions left, asked in a row; params: remaining"),
    "bad_theme_name": ("values", "the theme name is not a string"),
    "no_shootout_needed": ("tie_break", "every theme is played and no shoot-out is called for"),
    "tie_broken": ("tie_break", "the tie is broken: no more shoot-out questions"),
    "bad_price": ("values", "the price is not a positive whole number of points"),
    "no_theme_started": ("values", "no theme is open for a price: start the next theme first"),
    "wrong_price": ("values / red_themes", "the next question of the theme is worth another price; "
                    "params: value, expected"),
    # reading and presses
    "no_question_in_play": ("question_end (or the command's key)", "no question is being played"),
    "reading_already_started": ("press_open", "the reading has already started; params: question"),
    "press_before_reading": ("press_open", "someone signalled before the reading: rule on the answer first; "
                             "params: question, answerer"),
    "reading_interrupted": ("stop_reading", "the reading was interrupted: point to the answerer; "
                            "params: question, reading"),
    "reading_already_finished": ("stop_reading", "the question has been read already; params: question, reading"),
    "reading_not_started": ("stop_reading", "the reading has not started; params: question, reading"),
    "resume_not_allowed": ("resume_reading", "reading resumes only after an interrupted question's wrong answer; "
                           "params: question"),
    "no_such_player": ("players", "there is no such player number; params: players (count)"),
    "bad_press_source": ("press_open", "the press source is unknown; params: sources"),
    # answering
    "nobody_signalled": ("during_answer", "the host points to a player but nobody has signalled; "
                         "params: player, question"),
    "not_the_answerer": ("during_answer", "another player signalled first; params: player, first, question"),
    "answerer_already_pointed": ("during_answer", "the answerer has already been pointed to; params: player, question"),
    "already_answering": ("during_answer", "someone is already answering; params: player, answerer, question"),
    "already_answered": ("one_answer", "the player may not answer this question (answered or not playing); "
                         "params: player, question"),
    "press_window_closed": ("fallback", "on claps, pointing after the press window closed; "
                            "params: player, late_ms, question"),
    "nobody_answering": ("during_answer", "nobody is answering: point to the answerer before ruling"),
    "no_short_form": ("short_form", "the regulation gives no short form of the question"),
    "short_form_not_interrupted": ("short_form", "the short form is given only after an interrupted reading; "
                                   "params: question"),
    "no_clarify": ("clarify", "the regulation has no «уточните»"),
    "no_extension": ("extension", "the regulation gives no extra answer time"),
    "bad_extension": ("extension", "the extension is not a positive whole number of ms"),
    "extension_too_long": ("extension", "the extension is longer than the profile allows ([answer] extension_max_ms); "
                           "params: max_ms, max_s"),
    "bad_ruling": ("scoring", "a ruling is not true (right) or false (wrong)"),
    "answerer_not_pointed": ("answer_limit", "the answer time starts when the host points to the answerer; "
                             "params: answerer, question"),
    "answer_time_running": ("answer_limit", "the answer time is still running; params: remaining_ms, question"),
    "window_not_started": ("window_after_reading", "the press window has not started: still reading; params: question"),
    "window_open": ("window_after_reading", "the press window is still open; params: remaining_ms, question"),
    "window_paused_for_answer": ("during_answer", "someone is answering, the press window is not running; "
                                 "params: answerer, question"),
    # withdrawals and the answer
    "no_withdrawals": ("withdraw", "the regulation does not withdraw questions"),
    "nothing_to_withdraw": ("withdraw", "no question to withdraw (only the last one may be)"),
    "withdraw_in_play_only": ("withdraw", "a question is withdrawn only while in play; params: question"),
    "answer_before_question_end": ("answer_announced", "the answer is announced after the question ends"),
    "answer_already_announced": ("answer_announced", "the answer has already been announced; params: question"),
    # corrections, undo, appeals
    "rulings_final": ("corrections", "the host's rulings are final (corrections.host = never); "
                      "params: question, player (a correction)"),
    "correction_after_next_question": ("corrections", "a ruling is corrected only before the next question; "
                                       "params: question, player (a correction)"),
    "correction_outside_appeal_window": ("corrections", "a ruling is revised only at once or after its theme, "
                                         "before the next; params: question, player (a correction)"),
    "no_answer_to_correct": ("corrections", "the player gave no answer to that question; params: player, question"),
    "answer_voided": ("corrections", "the player's answer was voided by an earlier right answer; "
                      "params: player, first, question"),
    "ruling_unchanged": ("corrections", "the ruling already is that; params: player, correct, question"),
    "bad_corrected_ruling": ("corrections", "a corrected ruling is not true/false; params: player, question"),
    "no_such_question": ("corrections / appeals", "there is no such question number; params: questions (count)"),
    "nothing_to_undo": ("corrections", "no host action to undo among the last events; params: depth"),
    "undo_revises_final_ruling": ("corrections", "undoing would revise a final ruling; params: question, action"),
    "undo_reopens_final_ruling": ("corrections", "undoing would reopen a closed question's rulings; "
                                  "params: question, action"),
    "appeal_decision_final": ("appeal_decisions", "an appeal's decision is not undone"),
    "no_appeals": ("appeals", "the regulation has no appeals"),
    "appeal_after_theme": ("appeals", "an appeal is lodged after its theme, before the next; params: player, question"),
    "appeal_after_question": ("appeals", "an answer is disputed after its question, before the next; "
                              "params: player, question"),
    "appeal_before_ruling": ("appeals", "an answer is disputed once it has been judged; params: player, question"),
    "appeal_decided_ruling_final": ("appeal_decisions", "an appeal on this ruling has been decided and the decision "
                                    "is final; params: question, appeal, player (if one ruling)"),
    "no_such_appeal": ("appeals", "there is no such appeal; params: appeals (count)"),
    "appeal_already_decided": ("appeals", "the appeal has been decided; params: appeal, question"),
    "bad_appeal_decision": ("appeals", "a decision is not accepted true/false, correct true/false/null; "
                            "params: appeal"),
    "question_not_voidable": ("appeals", "the question is in play or already withdrawn; params: appeal, question"),
    # modes
    "mode_already_on": ("fallback", "the battle already is in that mode; params: mode"),
    "mode_change_while_answering": ("fallback", "the mode changes only when nobody is answering; params: answerer"),
    # the battle log's JSON (events.event_from_dict)
    "bad_event_record": ("battle log", "a log record is not a valid event"),
}


class BattleRuleError(RulesError, ValueError):
    """An event the rules do not allow. The state it was applied to is unchanged (states are immutable).

    ``rule`` names the regulation and section that refuses it (``"eurocup 2.9"``), ``event`` is the event,
    ``player`` the player involved if any. ``str(error)`` is a human sentence that starts with the rule.
    ``code`` is the refusal's stable name (a key of :data:`REFUSAL_CODES`), ``params`` its figures (a dict of
    plain values: 0-based player/question indexes, points, ms) for wording it elsewhere without parsing text.

    >>> error = BattleRuleError("eurocup 2.6", "nobody is answering", event=None, code="nobody_answering")
    >>> str(error), error.code, error.params
    ('eurocup 2.6: nobody is answering', 'nobody_answering', {})
    >>> BattleRuleError("eurocup 2.6", "x", code="no_such_code")
    Traceback (most recent call last):
    ...
    KeyError: "unknown refusal code 'no_such_code' (add it to REFUSAL_CODES)"
    """

    def __init__(self, rule: str, message: str, event: Any = None, player: int | None = None, *,
                 code: str, params: dict[str, Any] | None = None) -> None:
        if code not in REFUSAL_CODES:
            raise KeyError(f"unknown refusal code {code!r} (add it to REFUSAL_CODES)")
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message
        self.event = event
        self.player = player
        self.code = code
        self.params = dict(params or {})


class ProfileError(RulesError, ValueError):
    """A rules profile (TOML) is missing, malformed or names an unknown option; says which file and field."""
