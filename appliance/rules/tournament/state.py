"""The tournament state and ``apply(state, event)``: validate completely, then return a new state.

A rejected event raises and changes nothing (the old state is untouched: states are never mutated).
Queries over a state (who is in, who goes on, standings) live in :mod:`.engine`.
"""

from __future__ import annotations

import dataclasses
import re
from types import MappingProxyType
from typing import Mapping

from appliance.rules.tournament import events as ev
from appliance.rules.tournament.errors import RegistrationError, ResultError, StageError
from appliance.rules.tournament.formats import Format, parse_format
from appliance.rules.tournament.results import check_places

_EMPTY: Mapping = MappingProxyType({})


@dataclasses.dataclass(frozen=True)
class Entrant:
    player_id: str
    name: str
    team: str
    category: str
    team_rank: int
    order: int  # registration order (first come, first served: northern-owl 1.1)
    late: bool = False
    withdrawn: bool = False


@dataclasses.dataclass(frozen=True)
class TournamentState:
    format: Format | None = None
    tournament_id: str = ""
    title: str = ""
    seed: int = 0
    entrants: Mapping[str, Entrant] = dataclasses.field(default_factory=lambda: _EMPTY)
    registration_closed: bool = False
    deadline: str = ""
    seeds: tuple[str, ...] = ()
    battles: Mapping[str, ev.BattleSpec] = dataclasses.field(default_factory=lambda: _EMPTY)
    rounds_drawn: Mapping[str, int] = dataclasses.field(default_factory=lambda: _EMPTY)
    draw_seeds: Mapping[str, int] = dataclasses.field(default_factory=lambda: _EMPTY)  # "stage" or "stage/round" -> seed used
    skipped: frozenset = frozenset()
    results: Mapping[str, object] = dataclasses.field(default_factory=lambda: _EMPTY)  # battle id -> BattleResult
    sheets: Mapping[str, Mapping[str, str]] = dataclasses.field(default_factory=lambda: _EMPTY)  # stage -> player -> marks
    closed: frozenset = frozenset()
    ties: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=lambda: _EMPTY)
    tie_notes: Mapping[str, tuple[str, str]] = dataclasses.field(default_factory=lambda: _EMPTY)  # tie id -> (how, detail)
    assignments: Mapping[str, tuple[str, str]] = dataclasses.field(default_factory=lambda: _EMPTY)  # battle id -> (room, box)
    links: Mapping[str, str] = dataclasses.field(default_factory=lambda: _EMPTY)  # box battle id -> battle id
    theme_names: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=lambda: _EMPTY)  # pack -> names
    bracket_drawn: bool = False
    event_count: int = 0
    # A memo of pure queries over this very state (outcomes, resolved seats); each new state starts empty.
    cache: dict = dataclasses.field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def fmt(self) -> Format:
        if self.format is None:
            raise StageError("no tournament yet: the log must start with TournamentCreated")
        return self.format

    def stage_battles(self, stage_id: str, round_number: int | None = None) -> list[ev.BattleSpec]:
        return [battle for battle in self.battles.values()
                if battle.stage == stage_id and (round_number is None or battle.round == round_number)]

    def active(self, player_id: str) -> bool:
        entrant = self.entrants.get(player_id)
        return entrant is not None and not entrant.withdrawn


def _with(mapping: Mapping, key, value) -> Mapping:
    copy = dict(mapping)
    copy[key] = value
    return MappingProxyType(copy)


def apply(state: TournamentState, event) -> TournamentState:
    """The state after ``event``; raises a :class:`TournamentError` leaf (state unchanged) if it is not allowed."""
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise ResultError(f"not a tournament event: {event!r}")
    if state.format is None and not isinstance(event, ev.TournamentCreated):
        raise StageError("the log must start with TournamentCreated")
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
        raise StageError("the tournament already exists")
    fmt = parse_format(event.format_data, origin=f"tournament {event.tournament_id}")
    return dataclasses.replace(state, format=fmt, tournament_id=event.tournament_id, title=event.title,
                               seed=event.seed)


def _first_results_in(state: TournamentState) -> bool:
    return bool(state.results) or any(state.sheets.values())


def _registered(state: TournamentState, event: ev.PlayerRegistered) -> TournamentState:
    fmt = state.fmt
    registration = fmt.registration
    if not event.player_id.strip() or not event.name.strip():
        raise RegistrationError("a player needs an id and a name")
    if event.player_id in state.entrants:
        raise RegistrationError(f"player {event.player_id!r} is already registered")
    category_id = event.category or registration.categories[0].id
    category = registration.category(category_id)
    if state.registration_closed and not event.late:
        raise RegistrationError(f"registration is closed ({registration.rule or 'deadline'}); "
                                "the director may still enter a late player")
    if _first_results_in(state) and fmt.stages[0].kind != "swiss":
        raise RegistrationError("results are in: a late entry can no longer join this tournament")
    if category.per_team:
        if not event.team:
            raise RegistrationError(f"category {category.id} needs a team ({category.rule})")
        same = [e for e in state.entrants.values()
                if e.category == category.id and e.team == event.team and not e.withdrawn]
        if len(same) >= category.per_team:
            raise RegistrationError(f"team {event.team!r} already has {len(same)} player(s) in category "
                                    f"{category.id}; at most {category.per_team} ({category.rule})")
    entrant = Entrant(event.player_id, event.name.strip(), event.team.strip(), category.id, event.team_rank,
                      order=len(state.entrants), late=event.late)
    return dataclasses.replace(state, entrants=_with(state.entrants, entrant.player_id, entrant))


def _withdrew(state: TournamentState, event: ev.PlayerWithdrew) -> TournamentState:
    entrant = state.entrants.get(event.player_id)
    if entrant is None:
        raise RegistrationError(f"no player {event.player_id!r}")
    if entrant.withdrawn:
        raise RegistrationError(f"player {event.player_id!r} has already withdrawn")
    return dataclasses.replace(state, entrants=_with(state.entrants, entrant.player_id,
                                                     dataclasses.replace(entrant, withdrawn=True)),
                               seeds=tuple(p for p in state.seeds if p != event.player_id))


def _closed_registration(state: TournamentState, event: ev.RegistrationClosed) -> TournamentState:
    if state.registration_closed:
        raise RegistrationError("registration is already closed")
    return dataclasses.replace(state, registration_closed=True)


def _deadline(state: TournamentState, event: ev.DeadlineSet) -> TournamentState:
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?([+-]\d\d:\d\d|Z)", event.deadline.strip()):
        raise RegistrationError(f"deadline {event.deadline!r}: give a date, time and offset, "
                                "e.g. 2008-10-01T23:59-04:00 (northern-owl 1.2: 23:59 EDT)")
    if state.registration_closed:
        raise RegistrationError("registration is already closed")
    return dataclasses.replace(state, deadline=event.deadline.strip())


def _seeds(state: TournamentState, event: ev.SeedsSet) -> TournamentState:
    wanted = state.fmt.registration.seeds
    if state.battles:
        raise StageError("seeds are set before the first draw; re-seeding needs a re-draw of an unplayed stage")
    if wanted and len(event.player_ids) != wanted:
        raise RegistrationError(f"the format seeds exactly {wanted} players ({state.fmt.registration.rule}); "
                                f"{len(event.player_ids)} given")
    if len(set(event.player_ids)) != len(event.player_ids):
        raise RegistrationError("a player is seeded twice")
    for player in event.player_ids:
        if not state.active(player):
            raise RegistrationError(f"seeded player {player!r} is not an active entrant")
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
        raise StageError(f"stage {event.stage_id} has results: it can no longer be re-drawn")
    if stage.kind == "swiss":
        expected = state.rounds_drawn.get(event.stage_id, 0) + 1
        if event.round not in (expected, expected - 1):
            raise StageError(f"stage {event.stage_id}: round {event.round} drawn, round {expected} expected")
        if event.round > stage.rounds:
            raise StageError(f"stage {event.stage_id} has {stage.rounds} rounds (set by the organisers)")
    seen: set[str] = set()
    for battle in event.battles:
        if battle.id in seen:
            raise StageError(f"battle id {battle.id} repeats")
        seen.add(battle.id)
        fmt.stage(battle.stage)
        players = [seat for seat in battle.seats if not seat.startswith("@")]
        for player in players:
            if player not in state.entrants:
                raise StageError(f"battle {battle.id} seats unknown player {player!r}")
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
        raise StageError(f"no battle {event.battle_id!r}")
    if not event.room.strip():
        raise StageError("a room needs a name")
    return dataclasses.replace(state, assignments=_with(state.assignments, event.battle_id,
                                                        (event.room.strip(), event.box.strip())))


def _linked(state: TournamentState, event: ev.BattleLinked) -> TournamentState:
    from appliance.rules.tournament.engine import battle_players

    if event.battle_id not in state.battles:
        raise StageError(f"no battle {event.battle_id!r}")
    if battle_players(state, event.battle_id) is None:
        raise StageError(f"battle {event.battle_id}: its players are not known yet")
    if event.battle_id in state.results:
        raise StageError(f"battle {event.battle_id} already has a result")
    return dataclasses.replace(state, links=_with(state.links, event.box_battle_id, event.battle_id))


def _result(state: TournamentState, event: ev.BattleResultRecorded) -> TournamentState:
    # Imported here: engine imports this module.
    from appliance.rules.tournament.engine import battle_players

    result = event.result
    battle = state.battles.get(result.battle_id)
    if battle is None:
        raise ResultError(f"no battle {result.battle_id!r}")
    players = battle_players(state, battle.id)
    if players is None:
        raise ResultError(f"battle {battle.id}: its players are not known yet (earlier results missing)")
    given = [line.player for line in result.lines]
    if len(set(given)) != len(given):
        raise ResultError(f"battle {battle.id}: a player has two result lines")
    if set(given) != set(players):
        raise ResultError(f"battle {battle.id}: result lines for {sorted(given)}, the battle seats "
                          f"{sorted(players)}")
    check_places(battle.id, result.lines)
    fmt = state.fmt
    later = {s.id for s in fmt.stages[fmt.index(battle.stage) + 1:]}
    if battle.id in state.results and any(state.battles[b].stage in later for b in state.results):
        raise ResultError(f"battle {battle.id}: a later stage has results; this result can no longer change")
    ties = {k: v for k, v in state.ties.items() if not k.startswith(battle.id + ":")}
    return dataclasses.replace(state, results=_with(state.results, battle.id, result),
                               ties=MappingProxyType(ties))


def _sheet(state: TournamentState, event: ev.WrittenSheetEntered) -> TournamentState:
    from appliance.rules.tournament.engine import stage_participants
    from appliance.rules.tournament.results import score_written

    stage = state.fmt.stage(event.stage_id)
    if stage.kind != "written":
        raise ResultError(f"stage {stage.id} is not a written round")
    if event.stage_id not in state.rounds_drawn:
        raise StageError(f"stage {stage.id} is not open yet (draw it first)")
    if event.stage_id in state.closed:
        raise StageError(f"stage {stage.id} is closed: no more sheets")
    if event.player_id not in stage_participants(state, stage.id):
        raise ResultError(f"player {event.player_id!r} does not write stage {stage.id}")
    score_written(event.player_id, event.marks, stage.theme_values, stage.themes)  # validates
    sheets = dict(state.sheets.get(event.stage_id, {}))
    sheets[event.player_id] = event.marks
    return dataclasses.replace(state, sheets=_with(state.sheets, event.stage_id, MappingProxyType(sheets)))


def _stage_closed(state: TournamentState, event: ev.StageClosed) -> TournamentState:
    stage = state.fmt.stage(event.stage_id)
    if stage.kind != "written":
        raise StageError(f"stage {stage.id}: only a written round is closed by hand; battles close with results")
    if event.stage_id in state.closed:
        raise StageError(f"stage {stage.id} is already closed")
    return dataclasses.replace(state, closed=state.closed | {event.stage_id})


def _tie(state: TournamentState, event: ev.TieBroken) -> TournamentState:
    from appliance.rules.tournament.engine import open_ties

    ties = {tie.id: tie for tie in open_ties(state)}
    tie = ties.get(event.tie_id)
    if tie is None:
        raise ResultError(f"no open tie {event.tie_id!r}; open: {sorted(ties) or 'none'}")
    if sorted(event.order) != sorted(tie.players):
        raise ResultError(f"tie {tie.id}: order must rank exactly {sorted(tie.players)}")
    return dataclasses.replace(state, ties=_with(state.ties, event.tie_id, tuple(event.order)),
                               tie_notes=_with(state.tie_notes, event.tie_id, (event.how, event.detail)))


THEME_NAME_MAX_CHARS = 120


def _themes_named(state: TournamentState, event: ev.ThemesNamed) -> TournamentState:
    battles = [b for b in state.battles.values() if b.theme_pack == event.pack]
    if not battles:
        raise StageError(f"no drawn battle plays theme pack {event.pack!r}")
    themes = max(len(b.themes) for b in battles)
    names = tuple(event.names)
    if not all(isinstance(name, str) for name in names):
        raise StageError("theme names are text")
    if len(names) > themes:
        raise StageError(f"theme pack {event.pack}: {len(names)} names for {themes} themes")
    too_long = [name for name in names if len(name.strip()) > THEME_NAME_MAX_CHARS]
    if too_long:
        raise StageError(f"theme name {too_long[0][:20]!r}... is longer than {THEME_NAME_MAX_CHARS} characters")
    return dataclasses.replace(state, theme_names=_with(state.theme_names, event.pack,
                                                        tuple(name.strip() for name in names)))


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
