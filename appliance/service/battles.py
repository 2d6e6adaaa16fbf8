"""The battle desk: a small thread-safe front over the event store and the battle engine.

``submit`` validates a command's events by applying them to the cached state first, then appends them durably
in ONE transaction (with the command id and its first result), then replaces the cached state and tells the
listeners: nobody hears of an event the log does not hold, a refused command changes nothing, and a command
of several events is stored whole or not at all. A command id already stored (before a restart too) is refused
with :class:`DuplicateCommandError`, whose ``stored.result`` is the first result; :meth:`Battles.command`
looks one up first. Opening the desk on an existing store replays every battle.

>>> import tempfile, pathlib
>>> from appliance.store import EventStore
>>> from appliance.rules.battle import BattleSetUp, ThemeStarted
>>> from appliance.service.presets import load_profile
>>> folder = tempfile.TemporaryDirectory()
>>> desk = Battles(EventStore(pathlib.Path(folder.name) / "events.sqlite"))
>>> battle = desk.create(BattleSetUp(at_ns=0, profile=load_profile("irkutsk"), players=("A", "B", "C"), themes=6))
>>> desk.submit(battle, [ThemeStarted(at_ns=10, name="Реки")], command_id="c1", result={"n": 1}).phase
'between_questions'
>>> desk.command("c1").result, desk.command("c1").last_seq   # a resend finds the first result
({'n': 1}, 2)
>>> desk.store.close(); folder.cleanup()
"""

from __future__ import annotations

import threading
import uuid
from typing import Callable, Sequence

from appliance.errors import StoreError, UnknownBattleError
from appliance.rules.battle import (ActionUndone, BattleRuleError, BattleSetUp, BattleState, Event, apply,
                                    event_to_dict, next_run, standings)
from appliance.store import BATTLE, DuplicateCommandError, EventStore, StoredCommand, dump_log, read_log

Listener = Callable[[str, Event, BattleState], None]


class Battles:
    """Every battle in one store, each rebuilt by replay and kept as its latest state."""

    def __init__(self, store: EventStore, new_id: Callable[[], str] | None = None) -> None:
        self.store = store
        self._new_id = new_id or (lambda: uuid.uuid4().hex[:12])
        self._lock = threading.Lock()  # guards the dicts below
        self._battle_locks: dict[str, threading.Lock] = {}
        self._states: dict[str, BattleState] = {}
        # battle -> the seqs of its events stored by the same command as the event before them (the host's
        # "next" is a price and the start of its reading: the second is joined to the first); undo takes back
        # a whole command (BattleAdapter.undo_nodes), not half of it
        self._joined: dict[str, set[int]] = {}
        self._listeners: list[Listener] = []
        self.broken: dict[str, str] = {}  # battles whose log no longer replays (kept out, reported)
        for battle_id in store.stream_ids(BATTLE):
            self._rebuild(battle_id)

    def _rebuild(self, battle_id: str) -> None:
        state, joined, previous = None, set(), None
        try:
            for row in self.store.read(BATTLE, battle_id):
                state = apply(state, row.event)
                if row.command_id is not None and row.command_id == previous:
                    joined.add(row.seq)
                previous = row.command_id
        except (BattleRuleError, StoreError) as error:
            self.broken[battle_id] = str(error)
            return
        if state is not None:
            self._states[battle_id] = state
            self._joined[battle_id] = joined
            self._battle_locks[battle_id] = threading.Lock()

    def same_command(self, battle_id: str, seq: int) -> bool:
        """Whether the event ``seq`` of ``battle_id`` was stored by the same command as the event before it."""
        with self._lock:
            return seq in self._joined.get(battle_id, ())

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(battle_id, event, state)`` after each durable append (in the submitter's thread)."""
        self._listeners.append(listener)

    def _battle_lock(self, battle_id: str) -> threading.Lock:
        with self._lock:
            lock = self._battle_locks.get(battle_id)
        if lock is None:
            raise UnknownBattleError(f"no battle {battle_id!r}")
        return lock

    def command(self, command_id: str) -> StoredCommand | None:
        """A stored battle command id (where its events went, its first result), or None."""
        return self.store.command(BATTLE, command_id)

    def record_command(self, command_id: str, result: dict) -> None:
        """Store a command that made no battle event (phones on, a button test) with its result, so that its
        resend is answered as a duplicate too. Raises :class:`DuplicateCommandError` if already stored."""
        self.store.append(BATTLE, "", [], command_id=command_id, result=result)

    def create(self, setup: BattleSetUp, battle_id: str | None = None, command_id: str | None = None,
               result: dict | None = None) -> str:
        """Set up a new battle (validated, then stored with the command id and ``result``, to which the new
        battle's id is added as ``battle_id``) and return its id."""
        state = apply(None, setup)
        battle_id = battle_id or self._new_id()
        with self._lock:
            if battle_id in self._states:
                raise StoreError(f"battle {battle_id!r} already exists")
            self._battle_locks[battle_id] = lock = threading.Lock()
        with lock:
            try:
                self.store.append(BATTLE, battle_id, [setup], command_id=command_id,
                                  result=None if result is None else {**result, "battle_id": battle_id},
                                  expected_seq=1)
            except BaseException:
                with self._lock:
                    del self._battle_locks[battle_id]
                raise
            with self._lock:
                self._states[battle_id] = state
        self._notify(battle_id, [(setup, state)])
        return battle_id

    def submit(self, battle_id: str, events: Event | Sequence[Event], command_id: str | None = None,
               result: dict | Callable[[BattleState], dict] | None = None) -> BattleState:
        """Apply one command's ``events`` to the battle; store them durably in one transaction; return the new
        state. ``result`` is stored with the command id: a dict, or a function of the new state that makes it.

        Raises :class:`BattleRuleError` (nothing stored, nothing changed) if the rules refuse any of them,
        :class:`UnknownBattleError` for an unknown battle, :class:`DuplicateCommandError` (nothing applied)
        for a ``command_id`` already stored.
        """
        events = [events] if not isinstance(events, (list, tuple)) else list(events)
        lock = self._battle_lock(battle_id)
        with lock:
            if command_id is not None:
                stored = self.command(command_id)
                if stored is not None:
                    raise DuplicateCommandError(stored)
            current = new = self._states[battle_id]
            steps = []
            for event in events:  # validate every event first: all or nothing
                new = apply(new, event)
                steps.append((event, new))
            if callable(result):
                result = result(new)
            seqs = self.store.append(BATTLE, battle_id, events, command_id=command_id, result=result,
                                     expected_seq=current.seq + 1)
            with self._lock:
                self._states[battle_id] = new
                if command_id is not None and len(seqs) > 1:
                    self._joined.setdefault(battle_id, set()).update(seqs[1:])
        self._notify(battle_id, steps)
        return new

    def create_next_run(self, battle_id: str, players: tuple, at_ns: int, absent: tuple = (),
                        command_id: str | None = None) -> str:
        """A new battle: the next run of ``battle_id``'s slot on the same themes (youth-cup 2.4)."""
        return self.create(next_run(self.state(battle_id).setup, players, at_ns, absent), command_id=command_id)

    def undo(self, battle_id: str, at_ns: int, command_id: str | None = None) -> BattleState:
        """Undo the host's last action (an :class:`ActionUndone` event; the log keeps both)."""
        return self.submit(battle_id, [ActionUndone(at_ns=at_ns)], command_id=command_id)

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

    def last_at_ns(self) -> int:
        """The time of the latest event of any battle (0: none): the battle timeline goes on after it."""
        with self._lock:
            return max((state.last_at_ns for state in self._states.values()), default=0)

    def meta(self, key: str) -> str | None:
        """A value the box keeps in the store beside the battles (the battle timeline), or None."""
        return self.store.meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self.store.set_meta(key, value)

    def standings(self, battle_id: str):
        return standings(self.state(battle_id))

    def export(self, battle_id: str) -> str:
        """The battle's log in the JSON Lines format (docs/battle-log.md)."""
        self._battle_lock(battle_id)
        rows = self.store.read(BATTLE, battle_id)
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
                self.store.append(BATTLE, battle_id, [event for _line, event in rows], expected_seq=1)  # all or none
            except BaseException:
                with self._lock:
                    del self._battle_locks[battle_id]
                raise
            with self._lock:
                self._states[battle_id] = state
        return battle_id

    def _notify(self, battle_id: str, steps: list[tuple[Event, BattleState]]) -> None:
        for event, state in steps:
            for listener in list(self._listeners):
                listener(battle_id, event, state)


__all__ = ["Battles", "UnknownBattleError", "event_to_dict"]
