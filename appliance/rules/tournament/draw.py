"""Constrained draws: players into battles of given sizes, and Swiss pairing by the table.

Randomness comes in as an object with ``randrange``/``shuffle`` (:class:`~appliance.rules.tournament.prng.Rng`,
or a ``random.Random``); this module never makes its own. A draw either meets every constraint or raises
:class:`DrawError` saying which one cannot be met and why.

>>> from appliance.rules.tournament.prng import Rng
>>> battle_sizes(10, max_size=4, min_size=3)
[4, 3, 3]
>>> battles = partition([f"p{i}" for i in range(9)], [3, 3, 3], Rng(5),
...                     team_of={"p0": "A", "p1": "A", "p2": "A"}, separate_teams=True)
>>> sorted(sum(p in battle for p in ("p0", "p1", "p2")) for battle in battles)
[1, 1, 1]
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Mapping, Sequence

from appliance.rules.tournament.errors import DrawError


def battle_sizes(players: int, max_size: int, min_size: int, battles: int = 0, rule: str = "") -> list[int]:
    """Sizes of the battles for ``players``: as even as possible, largest first.

    With ``battles`` fixed, exactly that many; otherwise as few as battles of ``max_size`` allow.
    Raises :class:`DrawError` when the players cannot fill battles of ``min_size``-``max_size``.
    """
    where = f" ({rule})" if rule else ""
    if players <= 0:
        raise DrawError(f"no players to draw{where}", code="draw.no_players", params={"rule": rule})
    count = battles or math.ceil(players / max_size)
    if players > count * max_size:
        raise DrawError(f"{players} players do not fit {count} battles of at most {max_size}{where}",
                        code="draw.too_many",
                        params={"players": players, "battles": count, "size": max_size, "rule": rule})
    if players < count * min_size:
        if battles:
            raise DrawError(f"{players} players cannot fill {count} battles of at least {min_size}: "
                            f"{count * min_size} needed{where}",
                            code="draw.too_few",
                            params={"players": players, "battles": count, "size": min_size,
                                    "needed": count * min_size, "rule": rule})
        raise DrawError(f"{players} players cannot be split into battles of {min_size}-{max_size}{where}",
                        code="draw.no_split",
                        params={"players": players, "low": min_size, "high": max_size, "rule": rule})
    base, extra = divmod(players, count)
    return [base + 1] * extra + [base] * (count - extra)


def feasibility(players: Sequence[str], battles: int, team_of: Mapping[str, str], seeds: Sequence[str],
                separate_teams: bool, one_seed_per_battle: bool, rule: str = "") -> None:
    """Raise :class:`DrawError` naming the first constraint no draw can meet (team too big, seed count)."""
    where = f" ({rule})" if rule else ""
    if separate_teams:
        counts = Counter(team_of[p] for p in players if team_of.get(p))
        for team, count in counts.most_common():
            if count > battles:
                raise DrawError(f"team {team!r} has {count} players in this stage but there are only {battles} "
                                f"battles, so two of them would meet{where}",
                                code="draw.teams_meet",
                                params={"team": team, "count": count, "battles": battles, "rule": rule})
    if one_seed_per_battle:
        present = [p for p in players if p in set(seeds)]
        if len(present) != battles:
            raise DrawError(f"one seed per battle needs {battles} seeded players, {len(present)} are "
                            f"seeded{where}",
                            code="draw.seeds", params={"battles": battles, "seeded": len(present), "rule": rule})


def partition(players: Sequence[str], sizes: Sequence[int], rng, team_of: Mapping[str, str] | None = None,
              seeds: Sequence[str] = (), separate_teams: bool = False, one_seed_per_battle: bool = False,
              rule: str = "", mixing: int = 4) -> list[list[str]]:
    """Draw ``players`` into battles of ``sizes``, keeping teams apart and/or one seed per battle.

    Most constrained first (seeds, then the largest teams), each into a random battle among those with the most
    free seats that do not break a constraint; a stuck player is placed by moving one other player; then
    ``mixing * len(players)`` random constraint-keeping swaps spread the draw. Seeded players sit first.
    Raises :class:`DrawError` when a constraint cannot be met.
    """
    team_of = team_of or {}
    if len(players) != sum(sizes):
        raise DrawError(f"{len(players)} players for {sum(sizes)} seats",
                        code="draw.seat_count", params={"players": len(players), "seats": sum(sizes)})
    if len(set(players)) != len(players):
        raise DrawError("a player is drawn twice", code="draw.drawn_twice")
    feasibility(players, len(sizes), team_of, seeds, separate_teams, one_seed_per_battle, rule)
    seed_set = set(seeds) if one_seed_per_battle else set()

    def tags(player: str) -> list[str]:
        marks = []
        if separate_teams and team_of.get(player):
            marks.append("team:" + team_of[player])
        if player in seed_set:
            marks.append("seed")
        return marks

    player_tags = {p: tags(p) for p in players}
    battles: list[list[str]] = [[] for _ in sizes]
    used: list[Counter] = [Counter() for _ in sizes]

    def fits(player: str, index: int, without: str | None = None) -> bool:
        for tag in player_tags[player]:
            held = used[index][tag] - (1 if without is not None and tag in player_tags[without] else 0)
            if held:
                return False
        return True

    def put(player: str, index: int) -> None:
        battles[index].append(player)
        used[index].update(player_tags[player])

    def take(player: str, index: int) -> None:
        battles[index].remove(player)
        used[index].subtract(player_tags[player])

    # Most constrained first: seeds, then members of big teams, then the rest; random within each class.
    team_sizes = Counter(team_of.get(p) for p in players if separate_teams and team_of.get(p))
    order = list(players)
    rng.shuffle(order)
    order.sort(key=lambda p: (p not in seed_set, -team_sizes.get(team_of.get(p), 0)))
    for player in order:
        best_free, candidates = -1, []
        for index, size in enumerate(sizes):
            free = size - len(battles[index])
            if free <= 0 or not fits(player, index):
                continue
            if free > best_free:
                best_free, candidates = free, [index]
            elif free == best_free:
                candidates.append(index)
        if candidates:
            put(player, candidates[rng.randrange(len(candidates))])
            continue
        if not _place_by_moving(player, battles, sizes, fits, put, take):
            raise DrawError(f"could not seat {player!r} without breaking a constraint "
                            f"(teams apart: {separate_teams}, one seed per battle: {one_seed_per_battle}){rule and f' ({rule})'}",
                            code="draw.constraints",
                            params={"player": player, "teams_apart": separate_teams, "one_seed": one_seed_per_battle,
                                    "rule": rule})
    # Spread: random swaps that keep every constraint (a Markov chain over valid draws).
    where = {player: index for index, battle in enumerate(battles) for player in battle}
    everyone = list(where)
    for _ in range(mixing * len(players) if len(sizes) > 1 else 0):
        a = everyone[rng.randrange(len(everyone))]
        b = everyone[rng.randrange(len(everyone))]
        a_index, b_index = where[a], where[b]
        if a_index != b_index and fits(a, b_index, without=b) and fits(b, a_index, without=a):
            take(a, a_index)
            take(b, b_index)
            put(a, b_index)
            put(b, a_index)
            where[a], where[b] = b_index, a_index
    for battle in battles:
        battle.sort(key=lambda p: p not in seed_set)
    return battles


def _place_by_moving(player, battles, sizes, fits, put, take) -> bool:
    """Seat ``player`` by moving one seated player into a battle with a free seat; True if done."""
    open_battles = [i for i, size in enumerate(sizes) if len(battles[i]) < size]
    for target in range(len(battles)):
        for other in list(battles[target]):
            if not fits(player, target, without=other):
                continue
            for free in open_battles:
                if free != target and fits(other, free):
                    take(other, target)
                    put(other, free)
                    put(player, target)
                    return True
    return False


def swiss_pairing(order: Sequence[str], sizes: Sequence[int]) -> list[list[str]]:
    """Chunk the table, best first, into battles of ``sizes``: players nearest in the table meet (mubc 3.1).

    >>> swiss_pairing(["a", "b", "c", "d", "e", "f", "g"], [4, 3])
    [['a', 'b', 'c', 'd'], ['e', 'f', 'g']]
    """
    battles, start = [], 0
    for size in sizes:
        battles.append(list(order[start:start + size]))
        start += size
    return battles


def deal(refs: Sequence[str], sizes: Sequence[int], serpentine: bool) -> list[list[str]]:
    """Fill battles from an ordered list: in consecutive chunks, or dealt row by row (serpentine).

    >>> deal(list("abcdef"), [3, 3], serpentine=False)
    [['a', 'b', 'c'], ['d', 'e', 'f']]
    >>> deal(list("abcdef"), [3, 3], serpentine=True)
    [['a', 'd', 'e'], ['b', 'c', 'f']]
    """
    if not serpentine:
        return swiss_pairing(refs, sizes)
    battles: list[list[str]] = [[] for _ in sizes]
    items = iter(refs)
    row = 0
    remaining = len(refs)
    while remaining:
        indexes = range(len(sizes)) if row % 2 == 0 else range(len(sizes) - 1, -1, -1)
        for index in indexes:
            if len(battles[index]) < sizes[index] and remaining:
                battles[index].append(next(items))
                remaining -= 1
        row += 1
    return battles
