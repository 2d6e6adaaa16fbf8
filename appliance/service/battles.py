"""The battle desk: a small thread-safe front over the event store and the battle engine.

``submit`` validates an event by applying it to the cached state first, then appends it durably, then
replaces the cached state and tells the listeners: nobody hears of an event the log does not hold, and a
refused event changes nothing. A repeated ``command_id`` returns the current state without applying twice
(a tablet retrying after a dropped Wi-Fi frame). Opening the desk on an existing store replays every battle.

>>> import tempfile, pathlib
>>> from appliance.store import EventStore
>>> from appliance.rules.battle import BattleSetUp, ThemeStarted, load_profile
>>> folder = tempfile.TemporaryDirectory()
>>> desk = Battles(EventStore(pathlib.Path(folder.name) / "events.sqlite"))
>>> battle = desk.create(BattleSetUp(at_ns=0, profile=load_profile("irkutsk"), players=("A", "B", "C"), themes=6))
>>> desk.submit(battle, ThemeStarted(at_ns=10, name="Реки"), command_id="c1").phase
'between_questions'
>>> desk.submit(battle, ThemeStarted(at_ns=11), command_id="c1").seq  # the same command again: applied once
2
>>> desk.store.close(); folder.cleanup()
"""

from __future__ import annotations

import threading
import uuid
from typing import Callable

from appliance.errors import StoreError
from appliance.rules.battle import (ActionUndone, BattleRuleError, BattleSetUp, BattleState, Event, apply,
                                    event_to_dict, next_run, standings)
from appliance.store import EventStore, dump_log, read_log

Listener = Callable[[str, Event, BattleState], None]


class UnknownBattleError(StoreError, LookupError):
    """No battle with that id in the store."""


class Battles:
    """Every battle in one store, each rebuilt by replay and kept as its latest state."""

    def __init__(self, store: EventStore, new_id: Callable[[], str] | None = None) -> None:
        self.store = store
        self._new_id = new_id or (lambda: uuid.uuid4().hex[:12])
        self._lock = threading.Lock()  # guards the dicts below
        self._battle_locks: dict[str, threading.Lock] = {}
        self._states: dict[str, BattleState] = {}
        self._commands: dict[tuple[str, str], int] = {}
        self._listeners: list[Listener] = []
        self.broken: dict[str, str] = {}  # battles whose log no longer replays (kept out, reported)
        for battle_id in store.battle_ids():
            self._rebuild(battle_id)

    def _rebuild(self, battle_id: str) -> None:
        state = None
        try:
            for row in self.store.read(battle_id):
                state = apply(state, row.event)
                if row.command_id is not None:
                    self._commands[(battle_id, row.command_id)] = row.seq
        except (BattleRuleError, StoreError) as error:
            self.broken[battle_id] = str(error)
            return
        if state is not None:
            self._states[battle_id] = state
            self._battle_locks[battle_id] = threading.Lock()

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(battle_id, event, state)`` after each durable append (in the submitter's thread)."""
        self._listeners.append(listener)

    def _battle_lock(self, battle_id: str) -> threading.Lock:
        with self._lock:
            lock = self._battle_locks.get(battle_id)
        if lock is None:
            raise UnknownBattleError(f"no battle {battle_id!r}")
        return lock

    def create(self, setup: BattleSetUp, battle_id: str | None = None, command_id: str | None = None) -> str:
        """Set up a new battle (validated, then stored) and return its id."""
        state = apply(None, setup)
        battle_id = battle_id or self._new_id()
        with self._lock:
            if battle_id in self._states:
                raise StoreError(f"battle {battle_id!r} already exists")
            self._battle_locks[battle_id] = lock = threading.Lock()
        with lock:
            try:
                self.store.append(battle_id, setup, command_id=command_id, expected_seq=1)
            except BaseException:
                with self._lock:
                    del self._battle_locks[battle_id]
                raise
            with self._lock:
                self._states[battle_id] = state
                if command_id is not None:
                    self._commands[(battle_id, command_id)] = 1
        self._notify(battle_id, setup, state)
        return battle_id

    def submit(self, battle_id: str, event: Event, command_id: str | None = None) -> BattleState:
        """Apply ``event`` to the battle; store it durably; return the new state.

        Raises :class:`BattleRuleError` (nothing stored, nothing changed) if the rules refuse it,
        :class:`UnknownBattleError` for an unknown battle. A ``command_id`` already stored returns the
        current state and applies nothing.
        """
        lock = self._battle_lock(battle_id)
        with lock:
            if command_id is not None and (battle_id, command_id) in self._commands:
                return self._states[battle_id]
            current = self._states[battle_id]
            new = apply(current, event)
            self.store.append(battle_id, event, command_id=command_id, expected_seq=current.seq + 1)
            with self._lock:
                self._states[battle_id] = new
                if command_id is not None:
                    self._commands[(battle_id, command_id)] = new.seq
        self._notify(battle_id, event, new)
        return new

    def create_next_run(self, battle_id: str, players: tuple, at_ns: int, absent: tuple = (),
                        command_id: str | None = None) -> str:
        """A new battle: the next run of ``battle_id``'s slot on the same themes (youth-cup 2.4)."""
        return self.create(next_run(self.state(battle_id).setup, players, at_ns, absent), command_id=command_id)

    def undo(self, battle_id: str, at_ns: int, command_id: str | None = None) -> BattleState:
        """Undo the host's last action (an :class:`ActionUndone` event; the log keeps both)."""
        return self.submit(battle_id, ActionUndone(at_ns=at_ns), command_id=command_id)

    def state(self, battle_id: str) -> BattleState:
        with self._lock:
            state = self._states.get(battle_id)
        if state is None:
            raise UnknownBattleError(f"no battle {battle_id!r}")
        return state

    def list(self) -> list[dict]:
        """A line per battle: id, profile, players, scores, phase, over or not, slot and run."""
        with self._lock:
            items = list(self._states.items())
        return [{"battle_id": battle_id, "profile": state.profile.name, "players": list(state.players),
                 "scores": list(state.scores), "phase": state.phase, "is_over": state.is_over,
                 "slot": state.setup.slot, "run": state.setup.run, "seq": state.seq} for battle_id, state in items]

    def standings(self, battle_id: str):
        return standings(self.state(battle_id))

    def export(self, battle_id: str) -> str:
        """The battle's log in the JSON Lines format (docs/battle-log.md)."""
        self._battle_lock(battle_id)
        rows = self.store.read(battle_id)
        return dump_log(battle_id, [row.event for row in rows], [row.command_id for row in rows])

    def import_log(self, file, battle_id: str | None = None) -> str:
        """Import a JSON Lines log as a new battle; every event is checked by replay before any is stored."""
        header, rows = read_log(file)
        state = None
        for _line, event in rows:
            state = apply(state, event)
        if state is None:
            raise StoreError("the log holds no events")
        battle_id = battle_id or header.get("battle_id") or self._new_id()
        with self._lock:
            if battle_id in self._states:
                raise StoreError(f"battle {battle_id!r} already exists")
            self._battle_locks[battle_id] = lock = threading.Lock()
        with lock:
            try:
                self.store.append_all(battle_id, [event for _line, event in rows])  # all or nothing
            except BaseException:
                with self._lock:
                    del self._battle_locks[battle_id]
                raise
            with self._lock:
                self._states[battle_id] = state
        return battle_id

    def _notify(self, battle_id: str, event: Event, state: BattleState) -> None:
        for listener in list(self._listeners):
            listener(battle_id, event, state)


__all__ = ["Battles", "UnknownBattleError", "event_to_dict"]
