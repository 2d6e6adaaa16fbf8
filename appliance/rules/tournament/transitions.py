"""``apply(state, event)``: validate the event completely against the state, then return a new state.

A rejected event raises a :class:`TournamentError` leaf and changes nothing (states are never mutated).
Imported one way: records (:mod:`.state`) <- queries (:mod:`.outcomes` and below) <- this module.
"""

from __future__ import annotations

import dataclasses
import re
from types import MappingProxyType
from typing import Mapping

from appliance.rules.tournament import events as ev
from appliance.rules.tournament.errors import FormatError, RegistrationError, ResultError, StageError
from appliance.rules.tournament.formats import parse_format
from appliance.rules.tournament.outcomes import battle_players, open_ties, stage_participants
from appliance.rules.tournament.results import check_places, score_written
from appliance.rules.tournament.seats import SeatRef, TieId, is_reference
from appliance.rules.tournament.state import Entrant, TournamentState


def _with(mapping: Mapping, key, value) -> Mapping:
    copy = dict(mapping)
    copy[key] = value
    return MappingProxyType(copy)


def apply(state: TournamentState, event) -> TournamentState:
    """The state after ``event``; raises a :class:`TournamentError` leaf (state unchanged) if it is not allowed."""
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise ResultError(f"not a tournament event: {event!r}",
                          code="import.event", params={"type": type(event).__name__, "version": ""})
    if state.format is None and not isinstance(event, ev.TournamentCreated):
        raise StageError("the log must start with TournamentCreated", code="tournament.not_created")
    new = handler(state, event)
    return dataclasses.replace(new, event_count=state.event_count + 1)


def replay(events) -> TournamentState:
    """Apply every event from an empty state: the same log always gives the same state."""
    state = TournamentState()
    for event in events:
        state = apply(state, event)
    return state


def _created(state: TournamentState, event: ev.TournamentCreated) -> TournamentState:
    if state.format is not None:
        raise StageError("the tournament already exists", code="tournament.created_twice")
    fmt = parse_format(event.format_data, origin=f"tournament {event.tournament_id}")
    return dataclasses.replace(state, format=fmt, tournament_id=event.tournament_id, title=event.title,
                               seed=event.seed)


def _first_results_in(state: TournamentState) -> bool:
    return bool(state.results) or any(state.sheets.values())


def _registered(state: TournamentState, event: ev.PlayerRegistered) -> TournamentState:
    fmt = state.fmt
    registration = fmt.registration
    if not event.player_id.strip() or not event.name.strip():
        raise RegistrationError("a player needs an id and a name", code="registration.no_name")
    if event.player_id in state.entrants:
        raise RegistrationError(f"player {event.player_id!r} is already registered",
                                code="registration.duplicate", params={"player": event.player_id})
    category_id = event.category or registration.categories[0].id
    category = registration.category(category_id)
    if state.registration_closed and not event.late:
        raise RegistrationError(f"registration is closed ({registration.rule or 'deadline'}); "
                                "the director may still enter a late player",
                                code="registration.closed", params={"rule": registration.rule or "deadline"})
    if _first_results_in(state) and fmt.stages[0].kind != "swiss":
        raise RegistrationError("results are in: a late entry can no longer join this tournament",
                                code="registration.late_after_results")
    if category.per_team:
        if not event.team:
            raise RegistrationError(f"category {category.id} needs a team ({category.rule})",
                                    code="registration.needs_team",
                                    params={"category": category.id, "rule": category.rule})
        same = [e for e in state.entrants.values()
                if e.category == category.id and e.team == event.team and not e.withdrawn]
        if len(same) >= category.per_team:
            raise RegistrationError(f"team {event.team!r} already has {len(same)} player(s) in category "
                                    f"{category.id}; at most {category.per_team} ({category.rule})",
                                    code="registration.team_full",
                                    params={"team": event.team, "count": len(same), "category": category.id,
                                            "most": category.per_team, "rule": category.rule})
    entrant = Entrant(event.player_id, event.name.strip(), event.team.strip(), category.id, event.team_rank,
                      order=len(state.entrants), late=event.late)
    return dataclasses.replace(state, entrants=_with(state.entrants, entrant.player_id, entrant))


def _withdrew(state: TournamentState, event: ev.PlayerWithdrew) -> TournamentState:
    entrant = state.entrants.get(event.player_id)
    if entrant is None:
        raise RegistrationError(f"no player {event.player_id!r}",
                                code="registration.no_player", params={"player": event.player_id})
    if entrant.withdrawn:
        raise RegistrationError(f"player {event.player_id!r} has already withdrawn",
                                code="registration.withdrawn", params={"player": event.player_id})
    return dataclasses.replace(state, entrants=_with(state.entrants, entrant.player_id,
                                                     dataclasses.replace(entrant, withdrawn=True)),
                               seeds=tuple(p for p in state.seeds if p != event.player_id))


def _closed_registration(state: TournamentState, event: ev.RegistrationClosed) -> TournamentState:
    if state.registration_closed:
        raise RegistrationError("registration is already closed", code="registration.already_closed")
    return dataclasses.replace(state, registration_closed=True)


def _deadline(state: TournamentState, event: ev.DeadlineSet) -> TournamentState:
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?([+-]\d\d:\d\d|Z)", event.deadline.strip()):
        raise RegistrationError(f"deadline {event.deadline!r}: give a date, time and offset, "
                                "e.g. 2008-10-01T23:59-04:00 (northern-owl 1.2: 23:59 EDT)",
                                code="registration.deadline", params={"deadline": event.deadline})
    if state.registration_closed:
        raise RegistrationError("registration is already closed", code="registration.already_closed")
    return dataclasses.replace(state, deadline=event.deadline.strip())


def _seeds(state: TournamentState, event: ev.SeedsSet) -> TournamentState:
    wanted = state.fmt.registration.seeds
    if state.battles:
        raise StageError("seeds are set before the first draw; re-seeding needs a re-draw of an unplayed stage",
                         code="seeding.after_draw")
    if wanted and len(event.player_ids) != wanted:
        raise RegistrationError(f"the format seeds exactly {wanted} players ({state.fmt.registration.rule}); "
                                f"{len(event.player_ids)} given",
                                code="seeding.count",
                                params={"wanted": wanted, "given": len(event.player_ids),
                                        "rule": state.fmt.registration.rule})
    if len(set(event.player_ids)) != len(event.player_ids):
        raise RegistrationError("a player is seeded twice", code="seeding.twice")
    for player in event.player_ids:
        if not state.active(player):
            raise RegistrationError(f"seeded player {player!r} is not an active entrant",
                                    code="seeding.inactive", params={"player": player})
    return dataclasses.replace(state, seeds=tuple(event.player_ids))


def _drawn(state: TournamentState, event: ev.StageDrawn) -> TournamentState:
    fmt = state.fmt
    stage = fmt.stage(event.stage_id)
    key = event.stage_id if stage.kind != "swiss" else f"{event.stage_id}/{event.round}"
    if event.bracket:
        replaced = list(state.battles.values())
    else:
        replaced = [b for b in state.battles.values() if b.stage == event.stage_id and b.round == event.round]
    if any(b.id in state.results for b in replaced) or (event.bracket and _first_results_in(state)):
        raise StageError(f"stage {event.stage_id} has results: it can no longer be re-drawn",
                         code="draw.has_results", params={"stage": event.stage_id})
    if stage.kind == "swiss":
        expected = state.rounds_drawn.get(event.stage_id, 0) + 1
        if event.round not in (expected, expected - 1):
            raise StageError(f"stage {event.stage_id}: round {event.round} drawn, round {expected} expected",
                             code="draw.round_order",
                             params={"stage": event.stage_id, "round": event.round, "expected": expected})
        if event.round > stage.rounds:
            raise StageError(f"stage {event.stage_id} has {stage.rounds} rounds (set by the organisers)",
                             code="draw.rounds_done", params={"stage": event.stage_id, "rounds": stage.rounds})
    seen: set[str] = set()
    for battle in event.battles:
        if battle.id in seen:
            raise StageError(f"battle id {battle.id} repeats", code="draw.battle_repeats", params={"battle": battle.id})
        seen.add(battle.id)
        fmt.stage(battle.stage)
        for seat in battle.seats:
            try:
                ref = SeatRef.parse(seat)
                if ref is not None:
                    fmt.stage(ref.stage)
            except (ValueError, FormatError):
                raise StageError(f"battle {battle.id}: seat {seat[:60]!r} names no result of a stage",
                                 code="draw.bad_seat", params={"battle": battle.id, "seat": seat}) from None
        players = [seat for seat in battle.seats if not is_reference(seat)]
        for player in players:
            if player not in state.entrants:
                raise StageError(f"battle {battle.id} seats unknown player {player!r}",
                                 code="draw.unknown_player", params={"battle": battle.id, "player": player})
    battles = {bid: b for bid, b in state.battles.items() if b not in replaced}
    battles.update({b.id: b for b in event.battles})
    rounds = dict(state.rounds_drawn)
    for battle in event.battles:
        rounds[battle.stage] = max(rounds.get(battle.stage, 0), battle.round)
    rounds[event.stage_id] = max(rounds.get(event.stage_id, 0), event.round)
    return dataclasses.replace(state, battles=MappingProxyType(battles), rounds_drawn=MappingProxyType(rounds),
                               draw_seeds=_with(state.draw_seeds, key, event.seed),
                               skipped=frozenset(event.skipped) | (state.skipped if not event.bracket else frozenset()),
                               bracket_drawn=state.bracket_drawn or event.bracket)


def _assigned(state: TournamentState, event: ev.BattleAssigned) -> TournamentState:
    if event.battle_id not in state.battles:
        raise StageError(f"no battle {event.battle_id!r}", code="battle.unknown", params={"battle": event.battle_id})
    if not event.room.strip():
        raise StageError("a room needs a name", code="rooms.none")
    return dataclasses.replace(state, assignments=_with(state.assignments, event.battle_id,
                                                        (event.room.strip(), event.box.strip())))


def _linked(state: TournamentState, event: ev.BattleLinked) -> TournamentState:
    if event.battle_id not in state.battles:
        raise StageError(f"no battle {event.battle_id!r}", code="battle.unknown", params={"battle": event.battle_id})
    if battle_players(state, event.battle_id) is None:
        raise StageError(f"battle {event.battle_id}: its players are not known yet",
                         code="battle.not_ready", params={"battle": event.battle_id})
    if event.battle_id in state.results:
        raise StageError(f"battle {event.battle_id} already has a result",
                         code="battle.has_result", params={"battle": event.battle_id})
    return dataclasses.replace(state, links=_with(state.links, event.box_battle_id, event.battle_id))


def _result(state: TournamentState, event: ev.BattleResultRecorded) -> TournamentState:
    result = event.result
    battle = state.battles.get(result.battle_id)
    if battle is None:
        raise ResultError(f"no battle {result.battle_id!r}", code="battle.unknown", params={"battle": result.battle_id})
    players = battle_players(state, battle.id)
    if players is None:
        raise ResultError(f"battle {battle.id}: its players are not known yet (earlier results missing)",
                          code="battle.not_ready", params={"battle": battle.id})
    given = [line.player for line in result.lines]
    if len(set(given)) != len(given):
        raise ResultError(f"battle {battle.id}: a player has two result lines",
                          code="result.two_lines", params={"battle": battle.id})
    if set(given) != set(players):
        raise ResultError(f"battle {battle.id}: result lines for {sorted(given)}, the battle seats "
                          f"{sorted(players)}",
                          code="result.players",
                          params={"battle": battle.id, "given": sorted(given), "seated": sorted(players)})
    check_places(battle.id, result.lines)
    fmt = state.fmt
    later = {s.id for s in fmt.stages[fmt.index(battle.stage) + 1:]}
    if battle.id in state.results and any(state.battles[b].stage in later for b in state.results):
        raise ResultError(f"battle {battle.id}: a later stage has results; this result can no longer change",
                          code="result.later_stage", params={"battle": battle.id})
    ties = {k: v for k, v in state.ties.items() if TieId.parse(k).battle != battle.id}
    return dataclasses.replace(state, results=_with(state.results, battle.id, result),
                               ties=MappingProxyType(ties))


def _sheet(state: TournamentState, event: ev.WrittenSheetEntered) -> TournamentState:
    stage = state.fmt.stage(event.stage_id)
    if stage.kind != "written":
        raise ResultError(f"stage {stage.id} is not a written round",
                          code="sheet.not_written", params={"stage": stage.id})
    if event.stage_id not in state.rounds_drawn:
        raise StageError(f"stage {stage.id} is not open yet (draw it first)",
                         code="sheet.not_open", params={"stage": stage.id})
    if event.stage_id in state.closed:
        raise StageError(f"stage {stage.id} is closed: no more sheets", code="sheet.closed", params={"stage": stage.id})
    if event.player_id not in stage_participants(state, stage.id):
        raise ResultError(f"player {event.player_id!r} does not write stage {stage.id}",
                          code="sheet.not_writer", params={"player": event.player_id, "stage": stage.id})
    score_written(event.player_id, event.marks, stage.theme_values, stage.themes)  # validates
    sheets = dict(state.sheets.get(event.stage_id, {}))
    sheets[event.player_id] = event.marks
    return dataclasses.replace(state, sheets=_with(state.sheets, event.stage_id, MappingProxyType(sheets)))


def _stage_closed(state: TournamentState, event: ev.StageClosed) -> TournamentState:
    stage = state.fmt.stage(event.stage_id)
    if stage.kind != "written":
        raise StageError(f"stage {stage.id}: only a written round is closed by hand; battles close with results",
                         code="stage.closes_with_results", params={"stage": stage.id})
    if event.stage_id in state.closed:
        raise StageError(f"stage {stage.id} is already closed", code="stage.already_closed", params={"stage": stage.id})
    return dataclasses.replace(state, closed=state.closed | {event.stage_id})


def _tie(state: TournamentState, event: ev.TieBroken) -> TournamentState:
    ties = {tie.id: tie for tie in open_ties(state)}
    tie = ties.get(event.tie_id)
    if tie is None:
        raise ResultError(f"no open tie {event.tie_id!r}; open: {sorted(ties) or 'none'}",
                          code="tie.unknown", params={"tie": event.tie_id, "open": sorted(ties)})
    if sorted(event.order) != sorted(tie.players):
        raise ResultError(f"tie {tie.id}: order must rank exactly {sorted(tie.players)}",
                          code="tie.order", params={"tie": tie.id, "players": sorted(tie.players)})
    return dataclasses.replace(state, ties=_with(state.ties, event.tie_id, tuple(event.order)),
                               tie_notes=_with(state.tie_notes, event.tie_id, (event.how, event.detail)))


THEME_NAME_MAX_CHARS = 120


def _themes_named(state: TournamentState, event: ev.ThemesNamed) -> TournamentState:
    """The director names a theme pack's themes (youth-cup 2.4: both runs of a battle play the same themes)."""
    battles = [b for b in state.battles.values() if b.theme_pack == event.pack]
    if not battles:
        raise StageError(f"no drawn battle plays theme pack {event.pack!r}", code="themes.unknown_pack",
                         params={"pack": event.pack})
    themes = max(len(b.themes) for b in battles)
    names = tuple(event.names)
    if not all(isinstance(name, str) for name in names):
        raise StageError("theme names are text", code="themes.not_text", params={"pack": event.pack})
    if len(names) > themes:
        raise StageError(f"theme pack {event.pack}: {len(names)} names for {themes} themes",
                         code="themes.too_many", params={"pack": event.pack, "names": len(names), "themes": themes})
    too_long = [name for name in names if len(name.strip()) > THEME_NAME_MAX_CHARS]
    if too_long:
        raise StageError(f"theme name {too_long[0][:20]!r}... is longer than {THEME_NAME_MAX_CHARS} characters",
                         code="themes.too_long", params={"pack": event.pack, "limit": THEME_NAME_MAX_CHARS})
    sources = tuple(event.sources)
    if sources and (len(sources) != len(names) or not all(
            isinstance(package, str) and package and isinstance(number, int) and number >= 0
            for package, number in sources)):
        raise StageError(f"theme pack {event.pack}: {len(sources)} sources for {len(names)} names",
                         code="themes.bad_sources", params={"pack": event.pack})
    return dataclasses.replace(state, theme_names=_with(state.theme_names, event.pack,
                                                        tuple(name.strip() for name in names)),
                               theme_sources=_with(state.theme_sources, event.pack, sources))


_HANDLERS = {
    ev.TournamentCreated: _created,
    ev.PlayerRegistered: _registered,
    ev.PlayerWithdrew: _withdrew,
    ev.RegistrationClosed: _closed_registration,
    ev.DeadlineSet: _deadline,
    ev.SeedsSet: _seeds,
    ev.StageDrawn: _drawn,
    ev.BattleAssigned: _assigned,
    ev.BattleLinked: _linked,
    ev.BattleResultRecorded: _result,
    ev.WrittenSheetEntered: _sheet,
    ev.StageClosed: _stage_closed,
    ev.TieBroken: _tie,
    ev.ThemesNamed: _themes_named,
}
