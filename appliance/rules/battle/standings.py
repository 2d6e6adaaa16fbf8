"""Standings of a battle: places, the tie-break indicators the profile names, placement points, and the
shoot-out the rules now call for. Each tie-break method is implemented once and named in the profile.

Ranking: places come from the regular themes: the score, then the profile's indicators before its shoot-out
method, all over regular questions only. While shoot-outs remain, a tie across a ranking cut (e.g. for 1st,
eurocup 2.4) calls for one. A shoot-out orders only the players who played it, inside their tied group (eurocup
2.4, irkutsk 3.6, youth-cup 2.7, northern-owl 3.3): by its own score, then the same indicators over its own
questions (irkutsk 3.6 «повторно проверяются перечисленные показатели»); shoot-out themes count one after
another, so a second shoot-out only splits those the first left tied. A player who played no shoot-out is
never ranked by shoot-out points. Once shoot-outs are spent (youth-cup 2.7), the indicators after the shoot-out
method apply too. Players still equal share their places; placement points of shared places are averaged
(mubc 3.3).

``PlayerStanding.score`` is the battle score: regular themes only (what a tournament carries across battles);
``shootout_score`` is shown beside it (None for a player who played no shoot-out). ``state.scores`` is the
running total on the scoreboard, shoot-out questions included.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from appliance.rules.battle.choices import TieBreak
from appliance.rules.battle.state import BattleState


@dataclasses.dataclass(frozen=True)
class PlayerStanding:
    """One player's line: ``place`` is the best place of a shared group, ``place_to`` the worst."""

    player: int
    name: str
    score: int  # regular themes only: the battle score
    place: int
    place_to: int
    indicators: dict
    placement_points: float | None
    absent: bool
    shootout_score: int | None = None  # points in shoot-out questions; None: played no shoot-out

    @property
    def is_shared(self) -> bool:
        return self.place_to > self.place


@dataclasses.dataclass(frozen=True)
class ShootoutCall:
    """A shoot-out the rules call for: between ``players``, for places ``places`` (first, last), by ``method``."""

    players: tuple
    places: tuple
    method: str
    number: int  # 1 for the first shoot-out theme of the battle


@dataclasses.dataclass(frozen=True)
class Standings:
    lines: tuple  # PlayerStanding, best first
    shootout: ShootoutCall | None
    unresolved: tuple  # groups of players tied across a cut that no remaining rule separates
    methods_used: tuple

    def to_dict(self) -> dict[str, Any]:
        return {
            "players": [dataclasses.asdict(line) for line in self.lines],
            "shootout": None if self.shootout is None else {
                "players": list(self.shootout.players), "places": list(self.shootout.places),
                "method": self.shootout.method, "number": self.shootout.number},
            "unresolved_ties": [list(group) for group in self.unresolved],
            "tie_break_methods_used": list(self.methods_used),
        }


def tallies(state: BattleState, include_shootout: bool = True, theme: int | None = None) -> list[dict[str, Any]]:
    """Per player: score, points without minuses, right answers, right answers by value (withdrawn questions
    and, if asked, shoot-out questions left out; ``theme``: that theme's questions only). The score always
    equals the sum of the rulings that count."""
    values = sorted(set(state.profile.questions_values), reverse=True)
    out = [{"score": 0, "points_without_minuses": 0, "right_answers_count": 0,
            "right_by_value": {value: 0 for value in values}} for _ in state.players]
    for question in state.questions:
        if question.withdrawn or (question.shootout and not include_shootout) \
                or (theme is not None and question.theme != theme):
            continue
        for ruling in question.rulings:
            if ruling.void:
                continue  # an answer after one corrected to right counts for nobody (eurocup 2.11.1)
            line = out[ruling.player]
            if ruling.effective:
                line["score"] += question.value_points
                line["points_without_minuses"] += question.value_points
                line["right_answers_count"] += 1
                base = question.value_points // (state.profile.questions_red_theme_multiplier if question.red else 1)
                line["right_by_value"][base] = line["right_by_value"].get(base, 0) + 1
            else:
                line["score"] -= question.value_points
    return out


def _indicator(method: str, tally: dict[str, Any]) -> Any:
    if method == TieBreak.POINTS_WITHOUT_MINUSES:  # irkutsk 3.6, youth-cup 2.6
        return tally["points_without_minuses"]
    if method == TieBreak.RIGHT_ANSWERS_COUNT:  # irkutsk 3.6
        return tally["right_answers_count"]
    if method == TieBreak.COUNT_RIGHT_BY_VALUE_DESC:  # youth-cup 2.6: 50s taken, then 40s, 30s...
        by_value = tally["right_by_value"]
        return tuple(by_value[value] for value in sorted(by_value, reverse=True))
    raise ValueError(f"unknown tie-break method {method!r}")


def _sort_key(indicators: tuple) -> tuple:
    key = []
    for value in indicators:
        key.append(tuple(-v for v in value) if isinstance(value, tuple) else -value)
    return tuple(key)


def standings(state: BattleState) -> Standings:
    """Places, indicators, placement points and any shoot-out called for, per the state's profile."""
    profile = state.profile
    chain = profile.ranking_tie_break
    method = profile.shootout_method
    if method is None:
        before, after = chain, ()
    else:
        position = chain.index(method)
        before, after = chain[:position], chain[position + 1:]
    limit = state.setup.spare_themes
    if limit is None and profile.ranking_shootout_limit >= 0:
        limit = profile.ranking_shootout_limit
    played = state.shootout_themes_played
    theme = state.theme
    in_progress = theme is not None and theme.shootout and not state.is_theme_complete
    if in_progress:
        played -= 1  # the theme being played is not spent yet
    exhausted = method is None or (limit is not None and played >= limit)
    methods = before + (after if exhausted else ())

    regular = tallies(state, include_shootout=False)
    # the indicators applied once shoot-outs are spent (youth-cup 2.7 leaves the shoot-out questions out)
    late_tallies = regular if profile.ranking_indicators_exclude_shootout else tallies(state)
    shootouts = [(theme.participants, tallies(state, theme=theme.index)) for theme in state.themes if theme.shootout]
    keyed = []
    for player in range(len(state.players)):
        indicators = tuple(_indicator(name, regular[player]) for name in before) \
            + tuple(_indicator(name, late_tallies[player]) for name in methods[len(before):])
        key = (-regular[player]["score"],) + _sort_key(indicators[:len(before)])
        for participants, theme_tally in shootouts:
            # a shoot-out orders only its own players (they share every key part before it): its score, then
            # the indicators again over its questions (irkutsk 3.6); the others get a neutral part
            if player in participants:
                key += ((0, -theme_tally[player]["score"])
                        + _sort_key(tuple(_indicator(name, theme_tally[player]) for name in before)),)
            else:
                key += ((1,),)
        key += _sort_key(indicators[len(before):])
        keyed.append((key, player, indicators))
    keyed.sort()
    played_shootout = {player for participants, _tally in shootouts for player in participants}
    every = tallies(state) if played_shootout else regular

    groups: list[list[tuple]] = []
    for item in keyed:
        if groups and groups[-1][0][0] == item[0]:
            groups[-1].append(item)
        else:
            groups.append([item])

    cuts = state.setup.cuts if state.setup.cuts is not None else profile.ranking_cuts
    points = profile.ranking_placement_points
    lines = []
    shootout = None
    unresolved = []
    place = 1
    regular_done = state.regular_themes_played >= state.setup.themes
    for group in groups:
        first, last = place, place + len(group) - 1
        shared_points = None
        if points:
            taken = [points[p - 1] if p - 1 < len(points) else 0 for p in range(first, last + 1)]
            shared_points = sum(taken) / len(taken)  # mubc 3.3: shared places share the points
            if shared_points == int(shared_points):
                shared_points = int(shared_points)
        players = tuple(sorted(item[1] for item in group))
        if len(group) > 1 and any(first <= cut < last for cut in cuts):
            if not exhausted and regular_done and shootout is None:
                shootout = ShootoutCall(players=players, places=(first, last), method=method, number=played + 1)
            elif exhausted:
                unresolved.append(players)
        for _key, player, indicators in group:
            lines.append(PlayerStanding(
                player=player, name=state.players[player], score=regular[player]["score"], place=first,
                place_to=last, indicators=dict(zip(methods, indicators)), placement_points=shared_points,
                absent=player in state.setup.absent,
                shootout_score=every[player]["score"] - regular[player]["score"] if player in played_shootout
                else None))
        place = last + 1
    if method == TieBreak.SHOOTOUT_THEME and in_progress:
        # a shoot-out theme is decided only when it ends (eurocup 2.4, northern-owl 3.3): until then it is
        # the shoot-out being played, whatever the score says in between
        shootout = ShootoutCall(players=theme.participants, places=theme.places, method=method, number=played + 1)
    return Standings(lines=tuple(lines), shootout=shootout, unresolved=tuple(unresolved), methods_used=methods)
