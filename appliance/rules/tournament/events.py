"""Tournament events: past-tense facts, frozen, each stamped with ``at_ns`` (given by the caller, never read here).

The tournament's log is a sequence of these; ``state = apply(state, event)`` over the log rebuilds everything.
A correction is a new event (a result recorded again, a re-draw, a tie broken), never an edit.
Each event has a stable ``type`` name and a JSON form (:func:`to_dict`, :func:`from_dict`), version 1.

>>> event = PlayerRegistered(at_ns=5, player_id="p1", name="Анна", team="МГУ")
>>> from_dict(to_dict(event)) == event
True
"""

from __future__ import annotations

import dataclasses
from typing import Any

from appliance.rules.tournament.errors import ResultError
from appliance.rules.tournament.results import BattleResult

FORMAT_VERSION = 1


@dataclasses.dataclass(frozen=True)
class BattleSpec:
    """One battle as drawn: its seats hold player ids, or references ``@stage:...`` to be filled by results."""

    id: str
    stage: str
    index: int
    seats: tuple[str, ...]
    round: int = 1
    group: str = ""
    room: str = ""
    run: int = 1
    theme_pack: str = ""
    themes: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (colour, question values) per theme

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["themes"] = [{"colour": colour, "values": list(values)} for colour, values in self.themes]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "BattleSpec":
        data = dict(data)
        data["seats"] = tuple(data["seats"])
        data["themes"] = tuple((t["colour"], tuple(t["values"])) for t in data.get("themes", ()))
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class TournamentCreated:
    at_ns: int
    tournament_id: str
    title: str
    format_data: dict  # the format's TOML data verbatim: the log does not depend on presets changing later
    seed: int  # the tournament's recorded seed; each draw derives its own from it


@dataclasses.dataclass(frozen=True)
class PlayerRegistered:
    at_ns: int
    player_id: str
    name: str
    team: str = ""
    category: str = ""
    team_rank: int = 0  # the team's rank on the ChGK day one (irkutsk 1.7); 0: unranked
    late: bool = False  # entered by the director after the deadline


@dataclasses.dataclass(frozen=True)
class PlayerWithdrew:
    at_ns: int
    player_id: str
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class RegistrationClosed:
    at_ns: int


@dataclasses.dataclass(frozen=True)
class DeadlineSet:
    """The registration deadline, as the organisers announce it (northern-owl 1.2: ISO 8601 with its offset,
    ``2008-10-01T23:59:00-04:00``). The pure engine keeps it; the desk closes registration when it passes."""

    at_ns: int
    deadline: str


@dataclasses.dataclass(frozen=True)
class SeedsSet:
    at_ns: int
    player_ids: tuple[str, ...]  # best seed first


@dataclasses.dataclass(frozen=True)
class StageDrawn:
    """A draw: its battles (with seats), its seed, and stages it skips (eurocup 3.2: no qualifying needed)."""

    at_ns: int
    stage_id: str
    seed: int
    battles: tuple[BattleSpec, ...]
    round: int = 1
    skipped: tuple[str, ...] = ()
    bracket: bool = False  # the battles of every later stage were drawn with this one


@dataclasses.dataclass(frozen=True)
class BattleAssigned:
    at_ns: int
    battle_id: str
    room: str
    box: str = ""


@dataclasses.dataclass(frozen=True)
class BattleLinked:
    """A drawn battle is being played on this box as battle ``box_battle_id`` of the battle store."""

    at_ns: int
    battle_id: str
    box_battle_id: str


@dataclasses.dataclass(frozen=True)
class BattleResultRecorded:
    at_ns: int
    result: BattleResult


@dataclasses.dataclass(frozen=True)
class WrittenSheetEntered:
    at_ns: int
    stage_id: str
    player_id: str
    marks: str


@dataclasses.dataclass(frozen=True)
class StageClosed:
    """No more sheets for a written stage; players without a sheet are absent."""

    at_ns: int
    stage_id: str


@dataclasses.dataclass(frozen=True)
class TieBroken:
    """The order a shoot-out (or lots, where the format says so) put tied players in, best first."""

    at_ns: int
    tie_id: str
    order: tuple[str, ...]
    how: str = "theme"
    detail: str = ""


@dataclasses.dataclass(frozen=True)
class ThemesNamed:
    """The names of the themes of one theme pack (the battles of a stage that play the same themes: youth-cup 2.4's
    runs), in play order; typed by the director, or later read from a question package. A later naming replaces."""

    at_ns: int
    pack: str
    names: tuple[str, ...]


EVENTS = {cls.__name__: cls for cls in (
    TournamentCreated, PlayerRegistered, PlayerWithdrew, RegistrationClosed, DeadlineSet, SeedsSet, StageDrawn,
    BattleAssigned, BattleLinked, BattleResultRecorded, WrittenSheetEntered, StageClosed, TieBroken, ThemesNamed)}


def to_dict(event) -> dict[str, Any]:
    """The JSON form of an event: ``{"type": ..., "v": 1, ...fields}``."""
    data: dict[str, Any] = {"type": type(event).__name__, "v": FORMAT_VERSION}
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        if isinstance(value, BattleResult):
            value = value.to_dict()
        elif field.name == "battles":
            value = [battle.to_dict() for battle in value]
        elif isinstance(value, tuple):
            value = list(value)
        data[field.name] = value
    return data


def from_dict(data: dict[str, Any]):
    """Rebuild an event from its JSON form; raises :class:`ResultError` for an unknown type or version."""
    data = dict(data)
    kind = data.pop("type", None)
    version = data.pop("v", FORMAT_VERSION)
    if kind not in EVENTS or version != FORMAT_VERSION:
        raise ResultError(f"unknown tournament event {kind!r} version {version!r}")
    cls = EVENTS[kind]
    if "result" in data:
        data["result"] = BattleResult.from_dict(data["result"])
    if "battles" in data:
        data["battles"] = tuple(BattleSpec.from_dict(b) for b in data["battles"])
    for key in ("player_ids", "order", "skipped", "names"):
        if key in data:
            data[key] = tuple(data[key])
    return cls(**data)
