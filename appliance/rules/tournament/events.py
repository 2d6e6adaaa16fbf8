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
import typing
from typing import Any

from appliance.rules.tournament.errors import ResultError
from appliance.rules.tournament.results import BattleResult, PlayerResult

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
    runs), in play order; typed by the director, or read from a question package: then ``sources`` holds, per
    name, ``(package id, theme number in the package)`` (empty for names typed by hand), so every battle of the
    pack reads the same texts. A later naming replaces."""

    at_ns: int
    pack: str
    names: tuple[str, ...]
    # Added after version 1 as optional: left out when empty, so a typed naming is written as it always was.
    sources: tuple[tuple[str, int], ...] = dataclasses.field(default=(), metadata={"optional": True})


EVENTS = {cls.__name__: cls for cls in (
    TournamentCreated, PlayerRegistered, PlayerWithdrew, RegistrationClosed, DeadlineSet, SeedsSet, StageDrawn,
    BattleAssigned, BattleLinked, BattleResultRecorded, WrittenSheetEntered, StageClosed, TieBroken, ThemesNamed)}


def to_dict(event) -> dict[str, Any]:
    """The JSON form of an event: ``{"type": ..., "v": 1, ...fields}``."""
    data: dict[str, Any] = {"type": type(event).__name__, "v": FORMAT_VERSION}
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        if field.metadata.get("optional") and value == field.default:
            continue
        if isinstance(value, BattleResult):
            value = value.to_dict()
        elif field.name == "battles":
            value = [battle.to_dict() for battle in value]
        elif isinstance(value, tuple):
            value = [list(item) if isinstance(item, tuple) else item for item in value]
        data[field.name] = value
    return data


def from_dict(data: dict[str, Any], number: int | None = None):
    """Rebuild an event from its JSON form, every field checked against its type first (a log from another box or
    a hand-edited export is input like any other): raises :class:`ResultError` ``import.event`` for an unknown
    type or version and ``import.field`` (naming the event ``number``, the field and what it must be) for a field
    missing, unknown or of the wrong type. Nothing is built from a record that does not check.

    >>> from_dict({"type": "PlayerRegistered", "v": 1, "at_ns": 1, "player_id": "p1", "name": "A", "team_rank": None})
    Traceback (most recent call last):
    ...
    appliance.rules.tournament.errors.ResultError: event PlayerRegistered: team_rank must be a whole number
    """
    if not isinstance(data, dict):
        raise ResultError("a log record is not an object", code="import.field",
                          params={"number": _number(number), "type": "?", "field": "type", "expected": "object"})
    data = dict(data)
    kind = data.pop("type", None)
    version = data.pop("v", FORMAT_VERSION)
    if not isinstance(kind, str) or kind not in EVENTS or version != FORMAT_VERSION:
        raise ResultError(f"unknown tournament event {str(kind)[:40]!r} version {str(version)[:10]!r}",
                          code="import.event", params={"type": str(kind), "version": str(version)})
    return _record(EVENTS[kind], data, kind, number)


# Bounds of a whole number in a log: SQLite's INTEGER (a seed, a clock reading, a score all fit).
_INT_LIMIT = 2**63


def _number(number: int | None) -> str:
    return "?" if number is None else str(number)


# What a field of a log record must be: the ``expected`` param of ``import.field`` (worded by the desk's catalogue).
EXPECTED = {"bool": "true or false", "whole": "a whole number", "text": "text", "object": "an object",
            "list": "a list", "pair": "a list of two", "known": "of a known kind", "absent": "absent (no such field)",
            "given": "given", "themes": 'a list of {"colour", "values"}', "values": "an object of question values"}


def _bad(kind: str, field: str, expected: str, number: int | None) -> ResultError:
    return ResultError(f"event {kind}: {field} must be {EXPECTED[expected]}", code="import.field",
                       params={"number": _number(number), "type": kind, "field": field, "expected": expected})


def _value(hint, value, kind: str, field: str, number: int | None):
    """``value`` checked against the annotation ``hint`` and rebuilt (lists become tuples, records records)."""
    origin = typing.get_origin(hint)
    if hint is bool:
        if not isinstance(value, bool):
            raise _bad(kind, field, "bool", number)
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int) or not -_INT_LIMIT < value < _INT_LIMIT:
            raise _bad(kind, field, "whole", number)
        return value
    if hint is str:
        if not isinstance(value, str):
            raise _bad(kind, field, "text", number)
        return value
    if hint is dict or origin is dict:
        if not isinstance(value, dict):
            raise _bad(kind, field, "object", number)
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise _bad(kind, field, "list", number)
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_value(args[0], item, kind, field, number) for item in value)
        if len(value) != len(args):
            raise _bad(kind, field, "pair", number)
        return tuple(_value(arg, item, kind, field, number) for arg, item in zip(args, value))
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise _bad(kind, field, "object", number)
        return _record(hint, value, kind, number, prefix=f"{field}.")
    raise _bad(kind, field, "known", number)  # an annotation this decoder does not know: refuse, never guess


def _record(cls, data: dict, kind: str, number: int | None, prefix: str = ""):
    """A frozen record of ``cls`` from its JSON object, every field checked (the JSON forms of nested records:
    a battle's ``themes`` as ``{"colour", "values"}``, a line's ``taken_by_value`` as ``{"value": count}``)."""
    hints = typing.get_type_hints(cls)
    fields = {field.name: field for field in dataclasses.fields(cls) if field.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise _bad(kind, prefix + str(unknown[0])[:40], "absent", number)
    values = {}
    for name, field in fields.items():
        if name not in data:
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                raise _bad(kind, prefix + name, "given", number)
            continue
        value = data[name]
        if cls is BattleSpec and name == "themes":
            if not isinstance(value, list) or not all(isinstance(t, dict) and set(t) == {"colour", "values"}
                                                      for t in value):
                raise _bad(kind, prefix + name, "themes", number)
            value = [[t["colour"], t["values"]] for t in value]
        elif cls is PlayerResult and name == "taken_by_value" and isinstance(value, dict):
            try:
                value = sorted(([int(v), c] for v, c in value.items()), reverse=True)
            except ValueError:
                raise _bad(kind, prefix + name, "values", number) from None
        values[name] = _value(hints[name], value, kind, prefix + name, number)
    return cls(**values)
