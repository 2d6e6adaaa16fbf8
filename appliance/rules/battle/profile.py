"""Rules profiles: one TOML file per regulation (and per stage where a stage differs), read into a Profile.

A profile is data a tournament organiser can read, copy and edit to make a new regulation; the engine branches
on its fields, never on its name. Each table of the TOML file maps to fields named ``<table>_<key>``
(``[answer] limit_ms`` is ``Profile.answer_limit_ms``). ``[sections]`` maps rule keys to the regulation's
section numbers, so an error can name the rule (``"eurocup 2.8"``).

The files are read by the service (``appliance.service.presets``); the rules take the data they hold.

>>> from appliance.service.presets import load_profile
>>> profile = load_profile("eurocup")
>>> profile.answer_limit_ms, profile.presses_window_after_reading_ms, profile.presses_during_answer
(3000, 7000, 'queue')
>>> profile.cite("answer_limit")
'eurocup 2.8'
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from appliance.rules.battle.choices import (SHOOTOUT_METHODS, Appeals, DuringAnswer, HostCorrections, OutsideWindow,
                                            PressesOpenAt, TieBreak)
from appliance.rules.battle.errors import ProfileError

# (table, key, type, the choices (a StrEnum: the field holds its member) or None, default or REQUIRED)
REQUIRED = object()
SCHEMA: tuple[tuple[str, str, type, tuple | None, Any], ...] = (
    ("profile", "name", str, None, REQUIRED),
    ("profile", "title", str, None, REQUIRED),
    ("profile", "regulation", str, None, ""),
    ("profile", "stage", str, None, ""),
    ("players", "min", int, None, 2),
    ("players", "max", int, None, 4),
    ("questions", "values", tuple, None, (10, 20, 30, 40, 50)),
    ("questions", "red_theme_multiplier", int, None, 1),
    ("themes", "usual", int, None, 4),
    ("themes", "counts", tuple, None, ()),
    ("themes", "max", int, None, 60),
    ("presses", "open_at", str, PressesOpenAt, "price_announced"),
    ("presses", "stop_reading", bool, None, True),
    ("presses", "window_after_reading_ms", int, None, 5000),
    ("presses", "window_after_wrong_ms", int, None, 5000),
    ("presses", "during_answer", str, DuringAnswer, "ignore"),
    ("presses", "outside_window", str, OutsideWindow, "ignore"),
    ("presses", "lockout_ms", int, None, 0),
    ("presses", "blocker", bool, None, False),
    ("answer", "limit_ms", int, None, 0),
    ("answer", "short_form", bool, None, True),
    ("answer", "clarify", bool, None, False),
    ("answer", "extension", bool, None, False),
    ("answer", "extension_max_ms", int, None, 60000),
    ("corrections", "host", str, HostCorrections, "any_time"),
    ("corrections", "appeals", str, Appeals, "none"),
    ("corrections", "withdraw", bool, None, True),
    ("corrections", "withdraw_ended", bool, None, True),
    ("corrections", "fallback_without_buttons", bool, None, True),
    ("ranking", "tie_break", tuple, TieBreak, ()),
    ("ranking", "cuts", tuple, None, (1,)),
    ("ranking", "shootout_limit", int, None, -1),
    ("ranking", "indicators_exclude_shootout", bool, None, False),
    ("ranking", "placement_points", tuple, None, ()),
)


def _field_name(table: str, key: str) -> str:
    return key if table == "profile" else f"{table}_{key}"


@dataclasses.dataclass(frozen=True)
class Profile:
    """One regulation's battle rules as data. Build with :func:`profile_from_dict` (the service's
    ``appliance.service.presets.load_profile`` reads a file into it)."""

    name: str
    title: str
    regulation: str
    stage: str
    players_min: int
    players_max: int
    questions_values: tuple
    questions_red_theme_multiplier: int
    themes_usual: int
    themes_counts: tuple
    themes_max: int
    presses_open_at: PressesOpenAt
    presses_stop_reading: bool
    presses_window_after_reading_ms: int
    presses_window_after_wrong_ms: int
    presses_during_answer: DuringAnswer
    presses_outside_window: OutsideWindow
    presses_lockout_ms: int
    presses_blocker: bool
    answer_limit_ms: int
    answer_short_form: bool
    answer_clarify: bool
    answer_extension: bool
    answer_extension_max_ms: int
    corrections_host: HostCorrections
    corrections_appeals: Appeals
    corrections_withdraw: bool
    corrections_withdraw_ended: bool
    corrections_fallback_without_buttons: bool
    ranking_tie_break: tuple  # of TieBreak
    ranking_cuts: tuple
    ranking_shootout_limit: int
    ranking_indicators_exclude_shootout: bool
    ranking_placement_points: tuple
    sections: tuple = ()  # ((rule key, section), ...)

    def cite(self, key: str) -> str:
        """The regulation section behind rule ``key``: ``"eurocup 2.8"``, or ``"eurocup (profile: key)"``."""
        for name, section in self.sections:
            if name == key:
                return f"{self.name} {section}"
        return f"{self.name} (profile: {key})"

    @property
    def shootout_method(self) -> TieBreak | None:
        """The shoot-out method in the tie-break chain, if any."""
        for method in self.ranking_tie_break:
            if method in SHOOTOUT_METHODS:
                return method
        return None


def profile_to_dict(profile: Profile) -> dict[str, Any]:
    """The profile as nested tables, the shape of its TOML file (JSON-able; used inside the battle log)."""
    out: dict[str, Any] = {}
    for table, key, _kind, _choices, _default in SCHEMA:
        value = getattr(profile, _field_name(table, key))
        out.setdefault(table, {})[key] = list(value) if isinstance(value, tuple) else value
    out["sections"] = dict(profile.sections)
    return out


def profile_from_dict(data: Mapping[str, Any], source: str = "profile") -> Profile:
    """Validate nested tables (the TOML shape) into a Profile; raise :class:`ProfileError` naming the field."""
    if not isinstance(data, Mapping):
        raise ProfileError(f"{source}: a profile is a table of tables")
    known_tables = {table for table, *_ in SCHEMA} | {"sections"}
    unknown = sorted(set(data) - known_tables)
    if unknown:
        raise ProfileError(f"{source}: unknown tables {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for table, key, kind, choices, default in SCHEMA:
        section = data.get(table, {})
        if not isinstance(section, Mapping):
            raise ProfileError(f"{source}: [{table}] must be a table")
        where = f"{source}: [{table}] {key}"
        if key not in section:
            if default is REQUIRED:
                raise ProfileError(f"{where} is required")
            value = default
        else:
            value = section[key]
        if kind is tuple:
            if not isinstance(value, (list, tuple)):
                raise ProfileError(f"{where} must be a list")
            value = tuple(value)
            if choices is not None:
                if any(not isinstance(item, str) or item not in choices.__members__.values() for item in value):
                    raise ProfileError(f"{where}: {list(value)} may only hold {', '.join(choices)}")
                value = tuple(choices(item) for item in value)
        elif kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ProfileError(f"{where} must be an integer, not {value!r}")
        elif not isinstance(value, kind):
            raise ProfileError(f"{where} must be a {kind.__name__}, not {value!r}")
        elif choices is not None:
            try:
                value = choices(value)  # the member: it equals its word, and names it in the code
            except ValueError:
                raise ProfileError(f"{where} is {value!r}; one of: {', '.join(choices)}") from None
        values[_field_name(table, key)] = value
    for table in data:
        if table in ("sections",):
            continue
        extra = sorted(set(data[table]) - {key for t, key, *_ in SCHEMA if t == table})
        if extra:
            raise ProfileError(f"{source}: [{table}] has unknown keys {', '.join(extra)}")
    sections = data.get("sections", {})
    if not isinstance(sections, Mapping) or not all(isinstance(v, str) for v in sections.values()):
        raise ProfileError(f"{source}: [sections] maps rule keys to section strings")
    values["sections"] = tuple(sorted(sections.items()))
    profile = Profile(**values)
    _check(profile, source)
    return profile


def _check(profile: Profile, source: str) -> None:
    problems = []
    if not 2 <= profile.players_min <= profile.players_max <= 4:
        problems.append("[players] needs 2 <= min <= max <= 4 (a box has up to 4 buttons)")
    values = profile.questions_values
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or v <= 0 for v in values):
        problems.append("[questions] values must be positive integers")
    counts = profile.themes_counts
    if profile.themes_usual < 1 or any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in counts):
        problems.append("[themes] usual and counts are positive numbers of themes")
    if not max((profile.themes_usual, *counts)) <= profile.themes_max <= 1000:
        problems.append("[themes] max is at least usual and every count, and at most 1000")
    if profile.answer_extension and not 0 < profile.answer_extension_max_ms <= 3_600_000:
        problems.append("[answer] extension_max_ms is 1 ms to an hour when extension is on")
    if profile.questions_red_theme_multiplier < 1:
        problems.append("[questions] red_theme_multiplier must be >= 1")
    for name in ("presses_window_after_reading_ms", "presses_window_after_wrong_ms", "presses_lockout_ms",
                 "answer_limit_ms", "answer_extension_max_ms"):
        if not 0 <= getattr(profile, name) <= 3_600_000:
            problems.append(f"{name} must not be negative, nor more than 3,600,000 ms (an hour)")
    if sum(method in SHOOTOUT_METHODS for method in profile.ranking_tie_break) > 1:
        problems.append("[ranking] tie_break may name one shoot-out method")
    if any(isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= 3 for c in profile.ranking_cuts):
        problems.append("[ranking] cuts are places 1-3 after which the ranking must be strict")
    points = profile.ranking_placement_points
    if points and (len(points) != 4 or any(isinstance(p, bool) or not isinstance(p, (int, float)) for p in points)):
        problems.append("[ranking] placement_points lists points for places 1-4")
    if problems:
        raise ProfileError(f"{source}: " + "; ".join(problems))
