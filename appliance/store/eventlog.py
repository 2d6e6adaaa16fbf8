"""SQLite event log: one row per event, ``(battle_id, seq)`` unique, appended in its own durable transaction.

Durability: WAL journal with ``synchronous=FULL``, so a committed append survives a process kill and a power
cut (the WAL is fsynced at every commit). An append either commits whole or leaves nothing: the crash test
(tests/appliance/store/test_crash.py) SIGKILLs a writer at 200+ random moments and checks exactly that.
Thread-safe: one connection guarded by a lock (SQLite serialises writers anyway).
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from pathlib import Path
from typing import Iterator

from appliance.rules.battle.errors import BattleRuleError
from appliance.rules.battle.events import Event, event_from_dict, event_to_dict
from appliance.store.errors import LogFormatError, StoreConflictError

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    battle_id  TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    at_ns      INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    command_id TEXT,
    PRIMARY KEY (battle_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS events_command ON events (battle_id, command_id) WHERE command_id IS NOT NULL;
"""


@dataclasses.dataclass(frozen=True)
class StoredEvent:
    """One row of the log: the battle, its 1-based sequence number, the host's command id if any, the event."""

    battle_id: str
    seq: int
    command_id: str | None
    event: Event


class EventStore:
    """The append-only event log in one SQLite file.

    >>> import tempfile, pathlib
    >>> from appliance.rules.battle import BattleSetUp, load_profile
    >>> folder = tempfile.TemporaryDirectory()
    >>> store = EventStore(pathlib.Path(folder.name) / "events.sqlite")
    >>> store.append("b1", BattleSetUp(at_ns=0, profile=load_profile("mubc"), players=("A", "B"), themes=1))
    1
    >>> [row.seq for row in store.read("b1")], store.battle_ids()
    ([1], ['b1'])
    >>> store.close(); folder.cleanup()
    """

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        """Open (and, unless ``read_only``, create) the store at ``path``. Read-only opens never write the file,
        whoever's it is (``svoyak replay``); a file that is not a store raises :class:`LogFormatError`."""
        self.path = Path(path)
        self._lock = threading.Lock()
        if read_only:
            self._connection = connect_read_only(self.path)
            try:
                row = self._connection.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                self._connection.execute("SELECT 1 FROM events LIMIT 1").fetchall()
            except sqlite3.DatabaseError as error:
                self._connection.close()
                raise LogFormatError(f"not a svoyak event store ({error})", source=str(self.path)) from None
            if row is None or row[0] != str(SCHEMA_VERSION):
                self._connection.close()
                raise StoreConflictError(f"{self.path}: schema version {row and row[0]}, this build reads "
                                         f"{SCHEMA_VERSION}")
            return
        self._connection = connect_durable(self.path, _SCHEMA)
        row = self._connection.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self._connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif int(row[0]) != SCHEMA_VERSION:
            raise StoreConflictError(f"{self.path}: schema version {row[0]}, this build reads {SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> "EventStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def append(self, battle_id: str, event: Event, command_id: str | None = None,
               expected_seq: int | None = None) -> int:
        """Append ``event`` durably and return its sequence number; return only once committed.

        ``expected_seq``: the number the caller expects it to get; if taken, :class:`StoreConflictError`.
        A duplicate ``command_id`` for the battle raises :class:`StoreConflictError` too (callers check first).
        """
        body = json.dumps(event_to_dict(event), ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            connection = self._connection
            connection.execute("BEGIN IMMEDIATE")
            try:
                (last,) = connection.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE battle_id=?",
                                             (battle_id,)).fetchone()
                seq = last + 1
                if expected_seq is not None and expected_seq != seq:
                    raise StoreConflictError(f"battle {battle_id}: expected seq {expected_seq}, next is {seq}")
                connection.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
                                   (battle_id, seq, event.at_ns, type(event).__name__, body, command_id))
                connection.execute("COMMIT")
            except sqlite3.IntegrityError:
                connection.execute("ROLLBACK")
                raise StoreConflictError(f"battle {battle_id}: command {command_id!r} already stored") from None
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        return seq

    def append_all(self, battle_id: str, events: list[Event]) -> int:
        """Store a whole new battle's events in one transaction (an import): all of them or none.

        Raises :class:`StoreConflictError` if the battle already has events. Returns the last seq.
        """
        rows = [(battle_id, seq, event.at_ns, type(event).__name__,
                 json.dumps(event_to_dict(event), ensure_ascii=False, separators=(",", ":")), None)
                for seq, event in enumerate(events, start=1)]
        with self._lock:
            connection = self._connection
            connection.execute("BEGIN IMMEDIATE")
            try:
                if connection.execute("SELECT 1 FROM events WHERE battle_id=? LIMIT 1", (battle_id,)).fetchone():
                    raise StoreConflictError(f"battle {battle_id} already has events")
                connection.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", rows)
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        return len(rows)

    def read(self, battle_id: str) -> list[StoredEvent]:
        """Every event of a battle in order. Raises :class:`LogFormatError` for a row that is not an event."""
        with self._lock:
            rows = self._connection.execute(
                "SELECT seq, command_id, body FROM events WHERE battle_id=? ORDER BY seq", (battle_id,)).fetchall()
        return [StoredEvent(battle_id, seq, command_id, _decode(body, seq, battle_id))
                for seq, command_id, body in rows]

    def events(self, battle_id: str) -> list[Event]:
        return [row.event for row in self.read(battle_id)]

    def battle_ids(self) -> list[str]:
        """Every battle in the store, in order of creation."""
        with self._lock:
            rows = self._connection.execute(
                "SELECT battle_id FROM events WHERE seq=1 ORDER BY rowid").fetchall()
        return [row[0] for row in rows]

    def command_seq(self, battle_id: str, command_id: str) -> int | None:
        """The sequence number a command id was stored under, or None."""
        with self._lock:
            row = self._connection.execute("SELECT seq FROM events WHERE battle_id=? AND command_id=?",
                                           (battle_id, command_id)).fetchone()
        return None if row is None else row[0]

    def count(self, battle_id: str | None = None) -> int:
        with self._lock:
            if battle_id is None:
                return self._connection.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            return self._connection.execute("SELECT COUNT(*) FROM events WHERE battle_id=?",
                                            (battle_id,)).fetchone()[0]

    def iter_all(self) -> Iterator[StoredEvent]:
        for battle_id in self.battle_ids():
            yield from self.read(battle_id)


def connect_durable(path: Path, schema: str) -> sqlite3.Connection:
    """An SQLite connection whose committed transactions survive a power cut, with ``schema`` applied.

    WAL with ``synchronous=FULL``: a COMMIT returns only after the log is on disk. Autocommit mode
    (``isolation_level=None``), so callers write ``BEGIN IMMEDIATE`` ... ``COMMIT`` themselves; one connection
    shared across threads behind the caller's lock.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.executescript(schema)
    return connection


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write ``path`` (SQLite ``mode=ro``). It reads the WAL of a live store too; in a
    folder it may not write, with no WAL beside the file (so no writer), it opens the file as immutable."""
    uri = path.resolve().as_uri()
    try:
        connection = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return connection
    except sqlite3.OperationalError:
        if Path(f"{path}-wal").exists() or not path.is_file():
            raise
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None, check_same_thread=False)


def _decode(body: str, seq: int, battle_id: str) -> Event:
    try:
        return event_from_dict(json.loads(body))
    except (ValueError, BattleRuleError) as error:
        raise LogFormatError(str(error), line=seq, source=f"battle {battle_id}") from None


STORE_FILE = "events.sqlite"


def open_store(settings) -> EventStore:
    """The box's event store: ``data_dir/events.sqlite`` (``settings`` is :class:`appliance.config.Settings`)."""
    return EventStore(Path(settings.data_dir) / STORE_FILE)
