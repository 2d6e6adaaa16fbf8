"""The one event store: append-only streams of events in one SQLite file, each stream of a kind.

A *stream* is one battle's or one tournament's events, named by ``(kind, stream_id)``; its events are numbered
1, 2, 3... (the per-stream ``seq``). Kinds are :class:`StreamKind` values: :data:`BATTLE` and :data:`TOURNAMENT`
here; another layer adds its own (rooms' streams) by making a ``StreamKind`` with its own codec.

The one way to write is :meth:`EventStore.append`: the events of one command, and optionally the command's id
and its first result, in ONE transaction. All of them are stored or none; a command id is stored once per kind,
and a resend finds the stored result (:meth:`EventStore.command`) instead of applying again.

The one way to read a stream is :meth:`EventStore.read` (``after_seq`` for "every event after N": a station
publishing a battle reads from its last published seq); :meth:`EventStore.last_seq` is the stream's head.

Durability: WAL journal with ``synchronous=FULL``, so a committed append survives a process kill and a power
cut (the WAL is fsynced at every commit). The crash tests (tests/appliance/store/test_crash.py) SIGKILL writers
at hundreds of random moments and check exactly that. Thread-safe: one connection guarded by a lock.

Schema version 2 (docs/battle-log.md). A file of schema 1 (``events`` of battles, or the old tournament file's
``tournament_events``) is migrated in place, in one transaction, when opened for writing; opened read-only it
is read through temporary views and left untouched.

Every error of the driver that leaves this module is a :class:`appliance.errors.StoreDriverError` (its cause the
``sqlite3`` error), as eventsourcing's ``sqlite.py`` translates its driver's: no other layer imports ``sqlite3``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

from appliance.errors import StoreDriverError
from appliance.rules.battle.errors import BattleRuleError
from appliance.rules.battle.events import event_from_dict, event_to_dict
from appliance.rules.tournament import events as tournament_events
from appliance.rules.tournament.errors import TournamentError
from appliance.store.errors import DuplicateCommandError, LogFormatError, StoreConflictError, StoreFormatError

SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stream_events (
    kind       TEXT    NOT NULL,
    stream_id  TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    at_ns      INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    command_id TEXT,
    PRIMARY KEY (kind, stream_id, seq)
);
CREATE TABLE IF NOT EXISTS commands (
    kind       TEXT    NOT NULL,
    command_id TEXT    NOT NULL,
    stream_id  TEXT,
    first_seq  INTEGER,
    last_seq   INTEGER,
    result     TEXT,
    PRIMARY KEY (kind, command_id)
);
"""

# Schema 1 stored a command of several events as "id#0", "id#1": one command id again.
_V1_COMMAND = "CASE WHEN command_id GLOB '*#[0-9]*' THEN substr(command_id, 1, instr(command_id, '#') - 1) " \
              "ELSE command_id END"
_V1_TABLES = {"events": ("battle", "battle_id"), "tournament_events": ("tournament", "tournament_id")}


@dataclasses.dataclass(frozen=True)
class StreamKind:
    """A kind of stream and its codec: ``encode(event) -> dict`` (with ``"type"``), ``decode(dict) -> event``.

    ``decode_errors``: what ``decode`` raises for a body that is not an event (reported as LogFormatError).
    """

    name: str
    encode: Callable[[Any], dict]
    decode: Callable[[dict], Any]
    decode_errors: tuple[type[BaseException], ...] = (ValueError,)


BATTLE = StreamKind("battle", event_to_dict, event_from_dict, (ValueError, BattleRuleError))
TOURNAMENT = StreamKind("tournament", tournament_events.to_dict, tournament_events.from_dict,
                        (ValueError, TypeError, KeyError, TournamentError))


@dataclasses.dataclass(frozen=True)
class StoredEvent:
    """One stored event: its stream, its 1-based sequence number in the stream, its command id if any."""

    kind: str
    stream_id: str
    seq: int
    command_id: str | None
    event: Any


@dataclasses.dataclass(frozen=True)
class StoredCommand:
    """A command id as stored: where its events went (``first_seq``..``last_seq`` of ``stream_id``; ``None``
    for a command that made no event) and its first result (``None`` for a command stored by schema 1)."""

    kind: str
    command_id: str
    stream_id: str | None
    first_seq: int | None
    last_seq: int | None
    result: dict | None


def _driver_errors(function: Callable) -> Callable:
    """``function`` with every ``sqlite3`` error it lets out raised as :class:`StoreDriverError` instead."""

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except sqlite3.Error as error:
            raise StoreDriverError(str(error)) from error

    return wrapped


class EventStore:
    """Every stream of events in one SQLite file.

    >>> import tempfile, pathlib
    >>> from appliance.rules.battle import BattleSetUp, ThemeStarted
    >>> from appliance.service.presets import load_profile
    >>> folder = tempfile.TemporaryDirectory()
    >>> store = EventStore(pathlib.Path(folder.name) / "events.sqlite")
    >>> store.append(BATTLE, "b1", [BattleSetUp(at_ns=0, profile=load_profile("mubc"), players=("A", "B"),
    ...                                         themes=1)], expected_seq=1)
    (1,)
    >>> store.append(BATTLE, "b1", [ThemeStarted(at_ns=5)], command_id="c1", result={"ok": 1})
    (2,)
    >>> [row.seq for row in store.read(BATTLE, "b1", after_seq=1)], store.stream_ids(BATTLE)
    ([2], ['b1'])
    >>> store.command(BATTLE, "c1").result
    {'ok': 1}
    >>> store.close(); folder.cleanup()
    """

    @_driver_errors
    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._lock = threading.Lock()
        if read_only:
            self._connection = _connect_read_only(self.path)
        else:
            self._connection = connect_durable(self.path, "")
            _migrate(self._connection, self.path)

    @_driver_errors
    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> "EventStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ the one way to write
    @_driver_errors
    def append(self, kind: StreamKind, stream_id: str, events: Sequence[Any], command_id: str | None = None,
               result: dict | None = None, expected_seq: int | None = None) -> tuple[int, ...]:
        """Store ``events`` (one command's) at the end of the stream in ONE transaction; return their seqs.

        Returns only once committed: all the events and the command are stored, or (an exception) none.
        ``command_id``: stored with the events and ``result`` (JSON), once per kind: a command id already
        stored raises :class:`DuplicateCommandError` carrying the stored command. A command with no events
        stores only its id and result (a command that changes no stream still answers a resend the same).
        ``expected_seq``: the seq the first event must get (1: a new stream); if taken, StoreConflictError.
        """
        if not events and command_id is None:
            raise ValueError("append needs an event or a command id")
        bodies = [(event.at_ns, type(event).__name__,
                   json.dumps(kind.encode(event), ensure_ascii=False, separators=(",", ":"))) for event in events]
        result_text = None if result is None else json.dumps(result, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            connection = self._connection
            connection.execute("BEGIN IMMEDIATE")
            try:
                if command_id is not None:
                    known = _command_row(connection, kind.name, command_id)
                    if known is not None:
                        raise DuplicateCommandError(known)
                (last,) = connection.execute(
                    "SELECT COALESCE(MAX(seq), 0) FROM stream_events WHERE kind=? AND stream_id=?",
                    (kind.name, stream_id)).fetchone()
                if expected_seq is not None and expected_seq != last + 1:
                    raise StoreConflictError(f"{kind.name} {stream_id}: expected seq {expected_seq}, next is "
                                             f"{last + 1}")
                seqs = tuple(range(last + 1, last + 1 + len(bodies)))
                connection.executemany(
                    "INSERT INTO stream_events VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(kind.name, stream_id, seq, at_ns, type_name, body, command_id)
                     for seq, (at_ns, type_name, body) in zip(seqs, bodies)])
                if command_id is not None:
                    connection.execute("INSERT INTO commands VALUES (?, ?, ?, ?, ?, ?)",
                                       (kind.name, command_id, stream_id if seqs else None,
                                        seqs[0] if seqs else None, seqs[-1] if seqs else None, result_text))
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        return seqs

    # ------------------------------------------------------------------ reads
    @_driver_errors
    def read(self, kind: StreamKind, stream_id: str, after_seq: int = 0, limit: int | None = None
             ) -> list[StoredEvent]:
        """The stream's events with ``seq > after_seq``, in order (at most ``limit``).

        Raises :class:`LogFormatError` naming the seq of a stored body that is not an event of ``kind``.
        """
        with self._lock:
            rows = self._connection.execute(
                "SELECT seq, command_id, body FROM stream_events WHERE kind=? AND stream_id=? AND seq>? "
                "ORDER BY seq LIMIT ?", (kind.name, stream_id, after_seq, -1 if limit is None else limit)
            ).fetchall()
        return [StoredEvent(kind.name, stream_id, seq, command_id, _decode(kind, body, seq, stream_id))
                for seq, command_id, body in rows]

    def events(self, kind: StreamKind, stream_id: str) -> list[Any]:
        """The stream's events alone, in order."""
        return [row.event for row in self.read(kind, stream_id)]

    @_driver_errors
    def last_seq(self, kind: StreamKind, stream_id: str) -> int:
        """The seq of the stream's last event (0: no such stream)."""
        with self._lock:
            return self._connection.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM stream_events WHERE kind=? AND stream_id=?",
                (kind.name, stream_id)).fetchone()[0]

    @_driver_errors
    def stream_ids(self, kind: StreamKind) -> list[str]:
        """Every stream of ``kind``, in order of creation."""
        with self._lock:
            rows = self._connection.execute(
                "SELECT stream_id FROM stream_events WHERE kind=? AND seq=1 ORDER BY rowid", (kind.name,)).fetchall()
        return [row[0] for row in rows]

    @_driver_errors
    def command(self, kind: StreamKind, command_id: str) -> StoredCommand | None:
        """The stored command ``command_id`` of ``kind`` (its events' place and first result), or None."""
        with self._lock:
            return _command_row(self._connection, kind.name, command_id)

    @_driver_errors
    def count(self, kind: StreamKind | None = None, stream_id: str | None = None) -> int:
        """How many events: in the whole store, of a kind, or in one stream."""
        query, params = "SELECT COUNT(*) FROM stream_events", ()
        if kind is not None:
            query, params = query + " WHERE kind=?", (kind.name,)
            if stream_id is not None:
                query, params = query + " AND stream_id=?", (kind.name, stream_id)
        with self._lock:
            return self._connection.execute(query, params).fetchone()[0]

    @_driver_errors
    def schema_version(self) -> int:
        with self._lock:
            row = self._connection.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0])

    @_driver_errors
    def meta(self, key: str) -> str | None:
        """A value the box keeps beside its streams (table ``meta``), or None; e.g. the battle timeline's offset
        (docs/battle-log.md)."""
        with self._lock:
            row = self._connection.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    @_driver_errors
    def set_meta(self, key: str, value: str) -> None:
        """Store ``value`` under ``key`` durably (one transaction; returns once committed)."""
        if key == "schema_version":
            raise ValueError("the schema version is the store's own")
        with self._lock:
            connection = self._connection
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise

    @_driver_errors
    def merge_file(self, path: str | Path) -> int:
        """Copy the streams of another store file (any schema; e.g. the old ``tournaments.sqlite``) that this
        store lacks, in one transaction; returns how many events were copied. Streams already here are kept
        as they are, so merging the same file twice copies nothing the second time."""
        with EventStore(path, read_only=True) as other:
            with other._lock:
                rows = other._connection.execute(
                    "SELECT kind, stream_id, seq, at_ns, type, body, command_id FROM stream_events "
                    "ORDER BY rowid").fetchall()
                commands = other._connection.execute(
                    "SELECT kind, command_id, stream_id, first_seq, last_seq, result FROM commands").fetchall()
        with self._lock:
            connection = self._connection
            connection.execute("BEGIN IMMEDIATE")
            try:
                present = set(connection.execute("SELECT DISTINCT kind, stream_id FROM stream_events").fetchall())
                new_rows = [row for row in rows if (row[0], row[1]) not in present]
                connection.executemany("INSERT INTO stream_events VALUES (?, ?, ?, ?, ?, ?, ?)", new_rows)
                copied = {(row[0], row[1]) for row in new_rows}
                connection.executemany("INSERT OR IGNORE INTO commands VALUES (?, ?, ?, ?, ?, ?)",
                                       [row for row in commands if (row[0], row[2]) in copied])
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        return len(new_rows)


def connect_durable(path: Path, schema: str = "") -> sqlite3.Connection:
    """An SQLite connection whose committed transactions survive a power cut, with ``schema`` applied.

    WAL with ``synchronous=FULL``: a COMMIT returns only after the log is on disk. Autocommit mode
    (``isolation_level=None``), so callers write ``BEGIN IMMEDIATE`` ... ``COMMIT`` themselves; one connection
    shared across threads behind the caller's lock.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    if schema:
        connection.executescript(schema)
    return connection


def _tables(connection: sqlite3.Connection, schema: str = "main") -> set[str]:
    return {row[0] for row in connection.execute(f"SELECT name FROM {schema}.sqlite_master WHERE type='table'")}


def _stored_version(connection: sqlite3.Connection, tables: set[str]) -> int | None:
    """The file's schema version: None for an empty file, 1 for a file of the old two-file layout."""
    if "meta" in tables:
        row = connection.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is not None:
            return int(row[0])
    if tables & set(_V1_TABLES):
        return 1
    return None


def _migrate(connection: sqlite3.Connection, path: Path) -> None:
    """Bring the file to :data:`SCHEMA_VERSION` in one transaction (schema 1's tables are copied, then dropped)."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        tables = _tables(connection)
        version = _stored_version(connection, tables)
        if version is not None and version > SCHEMA_VERSION:
            raise StoreFormatError(f"{path}: schema version {version}, this build reads up to {SCHEMA_VERSION}")
        if version != SCHEMA_VERSION:
            for statement in _SCHEMA.split(";"):  # not executescript: it would COMMIT this transaction
                if statement.strip():
                    connection.execute(statement)
            for table, (kind, id_column) in _V1_TABLES.items():
                if table not in tables:
                    continue
                connection.execute(
                    f"INSERT INTO stream_events SELECT '{kind}', {id_column}, seq, at_ns, type, body, {_V1_COMMAND} "
                    f"FROM {table} ORDER BY rowid")
                connection.execute(
                    f"INSERT OR IGNORE INTO commands SELECT '{kind}', {_V1_COMMAND} AS command, {id_column}, "
                    f"MIN(seq), MAX(seq), NULL FROM {table} WHERE command_id IS NOT NULL "
                    f"GROUP BY {id_column}, command")
                connection.execute(f"DROP TABLE {table}")
            connection.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that can never write the file: schema 1 is read through temporary views of schema 2."""
    if not path.is_file():
        raise StoreFormatError(f"{path}: no such store file")
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None,
                                 check_same_thread=False)
    try:
        tables = _tables(connection)
        version = _stored_version(connection, tables)
        if version is None:
            raise StoreFormatError(f"{path}: not a svoyak event store")
        if version > SCHEMA_VERSION:
            raise StoreFormatError(f"{path}: schema version {version}, this build reads up to {SCHEMA_VERSION}")
        if version == 1:
            events = [f"SELECT '{kind}' AS kind, {column} AS stream_id, seq, at_ns, type, body, "
                      f"{_V1_COMMAND} AS command_id, rowid AS rowid FROM main.{table}"
                      for table, (kind, column) in _V1_TABLES.items() if table in tables]
            connection.execute("CREATE TEMP VIEW stream_events AS " + " UNION ALL ".join(events))
            connection.execute("CREATE TEMP VIEW commands AS SELECT kind, command_id, stream_id, "
                               "MIN(seq) AS first_seq, MAX(seq) AS last_seq, NULL AS result "
                               "FROM temp.stream_events WHERE command_id IS NOT NULL GROUP BY kind, command_id")
            connection.execute("CREATE TEMP VIEW meta AS SELECT 'schema_version' AS key, '1' AS value")
    except sqlite3.DatabaseError as error:
        connection.close()
        raise StoreFormatError(f"{path}: not a readable SQLite store ({error})") from None
    return connection


def _command_row(connection: sqlite3.Connection, kind: str, command_id: str) -> StoredCommand | None:
    row = connection.execute("SELECT stream_id, first_seq, last_seq, result FROM commands "
                             "WHERE kind=? AND command_id=?", (kind, command_id)).fetchone()
    if row is None:
        return None
    stream_id, first, last, result = row
    return StoredCommand(kind, command_id, stream_id, first, last, None if result is None else json.loads(result))


def _decode(kind: StreamKind, body: str, seq: int, stream_id: str) -> Any:
    try:
        return kind.decode(json.loads(body))
    except kind.decode_errors as error:
        raise LogFormatError(getattr(error, "message", None) or str(error), line=seq,
                             source=f"{kind.name} {stream_id}") from None


STORE_FILE = "events.sqlite"
LEGACY_TOURNAMENT_FILE = "tournaments.sqlite"  # schema 1 kept tournaments in a second file


@_driver_errors
def open_store(data_dir: str | Path) -> EventStore:
    """The box's one store, ``data_dir/events.sqlite``; the old ``tournaments.sqlite`` beside it is merged in
    once (then renamed ``tournaments.sqlite.merged``, kept for the organiser)."""
    store = EventStore(Path(data_dir) / STORE_FILE)
    legacy = Path(data_dir) / LEGACY_TOURNAMENT_FILE
    if legacy.is_file():
        store.merge_file(legacy)  # idempotent: a crash before the rename merges nothing twice
        legacy.rename(legacy.with_name(legacy.name + ".merged"))
        for suffix in ("-wal", "-shm"):
            side = legacy.with_name(legacy.name + suffix)
            if side.exists():
                side.rename(legacy.with_name(legacy.name + ".merged" + suffix))
    return store
