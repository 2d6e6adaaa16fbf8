"""The battle's events: frozen dataclasses, each stamped with ``at_ns`` (CLOCK_MONOTONIC nanoseconds of the box).

Facts from the hardware are past tense (``ButtonPressed``); the host's actions are stamped by the service at
receipt with ``time.monotonic_ns()``. Players are numbered from 0 in the order the setup lists them.
``event_to_dict``/``event_from_dict`` give the battle log's line format (docs/battle-log.md): the fields of the
event plus ``"type"``, the class name.

>>> event = ButtonPressed(at_ns=1_500_000_000, player=1)
>>> event_to_dict(event)
{'type': 'ButtonPressed', 'at_ns': 1500000000, 'player': 1, 'source': 'button'}
>>> event_from_dict(event_to_dict(event)) == event
True
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from appliance.rules.battle.choices import Mode, PressSource
from appliance.rules.battle.errors import BattleRuleError
from appliance.rules.battle.profile import Profile, profile_from_dict, profile_to_dict
from appliance.rules.battle.versions import LOG_WITHOUT_VERSION, RULES_VERSION

# The fields hold the plain words of the battle log; choices.py names them (a member equals its word)
PRESS_SOURCES = tuple(PressSource)
MODES = tuple(Mode)


# Field metadata of a field the log may leave out (then it takes its default): fields added after a format's version.
OPTIONAL = {"optional": True}

@dataclasses.dataclass(frozen=True)
class Event:
    """Base of every battle event. ``at_ns``: CLOCK_MONOTONIC nanoseconds when it happened."""

    at_ns: int

    @property
    def is_host_action(self) -> bool:
        """True for what the host did (undoable); False for hardware facts and timer expiries."""
        return True


@dataclasses.dataclass(frozen=True)
class BattleSetUp(Event):
    """The battle's setup: the rules profile (embedded whole, so a log replays alike forever), the players,
    the number of themes, which are red (0-based), optional theme names and (question, answer) texts,
    absent players (mubc 3.5), spare shoot-out themes (youth-cup 2.7; None: as many as needed),
    the run of a battle slot (youth-cup 2.4) and the starting mode ("buttons" or "claps", mubc 4.4).
    ``cuts`` overrides the profile's ranking cuts for this stage (e.g. the places that advance).
    ``sources`` says where each theme (regular, then spare) came from: ``(package id, theme number in the
    package)``, or ``()`` for a theme typed by hand, so the log shows which text each question was read from;
    ``theme_authors`` names each theme's authors as its package gives them (``()`` when it names none).
    ``rules_version`` is the engine's reading of the rules the battle is played by (``versions.py``): a new
    battle takes the current one, and a log replays under the version it names.
    ``tournament``, ``stage``, ``battle_name``, ``room``, ``host`` and ``date`` (the box's calendar date when it
    was set up, ISO 8601; the engine never reads a clock) are words for the papers: the protocol's title."""

    profile: Profile = None  # type: ignore[assignment]
    players: tuple = ()
    themes: int = 0
    red_themes: tuple = ()
    theme_names: tuple = ()
    questions: tuple = ()  # per theme: ((text, answer), ...) for up to 5 questions
    absent: tuple = ()
    spare_themes: int | None = None
    cuts: tuple | None = None
    slot: str = ""
    run: int = 1
    runs: int = 1
    mode: str = "buttons"
    rules_version: int = RULES_VERSION
    # Added in log format 1 as optional: written only when set, so an older log re-encodes byte for byte.
    sources: tuple = dataclasses.field(default=(), metadata=OPTIONAL)  # per theme: (package id, number) or ()
    theme_authors: tuple = dataclasses.field(default=(), metadata=OPTIONAL)  # per theme: (author, ...) or ()
    tournament: str = dataclasses.field(default="", metadata=OPTIONAL)
    stage: str = dataclasses.field(default="", metadata=OPTIONAL)
    battle_name: str = dataclasses.field(default="", metadata=OPTIONAL)
    room: str = dataclasses.field(default="", metadata=OPTIONAL)
    host: str = dataclasses.field(default="", metadata=OPTIONAL)
    date: str = dataclasses.field(default="", metadata=OPTIONAL)

    @property
    def is_host_action(self) -> bool:
        return True


@dataclasses.dataclass(frozen=True)
class ThemeStarted(Event):
    """The host names the next theme (a regular one, or a shoot-out theme when the standings call for one)."""

    name: str = ""


@dataclasses.dataclass(frozen=True)
class PriceAnnounced(Event):
    """The host announces the next question's value (eurocup 2.5); it must be the next value of the theme."""

    value_points: int = 0


@dataclasses.dataclass(frozen=True)
class ReadingStarted(Event):
    """The host starts reading the question."""


@dataclasses.dataclass(frozen=True)
class ReadingFinished(Event):
    """The host has read the question to its end; the press window's countdown starts (eurocup 2.5)."""


@dataclasses.dataclass(frozen=True)
class ReadingResumed(Event):
    """After a wrong answer with nobody signalling, the host goes on reading (eurocup 2.10.2, irkutsk 3.4)."""


@dataclasses.dataclass(frozen=True)
class ButtonPressed(Event):
    """A player's press with its edge timestamp. ``source``: "button" (kernel edge, µs), "phone" (lower
    precision), "host" (the host records a press by hand)."""

    player: int = -1
    source: str = "button"

    @property
    def is_host_action(self) -> bool:
        return self.source == PressSource.HOST


@dataclasses.dataclass(frozen=True)
class AnswererPointed(Event):
    """The host points to the answerer and resets the signal (eurocup 2.6); starts the answer countdown.
    With no buttons (mubc 4.4) the host picks any eligible player."""

    player: int = -1


@dataclasses.dataclass(frozen=True)
class ShortFormGiven(Event):
    """The host tells the short form of an interrupted question (eurocup 2.7); the 3 s restart (2.8)."""


@dataclasses.dataclass(frozen=True)
class ClarificationRequested(Event):
    """The host says "уточните" (northern-owl 3.7); the answer countdown restarts."""


@dataclasses.dataclass(frozen=True)
class AnswerTimeExtended(Event):
    """The host extends the answer time for a long answer (northern-owl 3.7)."""

    extra_ms: int = 0


@dataclasses.dataclass(frozen=True)
class AnswerJudged(Event):
    """The host rules the current answer right or wrong."""

    correct: bool = False


@dataclasses.dataclass(frozen=True)
class TimeCalled(Event):
    """The host says "время": the answer time is up (a wrong answer, eurocup 2.8, northern-owl 3.7), or the
    press window is over (northern-owl 3.10)."""


@dataclasses.dataclass(frozen=True)
class PressWindowExpired(Event):
    """The service's timer: the press window's deadline has passed with nobody signalling (eurocup 2.11.3)."""

    @property
    def is_host_action(self) -> bool:
        return False


@dataclasses.dataclass(frozen=True)
class QuestionWithdrawn(Event):
    """The host withdraws the current (or just finished) question (mubc 4.3); its rulings score nothing."""

    reason: str = ""


@dataclasses.dataclass(frozen=True)
class AnswerAnnounced(Event):
    """The host announces the right answer after the question (eurocup 2.12)."""


@dataclasses.dataclass(frozen=True)
class RulingCorrected(Event):
    """The host reverses a ruling: ``question`` is the index in ``state.questions``, ``player`` whose ruling."""

    question: int = -1
    player: int = -1
    correct: bool = False
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class AppealLodged(Event):
    """A player disputes a ruling or a question (youth-cup 3.1, mubc 4.2)."""

    player: int = -1
    question: int = -1
    claim: str = ""


@dataclasses.dataclass(frozen=True)
class AppealDecided(Event):
    """The host decides appeal number ``appeal`` (index in ``state.appeals``). Accepted: the appellant's
    ruling becomes ``correct``; ``correct=None`` voids the whole question (an incorrect question)."""

    appeal: int = -1
    accepted: bool = False
    correct: bool | None = None


@dataclasses.dataclass(frozen=True)
class ModeChanged(Event):
    """Buttons or "claps" (mubc 4.4): with no buttons, the host points to whoever he saw first."""

    mode: str = "buttons"


@dataclasses.dataclass(frozen=True)
class ActionUndone(Event):
    """The host undoes his last action; presses and timer expiries after it are re-applied if still valid."""


EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (BattleSetUp, ThemeStarted, PriceAnnounced, ReadingStarted, ReadingFinished, ReadingResumed,
                ButtonPressed, AnswererPointed, ShortFormGiven, ClarificationRequested, AnswerTimeExtended,
                AnswerJudged, TimeCalled, PressWindowExpired, QuestionWithdrawn, AnswerAnnounced, RulingCorrected,
                AppealLodged, AppealDecided, ModeChanged, ActionUndone)
}

_TUPLE_FIELDS = {"players", "red_themes", "theme_names", "questions", "absent", "cuts", "sources", "theme_authors"}


def _jsonable(value: Any) -> Any:
    if isinstance(value, Profile):
        return profile_to_dict(value)
    if isinstance(value, tuple):
        return [_jsonable(item) for item in value]
    return value


def _tupled(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tupled(item) for item in value)
    return value


def event_to_dict(event: Event) -> dict[str, Any]:
    """The event as a JSON-able dict: ``{"type": ClassName, **fields}`` (the battle log's line format)."""
    out: dict[str, Any] = {"type": type(event).__name__}
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        if field.metadata.get("optional") and value == field.default:
            continue  # an optional field left at its default is not written (older logs stay as they were)
        out[field.name] = _jsonable(value)
    return out


def _error(message: str, data: Any) -> BattleRuleError:
    return BattleRuleError("battle log", message, event=data, code="bad_event_record")


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from its dict form; raise :class:`BattleRuleError` (rule "battle log") naming what is
    wrong: an unknown type, a missing or unknown field, a field of the wrong type."""
    if not isinstance(data, Mapping):
        raise _error(f"an event is a JSON object, not {type(data).__name__}", data)
    type_name = data.get("type")
    cls = EVENT_TYPES.get(type_name) if isinstance(type_name, str) else None
    if cls is None:
        raise _error(f"unknown event type {type_name!r}", data)
    fields = {field.name: field for field in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields) - {"type"})
    if unknown:
        raise _error(f"{type_name} has no field(s) {', '.join(unknown)}", data)
    if "at_ns" not in data:
        raise _error(f"{type_name} needs at_ns", data)
    kwargs: dict[str, Any] = {}
    if cls is BattleSetUp and "rules_version" not in data:
        kwargs["rules_version"] = LOG_WITHOUT_VERSION  # written before rules versions: played by version 1
    for name, value in data.items():
        if name == "type":
            continue
        if name == "profile":
            kwargs[name] = profile_from_dict(value, source=f"{type_name}.profile")
        elif name in _TUPLE_FIELDS:
            if value is not None and not isinstance(value, list):
                raise _error(f"{type_name}.{name} must be a list", data)
            kwargs[name] = _tupled(value)
        else:
            kwargs[name] = value
    try:
        event = cls(**kwargs)
    except TypeError as error:
        raise _error(f"{type_name}: {error}", data) from None
    _check_types(event, data)
    return event


_FIELD_TYPES = {"at_ns": int, "player": int, "value_points": int, "extra_ms": int, "question": int, "appeal": int,
                "themes": int, "run": int, "runs": int, "rules_version": int, "correct": bool, "accepted": bool,
                "name": str, "source": str, "reason": str, "claim": str, "mode": str, "slot": str, "tournament": str,
                "stage": str, "battle_name": str, "room": str, "host": str, "date": str}


def _check_types(event: Event, data: Any) -> None:
    for field in dataclasses.fields(event):
        kind = _FIELD_TYPES.get(field.name)
        value = getattr(event, field.name)
        if kind is None or (value is None and field.name == "correct" and isinstance(event, AppealDecided)):
            continue
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise _error(f"{type(event).__name__}.{field.name} must be an integer, not {value!r}", data)
        if kind is not int and not isinstance(value, kind):
            raise _error(f"{type(event).__name__}.{field.name} must be {kind.__name__}, not {value!r}", data)
