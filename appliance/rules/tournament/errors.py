"""Errors of the tournament engine: refusals as values, each with a stable ``code`` and its figures as ``params``.

They subclass :class:`appliance.errors.RulesError` and the fitting builtin, so ``except ValueError`` works too.
``str(error)`` is the engine's English sentence (for logs and the command line); pages word a refusal from its
``code`` and ``params`` (``appliance/service/tournament_refusals.py``), never by parsing the sentence.
"""

from __future__ import annotations

from typing import Any

from appliance.errors import RulesError

# Every refusal of the tournament engine (and of the desk, which raises these classes too), by its stable code:
# what it means and its params. Codes never change meaning; a new refusal gets a new code here, a line in
# docs/tournament.md and a worded line in appliance/service/tournament_refusals.py (a test checks all three).
# ``rule`` params carry the regulation's section ("irkutsk 2.1-2.2") or "" when none applies.
REFUSAL_CODES: dict[str, str] = {
    # the tournament itself
    "tournament.refused": "a refusal raised without a code of its own (a test fails on any such raise; at run time "
                          "the director still reads it, with the engine's sentence); params: message",
    "tournament.not_created": "no tournament yet: a log starts with TournamentCreated",
    "tournament.created_twice": "a second TournamentCreated in one log",
    "tournament.exists": "the desk already has a tournament with this id; params: tid",
    # registration (registration and seeding commands)
    "registration.no_name": "a player needs an id and a name",
    "registration.duplicate": "the player id is registered already; params: player",
    "registration.closed": "registration is closed, only a late entry may join; params: rule",
    "registration.late_after_results": "results are in: a late entry can no longer join",
    "registration.needs_team": "the category is entered by teams; params: category, rule",
    "registration.team_full": "the team has its most players in the category; params: team, count, category, "
                              "most, rule",
    "registration.no_player": "no such player; params: player",
    "registration.withdrawn": "the player has withdrawn already; params: player",
    "registration.already_closed": "registration is closed already",
    "registration.deadline": "the deadline is not a date, time and offset; params: deadline",
    "seeding.after_draw": "seeds are set before the first draw",
    "seeding.count": "the format seeds an exact number of players; params: wanted, given, rule",
    "seeding.twice": "a player is seeded twice",
    "seeding.inactive": "a seeded player is not an active entrant; params: player",
    # draws
    "draw.nothing": "nothing to draw now (the desk's next step is another); params: step, stage",
    "draw.not_yet": "an earlier stage is unfinished or has an open tie; params: stage",
    "draw.has_results": "the stage (or Swiss round, or bracket) has results: no re-draw; params: stage, round",
    "draw.rounds_done": "every Swiss round of the stage is drawn; params: stage, rounds",
    "draw.round_order": "a Swiss round drawn out of order; params: stage, round, expected",
    "draw.bracket_whole": "a bracket format is drawn whole, from its first stage; params: format, stage, rule",
    "draw.records_ahead": "a bracket cannot be drawn ahead through a records rule; params: stage",
    "draw.battle_repeats": "a drawn battle id repeats; params: battle",
    "draw.unknown_player": "a drawn battle seats an unknown player; params: battle, player",
    "draw.bad_seat": "a drawn seat is a reference that names no result of a stage; params: battle, seat",
    "draw.no_players": "no players to draw; params: rule",
    "draw.too_many": "the players do not fit the battles; params: players, battles, size (largest), rule",
    "draw.too_few": "the players cannot fill the fixed number of battles; params: players, battles, "
                    "size (smallest), needed, rule",
    "draw.no_split": "the players cannot be split into battles of the sizes allowed; params: players, low, high, "
                     "rule",
    "draw.seat_count": "players and seats differ (a bug in a draw); params: players, seats",
    "draw.drawn_twice": "a player is drawn twice (a bug in a draw)",
    "draw.constraints": "a player cannot be seated without breaking a constraint; params: player, teams_apart, "
                        "one_seed, rule",
    "draw.teams_meet": "a team has more players than battles, two would meet; params: team, count, battles, rule",
    "draw.seeds": "one seed per battle needs as many seeded players as battles; params: battles, seeded, rule",
    "draw.no_source": "a stage drawn by group has no stage sending players to it; params: stage",
    "draw.no_source_battle": "a player reached a group-drawn stage without a battle in its source; params: player, "
                             "stage, source",
    "draw.group_size": "a group's players do not make one battle; params: group, count, low, high, rule",
    "draw.qualifying_fill": "one qualifying stage cannot fill the next stage's places; params: players, low, high, "
                            "fills, most, rule",
    "draw.qualifying_few": "the qualifying players cannot fill its battles; params: players, battles, rule",
    "draw.qualifying_teams": "the big teams leave too few qualifying players; params: players, battles, left, rule",
    "draw.too_few_for_battle": "too few entrants for a single battle; params: players, size, rule",
    "draw.byes_fixed": "byes need battles that send a fixed number on; params: stage, rule",
    "draw.byes_small": "byes leave a battle below its smallest size; params: players, stage, joined, playing, "
                       "battles, size, low, rule",
    # rooms and battles
    "rooms.none": "a room needs a name (name at least one)",
    "battle.unknown": "no battle with this id; params: battle",
    "battle.not_ready": "the battle's players are not known yet (earlier results missing); params: battle",
    "battle.has_result": "the battle has a result already; params: battle",
    "box.no_session": "this box runs no battle session to play a battle on",
    # results
    "result.scores": "a result line lacks a player or a whole-number score; params: battle",
    "result.no_line": "the result has no line for the player; params: battle, player",
    "result.two_lines": "a player has two result lines; params: battle",
    "result.players": "the result's players are not the battle's; params: battle, given, seated",
    "result.places": "places are not 1, 2, ... with shared places covering theirs; params: battle, places",
    "result.later_stage": "a later stage has results: this result can no longer change; params: battle",
    "result.ranking_key": "an unknown ranking key; params: key",
    # written rounds and stages
    "sheet.length": "a sheet has the wrong number of marks; params: player, got, expected, themes, questions",
    "sheet.marks": "a sheet has unknown marks; params: player, marks",
    "sheet.not_written": "the stage is not a written round; params: stage",
    "sheet.not_open": "the written round is not drawn (open) yet; params: stage",
    "sheet.closed": "the written round is closed: no more sheets; params: stage",
    "sheet.not_writer": "the player does not write this round; params: player, stage",
    "stage.closes_with_results": "only a written round is closed by hand; params: stage",
    "stage.already_closed": "the written round is closed already; params: stage",
    # theme names (typed by the director per theme pack)
    "themes.unknown_pack": "no drawn battle plays this theme pack; params: pack",
    "themes.not_text": "theme names are text; params: pack",
    "themes.too_many": "more names than the pack has themes; params: pack, names, themes",
    "themes.too_long": "a theme name is longer than the limit; params: pack, limit",
    "themes.bad_sources": "a package source per name (package id, theme number from 0), or none; params: pack",
    # ties
    "tie.unknown": "no open tie with this id; params: tie, open",
    "tie.order": "the order must rank exactly the tied players; params: tie, players",
    # formats (TOML presets, the organisers' changes)
    "format.unknown": "no shipped preset of this name; params: name, presets",
    "format.read": "the format file cannot be read; params: path, reason",
    "format.toml": "the format file is not valid TOML; params: path, error",
    "format.change": "a change is not stage.field of a known stage; params: key, stages",
    "format.field": "unknown fields; params: where, fields, known",
    "format.value": "a field has a value of the wrong kind; params: where, error",
    "format.type": "a field is not of its kind (a whole number up to a million, true/false, text, a list); "
                   "params: where, field, expected",
    "format.choice": "a field is not one of its choices; params: where, field, value, choices",
    "format.category": "an unknown entrant category; params: category, known",
    "format.stage": "the format has no such stage; params: format, stage, stages",
    "format.no_stages": "a format needs at least one stage; params: where",
    "format.stage_ids": "stage ids repeat; params: where, ids",
    "format.battle_size": "battle sizes outside 2-4 (a box seats 2-4); params: where, low, high",
    "format.preliminary": "preliminary_min_battle_size outside 2..battle_size; params: where, high",
    "format.byes": "byes need a bracket with fixed battle counts from here on; params: where",
    "format.red_values": "red_values need one value per question; params: where",
    "format.red_themes": "more red themes than themes; params: where",
    "format.swiss_points": "a Swiss stage needs placement_points; params: where, rule",
    "format.advance_selector": "an advance rule sets not exactly one of places, best, top, records; "
                               "params: where, number",
    "format.advance_best": "an advance rule with best needs place; params: where, number",
    "format.advance_to": "an advance rule goes to a stage that is not later; params: where, stage",
    "format.record_stage": "a record names a stage that is not this or an earlier one; params: where, stage",
    "format.no_advance": "a stage before the last has no advance rule; params: where",
    "format.joins_at": "a category joins at an unknown stage; params: where, category, stage",
    # logs and imports
    "import.json": "the upload is not JSON; params: error",
    "import.log": "the file holds no tournament log (none, or not starting with TournamentCreated)",
    "import.exists": "the imported tournament is on this box already; params: tid",
    "import.event": "not a tournament event of a known type and version; params: type, version",
    "import.field": "an event field is missing or of the wrong type; params: number, type, field, expected",
    "event.field": "a command's event has a field the log could not read back (out of range, wrong type); "
                   "params: type, field, expected",
    # the simulator
    "simulate.stuck": "the simulation cannot go on (a bug); params: step, stage",
}


class TournamentError(RulesError):
    """Base for every error of the tournament engine: ``code`` (a key of :data:`REFUSAL_CODES`) and ``params``
    (plain values: ids, counts, the rule) say what was refused, ``str(error)`` says it in English.

    >>> error = StageError("no battle 'x'", code="battle.unknown", params={"battle": "x"})
    >>> str(error), error.code, error.params
    ("no battle 'x'", 'battle.unknown', {'battle': 'x'})
    >>> StageError("x", code="no.such")
    Traceback (most recent call last):
    ...
    KeyError: "unknown tournament refusal code 'no.such' (add it to REFUSAL_CODES)"
    """

    def __init__(self, message: str, *, code: str | None = None, params: dict[str, Any] | None = None) -> None:
        if code is not None and code not in REFUSAL_CODES:
            raise KeyError(f"unknown tournament refusal code {code!r} (add it to REFUSAL_CODES)")
        super().__init__(message)
        self.message = message
        # No code: still a refusal at run time (a branch merged before its code was added must not become a 500);
        # tests/appliance/service/test_tournament_refusals.py fails on every raise that names none.
        self.code = code or "tournament.refused"
        self.params = dict(params or {}) if code else {"message": message}


class FormatError(TournamentError, ValueError):
    """A tournament format (TOML preset) is malformed: the message names the file, stage and field."""


class UnknownFormatError(TournamentError, LookupError):
    """No shipped preset has this name."""


class RegistrationError(TournamentError, ValueError):
    """A registration, withdrawal or seeding command breaks the format's registration rules."""


class DrawError(TournamentError, ValueError):
    """A draw cannot meet a constraint; the message says which one and why (``eurocup 3.3`` ...)."""


class ResultError(TournamentError, ValueError):
    """A battle result, written sheet or shoot-out does not fit the battle or stage it is for."""


class StageError(TournamentError, ValueError):
    """A command comes at the wrong moment (stage not drawn, results missing, already drawn and played)."""
