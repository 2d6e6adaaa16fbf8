"""What each audience may know now: one typed record per audience, built field by field by allow-list.

The host's view (``BattleAdapter.view`` plus the session's keys) holds everything the host reads: the question
texts, the seat codes, what each command would do. An audience (the board and ``/watch``, the players' phones,
the simulator's buttons, the stream overlay, the lobby, the tournament's public table) never gets that view filtered afterwards: it gets a
new record made only of the fields declared below, at every depth. A key the host's view grows is therefore on
no audience until someone writes it into a record here, and ``tests/appliance/service/test_audience.py`` walks
whole battles and fails when an audience payload holds a key that is not declared (docs/socketio-events.md,
"Audience payloads", describes every field).

Adding a field for an audience is one line in its record (``tiebreak: list[list[str]]``); a field that holds
a record names that record, a list of records ``list[Record]``, an optional one ``Record | None``. A field
declared as plain data (``str``, ``int``, ``list[int]``...) must hold plain data: a mapping there is refused
(:class:`NotOnTheAllowList`), so a host key cannot ride in under a public name.

The right answer reaches an audience only inside ``question.answer``, which the adapter fills after the
question ends and as the setting ``board_answer`` says (``BattleAdapter._board_answer``); the question's text,
comment, source and the package's other questions are on no record; nor are PINs, seat codes, passwords of the
desk or pairing codes. The board's ``hello`` carries the hotspot's name and password: the board's waiting
screen shows them to the hall so that it can join (the stream overlay's does not).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from typing import NotRequired, TypedDict


class NotOnTheAllowList(TypeError):
    """A value of a shape its record does not declare (a mapping where plain data was declared)."""


# ------------------------------------------------------------------ the board and /watch
class Battle(TypedDict):
    id: str
    profile: str
    profile_title: str
    finished: bool
    on_claps: bool
    phase: str
    shootout: bool


class Player(TypedDict):
    index: int
    name: str
    score: int
    led: str
    eligible: bool
    answered: bool
    answering: bool
    absent: bool


class Theme(TypedDict):
    index: int
    name: str
    red: bool
    shootout: bool
    complete: bool


class ThemeProgress(TypedDict):
    index: int
    name: str
    red: bool
    prices: list[int]
    played: list[int]
    current: bool
    shootout: NotRequired[bool]


class Question(TypedDict):
    index: int
    theme: int
    theme_name: str
    theme_shootout: bool
    price: int
    red: bool
    reading: str
    over: bool
    outcome: str
    withdrawn: bool
    answer: str | None  # after the question, as board_answer says (BattleAdapter._board_answer); never the text


class Press(TypedDict):
    player: int
    t_ns: int
    round: int
    gap_ms: float | None  # within its round of pressing; None for the queued answerer carried over
    carried: bool
    source: str
    outcome: str


class Countdown(TypedDict):
    at_ns: int
    total_ms: float


class Deadlines(TypedDict):
    press_window: Countdown | None
    answer: Countdown | None


class Standing(TypedDict):
    place: str
    player: int
    name: str
    score: int
    tiebreak: list[list[str]]
    placement_points: float


class AnnouncedQuestion(TypedDict):
    index: int
    theme: int
    theme_name: str
    theme_shootout: bool
    price: int


class ScoreMoved(TypedDict):
    player: int
    name: str
    old: int
    new: int


class Named(TypedDict):
    player: int
    name: str


class UndoneAction(TypedDict):
    """The host's action an undo took back, as the board words it (never a command's arguments)."""

    type: str
    player: int | None
    name: str
    price: int | None
    correct: bool | None
    redo: str | None


class Announcement(TypedDict):
    id: int | str
    kind: str
    player: int
    name: str
    question: AnnouncedQuestion | None
    was: bool | None
    now: bool | None
    scores: list[ScoreMoved]
    voided: list[Named]
    restored: list[Named]
    claim: str
    reason: str
    section: str | None
    void_section: str | None
    action: UndoneAction | None
    battle_named: NotRequired[str]


class Capture(TypedDict):
    present: bool
    connected: bool
    mode: str
    factory: str
    precision: str
    degraded: list[str]
    simulator: bool
    stuck: list[int]


class BoardView(TypedDict):
    """``/board``: the HDMI scoreboard and the watchers' phones (``/watch``)."""

    battle: Battle | None
    players: list[Player]
    theme: Theme | None
    themes: list[ThemeProgress]
    question: Question | None
    answerer: int | None
    pointed: bool
    presses: list[Press]
    deadlines: Deadlines
    standings: list[Standing]
    phones_enabled: bool
    expired: list[str]
    announcement: Announcement | None
    button_test: bool
    button_test_pressed: list[int]
    capture: Capture
    simulator: bool


class AudienceEvent(TypedDict):
    """What happened, as an audience hears it: the event's type and the two words the board says it with
    (an answer judged right or wrong; which deadline passed). Never the event itself (a setup carries texts)."""

    type: str
    correct: NotRequired[bool]
    deadline: NotRequired[str]


# ------------------------------------------------------------------ the players' phones and the simulator's buttons
class SeatBattle(TypedDict):
    id: str
    finished: bool


class Seat(TypedDict):
    index: int
    name: str
    led: str
    answering: bool


class PlayerView(TypedDict):
    """``/player``: a phone picks its seat and presses; it needs the seats and whether phones count."""

    battle: SeatBattle | None
    players: list[Seat]
    phones_enabled: bool


class SimulatorView(TypedDict):
    """``/sim``: the on-screen buttons light with the answerer."""

    battle: SeatBattle | None
    players: list[Seat]
    button_test: bool


# ------------------------------------------------------------------ the stream overlay
class OverlayView(TypedDict):
    """``/overlay``: the stream's lower third (OBS browser source): scores, theme and price, who answers,
    the press order with its gaps, corrections, the final standings."""

    battle: Battle | None
    players: list[Player]
    theme: Theme | None
    question: Question | None
    answerer: int | None
    pointed: bool
    presses: list[Press]
    deadlines: Deadlines
    standings: list[Standing]
    announcement: Announcement | None


# ------------------------------------------------------------------ hello
class Hello(TypedDict):
    protocol: int
    role: str
    pass_: str  # "pass" on the wire (a keyword in Python): see WIRE_NAMES
    box: str
    server_now_ns: int


class BoardHello(Hello):
    ssid: str       # the hotspot's name and password: the board's waiting screen shows them so the hall joins
    password: str
    host_url: str   # the host page's address (never the PIN)


class OverlayHello(Hello):
    layout: str     # the layout the stream operator chose last (web/overlay.py), "" when none


WIRE_NAMES = {"pass_": "pass", "from_": "from"}


# ------------------------------------------------------------------ the lobby (HTTP /lobby, /lobby.json)
class LobbyBattle(TypedDict):
    battle: str
    players: list[str]
    scores: list[int]
    over: bool
    slot: str
    events: int
    broken: bool


class LobbyRoom(TypedDict):
    box: str
    name: str
    online: bool
    ago_s: float | None
    battle: NotRequired[str]
    playing: LobbyBattle | None
    last: LobbyBattle | None


# ------------------------------------------------------------------ the public table (HTTP /table/<tid>, .json)
class Titles(TypedDict):
    ru: str
    en: str


class WentTo(TypedDict):
    ru: str
    en: str
    battle: int | None


class PlaceRecord(TypedDict):
    stage_ru: str
    stage_en: str
    place: int | str


# A reason's figures (``how_params``, ``reason_params``: appliance/service/bracket_words.py ``_titled``), by name.
Params = dict[str, str | int | float | bool | None | list[PlaceRecord] | list[str] | list[int]]


class TableLine(TypedDict):
    player: str
    score: int
    place: int
    right_points: int
    right_answers: int
    wrong_answers: int
    taken_by_value: dict[str, int]
    absent: NotRequired[bool]
    withdrawn: bool
    went_to: NotRequired[WentTo | None]
    marks: NotRequired[str]  # a written round's sheet: the marks the director entered (youth-cup 2.2)


class TableShootout(TypedDict):
    players: list[str]
    order: list[str]
    kind: str
    scores: list[int]
    rule: str
    names: list[str]


class SeatSource(TypedDict):
    kind: str
    stage: str
    stage_ru: str
    stage_en: str
    battle: NotRequired[int]
    place: NotRequired[int]
    rank: NotRequired[int]
    text: NotRequired[str]


class SeatView(TypedDict):
    player: str
    empty: bool
    withdrawn: bool
    from_: SeatSource | None  # "from" on the wire


class TableTheme(TypedDict):
    colour: str          # eurocup 3.4: "red" themes are worth double; the format says which, so it is public
    values: list[int]


class TableBattle(TypedDict):
    id: str
    number: int
    round: int
    group: str
    room: str
    box: str
    box_battle: str
    run: int
    theme_pack: str
    seats: list[str]
    seat_views: list[SeatView]
    players: list[str]
    themes: list[TableTheme]
    theme_names: list[str]  # only once every battle on these themes has been played (:func:`table`)
    lines: list[TableLine]
    shootouts: list[TableShootout]
    source: str


class Advanced(TypedDict):
    player: str
    to: str
    to_title: Titles
    rule: str
    how: str
    how_code: str
    how_params: Params


class TieBroken(TypedDict):
    tie: str
    order: list[str]
    how: str
    detail: str
    names: list[str]


class TableStage(TypedDict):
    id: str
    title: str
    title_ru: str
    rule: str
    skipped: NotRequired[str]
    draw_seed: NotRequired[int | None]
    sheets: NotRequired[list[TableLine]]
    battles: NotRequired[list[TableBattle]]
    advanced: NotRequired[list[Advanced]]
    ties_broken: NotRequired[list[TieBroken]]


class TableStanding(TypedDict):
    place: int | str
    player: str
    name: str
    team: str
    reached: str
    reached_title: str
    reached_title_en: str
    battle_place: int | None
    placement_points: float | None
    score: int | None
    withdrawn: bool


class TableTie(TypedDict):
    id: str
    players: list[str]
    slots: int
    reason: str
    reason_code: str
    reason_params: Params
    shootout: bool | str | None
    rule: str
    names: list[str]


class TableNext(TypedDict):
    kind: str
    stage: str | None
    stage_title: Titles | None
    battles: list[str]
    battle_numbers: list[int]
    battles_total: NotRequired[int]
    tie: TableTie | None


class TableView(TypedDict):
    """``/table/<tid>.json``: the tournament's public table (the hall's screens, a watcher's phone): who plays
    where, results, who went on and why, standings, the next step. Not the desk's entrants' categories, the
    format's registration rules, the question packages a pack was read from, or a battle's theme names before
    every battle on them has been played."""

    tournament: str
    title: str
    format: str
    stages: list[TableStage]
    standings: list[TableStanding]
    next: TableNext


# ------------------------------------------------------------------ building a record
_SCALARS = (str, int, float, bool, type(None))


def fields(record) -> dict[str, object]:
    """``{wire name: declared type}`` of a record."""
    return {WIRE_NAMES.get(name, name): hint for name, hint in typing.get_type_hints(record).items()}


_FIELDS: dict[type, dict] = {}


def _fields(record) -> dict:
    known = _FIELDS.get(record)
    if known is None:
        known = _FIELDS[record] = fields(record)
    return known


def is_record(hint) -> bool:
    return isinstance(hint, type) and typing.is_typeddict(hint)


def project(hint, value):
    """``value`` as the declared type ``hint`` allows: a record keeps its declared keys only (a key the source
    lacks is left out), a list is projected item by item, an optional passes ``None``; plain data must be
    plain (no mapping: :class:`NotOnTheAllowList`)."""
    return _projector(hint)(value)


@functools.cache
def _projector(hint) -> Callable:
    """The function that projects a value of ``hint``, made once per declared type (the press path runs it)."""
    if is_record(hint):
        name, declared = hint.__name__, tuple((key, _projector(item)) for key, item in _fields(hint).items())

        def record(value):
            if value is None:
                return None
            if not isinstance(value, dict):
                raise NotOnTheAllowList(f"{name} needs a mapping, not {type(value).__name__}")
            return {key: make(value[key]) for key, make in declared if key in value}
        return record
    origin = typing.get_origin(hint)
    if origin is dict:  # ``dict[str, X]``: keys are data (a price, a figure's name), each value projected as X
        key_type, value_type = typing.get_args(hint)
        if key_type is not str:
            raise NotOnTheAllowList(f"no projection for {hint!r}: keys must be str")
        each = _projector(value_type)

        def mapping(value):
            if value is None:
                return None
            if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
                raise NotOnTheAllowList(f"{hint} needs a mapping of str, not {type(value).__name__}")
            return {key: each(item) for key, item in value.items()}
        return mapping
    if origin is list:
        (item,) = typing.get_args(hint)
        element = _projector(item)

        def items(value):
            if value is None:
                return None
            if not isinstance(value, (list, tuple)):
                raise NotOnTheAllowList(f"{hint} needs a list, not {type(value).__name__}")
            return [element(each) for each in value]
        return items
    if origin in (types.UnionType, typing.Union):
        options = [option for option in typing.get_args(hint) if option is not type(None)]
        if len(options) == 1:
            return _projector(options[0])
        if all(option in _SCALARS for option in options):  # ``int | str``: plain data either way
            hint = options[0]
        else:  # plain data or a declared shape: chosen by the value's own kind (a list, a mapping or plain)
            scalar = _projector(str) if any(option in _SCALARS for option in options) else None
            lists = [_projector(option) for option in options if typing.get_origin(option) is list]

            def listed(value):  # the first declared list whose items this one's fit
                for make in lists:
                    try:
                        return make(value)
                    except NotOnTheAllowList:
                        continue
                raise NotOnTheAllowList(f"{hint!r} declares no list of these items")
            mapped = next((_projector(option) for option in options
                           if is_record(option) or typing.get_origin(option) is dict), None)

            def either(value):
                if value is None:
                    return None
                make = (listed if lists else None) if isinstance(value, (list, tuple)) else mapped if isinstance(value, dict) else scalar
                if make is None:
                    raise NotOnTheAllowList(f"{hint!r} has no shape for {type(value).__name__}")
                return make(value)
            return either
    if hint in _SCALARS:
        def plain(value):
            if not isinstance(value, _SCALARS):
                raise NotOnTheAllowList(f"{hint.__name__} needs plain data, not {type(value).__name__}")
            return value
        return plain
    raise NotOnTheAllowList(f"no projection for {hint!r}")


class Audience:
    """One audience's payloads: its snapshot's view and its update, from the session's (the host's) ones.

    Stateless and built per top-level key, so an update costs only the keys it changes; the same update gives
    every connection of the audience the same payload (``web/wire.py`` writes it once)."""

    def __init__(self, name: str, record, event_record=AudienceEvent) -> None:
        self.name = name
        self.record = record
        self.event_record = event_record
        self.declared = _fields(record)
        self._make = {key: _projector(hint) for key, hint in self.declared.items()}

    def view(self, view: dict) -> dict:
        return project(self.record, view)

    def update(self, update: dict) -> dict:
        declared, make = self.declared, self._make
        return {
            "seq": update["seq"],
            "server_now_ns": update["server_now_ns"],
            "event": None if update.get("event") is None else project(self.event_record, update["event"]),
            "changes": {key: make[key](value) for key, value in update["changes"].items() if key in make},
            "removed": [key for key in update["removed"] if key in declared],
        }

    def snapshot(self, snapshot: dict) -> dict:
        return {"seq": snapshot["seq"], "server_now_ns": snapshot["server_now_ns"],
                "view": self.view(snapshot["view"])}


BOARD = Audience("board", BoardView)
PLAYER = Audience("player", PlayerView)
SIMULATOR = Audience("simulator", SimulatorView)
OVERLAY = Audience("overlay", OverlayView)


def public_battle(state, board_answer: str):
    """``state`` as the public papers may print it (``/battles/<id>/protocol``: the battle's id is on the board):
    its setup keeps the answers the board has shown, as ``board_answer`` says (``BattleAdapter._board_answer``:
    a question over, and announced under ``announced``; none under ``never``), and no question's text. The
    protocol keys its texts by the question's theme and number (``appliance.rules.battle.protocol``)."""
    setup = state.setup
    if not setup.questions:
        return state
    shown = {(question.theme, question.number) for question in state.questions
             if question.is_over and board_answer != "never"
             and (board_answer == "over" or question.answer_announced)}
    questions = tuple(tuple(("", pair[1] if (slot, number) in shown else "") for number, pair in enumerate(theme))
                      for slot, theme in enumerate(setup.questions))
    return dataclasses.replace(state, setup=dataclasses.replace(setup, questions=questions))


def withhold_theme_names(view: dict) -> dict:
    """``view`` (the desk's view of a tournament) with each battle's ``theme_names`` emptied, in place, while any
    battle on the same themes (its ``theme_pack``) is unplayed: a theme's name is the host's to tell when the
    theme starts (northern-owl 3.5), and youth-cup 2.4 plays the 1/16 in two runs on the same themes, so the
    names of a battle played in the first run would tell the second run's players theirs. Counts, colours and
    values stay: the format's (eurocup 3.4). Returns ``view``."""
    battles = [battle for stage in view.get("stages", []) for battle in stage.get("battles", [])]
    unplayed = {battle.get("theme_pack") for battle in battles if not battle.get("lines")}
    for battle in battles:
        if battle.get("theme_pack") in unplayed:
            battle["theme_names"] = []
    return view


def table(view: dict) -> dict:
    """The public table (:class:`TableView`) from the desk's view of a tournament (``TournamentDesk.view``)."""
    return project(TableView, withhold_theme_names(view))


def lobby(rooms: list[dict]) -> list[dict]:
    """The lobby's rooms (``RoomsService.rooms_view``) as the hall may read them."""
    return project(list[LobbyRoom], rooms)
