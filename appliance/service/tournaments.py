"""The tournament desk: the director's commands in, tournament events stored durably, state and views out.

Every command is validated by applying it to the current state (``appliance.rules.tournament.apply``) first; only
then is the event appended (committed, WAL, ``synchronous=FULL``) and the new state kept. A rejected command
raises a :class:`TournamentError` leaf and changes nothing. A restart replays each tournament's log.

Tournament events live in the box's one event store (``appliance.store.EventStore``), a stream of kind
``TOURNAMENT`` per tournament, beside the battles. A command's id is stored with its event and first result
in the same transaction: a resend, even after a restart, is answered from the store and applies nothing.

Battles played on this box link back through the battle's ``slot`` (``tournament:<id>:<battle>``): when such a
battle is over, its standings become the tournament result (:meth:`TournamentDesk.on_battle_event`).
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
import re
import secrets
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

import appliance.words as words
from appliance.config import MAX_FIELD_CHARS
from appliance.errors import StoreError, SvoyakError
from appliance.rules import tournament as t
from appliance.rules.tournament.errors import DrawError, ResultError, StageError, TournamentError
from appliance.rules.tournament.formats import with_changes
from appliance.service import tournament_view
from appliance.store import csv_cells
from appliance.store import TOURNAMENT, DuplicateCommandError, EventStore, open_store

SLOT_PREFIX = "tournament:"


@dataclasses.dataclass(frozen=True)
class BattleSlot:
    """The tournament battle a box battle plays, as its ``BattleSetUp.slot`` names it (``tournament:<id>:<battle>``;
    tournament ids hold no ``:``).

    >>> BattleSlot.parse("tournament:t1-ab:1-27/04"), str(BattleSlot("t1-ab", "1-27/04"))
    (BattleSlot(tournament='t1-ab', battle='1-27/04'), 'tournament:t1-ab:1-27/04')
    >>> BattleSlot.parse("") is None and BattleSlot.parse("league:x") is None
    True
    """

    tournament: str
    battle: str

    @classmethod
    def parse(cls, slot: str) -> "BattleSlot | None":
        """The slot a battle's setup names, or ``None`` for a battle of no tournament."""
        if not slot.startswith(SLOT_PREFIX):
            return None
        tournament, _, battle = slot[len(SLOT_PREFIX):].partition(":")
        return cls(tournament, battle)

    def __str__(self) -> str:
        return f"{SLOT_PREFIX}{self.tournament}:{self.battle}"


class UnknownTournamentError(StoreError, LookupError):
    """No tournament with this id in the log (``code`` ``tournament.unknown``, ``params`` ``{"tid"}``)."""

    def __init__(self, message: str, *, code: str = "tournament.unknown", params: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.params = code, dict(params or {})


class DeskInputError(SvoyakError, ValueError):
    """A field typed on a desk form that is not what it says (a seed that is not a whole number...): a refusal
    with a ``code`` of :data:`appliance.service.tournament_refusals.DESK_CODES` and its ``params``."""

    def __init__(self, message: str, *, code: str, params: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.params = code, dict(params or {})


class BoxBusyError(StoreError, RuntimeError):
    """The box's live battle is not over: a tournament battle would replace it (``play_on_box``)."""

    def __init__(self, live_battle_id: str, battle_id: str) -> None:
        super().__init__(f"battle {live_battle_id} is not over on this box; set it aside to play {battle_id}")
        self.live_battle_id = live_battle_id
        self.battle_id = battle_id


Listener = Callable[[str, object, t.TournamentState], None]

# A tournament id is part of the pages' URLs: desk-made ids are ``t<n>-<hex>``; an imported one is held to this.
TOURNAMENT_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _storable(event):
    """``event`` once its JSON form passes the same checks a restart applies to the log (a seed or a score of 5,000
    digits, a name that is not text are refused as ``event.field``): what the log stores, the desk can replay."""
    try:
        t.from_dict(t.to_dict(event))
    except TournamentError as error:
        if error.code != "import.field":
            raise
        raise ResultError(f"{type(event).__name__}: {error.params.get('field')} cannot be stored",
                          code="event.field", params={"type": type(event).__name__,
                                                      "field": error.params.get("field", ""),
                                                      "expected": error.params.get("expected", "")}) from None
    return event


def _not_json(constant: str):
    raise ValueError(f"{constant} is not a JSON number")


def _check_texts(event, number: int) -> None:
    """Every text of an imported event (names, titles, reasons, keys) within the HTTP field cap: an export holds
    only what the desk's forms let in, so a longer one is hand-made (``import.field``, expected ``short``)."""
    if not isinstance(event, dict):
        return  # from_dict names what it must be
    kind = str(event.get("type", "?"))[:40]
    pending = [(event, "")]
    while pending:  # a loop, not recursion: nesting is bounded by json's own parser, not by this walk
        value, field = pending.pop()
        if isinstance(value, str):
            if len(value) > MAX_FIELD_CHARS:
                raise ResultError(f"event {kind}: {field} is longer than {MAX_FIELD_CHARS} characters",
                                  code="import.field",
                                  params={"number": str(number), "type": kind, "field": field[:60], "expected": "short"})
        elif isinstance(value, dict):
            for key, item in value.items():
                name = f"{field}.{key}" if field else str(key)
                pending.append((key, name))
                pending.append((item, name))
        elif isinstance(value, (list, tuple)):
            pending.extend((item, field) for item in value)


def _checked(state: t.TournamentState) -> t.TournamentState:
    """``state`` once every view the pages show has been built from it; a log that replays but cannot be shown
    (a record the field checks let through, a format the engine cannot rank) is refused as ``import.log``."""
    try:
        tournament_view.page_view(state)
        t.next_step(state)
    except TournamentError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError) as error:
        raise ResultError(f"the log replays but its tournament cannot be shown: {error!r}"[:300],
                          code="import.log") from None
    return state


class TournamentDesk:
    """The director's desk over the tournament log: commands, views, exports, and the link to box battles.

    ``clock`` gives ``at_ns`` for commands (CLOCK_MONOTONIC ns on the box); ``seed_source`` the seed a draw
    records when the director gives none.
    """

    def __init__(self, store: EventStore, clock: Callable[[], int] = time.monotonic_ns,
                 seed_source: Callable[[], int] = lambda: secrets.randbits(63),
                 wall_clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.timezone.utc)
                 ) -> None:
        self.store = store
        self.clock = clock
        self.wall_clock = wall_clock
        self.seed_source = seed_source
        self._lock = threading.RLock()
        self._states: dict[str, t.TournamentState] = {}
        self._listeners: list[Listener] = []
        # Box results the engine refused, for the desk page: (tournament, battle, box battle, the refusal).
        self.rejected: list[tuple[str, str, str, TournamentError]] = []
        self.broken: dict[str, str] = {}  # tournament id -> why its stored log no longer replays (not shown)
        for tournament_id in store.stream_ids(TOURNAMENT):
            try:
                self._states[tournament_id] = _checked(t.replay(store.events(TOURNAMENT, tournament_id)))
            except (TournamentError, StoreError) as error:
                # One bad log (stored before imports were checked whole) must not take the desk down with it.
                self.broken[tournament_id] = str(error)

    @classmethod
    def open(cls, data_dir: str | Path, store: EventStore | None = None) -> "TournamentDesk":
        """The desk over the box's one store (``store``, the battles' own, or ``data_dir``'s opened anew)."""
        return cls(store if store is not None else open_store(data_dir))

    def events(self, tournament_id: str) -> list:
        """Every stored event of the tournament, in order."""
        return self.store.events(TOURNAMENT, tournament_id)

    def add_listener(self, listener: Listener) -> None:
        """``listener(tournament_id, event, state)`` after each stored event, on the committing thread and possibly
        under the desk's lock (register, draw): it must hand work over, never wait on another thread."""
        self._listeners.append(listener)

    # --- the one way in --------------------------------------------------------------------------------------
    def submit(self, tournament_id: str, event, command_id: str | None = None,
               result: dict | None = None) -> t.TournamentState:
        """Apply (validate), append durably with the command id and ``result``, keep, tell listeners.

        A ``command_id`` already stored (before a restart too) changes nothing and returns the state: the
        command's first result is :meth:`command_result`.
        """
        with self._lock:
            state = self.state(tournament_id)
            if command_id and self.store.command(TOURNAMENT, command_id) is not None:
                return state
            new = t.apply(state, _storable(event))
            try:
                self.store.append(TOURNAMENT, tournament_id, [event], command_id=command_id, result=result)
            except DuplicateCommandError:
                return state
            self._states[tournament_id] = new
        for listener in self._listeners:
            listener(tournament_id, event, new)
        return new

    def _stored_event(self, command_id: str | None):
        """The event a stored desk command id made, or None."""
        stored = self.store.command(TOURNAMENT, command_id) if command_id else None
        if stored is None or stored.first_seq is None:
            return None
        return self.store.read(TOURNAMENT, stored.stream_id, after_seq=stored.first_seq - 1, limit=1)[0].event

    def command_result(self, command_id: str | None) -> dict | None:
        """The first result stored with a desk command id, or None (unknown id, or no result kept)."""
        stored = self.store.command(TOURNAMENT, command_id) if command_id else None
        return None if stored is None else stored.result

    def state(self, tournament_id: str) -> t.TournamentState:
        try:
            return self._states[tournament_id]
        except KeyError:
            raise UnknownTournamentError(f"no tournament {tournament_id!r}",
                                         code="tournament.unknown", params={"tid": tournament_id}) from None

    def names(self, tournament_id: str) -> dict[str, str]:
        """Player id -> name, for pages that echo a player (a written sheet just typed)."""
        return {p: e.name for p, e in self.state(tournament_id).entrants.items()}

    def list(self) -> list[dict]:
        with self._lock:
            return [{"id": tid, "title": state.title, "format": state.fmt.name, "entrants": len(state.entrants),
                     "next": t.next_step(state).kind} for tid, state in self._states.items()]

    # --- commands ----------------------------------------------------------------------------------------------
    def create(self, preset: str, title: str = "", seed: int | None = None, tournament_id: str | None = None,
               changes: dict[str, object] | None = None, command_id: str | None = None) -> str:
        """A new tournament of ``preset``; ``changes`` set stage fields the organisers decide, by
        ``"stage.field"`` (``{"swiss.rounds": 7}``: mubc 3.7), validated like a preset."""
        first = self._stored_event(command_id)
        if first is not None:
            return first.tournament_id  # a resent form: the tournament it made the first time
        fmt = t.load_format(preset)
        if changes:
            fmt = with_changes(fmt, changes)
        tournament_id = tournament_id or f"t{len(self._states) + 1}-{secrets.token_hex(3)}"
        if tournament_id in self._states:
            raise StageError(f"tournament {tournament_id!r} exists",
                             code="tournament.exists", params={"tid": tournament_id})
        event = t.TournamentCreated(self.clock(), tournament_id, title.strip() or fmt.title_ru, fmt.source["data"],
                                    self.seed_source() if seed is None else seed)
        with self._lock:
            new = t.apply(t.TournamentState(), _storable(event))
            self.store.append(TOURNAMENT, tournament_id, [event], command_id=command_id,
                              result={"tournament_id": tournament_id}, expected_seq=1)
            self._states[tournament_id] = new
        return tournament_id

    def set_deadline(self, tournament_id: str, deadline: str, command_id: str | None = None) -> None:
        self.submit(tournament_id, t.DeadlineSet(self.clock(), deadline), command_id)

    def close_if_deadline_passed(self, tournament_id: str) -> bool:
        """Close registration once the announced deadline has passed (northern-owl 1.2); True if it is closed."""
        state = self.state(tournament_id)
        if state.registration_closed:
            return True
        if state.deadline and self.wall_clock() >= datetime.datetime.fromisoformat(
                state.deadline.replace("Z", "+00:00")):
            self.close_registration(tournament_id)
            return True
        return False

    def register(self, tournament_id: str, name: str, team: str = "", category: str = "", team_rank: int = 0,
                 late: bool = False, command_id: str | None = None) -> str:
        with self._lock:
            known = self.command_result(command_id)
            if known is not None:
                return known["player_id"]  # a resent form: the player registered the first time
            self.close_if_deadline_passed(tournament_id)
            state = self.state(tournament_id)
            player_id = f"p{len(state.entrants) + 1:03d}"
            self.submit(tournament_id, t.PlayerRegistered(self.clock(), player_id, name, team, category, team_rank,
                                                          late), command_id, result={"player_id": player_id})
            return player_id

    def withdraw(self, tournament_id: str, player_id: str, reason: str = "", command_id: str | None = None) -> None:
        self.submit(tournament_id, t.PlayerWithdrew(self.clock(), player_id, reason), command_id)

    def close_registration(self, tournament_id: str, command_id: str | None = None) -> None:
        self.submit(tournament_id, t.RegistrationClosed(self.clock()), command_id)

    def set_seeds(self, tournament_id: str, player_ids: Iterable[str], command_id: str | None = None) -> None:
        self.submit(tournament_id, t.SeedsSet(self.clock(), tuple(player_ids)), command_id)

    def draw(self, tournament_id: str, stage_id: str | None = None, seed: int | None = None,
             command_id: str | None = None) -> t.StageDrawn:
        """Draw the next stage (or ``stage_id``), recording the seed; a re-draw of an unplayed stage is allowed.
        A resent ``command_id`` returns the draw it made the first time (never a second draw)."""
        with self._lock:
            first = self._stored_event(command_id)
            if first is not None:
                return first
            state = self.state(tournament_id)
            if stage_id is None:
                step = t.next_step(state)
                if step.kind != "draw":
                    raise StageError(f"nothing to draw now; the desk waits for: {step.kind} {step.stage}",
                                     code="draw.nothing", params={"step": step.kind, "stage": step.stage})
                stage_id = step.stage
            event = t.plan_draw(state, stage_id, self.seed_source() if seed is None else seed, self.clock())
            self.submit(tournament_id, event, command_id)
            return event

    def assign(self, tournament_id: str, battle_id: str, room: str, box: str = "", command_id: str | None = None
               ) -> None:
        self.submit(tournament_id, t.BattleAssigned(self.clock(), battle_id, room, box), command_id)

    def assign_rooms(self, tournament_id: str, rooms: Iterable[str]) -> list[str]:
        """Deal the battles that have no room yet over ``rooms``, in order (the director edits any after)."""
        names = [room.strip() for room in rooms if room.strip()]
        if not names:
            raise StageError("name at least one room", code="rooms.none")
        state = self.state(tournament_id)
        waiting = [b for b in sorted(state.battles.values(), key=lambda b: (state.fmt.index(b.stage), b.round, b.index))
                   if not b.room and b.id not in state.assignments and b.id not in state.results]
        for number, battle in enumerate(waiting):
            self.assign(tournament_id, battle.id, names[number % len(names)])
        return [battle.id for battle in waiting]

    def record_result(self, tournament_id: str, battle_id: str, lines: list[dict], source: str = "manual",
                      log_id: str = "", command_id: str | None = None) -> None:
        """A result played elsewhere, typed in: per player ``score`` and ``place`` (shared places allowed), and
        optionally ``right_points``, ``right_answers``, ``absent``. Places default to the score order."""
        parsed = []
        try:
            scores = [int(line["score"]) for line in lines]
            for line, score in zip(lines, scores):
                place = line.get("place")
                place = int(place) if place not in (None, "") else 1 + sum(other > score for other in scores)
                parsed.append(t.PlayerResult(
                    str(line["player"]), score, place, right_points=int(line.get("right_points") or max(score, 0)),
                    right_answers=int(line.get("right_answers") or 0), absent=bool(line.get("absent"))))
        except (KeyError, TypeError, ValueError) as error:
            raise ResultError(f"battle {battle_id}: each line needs a player and a whole-number score ({error})",
                              code="result.scores", params={"battle": battle_id}) from None
        self.submit(tournament_id, t.BattleResultRecorded(
            self.clock(), t.BattleResult(battle_id, tuple(parsed), source=source, log_id=log_id)), command_id)

    def enter_sheet(self, tournament_id: str, stage_id: str, player_id: str, marks: str,
                    command_id: str | None = None) -> t.PlayerResult:
        """One written-round sheet (youth-cup 2.2); returns its score so the page can echo it at once."""
        state = self.submit(tournament_id, t.WrittenSheetEntered(self.clock(), stage_id, player_id, marks.strip()),
                            command_id)
        stage = state.fmt.stage(stage_id)
        return t.score_written(player_id, marks.strip(), stage.theme_values, stage.themes)

    def close_stage(self, tournament_id: str, stage_id: str, command_id: str | None = None) -> None:
        self.submit(tournament_id, t.StageClosed(self.clock(), stage_id), command_id)

    def name_themes(self, tournament_id: str, pack: str, names: Iterable[str]) -> None:
        """The themes of a pack named, in play order (trailing empty lines dropped; a later naming replaces)."""
        names = [str(name).strip() for name in names]
        while names and not names[-1]:
            names.pop()
        if tuple(names) == tuple(self.state(tournament_id).theme_names.get(pack, ())):
            return  # unchanged: no event
        self.submit(tournament_id, t.ThemesNamed(self.clock(), pack, tuple(names)))

    def name_themes_from_package(self, tournament_id: str, stage_id: str, packages, package_id: str) -> list[str]:
        """The director gives a stage its themes beforehand from a question package (``packages``: the box's
        :class:`~appliance.service.packages.QuestionPackages`): each theme pack of the stage not yet read from a
        package takes, in battle order, the next themes of ``package_id`` that this box has not played and no
        other pack of this tournament holds (``ThemesNamed`` with their sources). All the packs or none: a
        package too short for them is refused (``package.too_few_unplayed``) before any is named. Returns the
        packs named."""
        state = self.state(tournament_id)
        held = {number for sources in state.theme_sources.values() for package, number in sources
                if package == package_id}
        named = []
        for pack in self.theme_packs(tournament_id, stage_id):
            if state.theme_sources.get(pack["pack"]):
                continue  # read from a package already (maybe played): typing its names replaces them
            parts = packages.battle_themes(package_id, count=len(pack["themes"]), exclude=held)
            sources = tuple((package, number) for package, number in parts["sources"])
            held.update(number for _package, number in sources)
            named.append(t.ThemesNamed(self.clock(), pack["pack"], tuple(parts["theme_names"]), sources))
        for event in named:
            self.submit(tournament_id, event)
        return [event.pack for event in named]

    def theme_packs(self, tournament_id: str, stage_id: str) -> list[dict]:
        """A stage's theme packs for the director's themes page: ``{"pack", "themes": [{"colour", "values"}],
        "names", "packages" (the question packages its names were read from), "battles": [battle numbers]}``, in
        battle order."""
        state = self.state(tournament_id)
        state.fmt.stage(stage_id)  # an unknown stage is refused, worded
        packs: dict[str, dict] = {}
        for battle in sorted(state.stage_battles(stage_id), key=lambda b: (b.round, b.index)):
            entry = packs.setdefault(battle.theme_pack, {
                "pack": battle.theme_pack, "names": list(state.theme_names.get(battle.theme_pack, ())),
                "packages": sorted({package for package, _n in state.theme_sources.get(battle.theme_pack, ())}),
                "themes": [{"colour": colour, "values": list(values)} for colour, values in battle.themes],
                "battles": []})
            entry["battles"].append(battle.index + 1)
        return list(packs.values())

    def break_tie(self, tournament_id: str, tie_id: str, order: Iterable[str], how: str = "theme",
                  detail: str = "", command_id: str | None = None) -> None:
        self.submit(tournament_id, t.TieBroken(self.clock(), tie_id, tuple(order), how, detail), command_id)

    def import_json(self, data: bytes | str) -> str:
        """Restore a tournament from a JSON export file (its ``events``) or a bare list of events."""
        try:
            parsed = json.loads(data.decode("utf-8") if isinstance(data, bytes) else data,
                                parse_constant=_not_json)  # NaN and Infinity are Python's, not JSON
        except (ValueError, UnicodeDecodeError, RecursionError) as error:
            raise ResultError(f"not a JSON export: {error}", code="import.json", params={"error": str(error)}) from None
        return self.import_events(parsed.get("events", []) if isinstance(parsed, dict) else parsed)

    def import_events(self, events: list) -> str:
        """Restore a tournament from its events (an ``export_json`` file's ``events``, or another box's log).

        Validated whole before anything is stored: every record checked field by field (``import.field``), the
        log replayed through the engine, and every view the pages show built once from the result; only then is
        it appended. A log that fails anywhere is refused with its code and nothing is stored.
        """
        if not isinstance(events, (list, tuple)) or not events:
            raise ResultError("a tournament log is a non-empty list of events", code="import.log")
        for number, event in enumerate(events, 1):
            _check_texts(event, number)
        parsed = [event if isinstance(event, tuple(t.EVENTS.values())) else t.from_dict(event, number=number)
                  for number, event in enumerate(events, 1)]
        if not isinstance(parsed[0], t.TournamentCreated):
            raise ResultError("a tournament log starts with TournamentCreated", code="import.log")
        tournament_id = parsed[0].tournament_id
        if not TOURNAMENT_ID.fullmatch(tournament_id):
            raise ResultError(f"tournament id {tournament_id[:40]!r} is not 1-64 letters, digits, '-', '_' or '.'",
                              code="import.field", params={"number": 1, "type": "TournamentCreated",
                                                           "field": "tournament_id", "expected": "id"})
        state = _checked(t.replay(parsed))
        with self._lock:
            if tournament_id in self._states:
                raise StageError(f"tournament {tournament_id!r} is already on this box", code="import.exists",
                                 params={"tid": tournament_id})
            self.store.append(TOURNAMENT, tournament_id, parsed, expected_seq=1)  # all of them or none
            self._states[tournament_id] = state
        return tournament_id

    # --- battles on this box -----------------------------------------------------------------------------------
    def battle_setup(self, tournament_id: str, battle_id: str, at_ns: int | None = None):
        """The ``BattleSetUp`` to play a drawn battle on this box, linked back by its slot."""
        from appliance.rules import battle as engine

        state = self.state(tournament_id)
        spec = state.battles.get(battle_id)
        if spec is None:
            raise StageError(f"no battle {battle_id!r}", code="battle.unknown", params={"battle": battle_id})
        players = t.battle_players(state, battle_id)
        if players is None:
            raise StageError(f"battle {battle_id}: its players are not known yet",
                             code="battle.not_ready", params={"battle": battle_id})
        stage = state.fmt.stage(spec.stage)
        cuts = t.stage_cuts(state.fmt, stage)
        return engine.BattleSetUp(
            at_ns=self.clock() if at_ns is None else at_ns, profile=engine.load_profile(state.fmt.profile_for(stage)),
            players=tuple(players), themes=len(spec.themes),
            red_themes=tuple(i for i, (colour, _v) in enumerate(spec.themes) if colour == "red"),
            cuts=tuple(c for c in cuts if c < len(players)) if cuts is not None else None,
            slot=str(BattleSlot(tournament_id, battle_id)), run=spec.run, runs=max(spec.run, stage.runs),
            theme_names=self._theme_names(state, spec))

    @staticmethod
    def _theme_names(state, spec) -> tuple[str, ...]:
        """The battle's theme names, one per theme ("" for one not named yet)."""
        names = tuple(state.theme_names.get(spec.theme_pack, ()))
        return names + ("",) * (len(spec.themes) - len(names))

    def battle_words(self, tournament_id: str, battle_id: str) -> dict:
        """The words that name a drawn battle on its papers: ``tournament``, ``stage``, ``battle_name``
        («бой 3», «тур 2, бой 3», «группа B, бой 3»), ``room``."""
        state = self.state(tournament_id)
        spec = state.battles.get(battle_id)
        if spec is None:
            raise StageError(f"no battle {battle_id!r}", code="battle.unknown", params={"battle": battle_id})
        stage = state.fmt.stage(spec.stage)
        name = f"бой {spec.index + 1}"
        if spec.group:
            name = f"группа {spec.group}, {name}"
        if stage.kind == "swiss":
            name = f"тур {spec.round}, {name}"
        if spec.run > 1:
            name += f", прогон {spec.run}"
        room = state.assignments.get(battle_id, (spec.room, ""))[0]
        return {"tournament": state.title, "stage": stage.title_ru, "battle_name": name, "room": room}

    def box_battle_theme_names(self, box_battle_id: str, slot: str = "") -> tuple[str, ...]:
        """The theme names the director has typed for the slot a box battle plays (by its ``BattleLinked`` link,
        or the ``slot`` of its setup), one per theme, ``""`` for one not named; ``()`` for a battle no
        tournament here knows."""
        parsed = BattleSlot.parse(slot or "")
        if parsed is not None and parsed.tournament in self._states:
            state = self._states[parsed.tournament]
            spec = state.battles.get(parsed.battle)
            if spec is not None:
                return self._theme_names(state, spec)
        for state in list(self._states.values()):
            linked = state.links.get(box_battle_id)
            spec = state.battles.get(linked) if linked else None
            if spec is not None:
                return self._theme_names(state, spec)
        return ()

    def own_box_battle(self, tournament_id: str, battle_id: str, battles=None) -> str:
        """The box battle that is this slot's own: its result's log, else its newest link that ``battles`` (the
        box's store, when given) still holds; ``""`` if none."""
        state = self.state(tournament_id)
        played = state.results.get(battle_id)
        if played is not None and played.log_id:
            return played.log_id
        for box_battle in reversed([box for box, slot in state.links.items() if slot == battle_id]):
            if battles is None:
                return box_battle
            try:
                battles.state(box_battle)
            except LookupError:
                continue  # linked on another box, or the store was replaced: not here
            return box_battle
        return ""

    def play_on_box(self, tournament_id: str, battle_id: str, session, command_id: str, host: str = "",
                    set_aside: str | None = None, package: dict | None = None, packages=None) -> str:
        """Put the drawn battle on this box's live session (the host page shows it at once) and link it.

        Never loses a battle: if the slot already has a battle on this box that is not over, that one comes
        back (``resume``) instead of a new one; a live battle that is not over is never replaced unless
        ``set_aside`` names it (the director saw it, with its scores, and chose to set it aside): else
        :class:`BoxBusyError`. The host page's setup takes names, so the players are named; the link maps them
        back to ids. The battle's papers are named after the tournament, stage, battle, room and ``host``.

        Its themes are its theme pack's (``ThemesNamed``, the one source of them): named by the director, or read
        from a question package, then the battle takes the same themes of it (youth-cup 2.4: both runs of a 1/16
        slot read the same questions). ``package`` (``{id, themes?, spare?}``, as the host's setup takes it)
        chooses a package for a pack not yet read from it (the next unplayed, or the themes given); the themes
        the battle took are then the pack's, named in the tournament's log. Its ``spares`` (a count) are each
        battle's own: the next unplayed after the pack's (shoot-out themes). ``packages`` (the box's question
        packages) resolves the choice first (:meth:`_pack_package`). Returns the box's battle id.
        """
        if session is None or not hasattr(session, "command"):
            raise ResultError("this box has no battle session running", code="box.no_session")
        own = self.own_box_battle(tournament_id, battle_id, session.battles)
        live_id, live = session.battle_id, session.state
        live_unfinished = live is not None and not live.is_over
        if own and own == live_id and live_unfinished:
            return own  # already on the host page
        if live_unfinished and set_aside != live_id:
            raise BoxBusyError(live_id, battle_id)
        if own and not session.battles.state(own).is_over:
            session.command("resume", {"battle": own, "set_aside": set_aside}, command_id)
            return own
        state = self.state(tournament_id)
        setup = self.battle_setup(tournament_id, battle_id)
        names = [state.entrants[p].name for p in setup.players]
        if len(set(names)) != len(names):
            names = [f"{name} ({p})" for name, p in zip(names, setup.players)]
        args = {"profile": setup.profile.name, "players": names, "mode": "buttons",
                "themes": [{"name": setup.theme_names[i], "red": i in setup.red_themes} for i in range(setup.themes)],
                **self.battle_words(tournament_id, battle_id), "host": host}
        if set_aside:
            args["set_aside"] = set_aside
        choice = self._pack_package(state, battle_id, package, packages)
        if choice:
            args["package"] = choice
        session.command("setup", args, command_id)
        box_battle_id = session.battle_id
        self.submit(tournament_id, t.BattleLinked(self.clock(), battle_id, box_battle_id))
        if choice:
            self._name_pack_from(tournament_id, battle_id, session.state.setup)
        return box_battle_id

    @staticmethod
    def _pack_package(state, battle_id: str, package: dict | None, packages=None) -> dict | None:
        """The setup's package choice for a battle: its pack's themes if the pack was read from a package (that
        package, or none chosen), else ``package`` (``{id, themes?, spares?}``) as chosen, else none. With the
        box's ``packages`` the choice is resolved to theme numbers here: the next unplayed skip the themes the
        tournament's other packs hold, and ``spares`` (a count) spare themes follow, the next unplayed after all
        of those (raises PackageChoiceError when the package cannot give them: nothing is set up)."""
        spec = state.battles[battle_id]
        sources = state.theme_sources.get(spec.theme_pack, ())
        ids = {package_id for package_id, _number in sources}
        if len(ids) == 1 and (not package or (package.get("id") in ids and package.get("themes") is None)):
            package_id, themes = next(iter(ids)), [number for _id, number in sources]
        elif package:
            package_id, themes = package["id"], package.get("themes")
        else:
            return None
        spares = int((package or {}).get("spares") or 0)
        if packages is None:
            return {"id": package_id, **({"themes": list(themes)} if themes is not None else {})}
        held = {number for pack, held_sources in state.theme_sources.items() if pack != spec.theme_pack
                for held_id, number in held_sources if held_id == package_id}
        if themes is None:
            themes = [number for _id, number in packages.battle_themes(
                package_id, count=len(spec.themes), exclude=held)["sources"]]
        spare = [number for _id, number in packages.battle_themes(
            package_id, count=spares, exclude=held | set(themes))["sources"]] if spares else []
        return {"id": package_id, "themes": list(themes), **({"spare": spare} if spare else {})}

    def _name_pack_from(self, tournament_id: str, battle_id: str, setup) -> None:
        """The themes a battle took from a package become its pack's (``ThemesNamed`` with their sources)."""
        state = self.state(tournament_id)
        pack = state.battles[battle_id].theme_pack
        count = len(state.battles[battle_id].themes)
        sources = tuple(tuple(source) for source in setup.sources[:count])
        if not pack or len(sources) < count or not all(sources):
            return
        names = tuple(setup.theme_names[:count])
        if names == tuple(state.theme_names.get(pack, ())) and sources == tuple(state.theme_sources.get(pack, ())):
            return
        self.submit(tournament_id, t.ThemesNamed(self.clock(), pack, names, sources))

    def box_battles(self) -> dict[str, str]:
        """Box battle id → the tournament it was played for (the links; slot-linked battles name theirs)."""
        return {box_id: tournament_id for tournament_id, state in list(self._states.items())
                for box_id in state.links}

    def on_battle_event(self, box_battle_id: str, event, battle_state) -> None:
        """A listener for ``appliance.service.battles.Battles``: a linked battle that is over records its result.

        A battle is linked by its slot (``tournament:<id>:<battle>``, players named by id: :meth:`battle_setup`)
        or by a ``BattleLinked`` event (players named: :meth:`play_on_box`).
        """
        if not battle_state.is_over:
            return
        slot = BattleSlot.parse(getattr(battle_state.setup, "slot", "") or "")
        ids = None
        if slot is not None:
            tournament_id, battle_id = slot.tournament, slot.battle
        else:
            found = [(tid, state.links[box_battle_id]) for tid, state in list(self._states.items())
                     if box_battle_id in state.links]
            if not found:
                return
            tournament_id, battle_id = found[0]
            state = self._states[tournament_id]
            players = t.battle_players(state, battle_id) or ()
            names = [state.entrants[p].name for p in players]
            if len(set(names)) != len(names):
                names = [f"{name} ({p})" for name, p in zip(names, players)]
            ids = dict(zip(names, players))
        from appliance.rules.tournament.battle_driver import result_from_battle

        result = result_from_battle(battle_state, battle_id, source="box", log_id=box_battle_id, ids=ids)
        state = self._states.get(tournament_id)
        if state is None or state.results.get(battle_id) == result:
            return
        try:
            self.submit(tournament_id, t.BattleResultRecorded(self.clock(), result))
        except TournamentError as error:
            # The director is told on the desk page (the result stays in the battle log); the battle goes on.
            self.rejected.append((tournament_id, battle_id, box_battle_id, error))

    def reconcile(self, battles) -> None:
        """Record the results of linked box battles that ended while this desk was not listening."""
        for row in battles.list():
            box_id = row.get("id") or row.get("battle_id")
            if box_id:
                state = battles.state(box_id)
                self.on_battle_event(box_id, state.last_event, state)

    # --- views and exports -------------------------------------------------------------------------------------
    def view(self, tournament_id: str) -> dict:
        """Everything the director's and public pages show: stages, battles, advancement, standings, next step
        (:func:`appliance.service.tournament_view.desk_view`)."""
        return tournament_view.desk_view(self.state(tournament_id))

    def page(self, tournament_id: str) -> dict:
        """:meth:`view` plus what only the director's pages read: entrants' categories, the format as ``rules``."""
        return tournament_view.page_view(self.state(tournament_id))

    @staticmethod
    def presets() -> list[dict]:
        """The shipped presets as plain dicts (titles, stages, registration) for the new-tournament form."""
        return tournament_view.presets_view()

    def battle(self, tournament_id: str, battle_id: str) -> dict:
        """One drawn battle as a dict (id, stage, rule, themes, seats, players once known, lines once played)."""
        state = self.state(tournament_id)
        if battle_id not in state.battles:
            raise StageError(f"no battle {battle_id!r}", code="battle.unknown", params={"battle": battle_id})
        return tournament_view.battle_view(state, battle_id)

    def stage(self, tournament_id: str, stage_id: str) -> dict:
        """One stage of the tournament's format as a dict (titles, rule, kind; a written round's marks)."""
        return tournament_view.stage_view(self.state(tournament_id).fmt.stage(stage_id))

    def setup_view(self, tournament_id: str, battle_id: str) -> dict:
        """What a host page needs to play this battle on a box, as JSON: profile, players (ids and names), themes,
        red themes, the cuts the stage needs, run, and the ``slot`` that links the finished battle back; ``package``
        (the host's setup's ``package`` choice) when its theme pack was read from a question package, else null."""
        setup = self.battle_setup(tournament_id, battle_id)
        state = self.state(tournament_id)
        entrants = state.entrants
        return {"profile": setup.profile.name, "players": list(setup.players),
                "names": [entrants[p].name for p in setup.players], "themes": setup.themes,
                "red_themes": list(setup.red_themes), "theme_names": list(setup.theme_names),
                "cuts": None if setup.cuts is None else list(setup.cuts),
                "slot": setup.slot, "run": setup.run, "runs": setup.runs,
                "package": self._pack_package(state, battle_id, None)}

    def field_check(self, tournament_id: str) -> dict | None:
        """The first stage's needs against the field, for the registration page, before anything is drawn.

        ``{"stage", "have", "least", "most", "rule", "problem"}`` (``stage`` as a dict): ``have`` players would play the first stage if
        registration closed now (late joiners of later stages not counted: irkutsk 1.4), the stage needs
        ``least``..``most`` (``most`` is ``None`` when battles are added as needed), and ``problem`` is the
        :class:`DrawError` (or :class:`StageError`) the first draw would raise now, or ``None``. A dry run of
        the engine's own draw (seed 0): the page warns with the same rule the draw applies (irkutsk 2.1: nine
        quartets need at least 27 players). ``None`` once the first stage is drawn.
        """
        state = self.state(tournament_id)
        if state.battles or state.rounds_drawn or state.bracket_drawn:
            return None
        try:
            closed = state if state.registration_closed else t.apply(state, t.RegistrationClosed(self.clock()))
            step = t.next_step(closed)
            if step.kind != "draw":
                return None
            stage = closed.fmt.stage(step.stage)
            players = t.stage_participants(closed, stage.id) or ()
        except TournamentError:
            return None
        if stage.kind == "written":
            least, most = 1, None
        elif stage.battles:
            least, most = stage.battles * stage.smallest_battle, stage.battles * stage.battle_size
        else:
            least, most = stage.smallest_battle, None
        problem = None
        try:
            t.plan_draw(closed, stage.id, 0, self.clock())
        except (DrawError, StageError) as error:
            problem = error
        return {"stage": tournament_view.stage_view(stage), "have": len(players), "least": least, "most": most,
                "rule": stage.rule or state.fmt.regulation, "problem": problem}

    def export_json(self, tournament_id: str) -> str:
        data = self.view(tournament_id)
        data["events"] = [t.to_dict(e) for e in self.events(tournament_id)]
        return json.dumps(data, ensure_ascii=False, indent=1)

    def export_csv(self, tournament_id: str, language: str = "ru") -> str:
        """Standings, then every battle line: one table a spreadsheet opens (UTF-8 with BOM for Excel). Headers
        in ``language`` ("ru" or "en"), yes/no as words; withdrawn players marked."""
        data = self.view(tournament_id)
        names = data["names"]
        # the headers and yes/no in the page's language (a director opens it in a Russian spreadsheet): csv.*
        header = {key.removeprefix("csv."): words.gettext(key, language) for key in _CSV_WORDS}
        yes_no = {True: header["yes"], False: header["no"]}
        withdrawn = set(data["withdrawn"])
        out = io.StringIO()
        out.write("\ufeff")
        writer = csv_cells.writer(out)  # names and teams that start with = + - @ stay text (no formulas)
        writer.writerow([header[key] for key in ("place", "player", "name", "team", "reached", "placement_points",
                                                "score", "withdrawn")])
        english = language == "en"
        # stages by their titles in the CSV's language (an id such as "final" is no word of a Russian paper)
        titles = {stage["id"]: stage["title"] if english else stage["title_ru"] for stage in data["stages"]}
        for row in data["standings"]:
            writer.writerow([row["place"], row["player"], row["name"], row["team"],
                             row["reached_title_en"] if english else row["reached_title"],
                             row["placement_points"], row["score"], yes_no[row["player"] in withdrawn]])
        writer.writerow([])
        writer.writerow([header[key] for key in ("stage", "battle", "room", "player", "name", "score", "place",
                                                "right_points", "right_answers", "absent", "withdrawn")])
        for stage in data["stages"]:
            for battle in stage.get("battles", []):
                for line in battle["lines"]:
                    writer.writerow([titles[stage["id"]], battle["id"], battle["room"], line["player"],
                                     names.get(line["player"], ""), line["score"], line["place"],
                                     line["right_points"], line["right_answers"],
                                     yes_no[bool(line.get("absent", False))], yes_no[line["player"] in withdrawn]])
            for sheet in stage.get("sheets", []):
                writer.writerow([titles[stage["id"]], "", "", sheet["player"], names.get(sheet["player"], ""),
                                 sheet.get("score", ""), "", sheet.get("right_points", ""),
                                 sheet.get("right_answers", ""), yes_no[bool(sheet.get("absent", False))],
                                 yes_no[sheet["player"] in withdrawn]])
        return out.getvalue()


_CSV_WORDS = ("csv.place", "csv.player", "csv.name", "csv.team", "csv.reached", "csv.placement_points", "csv.score",
              "csv.withdrawn", "csv.stage", "csv.battle", "csv.room", "csv.right_points", "csv.right_answers",
              "csv.absent", "csv.yes", "csv.no")
