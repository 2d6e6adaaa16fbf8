"""The tournament state: plain frozen records (entrants, battles, results, sheets, ties), nothing derived.

Events make a new state in :mod:`.transitions` (``apply``); queries over a state (who is in, who goes on,
standings) live in :mod:`.entry`, :mod:`.seats`, :mod:`.outcomes`, :mod:`.progress`. This module imports none of
them: records at the bottom, queries over them, transitions on top.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Mapping

from appliance.rules.tournament import events as ev
from appliance.rules.tournament.errors import StageError
from appliance.rules.tournament.formats import Format

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
    # pack -> per name (package id, theme number), when the names were read from a question package
    theme_sources: Mapping[str, tuple[tuple[str, int], ...]] = dataclasses.field(default_factory=lambda: _EMPTY)
    bracket_drawn: bool = False
    event_count: int = 0
    # A memo of pure queries over this very state (outcomes, resolved seats); each new state starts empty.
    cache: dict = dataclasses.field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def fmt(self) -> Format:
        if self.format is None:
            raise StageError("no tournament yet: the log must start with TournamentCreated",
                             code="tournament.not_created")
        return self.format

    def stage_battles(self, stage_id: str, round_number: int | None = None) -> list[ev.BattleSpec]:
        return [battle for battle in self.battles.values()
                if battle.stage == stage_id and (round_number is None or battle.round == round_number)]

    def active(self, player_id: str) -> bool:
        entrant = self.entrants.get(player_id)
        return entrant is not None and not entrant.withdrawn
