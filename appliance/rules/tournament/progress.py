"""Where the tournament stands: the desk's next step, the standings, the advancement log.

Pure queries over a state, built on :mod:`.outcomes`.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Iterable

from appliance.rules.tournament.entry import playing_stages
from appliance.rules.tournament.outcomes import (Advance, Tie, battle_of, battle_players, open_ties, outcome,
                                                stage_lines, stage_participants)
from appliance.rules.tournament.results import ranking_key
from appliance.rules.tournament.seats import effective_places
from appliance.rules.tournament.state import TournamentState


class StepKind(enum.StrEnum):
    """What the desk does next (the JSON and the pages keep the plain names: a ``StrEnum`` is its text)."""

    DRAW = "draw"      # draw the stage (or the next Swiss round)
    SHEETS = "sheets"  # enter the written round's sheets
    PLAY = "play"      # play the listed battles (in parallel)
    TIE = "tie"        # break the tie by a shoot-out (or lots)
    WAIT = "wait"      # results are missing
    DONE = "done"      # the tournament is over


@dataclasses.dataclass(frozen=True)
class Step:
    """What the desk must do next: ``draw``, ``sheets``, ``play`` (battle ids), ``tie`` or ``done``."""

    kind: StepKind
    stage: str = ""
    battles: tuple[str, ...] = ()
    tie: Tie | None = None


def next_step(state: TournamentState) -> Step:
    """The next thing to do; battles that can be played now are all listed (they run in parallel)."""
    for stage in playing_stages(state):
        participants = stage_participants(state, stage.id)
        if participants is None:
            ties = open_ties(state)
            return Step(StepKind.TIE, stage.id, tie=ties[0]) if ties else Step(StepKind.WAIT, stage.id)
        drawn = state.rounds_drawn.get(stage.id, 0)
        if not drawn:
            return Step(StepKind.DRAW, stage.id)
        if stage.kind == "written":
            result = outcome(state, stage.id)
            if not result.complete:
                return Step(StepKind.SHEETS, stage.id)
        else:
            ready = [b.id for b in sorted(state.stage_battles(stage.id), key=lambda b: (b.round, b.index))
                     if b.id not in state.results and battle_players(state, b.id) is not None]
            if ready:
                return Step(StepKind.PLAY, stage.id, tuple(ready))
            if stage.kind == "swiss" and drawn < stage.rounds:
                return Step(StepKind.DRAW, stage.id)
        result = outcome(state, stage.id)
        if result.open_ties:
            return Step(StepKind.TIE, stage.id, tie=result.open_ties[0])
        if not result.complete:
            return Step(StepKind.WAIT, stage.id)
    return Step(StepKind.DONE)


@dataclasses.dataclass(frozen=True)
class Standing:
    place: int
    place_to: int  # equal to place unless shared ("5-8")
    player: str
    stage: str  # the last stage played
    battle_place: int
    placement_points: float
    score: int


def standings(state: TournamentState) -> list[Standing]:
    """Final (or current) standings: by stage reached and place there, or by points (mubc 3.6)."""
    fmt = state.fmt
    stages = playing_stages(state)
    if fmt.standings == "points":
        totals: dict[str, list] = {}
        for stage in stages:
            lines, placement, _ = stage_lines(state, stage)
            for player, line in lines.items():
                row = totals.setdefault(player, [0.0, 0, stage.id, 0])
                row[0] += placement.get(player, 0.0)
                row[1] += line.score
                row[2] = stage.id
                row[3] = line.place
        keyed = sorted(totals.items(), key=lambda item: (item[1][0], item[1][1]), reverse=True)
        return _shared(keyed, key=lambda row: (row[0], row[1]),
                       make=lambda p, row: (p, row[2], row[3], row[0], row[1]))
    reached: dict[str, tuple] = {}
    for position, stage in enumerate(stages):
        result = outcome(state, stage.id)
        for player, line in result.lines.items():
            battle = battle_of(state, player, stage.id) if stage.kind != "written" else None
            place = effective_places(state, battle.id)[0][player] if battle and battle.id in state.results else 0
            if line.absent:
                place = 99
            rank_key = ranking_key(line, stage.ranking, result.placement.get(player, 0.0))
            if stage.kind == "written":
                group_key = (position, 0, rank_key)
            else:
                group_key = (position, -place, ())
            reached[player] = (group_key, rank_key, stage.id, place, line.score)
    keyed = sorted(reached.items(), key=lambda item: (item[1][0], item[1][1]), reverse=True)
    return _shared(keyed, key=lambda row: row[0], make=lambda p, row: (p, row[2], row[3], 0.0, row[4]))


def _shared(keyed: list, key, make) -> list[Standing]:
    rows: list[Standing] = []
    index = 0
    while index < len(keyed):
        end = index
        while end + 1 < len(keyed) and key(keyed[end + 1][1]) == key(keyed[index][1]):
            end += 1
        for player, row in keyed[index:end + 1]:
            p, stage, battle_place, points, score = make(player, row)
            rows.append(Standing(index + 1, end + 1, p, stage, battle_place, points, score))
        index = end + 1
    return rows


def advancement_log(state: TournamentState) -> Iterable[Advance]:
    for stage in playing_stages(state):
        result = outcome(state, stage.id)
        if result.complete and not result.open_ties:
            yield from result.advancing
