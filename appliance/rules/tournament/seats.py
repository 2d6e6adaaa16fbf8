"""Seats of drawn battles and places in played ones: what a seat names, who holds a place, where cuts fall.

A seat of a drawn battle holds a player id or a reference filled in by results (:class:`SeatRef`):

- ``@1-27:4:1``: place 1 of battle 4 (0-based index) of stage 1-27;
- ``@qf:best:2:1``: the best of the 2nd places across stage qf;
- ``@written:top:17``: 17th of stage written's ranking.

Pure queries over a state's records; who a reference resolves to is :func:`.outcomes.resolve` (it needs the stage's
outcome).
"""

from __future__ import annotations

from collections import defaultdict

from appliance.rules.tournament import events as ev
from appliance.rules.tournament.formats import Format, Stage
from appliance.rules.tournament.results import BattleResult
from appliance.rules.tournament.state import TournamentState


def battle_at(state: TournamentState, stage_id: str, index: int) -> ev.BattleSpec | None:
    for battle in state.stage_battles(stage_id):
        if battle.index == index:
            return battle
    return None


def player_at_place(state: TournamentState, battle_id: str, places: dict, place: int) -> str | None:
    """The one player holding ``place`` in a battle; ``""`` if nobody does, ``None`` if it is shared (then a
    shoot-out must split it: a seat is never filled by picking one of the tied players)."""
    result = state.results[battle_id]
    holders = [line.player for line in result.lines
               if places[line.player] == place and not line.absent and state.active(line.player)]
    if len(holders) > 1:
        return None
    return holders[0] if holders else ""


def stage_cuts(fmt: Format, stage: Stage) -> tuple | None:
    """Places after which a battle of ``stage`` must rank strictly (cut ``c``: places ``c`` and ``c + 1`` are held
    by different players); ``None`` for the last stage (the battle profile's prize places).

    A cut follows every boundary of who goes on (``places = [1, 2]``: after 2nd), and every place that must be
    held by one player because a later seat or draw names it: a bracket seat ``@stage:i:place`` (youth-cup 2.1,
    2.3: the two best of a battle take different seats of the next round), a draw per place (irkutsk 2.3: a battle
    of the round-1 winners and one of the runners-up), a record naming the place (irkutsk 2.3) and a best-of-place
    rule (irkutsk 2.4). A shared place such a cut falls inside is a tie for a shoot-out (:func:`outcome`).
    Stages ranked only by table (mubc 3.3) get ``()``: shared places stand.
    """
    if stage is fmt.stages[-1] or stage.id == fmt.stages[-1].id:
        return None
    cuts: set[int] = set()

    def single(place: int) -> None:  # ``place`` is held by one player: strict before it and after it
        cuts.update({place - 1, place})

    for rule in stage.advance:
        if rule.places:
            cuts.add(max(rule.places))
            target = fmt.stage(rule.to)
            if target.draw == "group-place" or (fmt.bracket and target.draw == "bracket"):
                for place in rule.places:
                    single(place)
        elif rule.best:
            single(rule.place)
    for later in fmt.stages[fmt.index(stage.id):]:
        for rule in later.advance:
            for record in rule.records:
                for stage_id, place in record:
                    if stage_id == stage.id:
                        single(place)
    cuts.discard(0)
    return tuple(sorted(cuts))


def effective_places(state: TournamentState, battle_id: str) -> tuple[dict, list]:
    """Places in a battle among the players who count for going on, and the groups still sharing a place.

    A shared place is split by a recorded tie-break (``<battle>:places:<recorded place>``). Players absent from
    the battle or withdrawn since do not block a place: the others move up (a no-show winner is replaced by the
    runner-up), and they are placed after everyone who counts. Returns ``(places, shared)`` with ``shared`` as
    ``(place, players, recorded place)``.
    """
    result: BattleResult = state.results[battle_id]
    counted = [line for line in result.lines if not line.absent and state.active(line.player)]
    groups: dict[int, list[str]] = defaultdict(list)
    for line in counted:
        groups[line.place].append(line.player)
    key: dict[str, tuple[int, int]] = {}
    for place, players in groups.items():
        order = [p for p in state.ties.get(f"{battle_id}:places:{place}", ()) if p in players]
        if len(players) > 1 and sorted(order) == sorted(players):
            key.update({player: (place, offset) for offset, player in enumerate(order)})
        else:
            key.update({player: (place, 0) for player in players})
    places = {player: 1 + sum(other < mine for other in key.values()) for player, mine in key.items()}
    for line in result.lines:
        places.setdefault(line.player, len(counted) + 1)
    shared = []
    for place, players in sorted(groups.items()):
        still = [p for p in players if key[p][1] == 0] if len(players) > 1 else []
        if len(still) > 1 and len({key[p] for p in still}) == 1:
            shared.append((places[still[0]], tuple(sorted(still)), place))
    return places, shared


def seat_places(state: TournamentState, stage_id: str) -> dict[int, set[int]]:
    """Battle index -> the places of that battle named by seats of drawn battles (``@stage:index:place``)."""
    key = ("seat places", stage_id)
    if key not in state.cache:
        named: dict[int, set[int]] = defaultdict(set)
        for battle in state.battles.values():
            for seat in battle.seats:
                parts = seat[1:].split(":")
                if seat.startswith("@") and parts[0] == stage_id and len(parts) == 3 and parts[1].isdigit():
                    named[int(parts[1])].add(int(parts[2]))
        state.cache[key] = dict(named)
    return state.cache[key]
