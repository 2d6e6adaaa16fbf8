"""Two results for one battle, kept in the box's one event store (a stream of kind ``rooms``, docs/rooms.md).

A station's result for a slot that already has another (typed by hand, or from another box) is never entered
over it: the pair is stored as :class:`ResultConflictHeld` and shown until the director answers
(:class:`ResultConflictSettled`). Both are stored, so a hub that restarts shows the open conflicts again and
remembers a «keep the desk's result» answer (the stream replay that follows a restart finds the station's result
again and must not ask twice). Each stored once: the command ids name the box's battle and the director's answer.

>>> import tempfile, pathlib
>>> from appliance.store import EventStore
>>> from appliance.rules.tournament import BattleResult
>>> folder = tempfile.TemporaryDirectory()
>>> book = ConflictBook(EventStore(pathlib.Path(folder.name) / "events.sqlite"))
>>> station, typed = BattleResult("1-1", (), log_id="room2/b1"), BattleResult("1-1", (), source="manual")
>>> book.hold(5, "t1", "1-1", "room2", "b1", station, typed), book.hold(6, "t1", "1-1", "room2", "b1", station, typed)
(True, False)
>>> [c["box"] for c in ConflictBook(book.store).open().values()]
['room2']
>>> book.settle(7, "t1", "1-1", take_station=False)["box"], ConflictBook(book.store).open()
('room2', {})
>>> ConflictBook(book.store).kept_desk("t1", "1-1", "room2/b1")
True
>>> book.store.close(); folder.cleanup()
"""

from __future__ import annotations

import dataclasses
import threading

from appliance.rules.tournament import BattleResult
from appliance.rules.tournament.errors import TournamentError
from appliance.service.rooms.protocol import RoomsError
from appliance.store import DuplicateCommandError
from appliance.store.eventlog import StreamKind

STREAM = "conflicts"  # one stream for the box: conflicts are few (one per slot a station and the desk both hold)


class ConflictError(RoomsError, LookupError):
    """No open conflict for that battle (settled already, or never held)."""


@dataclasses.dataclass(frozen=True)
class ResultConflictHeld:
    at_ns: int
    tournament: str
    battle: str
    box: str          # the station that played it
    box_battle: str   # its battle id on that station
    station: BattleResult
    desk: BattleResult


@dataclasses.dataclass(frozen=True)
class ResultConflictSettled:
    at_ns: int
    tournament: str
    battle: str
    take_station: bool
    log_id: str  # the station result the answer was about


_TYPES = {cls.__name__: cls for cls in (ResultConflictHeld, ResultConflictSettled)}


def _encode(event) -> dict:
    data = {"type": type(event).__name__, "v": 1}
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        data[field.name] = value.to_dict() if isinstance(value, BattleResult) else value
    return data


def _decode(data: dict):
    cls = _TYPES.get(data.get("type"))
    if cls is None or data.get("v") != 1:
        raise ValueError(f"not a rooms conflict event: {data.get('type')!r} v{data.get('v')!r}")
    fields = {}
    for field in dataclasses.fields(cls):
        value = data[field.name]
        fields[field.name] = BattleResult.from_dict(value) if field.name in ("station", "desk") else value
    return cls(**fields)


ROOMS = StreamKind("rooms", _encode, _decode, (ValueError, TypeError, KeyError, TournamentError))


class ConflictBook:
    """The open conflicts, read from the store at start and kept in step with it (thread-safe)."""

    def __init__(self, store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._open: dict[tuple[str, str], dict] = {}
        self._kept_desk: set[tuple[str, str, str]] = set()
        for event in store.events(ROOMS, STREAM):
            self._apply(event)

    def _apply(self, event) -> None:
        key = (event.tournament, event.battle)
        if isinstance(event, ResultConflictHeld):
            self._open[key] = {"tournament": event.tournament, "battle": event.battle, "box": event.box,
                               "box_battle": event.box_battle, "station": event.station, "desk": event.desk,
                               "at_ns": event.at_ns}
        else:
            self._open.pop(key, None)
            if not event.take_station:
                self._kept_desk.add((event.tournament, event.battle, event.log_id))

    def open(self) -> dict[tuple[str, str], dict]:
        with self._lock:
            return dict(self._open)

    def kept_desk(self, tournament: str, battle: str, log_id: str) -> bool:
        """True if the director already chose the desk's result over this station result."""
        with self._lock:
            return (tournament, battle, log_id) in self._kept_desk

    def hold(self, at_ns: int, tournament: str, battle: str, box: str, box_battle: str, station: BattleResult,
             desk: BattleResult) -> bool:
        """Store a conflict (once per station battle); False if it was stored already."""
        event = ResultConflictHeld(at_ns, tournament, battle, box, box_battle, station, desk)
        with self._lock:
            try:
                self.store.append(ROOMS, STREAM, [event], command_id=f"conflict:{box}:{box_battle}:{desk.log_id}"
                                  f":{desk.source}")
            except DuplicateCommandError:
                return False
            self._apply(event)
        return True

    def settle(self, at_ns: int, tournament: str, battle: str, take_station: bool) -> dict:
        """Store the director's answer; return the conflict it closed. ConflictError if none is open."""
        with self._lock:
            conflict = self._open.get((tournament, battle))
            if conflict is None:
                raise ConflictError(f"no open conflict for battle {battle}", code="no_conflict", params={"battle": battle})
            event = ResultConflictSettled(at_ns, tournament, battle, take_station, conflict["station"].log_id)
            self.store.append(ROOMS, STREAM, [event])
            self._apply(event)
        return conflict
