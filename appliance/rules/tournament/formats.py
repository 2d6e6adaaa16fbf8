"""Tournament formats as data: one TOML preset per regulation in ``formats/``, loaded into frozen dataclasses.

A format is a registration policy and a sequence of stages. Each stage says how its battles are made (the draw),
how many players and themes a battle has, and which rules send players on (advance rules). The code branches
on these fields, never on a regulation's name. Organisers copy a preset, edit it and load it by path.

The preset files are read by the service (``appliance.service.presets``); the rules parse the data they hold.

>>> from appliance.service.presets import load_format
>>> eurocup = load_format("eurocup")
>>> [stage.id for stage in eurocup.stages]
['qualifying', '1-27', '1-9', '1-3', 'final']
>>> eurocup.stage("final").red_themes, eurocup.stage("final").red_values
(6, (20, 40, 60, 80, 100))
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from appliance.rules.tournament.errors import FormatError

DRAWS = ("random", "bracket", "group-place", "group", "swiss", "all")
KINDS = ("battles", "written", "swiss")
FEEDS = ("chunks", "deal")
# Keys a ranking across battles may use; each is "higher is better" and is read from a PlayerResult.
RANKING_KEYS = ("placement_points", "score", "right_points", "right_answers", "taken_by_value")
SHOOTOUTS = ("theme", "questions", "lots")


@dataclasses.dataclass(frozen=True)
class Category:
    """A kind of entrant with its place in the priority order (irkutsk 1.3-1.7) or the stage it joins at."""

    id: str
    title_ru: str
    title_en: str
    priority: int = 1  # lower fills first
    per_team: int = 0  # at most this many entrants of one team in this category (0: no limit)
    joins_at: str = ""  # a later stage this category enters at instead of the first (irkutsk 1.4)
    by_team_rank: bool = False  # over capacity, better-ranked teams first (irkutsk 1.7)
    rule: str = ""


@dataclasses.dataclass(frozen=True)
class Registration:
    capacity: int = 0  # 0: unlimited
    waiting_list: bool = False
    order: str = "priority"  # "arrival": first come first served (northern-owl 1.1); "priority": by category
    deadline: bool = False  # a registration deadline is set by the organisers (northern-owl 1.2)
    teams: bool = False  # entrants name a team
    seeds: int = 0  # how many seeded players the format needs (northern-owl 2.2)
    categories: tuple[Category, ...] = ()
    rule: str = ""

    def category(self, category_id: str) -> Category:
        for category in self.categories:
            if category.id == category_id:
                return category
        raise FormatError(f"unknown entrant category {category_id!r}; have {[c.id for c in self.categories]}",
                          code="format.category",
                          params={"category": category_id, "known": [c.id for c in self.categories]})


@dataclasses.dataclass(frozen=True)
class AdvanceRule:
    """Who goes on from a stage, and where. Exactly one selector is set.

    - ``places``: these places in every battle (``[1]``: the winner, eurocup 3.1);
    - ``best`` with ``place``: the ``best`` best of that place across the stage's battles (irkutsk 2.4);
    - ``top``: the stage's top N by its ranking (written round, Swiss table);
    - ``records``: players whose places in earlier stages match one of the records (irkutsk 2.3).
    """

    to: str
    rule: str
    places: tuple[int, ...] = ()
    place: int = 0
    best: int = 0
    top: int = 0
    records: tuple[tuple[tuple[str, int], ...], ...] = ()

    @property
    def selector(self) -> str:
        if self.places:
            return "places"
        if self.best:
            return "best"
        if self.top:
            return "top"
        return "records"

    def describe(self) -> str:
        if self.places:
            return f"place {'/'.join(map(str, self.places))} in the battle"
        if self.best:
            return f"best {self.best} of place {self.place} across the stage"
        if self.top:
            return f"top {self.top} of the stage"
        return " or ".join(", ".join(f"{stage} place {place}" for stage, place in record) for record in self.records)


@dataclasses.dataclass(frozen=True)
class Stage:
    id: str
    title_ru: str
    title_en: str
    kind: str = "battles"
    draw: str = "random"
    battle_size: int = 4
    min_battle_size: int = 0  # 0: same as battle_size
    battles: int = 0  # 0: as many as the entrants need
    groups: int = 0  # battles are split into this many labelled groups (bushes, irkutsk groups)
    rooms: int = 0  # rooms played in parallel (0: one per battle)
    room_by_group: bool = False  # each group plays in its own room (northern-owl 2.3)
    runs: int = 1  # battles played in this many runs on the same themes (youth-cup 2.4)
    themes: int = 6
    theme_values: tuple[int, ...] = (10, 20, 30, 40, 50)
    red_themes: int = 0  # themes with doubled values, after the blue ones (eurocup 3.4)
    red_values: tuple[int, ...] = ()
    separate_teams: bool = False  # no two players of one team in a battle (eurocup 3.3)
    one_seed_per_battle: bool = False  # northern-owl 2.4
    only_when_over: int = 0  # stage played only when entrants exceed this (eurocup 3.2 qualifying)
    fills: int = 0  # places of the next stage this stage fills, byes included (eurocup 3.2: 81)
    byes: bool = False  # fewer entrants than seats: byes into a later round fill the bracket (eurocup 3.2)
    preliminary_min_battle_size: int = 0  # with byes, the smallest battle of the round played before the byes
    #   join (the preliminary stage of eurocup 2.1); 0: the opening stage's own min_battle_size
    feed: str = "chunks"  # bracket: how qualifiers fill the next stage's battles
    pots: bool = False  # bracket from a ranking: one player of each rank pot per battle
    rounds: int = 1  # Swiss rounds
    placement_points: tuple[float, ...] = ()  # points per battle place (mubc 3.3)
    placement_multiplier: int = 1  # mubc 3.4: the final's points doubled
    ranking: tuple[str, ...] = ("score",)  # across battles, best first
    shootout: str = "theme"  # how a tie at a cut is broken when the ranking keys cannot
    battle_profile: str = ""
    advance: tuple[AdvanceRule, ...] = ()
    rule: str = ""

    @property
    def smallest_battle(self) -> int:
        return self.min_battle_size or self.battle_size


@dataclasses.dataclass(frozen=True)
class Format:
    name: str
    title_ru: str
    title_en: str
    regulation: str
    battle_profile: str
    bracket: bool
    registration: Registration
    stages: tuple[Stage, ...]
    standings: str = "stages"  # "stages": by the stage reached; "points": by placement points (mubc 3.6)
    standings_ranking: tuple[str, ...] = ("placement_points", "score")
    source: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def stage(self, stage_id: str) -> Stage:
        for stage in self.stages:
            if stage.id == stage_id:
                return stage
        raise FormatError(f"format {self.name}: no stage {stage_id!r}; stages are {[s.id for s in self.stages]}",
                          code="format.stage",
                          params={"format": self.name, "stage": stage_id, "stages": [s.id for s in self.stages]})

    def index(self, stage_id: str) -> int:
        return [stage.id for stage in self.stages].index(self.stage(stage_id).id)

    def profile_for(self, stage: Stage) -> str:
        return stage.battle_profile or self.battle_profile


def with_changes(fmt: Format, changes: dict[str, Any]) -> Format:
    """A copy of ``fmt`` with stage fields changed by ``"stage.field"`` (``{"swiss.rounds": 7}``), validated.

    >>> from appliance.service.presets import load_format
    >>> with_changes(load_format("mubc"), {"swiss.rounds": 7}).stage("swiss").rounds
    7
    """
    data = json.loads(json.dumps(fmt.source["data"]))
    stages = {stage["id"]: stage for stage in data["stage"]}
    for key, value in changes.items():
        stage_id, _, name = key.partition(".")
        if stage_id not in stages or not name:
            raise FormatError(f"change {key!r}: say stage.field; stages are {sorted(stages)}",
                              code="format.change", params={"key": key, "stages": sorted(stages)})
        stages[stage_id][name] = value
    return parse_format(data, origin=f"{fmt.name} with changes")


def _build(cls, data: dict[str, Any], where: str, convert: dict[str, Any] | None = None):
    fields = {field.name: field for field in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise FormatError(f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}",
                          code="format.field", params={"where": where, "fields": unknown, "known": sorted(fields)})
    values = {}
    for key, value in data.items():
        if convert and key in convert:
            value = convert[key](value)
        else:
            _check_kind(value, fields[key].type, where, key)
            if isinstance(value, list):
                value = tuple(value)
        values[key] = value
    try:
        return cls(**values)
    except TypeError as error:
        raise FormatError(f"{where}: {error}",
                          code="format.value", params={"where": where, "error": str(error)}) from None


# The largest whole number a format field takes (a count, a size, a place): an organiser's typo, not a tournament.
FIELD_INT_LIMIT = 1_000_000
_ITEM_KINDS = {"tuple[int, ...]": int, "tuple[str, ...]": str, "tuple[float, ...]": (int, float)}


def _check_kind(value: Any, annotation: str, where: str, key: str) -> None:
    """Refuse a value of the wrong kind for a field annotated ``int``, ``bool``, ``str`` or a tuple of those
    (``"rounds": "x"``, 5,000 digits, ``"teams": 1``), naming the field (``format.type``); others are checked by
    their own converters."""
    def bad(expected: str) -> FormatError:
        return FormatError(f"{where}: {key} must be {expected}", code="format.type",
                           params={"where": where, "field": key, "expected": expected})

    def whole(item: Any) -> None:
        if isinstance(item, bool) or not isinstance(item, int):
            raise bad("whole")
        # Every whole number of a format is a count, a place or a question value: never below zero (an imported
        # capacity of -1 was accepted and shown).
        if not 0 <= item <= FIELD_INT_LIMIT:
            raise bad("range")

    if annotation == "int":
        whole(value)
    elif annotation == "bool" and not isinstance(value, bool):
        raise bad("bool")
    elif annotation == "str" and not isinstance(value, str):
        raise bad("text")
    elif annotation in _ITEM_KINDS:
        if not isinstance(value, (list, tuple)):
            raise bad("list")
        for item in value:
            if annotation == "tuple[int, ...]":
                whole(item)
            elif isinstance(item, bool) or not isinstance(item, _ITEM_KINDS[annotation]):
                raise bad("list")
            elif annotation == "tuple[float, ...]" and not -FIELD_INT_LIMIT <= item <= FIELD_INT_LIMIT:
                raise bad("number")  # NaN and infinities too (TOML has nan and inf; Python's JSON NaN)


def _advance(where: str):
    def convert(rules: list[dict]) -> tuple[AdvanceRule, ...]:
        built = []
        for number, raw in enumerate(rules, 1):
            raw = dict(raw)
            records = tuple(tuple(sorted(record.items())) for record in raw.pop("records", ()))
            rule = _build(AdvanceRule, raw, f"{where} advance #{number}")
            rule = dataclasses.replace(rule, records=records)
            selectors = sum(bool(x) for x in (rule.places, rule.best, rule.top, rule.records))
            if selectors != 1:
                raise FormatError(f"{where} advance #{number}: set exactly one of places, best, top, records",
                                  code="format.advance_selector", params={"where": where, "number": number})
            if rule.best and not rule.place:
                raise FormatError(f"{where} advance #{number}: 'best' needs 'place'",
                                  code="format.advance_best", params={"where": where, "number": number})
            built.append(rule)
        return tuple(built)

    return convert


def _check_tables(data: dict[str, Any], origin: str) -> None:
    """``[registration]`` a table, ``[[registration.category]]`` and ``[[stage]]`` lists of tables (``stage = "abc"``
    in an organiser's file is refused by name, not met by an AttributeError)."""
    registration = data.get("registration", {})
    shapes = (("registration", registration, dict),
              ("stage", data.get("stage", []), list),
              ("registration.category", registration.get("category", []) if isinstance(registration, dict) else [],
               list))
    for name, value, kind in shapes:
        if not isinstance(value, kind) or (kind is list and not all(isinstance(item, dict) for item in value)):
            expected = "a table" if kind is dict else f"[[{name}]] tables"
            raise FormatError(f"{origin}: {name} must be {expected}", code="format.type",
                              params={"where": origin, "field": name, "expected": expected})


def parse_format(data: dict[str, Any], origin: str = "<format>") -> Format:
    """Build and validate a :class:`Format` from TOML data (as loaded by ``tomllib``).

    The data is kept in ``format.source["data"]`` so a tournament's log can carry its format verbatim.
    """
    original = json.loads(json.dumps(data))
    data = dict(data)
    _check_tables(data, origin)
    raw_registration = dict(data.pop("registration", {}))
    categories = tuple(
        _build(Category, raw, f"{origin} registration.category #{n}")
        for n, raw in enumerate(raw_registration.pop("category", []), 1)
    )
    registration = _build(Registration, raw_registration, f"{origin} [registration]")
    registration = dataclasses.replace(registration, categories=categories or (Category("player", "Игрок", "Player"),))
    stages = []
    for number, raw in enumerate(data.pop("stage", []), 1):
        where = f"{origin} stage #{number} ({raw.get('id', '?')})"
        stages.append(_build(Stage, raw, where, {"advance": _advance(where)}))
    if not stages:
        raise FormatError(f"{origin}: a format needs at least one [[stage]]",
                          code="format.no_stages", params={"where": origin})
    fmt = _build(Format, {**data, "registration": registration, "stages": tuple(stages)}, origin,
                 {"registration": lambda value: value, "stages": lambda value: value})
    fmt = dataclasses.replace(fmt, source={"origin": origin, "data": original})
    _validate(fmt, origin)
    return fmt


def _validate(fmt: Format, origin: str) -> None:
    ids = [stage.id for stage in fmt.stages]
    if len(set(ids)) != len(ids):
        raise FormatError(f"{origin}: stage ids repeat: {ids}",
                          code="format.stage_ids", params={"where": origin, "ids": ids})
    for index, stage in enumerate(fmt.stages):
        where = f"{origin} stage {stage.id}"
        if stage.kind not in KINDS:
            raise FormatError(f"{where}: kind {stage.kind!r} is not one of {KINDS}",
                              code="format.choice",
                              params={"where": where, "field": "kind", "value": stage.kind, "choices": list(KINDS)})
        if stage.draw not in DRAWS:
            raise FormatError(f"{where}: draw {stage.draw!r} is not one of {DRAWS}",
                              code="format.choice",
                              params={"where": where, "field": "draw", "value": stage.draw, "choices": list(DRAWS)})
        if stage.feed not in FEEDS:
            raise FormatError(f"{where}: feed {stage.feed!r} is not one of {FEEDS}",
                              code="format.choice",
                              params={"where": where, "field": "feed", "value": stage.feed, "choices": list(FEEDS)})
        if stage.shootout not in SHOOTOUTS:
            raise FormatError(f"{where}: shootout {stage.shootout!r} is not one of {SHOOTOUTS}",
                              code="format.choice",
                              params={"where": where, "field": "shootout", "value": stage.shootout,
                                      "choices": list(SHOOTOUTS)})
        if not 2 <= stage.smallest_battle <= stage.battle_size <= 4 and stage.kind != "written":
            raise FormatError(f"{where}: battles of {stage.smallest_battle}-{stage.battle_size} players; "
                              "a box seats 2-4",
                              code="format.battle_size",
                              params={"where": where, "low": stage.smallest_battle, "high": stage.battle_size})
        if stage.preliminary_min_battle_size and not 2 <= stage.preliminary_min_battle_size <= stage.battle_size:
            raise FormatError(f"{where}: preliminary_min_battle_size must be 2-{stage.battle_size}",
                              code="format.preliminary", params={"where": where, "high": stage.battle_size})
        if stage.byes and (not fmt.bracket or stage.draw != "bracket" or any(
                later.draw != "bracket" or not later.battles for later in fmt.stages[index:])):
            raise FormatError(f"{where}: byes need a bracket format whose stages from here on are drawn as a "
                              "bracket with a fixed number of battles", code="format.byes", params={"where": where})
        for key in stage.ranking:
            if key not in RANKING_KEYS:
                raise FormatError(f"{where}: ranking key {key!r} is not one of {RANKING_KEYS}",
                                  code="format.choice",
                                  params={"where": where, "field": "ranking", "value": key,
                                          "choices": list(RANKING_KEYS)})
        if stage.red_themes and len(stage.red_values) != len(stage.theme_values):
            raise FormatError(f"{where}: red_values must have one value per question",
                              code="format.red_values", params={"where": where})
        if stage.red_themes > stage.themes:
            raise FormatError(f"{where}: more red themes than themes",
                              code="format.red_themes", params={"where": where})
        if stage.kind == "swiss" and not stage.placement_points:
            raise FormatError(f"{where}: a Swiss stage needs placement_points (mubc 3.3)",
                              code="format.swiss_points", params={"where": where, "rule": "mubc 3.3"})
        for rule in stage.advance:
            if rule.to not in ids or ids.index(rule.to) <= index:
                raise FormatError(f"{where}: advance goes to {rule.to!r}, which is not a later stage",
                                  code="format.advance_to", params={"where": where, "stage": rule.to})
            for record in rule.records:
                for stage_id, _place in record:
                    if stage_id not in ids[: index + 1]:
                        raise FormatError(f"{where}: record names {stage_id!r}, not this or an earlier stage",
                                          code="format.record_stage", params={"where": where, "stage": stage_id})
        if index + 1 < len(fmt.stages) and not stage.advance:
            raise FormatError(f"{where}: no advance rule, so nobody reaches the later stages",
                              code="format.no_advance", params={"where": where})
    for category in fmt.registration.categories:
        if category.joins_at and category.joins_at not in ids:
            raise FormatError(f"{origin}: category {category.id} joins at unknown stage {category.joins_at!r}",
                              code="format.joins_at",
                              params={"where": origin, "category": category.id, "stage": category.joins_at})
    if fmt.standings not in ("stages", "points"):
        raise FormatError(f"{origin}: standings {fmt.standings!r} is not 'stages' or 'points'",
                          code="format.choice",
                          params={"where": origin, "field": "standings", "value": fmt.standings,
                                  "choices": ["stages", "points"]})
