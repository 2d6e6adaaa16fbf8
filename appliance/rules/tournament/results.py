"""What the tournament needs from a played battle or a written sheet, and how players are compared across battles.

A battle's in-battle places (after its own tie-breaks and shoot-outs: eurocup 2.4, irkutsk 3.6, youth-cup
2.6-2.7, northern-owl 3.3) come from the battle engine's ``standings(state)``. The tournament compares players
of *different* battles (best runner-up, best third places, the Swiss table, the written round) by the stage's
``ranking`` keys, all computed from the battle logs.

>>> result = PlayerResult("ann", score=120, place=1, right_points=150, right_answers=4, wrong_answers=1,
...                       taken_by_value=((50, 2), (30, 1), (20, 1)))
>>> ranking_key(result, ("score", "right_points", "taken_by_value"))
(120, 150, (2, 0, 1, 1, 0))
>>> placement_points_for([1, 2, 2, 4], (3, 2, 1, 0))   # mubc 3.3: a shared 2nd place gets (2+1)/2
[3.0, 1.5, 1.5, 0.0]
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

from appliance.rules.tournament.errors import ResultError

VALUES_DESCENDING = (100, 80, 60, 50, 40, 30, 20, 10)


@dataclasses.dataclass(frozen=True)
class PlayerResult:
    """One player's line of a battle result; places may be shared (equal numbers)."""

    player: str
    score: int
    place: int
    right_points: int = 0  # points from right answers only, no minuses (irkutsk 3.6, youth-cup 2.6)
    right_answers: int = 0  # irkutsk 3.6
    wrong_answers: int = 0
    taken_by_value: tuple[tuple[int, int], ...] = ()  # (value, questions taken) (youth-cup 2.6)
    absent: bool = False  # mubc 3.5: counted with 0 game points, placed last

    def taken(self, value: int) -> int:
        return dict(self.taken_by_value).get(value, 0)

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["taken_by_value"] = {str(value): count for value, count in self.taken_by_value}
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "PlayerResult":
        data = dict(data)
        taken = data.get("taken_by_value") or {}
        if isinstance(taken, dict):
            data["taken_by_value"] = tuple(sorted(((int(v), int(c)) for v, c in taken.items()), reverse=True))
        else:
            data["taken_by_value"] = tuple(tuple(pair) for pair in taken)
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class Shootout:
    """A shoot-out played inside a battle (extra themes or questions) and the order it settled."""

    players: tuple[str, ...]
    order: tuple[str, ...]
    kind: str = "theme"
    scores: tuple[int, ...] = ()
    rule: str = ""


@dataclasses.dataclass(frozen=True)
class BattleResult:
    """A finished battle: one line per seated player, the shoot-outs played, and where it came from."""

    battle_id: str
    lines: tuple[PlayerResult, ...]
    shootouts: tuple[Shootout, ...] = ()
    source: str = "box"  # "box": played on this box (log id given); "manual": entered by the director
    log_id: str = ""
    themes_played: int = 0

    def line(self, player: str) -> PlayerResult:
        for line in self.lines:
            if line.player == player:
                return line
        raise ResultError(f"battle {self.battle_id}: no result line for player {player!r}",
                          code="result.no_line", params={"battle": self.battle_id, "player": player})

    def to_dict(self) -> dict:
        return {"battle_id": self.battle_id, "lines": [line.to_dict() for line in self.lines],
                "shootouts": [dataclasses.asdict(s) for s in self.shootouts], "source": self.source,
                "log_id": self.log_id, "themes_played": self.themes_played}

    @classmethod
    def from_dict(cls, data: dict) -> "BattleResult":
        return cls(battle_id=data["battle_id"], lines=tuple(PlayerResult.from_dict(x) for x in data["lines"]),
                   shootouts=tuple(Shootout(**{k: tuple(v) if isinstance(v, list) else v for k, v in s.items()})
                                   for s in data.get("shootouts", ())),
                   source=data.get("source", "box"), log_id=data.get("log_id", ""),
                   themes_played=data.get("themes_played", 0))


def check_places(battle_id: str, lines: Sequence[PlayerResult]) -> None:
    """Places must be competition ranking (1, 2, 2, 4): a shared place uses up the places it covers.

    Raises :class:`ResultError` naming the battle otherwise.
    """
    places = sorted(line.place for line in lines)
    for index, place in enumerate(places):
        expected_first = places.index(place) + 1
        if place != expected_first:
            raise ResultError(f"battle {battle_id}: places {places} are not 1, 2, ... with shared places "
                              "taking the places they cover (1, 2, 2, 4)",
                              code="result.places", params={"battle": battle_id, "places": list(places)})


def places_from_scores(scores: Sequence[int]) -> list[int]:
    """Competition ranking by score, ties shared: ``[30, 50, 30] -> [2, 1, 2]``."""
    return [1 + sum(other > score for other in scores) for score in scores]


def placement_points_for(places: Sequence[int], points: Sequence[float], multiplier: int = 1) -> list[float]:
    """Placement points per player; a place shared by k players gets the mean of the k places' points (mubc 3.3)."""
    table = list(points) + [0.0] * 8
    result = []
    for place in places:
        shared = sum(1 for other in places if other == place)
        result.append(multiplier * sum(table[place - 1 + k] for k in range(shared)) / shared)
    return result


def ranking_key(line: PlayerResult, keys: Iterable[str], placement_points: float = 0.0) -> tuple:
    """The comparison key of one result line under a stage's ranking (higher is better, compared in order)."""
    key = []
    for name in keys:
        if name == "score":
            key.append(line.score)
        elif name == "right_points":
            key.append(line.right_points)
        elif name == "right_answers":
            key.append(line.right_answers)
        elif name == "taken_by_value":  # youth-cup 2.6: questions taken at 50, then 40, then 30 ...
            key.append(tuple(line.taken(value) for value in VALUES_DESCENDING if value <= 50))
        elif name == "placement_points":
            key.append(placement_points)
        else:
            raise ResultError(f"unknown ranking key {name!r}", code="result.ranking_key", params={"key": name})
    return tuple(key)


# --- the written round (youth-cup 2.2) -----------------------------------------------------------------------

# One character per question on the sheet, themes in order, 10-50 within a theme.
WRITTEN_MARKS = {
    "+": "right",
    "-": "wrong",
    "2": "two answers: wrong even if one is right (youth-cup 2.2.2)",
    "x": "crossed out: no points (youth-cup 2.2.2)",
    "0": "blank: no points (youth-cup 2.2.2)",
}


def normalise_marks(marks: str) -> str:
    """Accept the keyboard-friendly spellings a fast typist uses: ``= . space`` and Cyrillic ``х``."""
    table = str.maketrans({".": "0", " ": "0", "=": "-", "х": "x", "Х": "x", "X": "x", "*": "2"})
    return marks.translate(table)


def score_written(player: str, marks: str, values: Sequence[int], themes: int) -> PlayerResult:
    """Score one written-round sheet: ``+`` right, ``-`` wrong, ``2`` two answers (= wrong), ``x``/``0`` nothing.

    youth-cup 2.2.2: two answers on one line count as wrong; crossed out or blank neither adds nor subtracts.
    Raises :class:`ResultError` if the sheet has the wrong length or an unknown mark.

    >>> line = score_written("bob", "+-2x0" + "+" * 5, (10, 20, 30, 40, 50), themes=2)
    >>> line.score, line.right_points, line.right_answers, line.wrong_answers, line.taken(50)
    (110, 160, 6, 2, 1)
    """
    marks = normalise_marks(marks)
    expected = themes * len(values)
    if len(marks) != expected:
        raise ResultError(f"sheet of {player!r}: {len(marks)} marks, expected {expected} ({themes} themes of "
                          f"{len(values)} questions)",
                          code="sheet.length",
                          params={"player": player, "got": len(marks), "expected": expected, "themes": themes,
                                  "questions": len(values)})
    bad = sorted(set(marks) - set(WRITTEN_MARKS))
    if bad:
        raise ResultError(f"sheet of {player!r}: unknown mark(s) {''.join(bad)!r}; use + - 2 x 0",
                          code="sheet.marks", params={"player": player, "marks": "".join(bad)})
    score = right_points = right = wrong = 0
    taken: dict[int, int] = {}
    for index, mark in enumerate(marks):
        value = values[index % len(values)]
        if mark == "+":
            score += value
            right_points += value
            right += 1
            taken[value] = taken.get(value, 0) + 1
        elif mark in "-2":
            score -= value
            wrong += 1
    return PlayerResult(player, score=score, place=0, right_points=right_points, right_answers=right,
                        wrong_answers=wrong, taken_by_value=tuple(sorted(taken.items(), reverse=True)))
