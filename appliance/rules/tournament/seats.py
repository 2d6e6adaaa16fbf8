"""Seats of drawn battles and places in played ones: what a seat names, who holds a place, where cuts fall.

A seat of a drawn battle holds a player id or a reference filled in by results (:class:`SeatRef`):

- ``@1-27:4:1``: place 1 of battle 4 (0-based index) of stage 1-27;
- ``@qf:best:2:1``: the best of the 2nd places across stage qf;
- ``@written:top:17``: 17th of stage written's ranking.

Pure queries over a state's records; who a reference resolves to is :func:`.outcomes.resolve` (it needs the stage's
outcome).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import NamedTuple

from appliance.rules.tournament import events as ev
from appliance.rules.tournament.formats import Format, Stage
from appliance.rules.tournament.results import BattleResult
from appliance.rules.tournament.state import TournamentState

SEAT_MARK = "@"  # a seat that starts with it is a reference, not a player id


class SeatRef(NamedTuple):
    """A seat filled by results, by what it names (the log keeps its text: ``str(ref)``).

    ``kind`` ``"place"``: place ``place`` of the battle at ``index`` of ``stage``; ``"best"``: the ``rank``-th best
    of the ``place``-th places across ``stage``; ``"top"``: the ``rank``-th of ``stage``'s ranking.

    >>> SeatRef.parse("@1-27:4:1"), str(SeatRef.best("qf", place=2, rank=1)), SeatRef.parse("p007")
    (SeatRef(stage='1-27', kind='place', place=1, index=4, rank=0), '@qf:best:2:1', None)
    >>> SeatRef.parse("@written:top:17").rank
    17
    """

    stage: str
    kind: str
    place: int = 0
    index: int = 0
    rank: int = 0

    @classmethod
    def of_place(cls, stage: str, index: int, place: int) -> "SeatRef":
        return cls(stage, "place", place=place, index=index)

    @classmethod
    def best(cls, stage: str, place: int, rank: int) -> "SeatRef":
        return cls(stage, "best", place=place, rank=rank)

    @classmethod
    def top(cls, stage: str, rank: int) -> "SeatRef":
        return cls(stage, "top", rank=rank)

    @classmethod
    def parse(cls, seat: str) -> "SeatRef | None":
        """The reference a seat holds, or ``None`` for a player id; raises ``ValueError`` for a malformed one."""
        if not seat.startswith(SEAT_MARK):
            return None
        return _parsed_seat(seat)

    @classmethod
    def _parse(cls, seat: str) -> "SeatRef":
        stage, *rest = seat[len(SEAT_MARK):].split(":")
        if len(rest) == 2 and rest[0].isdigit():
            return cls.of_place(stage, int(rest[0]), int(rest[1]))
        if len(rest) == 3 and rest[0] == "best":
            return cls.best(stage, int(rest[1]), int(rest[2]))
        if len(rest) == 2 and rest[0] == "top":
            return cls.top(stage, int(rest[1]))
        raise ValueError(f"not a seat reference: {seat!r}")

    def __str__(self) -> str:
        if self.kind == "place":
            return f"{SEAT_MARK}{self.stage}:{self.index}:{self.place}"
        if self.kind == "best":
            return f"{SEAT_MARK}{self.stage}:best:{self.place}:{self.rank}"
        return f"{SEAT_MARK}{self.stage}:top:{self.rank}"


# Seats repeat across the states of one tournament (every query re-reads every drawn seat): parse each text once.
_parsed_seat = functools.lru_cache(maxsize=8192)(SeatRef._parse)


@functools.lru_cache(maxsize=8192)
def seat_text(stage: str, index: int, place: int) -> str:
    """The text of the seat ``SeatRef.of_place(stage, index, place)`` (every outcome names every battle's places)."""
    return str(SeatRef.of_place(stage, index, place))


def is_reference(seat: str) -> bool:
    """A seat that names a result (:class:`SeatRef`) rather than a player id."""
    return seat.startswith(SEAT_MARK)


class TieId(NamedTuple):
    """Which tie a shoot-out breaks (the log keeps its text: ``str(tie)``, the key of ``state.ties``).

    ``kind`` ``"places"``: the shared place ``place`` (as recorded) of battle ``battle``; ``"best"``: equal keys at
    the cut among the ``place``-th places of ``stage``; ``"top"``: equal keys at the cut of ``stage``'s top.

    >>> str(TieId.places("1-16/03", 1)), TieId.parse("1-16/03:places:1").stage, TieId.parse("qf:best:2").place
    ('1-16/03:places:1', '1-16', 2)
    >>> TieId.parse("sw/r2/01:places:3").battle, str(TieId.top("written"))
    ('sw/r2/01', 'written:top')
    """

    kind: str
    stage: str
    battle: str = ""
    place: int = 0

    @classmethod
    def places(cls, battle_id: str, place: int) -> "TieId":
        return cls("places", battle_stage(battle_id), battle=battle_id, place=place)

    @classmethod
    def best(cls, stage: str, place: int) -> "TieId":
        return cls("best", stage, place=place)

    @classmethod
    def top(cls, stage: str) -> "TieId":
        return cls("top", stage)

    @classmethod
    def parse(cls, text: str) -> "TieId":
        """The tie a text names; raises ``ValueError`` for text that names none."""
        return _parsed_tie(text)

    @classmethod
    def _parse(cls, text: str) -> "TieId":
        head, *rest = text.split(":")
        if len(rest) == 2 and rest[0] == "places" and rest[1].isdigit():
            return cls.places(head, int(rest[1]))
        if len(rest) == 2 and rest[0] == "best" and rest[1].isdigit():
            return cls.best(head, int(rest[1]))
        if rest == ["top"]:
            return cls.top(head)
        raise ValueError(f"not a tie id: {text!r}")

    def __str__(self) -> str:
        if self.kind == "places":
            return f"{self.battle}:places:{self.place}"
        if self.kind == "best":
            return f"{self.stage}:best:{self.place}"
        return f"{self.stage}:top"


_parsed_tie = functools.lru_cache(maxsize=4096)(TieId._parse)


def battle_stage(battle_id: str) -> str:
    """The stage a drawn battle's id names (``1-27/04``, ``swiss/r2/01``: the draw makes them ``stage/...``)."""
    return battle_id.partition("/")[0]


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
        order = [p for p in state.ties.get(str(TieId.places(battle_id, place)), ()) if p in players] \
            if len(players) > 1 and state.ties else ()
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
                ref = SeatRef.parse(seat)
                if ref is not None and ref.stage == stage_id and ref.kind == "place":
                    named[ref.index].add(ref.place)
        state.cache[key] = dict(named)
    return state.cache[key]
